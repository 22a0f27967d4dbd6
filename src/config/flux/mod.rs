//! StormCrawler's Flux topology files (`crawler.flux`, `injection.flux`) read as they are.
//!
//! A flux names its configuration files (`includes`, merged as Flux merges them, with Flux's
//! `${name}` and `${ENV-NAME}` substitution) and its components by Java class. Each class squall
//! knows maps to the squall component that does its job ([`classes`]: the core's classes, and
//! those the frontier kinds registered in [`Frontiers`] name), and its spout's
//! `parallelism` to `spout.parallelism`; an unknown class, option or grouping is refused with its
//! name and line. What the topology then is:
//!
//! - [`FluxTopology::layers`]: the configuration, file by file, for [`ConfigBuilder`];
//! - [`FluxTopology::settings`]: the keys the classes set (`frontier.kind` and the keys a frontier
//!   kind's class sets, such as the engine's `es.status.spout`; `spout.parallelism`,
//!   `indexer.kind`, `warc.enabled`);
//! - [`FluxTopology::seed_sources`]: what its FileSpouts read, and whether it crawls at all
//!   ([`FluxTopology::crawls`]; `injection.flux` only injects).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use squall::config::{ConfigBuilder, Frontiers};
//! use squall::config::flux::{FluxTopology, Substitutions};
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("conf.yaml"), "config:\n  http.agent.name: docs\n")?;
//! let flux = dir.path().join("crawler.flux");
//! std::fs::write(&flux, r#"
//! name: "crawler"
//! includes:
//!   - resource: false
//!     file: "conf.yaml"
//!     override: true
//! spouts:
//!   - id: "spout"
//!     className: "org.apache.stormcrawler.opensearch.persistence.AggregationSpout"
//!     parallelism: 10
//! bolts:
//!   - id: "fetcher"
//!     className: "org.apache.stormcrawler.bolt.FetcherBolt"
//!     parallelism: 1
//! streams:
//!   - from: "spout"
//!     to: "fetcher"
//!     grouping:
//!       type: SHUFFLE
//! "#)?;
//! // The engine's kind brings its classes (AggregationSpout among them).
//! let mut frontiers = Frontiers::new();
//! squall_engine::register(&mut frontiers);
//! let topology = FluxTopology::load(&flux, &Substitutions::default(), &frontiers)?;
//! let config = topology.apply(ConfigBuilder::new())?.build()?;
//! assert_eq!(config.spout.parallelism, 10);
//! assert!(topology.crawls);
//! # Ok(())
//! # }
//! ```
//!
//! [`ConfigBuilder`]: super::ConfigBuilder
//! [`Frontiers`]: super::Frontiers

pub mod classes;
mod document;
mod includes;
mod plan;
mod substitute;

use std::path::{Path, PathBuf};

pub use classes::{FluxClass, FluxPart};
pub use document::ConfigLayer;
pub use includes::{MAX_FILE_BYTES, MAX_INCLUDES, MAX_TOTAL_BYTES};
pub use substitute::Substitutions;

use classes::Role;
use document::{Component, Merged, Source};
use substitute::line_of;

use super::{ConfigBuilder, ConfigError, Frontiers};

/// Why a flux could not be used. Each names the file, and the line where it can.
#[derive(Debug, thiserror::Error)]
pub enum FluxError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file holds more than a file of its kind may ([`crate::bounded_file`]).
    #[error(transparent)]
    TooLarge(crate::bounded_file::BoundedFileError),
    /// A placeholder could not be filled.
    #[error("{path}, line {line}: {message}")]
    Substitution {
        /// The file.
        path: String,
        /// Where.
        line: usize,
        /// What is missing.
        message: String,
    },
    /// Not a flux: bad YAML, an unknown field or a key that is not a string.
    #[error("{path}, line {line}: not a Flux topology squall reads: {message}")]
    Syntax {
        /// The file.
        path: String,
        /// The line the error is about (1-based).
        line: usize,
        /// The parser's words.
        message: String,
    },
    /// A class squall does not map to any of its components.
    #[error("{path}, line {line}: {kind} `{id}` is of class {class}, which squall does not know")]
    UnknownClass {
        /// The file.
        path: String,
        /// Where.
        line: usize,
        /// `spout` or `bolt`.
        kind: &'static str,
        /// The component's id.
        id: String,
        /// Its class.
        class: String,
    },
    /// Something squall does not do as written.
    #[error("{path}, line {line}: {what}")]
    Unsupported {
        /// The file.
        path: String,
        /// Where.
        line: usize,
        /// What, named.
        what: String,
    },
    /// An include that cannot be read as one.
    #[error("{path}: {message}")]
    Include {
        /// The including file.
        path: String,
        /// Why.
        message: String,
    },
    /// A bound on what one read of a flux may take was hit: which bound, and the file where.
    #[error("{path}: over the bound on {bound} ({limit}): {hint}")]
    Bound {
        /// The file being read.
        path: String,
        /// The bound.
        bound: &'static str,
        /// Its value.
        limit: u64,
        /// What may have caused it.
        hint: &'static str,
    },
    /// The topology as a whole makes no crawl squall can run.
    #[error("{path}: {message}")]
    Topology {
        /// The flux.
        path: String,
        /// Why.
        message: String,
    },
    /// A configuration key of a file, or one the classes set, is not accepted.
    #[error("{0}")]
    Config(#[from] ConfigError),
}

