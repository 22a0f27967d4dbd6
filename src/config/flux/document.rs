//! A Flux file as written: its includes, config, spouts, bolts and streams, read with its
//! includes merged as Flux merges them.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_norway::{Mapping, Value};

use super::FluxError;
use super::substitute::Substitutions;

/// StormCrawler core's defaults, which a flux includes from the topology jar: squall's own
/// defaults stand for them.
pub const CORE_DEFAULTS: &str = "crawler-default.yaml";

/// How deep includes may nest (a file including itself would never end).
const MAX_DEPTH: usize = 8;

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

/// Reads `path` and its includes, as Flux does: each file's placeholders substituted, then its
/// includes merged in order (an `override: true` include's values replace those read before; an
/// `override: false` one only fills what is missing), components by id the same way.
pub fn read(path: &Path, substitutions: &Substitutions) -> Result<Merged, FluxError> {
    read_at(path, substitutions, 0)
}

fn read_at(path: &Path, substitutions: &Substitutions, depth: usize) -> Result<Merged, FluxError> {
    let display = path.display().to_string();
    if depth > MAX_DEPTH {
        return Err(FluxError::Include {
            path: display,
            message: format!("includes nest more than {MAX_DEPTH} deep (a file including itself?)"),
        });
    }
    let raw = std::fs::read_to_string(path).map_err(|source| FluxError::Read {
        path: display.clone(),
        source,
    })?;
    let text = substitutions.apply(path, &raw)?;
    let document: Document = serde_norway::from_str(&text).map_err(|error| FluxError::Syntax {
        path: display.clone(),
        message: error.to_string(),
    })?;
    let source = Source {
        path: path.to_path_buf(),
        text: text.into(),
    };
    let mut merged = Merged {
        name: document.name.clone(),
        ..Merged::default()
    };
    if !document.components.is_empty() {
        return Err(FluxError::Unsupported {
            path: display,
            line: super::substitute::line_of(&source.text, "components:"),
            what: "`components`: none of the classes squall maps takes one".to_string(),
        });
    }
    merged.layers.push(ConfigLayer {
        path: path.to_path_buf(),
        config: document.config.unwrap_or_default(),
    });
    let own = |items: Vec<Component>| items.into_iter().map(|c| (c, source.clone())).collect();
    merged.spouts = own(document.spouts);
    merged.bolts = own(document.bolts);
    merged.streams = document
        .streams
        .into_iter()
        .map(|s| (s, source.clone()))
        .collect();
    for include in &document.includes {
        let included = read_include(path, include, substitutions, depth)?;
        merge(&mut merged, included, include.overrides);
    }
    Ok(merged)
}

/// One include, read; a resource is StormCrawler's defaults or an error naming it.
fn read_include(
    from: &Path,
    include: &Include,
    substitutions: &Substitutions,
    depth: usize,
) -> Result<Merged, FluxError> {
    if include.resource {
        if include.file.trim_start_matches('/') == CORE_DEFAULTS {
            return Ok(Merged {
                defaults_included: true,
                ..Merged::default()
            });
        }
        return Err(FluxError::Include {
            path: from.display().to_string(),
            message: format!(
                "resource {} is inside a Java topology jar, which squall has not: give it as a \
                 file (resource: false)",
                include.file
            ),
        });
    }
    let path = include_path(from, &include.file);
    read_at(&path, substitutions, depth + 1)
}

/// Where an included file is: as Flux finds it, from the working directory; failing that, beside
/// the file that includes it.
fn include_path(from: &Path, file: &str) -> PathBuf {
    let given = PathBuf::from(file);
    if given.is_absolute() || given.exists() {
        return given;
    }
    match from.parent() {
        Some(dir) => dir.join(file),
        None => given,
    }
}

/// Merges `included` into `into`: overriding layers go above everything read so far, the others
/// below; components and streams are added, an overriding include's replacing those of the same id.
fn merge(into: &mut Merged, included: Merged, overrides: bool) {
    if overrides {
        into.layers.extend(included.layers);
    } else {
        let mut layers = included.layers;
        layers.append(&mut into.layers);
        into.layers = layers;
    }
    for (list, more) in [
        (&mut into.spouts, included.spouts),
        (&mut into.bolts, included.bolts),
    ] {
        for (component, source) in more {
            match list.iter().position(|(c, _)| c.id == component.id) {
                Some(at) if overrides => list[at] = (component, source),
                Some(_) => {}
                None => list.push((component, source)),
            }
        }
    }
    into.streams.extend(included.streams);
    into.defaults_included |= included.defaults_included;
    if into.name.is_none() {
        into.name = included.name;
    }
}
