//! A Flux file as written: its includes, config, spouts, bolts and streams, read with its
//! includes merged as Flux merges them.

use std::path::PathBuf;

use serde::Deserialize;
use serde_norway::{Mapping, Value};

/// A Flux topology file. Unknown fields are refused, with their line.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// The topology's name.
    #[serde(default)]
    pub name: Option<String>,
    /// Other files merged into this one.
    #[serde(default)]
    pub includes: Vec<Include>,
    /// The topology's configuration keys.
    #[serde(default)]
    pub config: Option<Mapping>,
    /// Shared objects (`components`): none of the classes squall maps needs one.
    #[serde(default)]
    pub components: Vec<Value>,
    /// The spouts.
    #[serde(default)]
    pub spouts: Vec<Component>,
    /// The bolts.
    #[serde(default)]
    pub bolts: Vec<Component>,
    /// How tuples flow between them.
    #[serde(default)]
    pub streams: Vec<Stream>,
}

/// One entry of `includes`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Include {
    /// Whether `file` is a resource of the topology jar rather than a file.
    #[serde(default)]
    pub resource: bool,
    /// The file.
    pub file: String,
    /// Whether its values replace those already read (`false`: it only fills what is missing).
    #[serde(default, rename = "override")]
    pub overrides: bool,
}

/// A spout or a bolt.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Component {
    /// Its id, which streams name.
    pub id: String,
    /// Its Java class.
    pub class_name: String,
    /// How many instances Storm runs.
    #[serde(default)]
    pub parallelism: Option<u32>,
    /// Its constructor's arguments.
    #[serde(default)]
    pub constructor_args: Vec<Value>,
    /// Methods called on it after construction.
    #[serde(default)]
    pub config_methods: Vec<Value>,
    /// Fields set on it after construction.
    #[serde(default)]
    pub properties: Vec<Value>,
}

/// A stream between two components.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stream {
    /// An optional name (read, not used: squall's stages are wired by what they are).
    #[serde(default)]
    #[allow(dead_code)]
    pub name: Option<String>,
    /// The emitting component's id (`__system` for Storm's ticks).
    pub from: String,
    /// The receiving component's id.
    pub to: String,
    /// How tuples are spread over the receiver's instances.
    pub grouping: Grouping,
}

/// A stream's grouping.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Grouping {
    /// SHUFFLE, FIELDS, LOCAL_OR_SHUFFLE, ALL, GLOBAL, NONE, DIRECT or CUSTOM.
    #[serde(rename = "type")]
    pub kind: String,
    /// The fields of a FIELDS grouping.
    #[serde(default)]
    pub args: Vec<String>,
    /// The stream, when not the default one (read, not used: squall's stages are wired by what
    /// they are).
    #[serde(default)]
    #[allow(dead_code)]
    pub stream_id: Option<String>,
    /// The class of a CUSTOM grouping.
    #[serde(default)]
    pub custom_class: Option<Value>,
}

/// One file's configuration, to be layered in order (later layers win).
#[derive(Debug, Clone)]
pub struct ConfigLayer {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its keys.
    pub config: Mapping,
}

/// A file read with its includes: the configuration layers in the order they apply, and the
/// topology's parts with their file's text (for line numbers).
#[derive(Debug, Default)]
pub struct Merged {
    /// Configuration, lowest first.
    pub layers: Vec<ConfigLayer>,
    /// Spouts, with the file and text each came from.
    pub spouts: Vec<(Component, Source)>,
    /// Bolts, likewise.
    pub bolts: Vec<(Component, Source)>,
    /// Streams.
    pub streams: Vec<(Stream, Source)>,
    /// The first name given.
    pub name: Option<String>,
    /// Resources taken to be squall's defaults.
    pub defaults_included: bool,
}

/// A file and its text (after substitution), for error lines.
#[derive(Debug, Clone)]
pub struct Source {
    /// The file.
    pub path: PathBuf,
    /// Its text.
    pub text: std::sync::Arc<str>,
}