crate::bounded_file::from_bounded_file_error!(FluxError);

/// A flux, read and mapped to squall.
#[derive(Debug, Clone)]
pub struct FluxTopology {
    /// Its `name`.
    pub name: String,
    /// Its configuration, file by file, lowest first.
    pub layers: Vec<ConfigLayer>,
    /// The keys its classes set, as `key=value` text.
    pub settings: Vec<(String, String)>,
    /// What its FileSpouts read: a directory and a glob over its file names, as written (a
    /// relative directory is from the working directory, as Storm reads it);
    /// [`seed_files`](Self::seed_files) lists them.
    pub seed_sources: Vec<SeedSource>,
    /// Whether it crawls (a spout over a frontier); `false` for a topology that only injects.
    pub crawls: bool,
    /// What squall does differently, one line per component that differs.
    pub notes: Vec<String>,
}

/// Groupings Storm knows.
const GROUPINGS: &[&str] = &[
    "SHUFFLE",
    "FIELDS",
    "LOCAL_OR_SHUFFLE",
    "ALL",
    "GLOBAL",
    "NONE",
    "DIRECT",
    "CUSTOM",
];

impl FluxTopology {
    /// Reads the flux at `path` and its includes, with `substitutions`, and maps it to squall: the
    /// core's classes, and those of the kinds registered in `frontiers`.
    pub fn load(
        path: &Path,
        substitutions: &Substitutions,
        frontiers: &Frontiers,
    ) -> Result<Self, FluxError> {
        let merged = includes::read(path, substitutions)?;
        let registered = frontiers.flux_classes();
        check_streams(&merged)?;
        let mut topology = FluxTopology {
            name: merged.name.clone().unwrap_or_else(|| "flux".to_string()),
            layers: merged.layers.clone(),
            settings: Vec::new(),
            seed_sources: Vec::new(),
            crawls: false,
            notes: Vec::new(),
        };
        for (kind, list) in [("spout", &merged.spouts), ("bolt", &merged.bolts)] {
            for (component, source) in list {
                topology.map(kind, component, source, &registered)?;
            }
        }
        if merged.spouts.is_empty() {
            return Err(FluxError::Topology {
                path: path.display().to_string(),
                message: "the topology has no spout".to_string(),
            });
        }
        if merged.defaults_included {
            topology.notes.push(
                "/crawler-default.yaml: squall's own defaults stand for StormCrawler core's"
                    .to_string(),
            );
        }
        Ok(topology)
    }

    /// `builder` with the flux's configuration files, then the keys its classes set.
    pub fn apply(&self, mut builder: ConfigBuilder) -> Result<ConfigBuilder, ConfigError> {
        for layer in &self.layers {
            builder = builder.yaml_mapping(&layer.path, layer.config.clone())?;
        }
        for (key, value) in &self.settings {
            builder = builder.set(&format!("{key}={value}"))?;
        }
        Ok(builder)
    }

    /// Maps one component, refusing what squall cannot do as written.
    fn map(
        &mut self,
        kind: &'static str,
        component: &Component,
        source: &Source,
        registered: &[(String, FluxClass)],
    ) -> Result<(), FluxError> {
        let line = line_of(&source.text, &component.class_name);
        let path = source.path.display().to_string();
        let unsupported = |what: String| FluxError::Unsupported {
            path: path.clone(),
            line,
            what,
        };
        let role = classes::role(&component.class_name, registered)
            .filter(|role| role.is_spout() == (kind == "spout"))
            .ok_or_else(|| FluxError::UnknownClass {
                path: path.clone(),
                line,
                kind,
                id: component.id.clone(),
                class: component.class_name.clone(),
            })?;
        for (option, given) in [
            ("configMethods", !component.config_methods.is_empty()),
            ("properties", !component.properties.is_empty()),
            (
                "constructorArgs",
                !component.constructor_args.is_empty() && !role.takes_arguments(),
            ),
        ] {
            if given {
                return Err(unsupported(format!(
                    "option `{option}` of {kind} `{}` ({}) is not supported by squall",
                    component.id, component.class_name
                )));
            }
        }
        let parallelism = component.parallelism.unwrap_or(1).max(1);
        match &role {
            Role::Frontier { kind, class } => {
                if class.part != FluxPart::Bolt {
                    self.set("frontier.kind", kind);
                }
                for (key, value) in &class.settings {
                    self.set(key, value);
                }
                if class.part == FluxPart::Spout {
                    self.set("spout.parallelism", &parallelism.to_string());
                    self.crawls = true;
                }
            }
            Role::FileSpout => {
                let source = file_spout_source(component).map_err(unsupported)?;
                self.seed_sources.push(source);
            }
            Role::NoIndexer => self.set("indexer.kind", "none"),
            Role::Warc => self.set("warc.enabled", "true"),
            _ => {}
        }
        if let Some(note) = role.note() {
            self.notes
                .push(format!("{kind} `{}`: {note}", component.id));
        }
        if parallelism > 1 && !role.is_spout() {
            self.notes.push(format!(
                "bolt `{}`: parallelism {parallelism} is one stage in squall, sized by its keys",
                component.id
            ));
        }
        Ok(())
    }

    /// The files the FileSpouts read, in order; an error names a directory that cannot be listed
    /// or a pattern that matches no file.
    pub fn seed_files(&self) -> Result<Vec<PathBuf>, FluxError> {
        let mut files = Vec::new();
        for source in &self.seed_sources {
            files.extend(source.files()?);
        }
        Ok(files)
    }

    /// Sets `key` (a later class's value wins over an earlier one's).
    fn set(&mut self, key: &str, value: &str) {
        self.settings.retain(|(k, _)| k != key);
        self.settings.push((key.to_string(), value.to_string()));
    }
}

/// What one FileSpout reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSource {
    /// The directory.
    pub dir: PathBuf,
    /// A glob over its file names.
    pub pattern: String,
}

impl SeedSource {
    /// The directory's files the pattern matches, sorted; an error when there are none.
    pub fn files(&self) -> Result<Vec<PathBuf>, FluxError> {
        let failed = |what: String| FluxError::Topology {
            path: self.dir.display().to_string(),
            message: what,
        };
        let matcher = globset::Glob::new(&self.pattern)
            .map_err(|error| failed(format!("FileSpout pattern {:?}: {error}", self.pattern)))?
            .compile_matcher();
        let entries = std::fs::read_dir(&self.dir)
            .map_err(|error| failed(format!("FileSpout cannot list the directory: {error}")))?;
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .filter(|entry| matcher.is_match(entry.file_name()))
            .map(|entry| entry.path())
            .filter(|path| path.is_file())
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(failed(format!(
                "no file matches the FileSpout's {:?}",
                self.pattern
            )));
        }
        Ok(files)
    }
}

/// A FileSpout's `constructorArgs: [dir, pattern]` or `[dir, pattern, true]`, as StormCrawler
/// reads them.
fn file_spout_source(component: &Component) -> Result<SeedSource, String> {
    let text = |i: usize| component.constructor_args.get(i).and_then(|v| v.as_str());
    let (Some(dir), Some(pattern)) = (text(0), text(1)) else {
        return Err(format!(
            "spout `{}`: FileSpout takes a directory and a file pattern (constructorArgs)",
            component.id
        ));
    };
    if component.constructor_args.len() > 3 {
        return Err(format!(
            "spout `{}`: FileSpout takes at most three arguments",
            component.id
        ));
    }
    Ok(SeedSource {
        dir: PathBuf::from(dir),
        pattern: pattern.to_string(),
    })
}

/// Every stream joins declared components with a grouping Storm knows.
fn check_streams(merged: &Merged) -> Result<(), FluxError> {
    let declared = |id: &str| {
        id == "__system"
            || merged.spouts.iter().any(|(c, _)| c.id == id)
            || merged.bolts.iter().any(|(c, _)| c.id == id)
    };
    for (stream, source) in &merged.streams {
        let path = source.path.display().to_string();
        let line = line_of(&source.text, &format!("from: \"{}\"", stream.from));
        for end in [&stream.from, &stream.to] {
            if !declared(end) {
                return Err(FluxError::Unsupported {
                    path,
                    line,
                    what: format!("a stream names `{end}`, which is neither a spout nor a bolt"),
                });
            }
        }
        if let Err(what) = check_grouping(&stream.grouping) {
            return Err(FluxError::Unsupported { path, line, what });
        }
    }
    Ok(())
}

/// A grouping Storm knows, with what its type needs; a custom one must be StormCrawler's
/// URLStreamGrouping (squall's fetcher queues do its job).
fn check_grouping(grouping: &document::Grouping) -> Result<(), String> {
    let kind = grouping.kind.as_str();
    if !GROUPINGS.contains(&kind) {
        return Err(format!("grouping type {kind} is not one of Storm's"));
    }
    if kind == "FIELDS" && grouping.args.is_empty() {
        return Err("a FIELDS grouping names no field (args)".to_string());
    }
    if kind == "CUSTOM" {
        let class = grouping
            .custom_class
            .as_ref()
            .and_then(|c| c.get("className"))
            .and_then(|c| c.as_str())
            .unwrap_or_default();
        if !class.ends_with("stormcrawler.util.URLStreamGrouping") {
            return Err(format!(
                "custom grouping class {class:?} is not StormCrawler's URLStreamGrouping"
            ));
        }
    }
    Ok(())
}
