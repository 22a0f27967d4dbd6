//! Layering configuration sources: YAML text or files, then `KEY=VALUE` overrides.

use std::path::{Path, PathBuf};

use serde_norway::{Mapping, Value};

use super::frontiers::{Frontiers, unknown_kind};
use super::keys::field_names;
use super::stormcrawler::ignored_reason;
use super::topology::TopologySettings;
use super::yaml_error::locate;
use super::{ConfigError, CrawlConfig, EXTENSION_KEYS};
use crate::fetch::FetcherSettings;
use crate::filter::FilterSettings;
use crate::frontier::FrontierSettings;
use crate::index::IndexerSettings;
use crate::parse::ParserSettings;
use crate::protocol::{AgentSettings, HttpSettings, ProtocolSettings, RobotsSettings};
use crate::schedule::{ScheduleSettings, is_custom_interval_key};
use crate::settings::{KeyedSettings, units};
use crate::spout::SpoutSettings;
use crate::status::StatusSettings;
use crate::warc::WarcSettings;

/// Lists the stages whose settings type reads its own keys, once: the builder hands each its keys,
/// the known keys and the checks come from this list.
macro_rules! keyed_stages {
    ($($(#[$doc:meta])* $field:ident: $type:ty,)*) => {
        /// The settings of the stages that read their own keys, as a configuration gives them
        /// (each is the field of [`CrawlConfig`] of the same name).
        struct KeyedStages {
            $($(#[$doc])* $field: $type,)*
        }

        impl KeyedStages {
            /// Takes the keys each settings type names out of `keys` and reads them into it.
            fn take(keys: &mut Mapping) -> Result<Self, ConfigError> {
                Ok(KeyedStages { $($field: take_keys(keys)?,)* })
            }

            /// The configuration they make, before the extension keys, the keys set aside and the
            /// files' directories are added (every section is a keyed stage).
            fn into_config(self) -> CrawlConfig {
                CrawlConfig {
                    $($field: self.$field,)*
                    extensions: ExtensionKeys::default(),
                    ignored_keys: Vec::new(),
                    config_dirs: Vec::new(),
                }
            }

            /// The keys they read.
            fn keys() -> Vec<String> {
                let mut keys = Vec::new();
                $(keys.extend(field_names::<$type>());)*
                keys
            }

            /// The keys they read, each with its one default as a file writes it.
            #[cfg(test)]
            fn defaults() -> Vec<(String, serde_json::Value)> {
                let mut defaults = Vec::new();
                $(defaults.extend(crate::settings::documented_defaults::<$type>());)*
                defaults
            }
        }

        impl CrawlConfig {
            /// The checks of the stages that read their own keys, in order: the first key whose
            /// value makes no sense, and why.
            pub(super) fn check_keyed_stages(&self) -> Result<(), (&'static str, String)> {
                $(self.$field.check()?;)*
                Ok(())
            }
        }
    };
}

keyed_stages! {
    /// `http.agent.*`: who the crawler says it is.
    agent: AgentSettings,
    /// `http.*`: the HTTP protocol.
    http: HttpSettings,
    /// `fetcher.*`, `partition.url.mode`: politeness and concurrency, and the queues' keys.
    fetcher: FetcherSettings,
    /// `protocol.schemes`: which protocol fetches which scheme.
    protocols: ProtocolSettings,
    /// `http.skip.robots`, `robots.*`: robots.txt.
    robots: RobotsSettings,
    /// `urlfilter.*`, `urlnormalizer.*`, `max.depth`, `urlfilters.config.file`: the URL filters.
    filters: FilterSettings,
    /// `parser.*`, `parsefilter.*`, the parse filter files, `metadata.transfer`,
    /// `metadata.track.*`, `redirections.allowed`, `sitemap.discovery`: the parser.
    parser: ParserSettings,
    /// `indexer.*`: the content indexer.
    indexer: IndexerSettings,
    /// `fetchInterval.*`, `max.fetch.errors`: when URLs are due again.
    schedule: ScheduleSettings,
    /// `status.updater.*`, `metadata.persist`: the status updater.
    status: StatusSettings,
    /// `spout.*`, `topology.max.spout.pending`: the spouts.
    spout: SpoutSettings,
    /// `topology.shutdown.timeout`: the topology as a whole.
    topology: TopologySettings,
    /// `frontier.*`: which frontier, and how much one query reads.
    frontier: FrontierSettings,
    /// `warc.*`: WARC output.
    warc: WarcSettings,
}

/// The keys of a YAML document (a flux's, nested under `config:`, too); an error is the line it is
/// about and what is wrong.
fn parse_mapping(text: &str) -> Result<Mapping, (usize, String)> {
    let document: Value = serde_norway::from_str(text).map_err(|error| {
        let (line, words) = locate(&error, text);
        (line, format!("not valid YAML: {words}"))
    })?;
    let mapping = match document {
        Value::Null => Mapping::new(),
        Value::Mapping(mut mapping) => {
            // Flux files nest the settings under `config:`.
            let nested = mapping.remove("config");
            match nested {
                Some(Value::Mapping(inner)) if mapping.is_empty() => inner,
                Some(other) => {
                    mapping.insert(Value::from("config"), other);
                    mapping
                }
                None => mapping,
            }
        }
        _ => {
            let what = "the top level must be a mapping of keys to values";
            return Err((1, what.to_string()));
        }
    };
    if let Some((line, key)) = non_string_key(&mapping, text) {
        return Err((line, format!("key {key} is not a string")));
    }
    Ok(mapping)
}

/// The first key of `mapping` that is not a string, as YAML writes it, and its line in `text`.
pub(super) fn non_string_key(mapping: &Mapping, text: &str) -> Option<(usize, String)> {
    let key = mapping.keys().find(|key| !key.is_string())?;
    let written = serde_norway::to_string(key).unwrap_or_default();
    let written = written.trim_end().to_string();
    let line = text
        .lines()
        .position(|line| line.trim_start().starts_with(&format!("{written}:")))
        .map_or(1, |at| at + 1);
    Some((line, written))
}

/// Layers configuration sources: YAML text or files, then `KEY=VALUE` overrides, then validation.
///
/// Keys other crates read are kept as written for them ([`CrawlConfig::extension`]). Given the
/// registry of frontier kinds a program opens ([`frontiers`](Self::frontiers)) and the prefixes of
/// the other crates it uses ([`extension_prefixes`](Self::extension_prefixes)), the builder keeps
/// only the keys under those prefixes, refuses any other unknown key, and refuses a
/// `frontier.kind` no kind registered. Without them, it keeps every key outside the core's own
/// namespaces (`fetcher.`, `http.`, ...) that is not close to a core key, for the crate that reads
/// it to check.
#[derive(Default)]
pub struct ConfigBuilder {
    values: Mapping,
    /// The directories of the files read, in order.
    dirs: Vec<PathBuf>,
    /// What the program reads beside the core's keys, when it said.
    others: Option<OtherKeys>,
}

/// The frontier kinds and the key prefixes a program knows besides the core's.
#[derive(Debug, Default)]
struct OtherKeys {
    /// The kinds `frontier.kind` may name, when a registry was given.
    kinds: Option<Vec<String>>,
    /// The prefixes of the keys other crates read.
    prefixes: Vec<String>,
}

impl ConfigBuilder {
    /// Starts from the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Knows the frontier kinds of `frontiers`: their key prefixes are kept, `frontier.kind` must
    /// name one of them.
    pub fn frontiers(mut self, frontiers: &Frontiers) -> Self {
        let others = self.others.get_or_insert_with(OtherKeys::default);
        others.kinds = Some(frontiers.names());
        let prefixes = frontiers.key_prefixes().into_iter().map(str::to_string);
        others.prefixes.extend(prefixes);
        self
    }

    /// Keeps the keys under `prefixes` for the crates that read them (`browser.`); any other key
    /// outside the core's is refused.
    pub fn extension_prefixes(mut self, prefixes: &[&str]) -> Self {
        let others = self.others.get_or_insert_with(OtherKeys::default);
        others
            .prefixes
            .extend(prefixes.iter().map(|p| p.to_string()));
        self
    }

    /// Adds the keys of a YAML document; later sources override earlier ones.
    pub fn yaml_str(self, text: &str) -> Result<Self, ConfigError> {
        let mapping = parse_mapping(text)
            .map_err(|(line, message)| ConfigError::Syntax(format!("line {line}: {message}")))?;
        self.insert_mapping(mapping)
    }

    /// Adds the keys of `mapping`, read from the file at `path` (whose directory is recorded in
    /// [`CrawlConfig::config_dirs`], as [`yaml_file`](Self::yaml_file) does): a Flux include.
    pub fn yaml_mapping(mut self, path: &Path, mapping: Mapping) -> Result<Self, ConfigError> {
        self.record_dir(path);
        self.insert_mapping(mapping)
    }

    fn insert_mapping(mut self, mapping: Mapping) -> Result<Self, ConfigError> {
        for (key, value) in mapping {
            let Value::String(key) = key else {
                return Err(ConfigError::Syntax(format!("key {key:?} is not a string")));
            };
            let value = super::environment::expand_value(&key, value)?;
            self.values.insert(Value::String(key), value);
        }
        Ok(self)
    }

    /// Records the directory of `path` among the configuration's directories.
    fn record_dir(&mut self, path: &Path) {
        let dir = path.parent().unwrap_or(Path::new(""));
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir.to_path_buf()
        };
        if !self.dirs.contains(&dir) {
            self.dirs.push(dir);
        }
    }

    /// Adds the keys of a YAML file, and records its directory in
    /// [`CrawlConfig::config_dirs`].
    pub fn yaml_file(mut self, path: &Path) -> Result<Self, ConfigError> {
        let text = crate::bounded_file::read_to_string(path, crate::bounded_file::CONFIG_FILE)?;
        self.record_dir(path);
        let mapping = parse_mapping(&text).map_err(|(line, message)| ConfigError::FileSyntax {
            path: path.display().to_string(),
            line,
            message,
        })?;
        self.insert_mapping(mapping)
    }

    /// Overrides one key from `KEY=VALUE`; the value is read as a YAML scalar or list.
    pub fn set(mut self, assignment: &str) -> Result<Self, ConfigError> {
        let Some((key, raw)) = assignment.split_once('=') else {
            return Err(ConfigError::BadOverride(assignment.to_string()));
        };
        // Custom interval keys contain `=` themselves: `fetchInterval.isFeed=true=10`.
        let (key, raw) = if key.starts_with("fetchInterval.") && raw.contains('=') {
            match assignment.rsplit_once('=') {
                Some(split) => split,
                None => (key, raw),
            }
        } else {
            (key, raw)
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(ConfigError::BadOverride(assignment.to_string()));
        }
        let value: Value =
            serde_norway::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()));
        self.values.insert(Value::String(key.to_string()), value);
        Ok(self)
    }

    /// Sets one key to `value` taken as text, never read as YAML: for values given on a command
    /// line that must stay strings whatever they look like (`2024`, `~`, `a #b`).
    pub fn set_text(mut self, key: &str, value: &str) -> Result<Self, ConfigError> {
        let key = key.trim();
        if key.is_empty() {
            return Err(ConfigError::BadOverride(format!("{key}={value}")));
        }
        self.values.insert(
            Value::String(key.to_string()),
            Value::String(value.to_string()),
        );
        Ok(self)
    }

    /// Builds and validates the configuration. Keys other crates read are kept, as written, for
    /// them ([`CrawlConfig::extension`]; which keys: see [`ConfigBuilder`]). StormCrawler's and
    /// Storm's keys that squall does not implement are set aside ([`CrawlConfig::ignored_keys`]);
    /// any other unknown key is an error.
    pub fn build(mut self) -> Result<CrawlConfig, ConfigError> {
        let known = known_keys();
        let mut strict = Mapping::new();
        let mut custom = Vec::new();
        let mut extensions = Mapping::new();
        let mut ignored = Vec::new();
        for (key, value) in std::mem::take(&mut self.values) {
            let Value::String(name) = &key else { continue };
            super::environment::refuse_unfilled(name, &value)?;
            if is_custom_interval_key(name) {
                // Read as the fixed intervals are (whole minutes, negative for never).
                let interval = units::minutes_or_never::deserialize(value).map_err(|_| {
                    ConfigError::InvalidValue {
                        key: name.clone(),
                        message: "must be a whole number of minutes (-1 for never)".to_string(),
                    }
                })?;
                custom.push((name.clone(), interval));
            } else if known.iter().any(|k| k == name) {
                strict.insert(key, value);
            } else if EXTENSION_KEYS.contains(&name.as_str()) {
                extensions.insert(key, value);
            } else if ignored_reason(name).is_some() {
                ignored.push(name.clone());
            } else if self.kept_for_others(name, &known) {
                extensions.insert(key, value);
            } else {
                return Err(unknown_key(name, &known));
            }
        }
        let mut config = KeyedStages::take(&mut strict)?.into_config();
        if let Some(kinds) = self.others.as_ref().and_then(|o| o.kinds.as_ref())
            && !kinds.contains(&config.frontier.kind)
        {
            return Err(ConfigError::InvalidValue {
                key: "frontier.kind".to_string(),
                message: unknown_kind(&config.frontier.kind, kinds),
            });
        }
        config.extensions = ExtensionKeys(extensions);
        config.schedule.custom = custom;
        // Half the shutdown deadline for fetches in progress; the rest drains and writes.
        config.fetcher.stop_grace = config.topology.shutdown_timeout / 2;
        config.validate()?;
        ignored.sort();
        config.ignored_keys = ignored;
        config.config_dirs = self.dirs;
        Ok(config)
    }
}

/// Namespaces of another crate's keys in which the core reads a few keys of its own, as
/// StormCrawler does: the fetcher's pace reads `urlfrontier.backoff.*` and
/// `urlfrontier.max.retry.after`, the rest of `urlfrontier.*` is the URLFrontier client's.
const SHARED_NAMESPACES: &[&str] = &["urlfrontier"];

/// Prefixes in a shared namespace that are the core's alone: an unknown key under them is a typo
/// of the core's keys, named as such.
const CORE_PREFIXES: &[&str] = &["urlfrontier.backoff."];

impl ConfigBuilder {
    /// Whether `name`, a key the core does not know, is kept for the crate that reads it: under
    /// a prefix the program named, or, when it named none, in a namespace (what comes before the
    /// first `.`) that is not the core's nor one or two letters away from one of the core's (a
    /// typo of `fetcher.` is refused, with the closest core key); a namespace the core shares
    /// ([`SHARED_NAMESPACES`]) is the other crate's, but for the core's own prefixes in it
    /// ([`CORE_PREFIXES`]).
    fn kept_for_others(&self, name: &str, known: &[String]) -> bool {
        if CORE_PREFIXES.iter().any(|prefix| name.starts_with(prefix)) {
            return false;
        }
        if let Some(others) = &self.others {
            return others.prefixes.iter().any(|p| name.starts_with(p.as_str()));
        }
        let Some((namespace, _)) = name.split_once('.') else {
            return false;
        };
        let near_the_core = known.iter().any(|key| {
            let core = key.split('.').next().unwrap_or_default();
            !SHARED_NAMESPACES.contains(&core) && strsim::levenshtein(core, namespace) <= 2
        });
        !near_the_core
    }
}

/// Every key a config file may hold (custom `fetchInterval.*` keys aside): the keys each stage's
/// settings type reads.
pub fn known_keys() -> Vec<String> {
    KeyedStages::keys()
}

/// Every key a stage's settings type reads, with the value the stage runs with when the key is
/// absent, as a file writes it (see [`crate::settings::documented_defaults`]).
#[cfg(test)]
pub(super) fn key_defaults() -> Vec<(String, serde_json::Value)> {
    KeyedStages::defaults()
}

/// Takes the keys a settings type names (its serde field names) out of `keys` and reads them into
/// it: a stage whose settings type reads its own keys. Its own checks
/// ([`KeyedSettings::check`]) run with the whole configuration's, once every value is read, so that
/// a bad value is named before a missing one.
fn take_keys<T: KeyedSettings>(keys: &mut Mapping) -> Result<T, ConfigError> {
    let names = field_names::<T>();
    let (taken, rest): (Mapping, Mapping) =
        std::mem::take(keys).into_iter().partition(|(key, _)| {
            key.as_str()
                .is_some_and(|name| names.iter().any(|n| n == name))
        });
    *keys = rest;
    deserialize_keys(taken)
}

/// Reads checked keys into a struct of fields named by keys, naming the key of a bad value.
pub(crate) fn deserialize_keys<T: serde::de::DeserializeOwned>(
    keys: Mapping,
) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(Value::Mapping(keys.clone())).map_err(|e| {
        let path = e.path().to_string();
        let named = keys
            .keys()
            .filter_map(Value::as_str)
            .any(|key| path.starts_with(key));
        ConfigError::InvalidValue {
            key: if named {
                path
            } else {
                refused_key::<T>(&keys).unwrap_or(path)
            },
            message: e.inner().to_string(),
        }
    })
}

/// The key whose value `T` refuses when read alone: the key of a bad value read through a section
/// flattened into `T` (`keyed_settings!`'s `sections`), where serde's path loses it.
fn refused_key<T: serde::de::DeserializeOwned>(keys: &Mapping) -> Option<String> {
    keys.iter().find_map(|(key, value)| {
        let mut alone = Mapping::new();
        alone.insert(key.clone(), value.clone());
        let refused = serde_norway::from_value::<T>(Value::Mapping(alone)).is_err();
        key.as_str().filter(|_| refused).map(str::to_string)
    })
}

/// The error for a key nobody knows, with the closest known key when one is close.
pub(crate) fn unknown_key(name: &str, known: &[String]) -> ConfigError {
    let suggestion = known
        .iter()
        .map(|k| (strsim::jaro_winkler(k, name), k))
        .filter(|(score, _)| *score > 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k.clone());
    ConfigError::UnknownKey {
        key: name.to_string(),
        suggestion,
    }
}

/// Keys other crates read, kept as written (see [`CrawlConfig::extension`]).
#[derive(Clone, Default, PartialEq)]
pub struct ExtensionKeys(Mapping);

impl std::fmt::Debug for ExtensionKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        super::environment::debug_keys(f, &self.0)
    }
}

impl std::fmt::Debug for ConfigBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        super::environment::debug_keys(f, &self.values)
    }
}

impl ExtensionKeys {
    /// Sets `key` to the text `value`, as a configuration file would (the value is read as YAML,
    /// so `"3"` is a number and `"[a, b]"` a list). Keys are checked when a section is read.
    pub fn set(&mut self, key: &str, value: &str) {
        let value = serde_norway::from_str(value).unwrap_or_else(|_| Value::from(value));
        self.0.insert(Value::from(key), value);
    }

    /// The value of `key`, read into `T` (the error names the key).
    pub(super) fn key<T: serde::de::DeserializeOwned>(
        &self,
        key: &str,
    ) -> Result<Option<T>, ConfigError> {
        let Some(value) = self.0.get(Value::from(key)) else {
            return Ok(None);
        };
        serde_norway::from_value(value.clone())
            .map(Some)
            .map_err(|error| ConfigError::InvalidValue {
                key: key.to_string(),
                message: error.to_string(),
            })
    }

    /// Reads the keys under `prefixes` (those going on with one of `others` left out) into `T`,
    /// whose serde field names are the keys with the prefix left out; a key `T` does not know is
    /// refused with the closest one it knows.
    pub(super) fn section<T>(&self, prefixes: &[&str], others: &[&str]) -> Result<T, ConfigError>
    where
        T: serde::de::DeserializeOwned + serde::Serialize + Default,
    {
        let known = field_names::<T>();
        let canonical = prefixes.first().copied().unwrap_or_default();
        let mut strict = Mapping::new();
        for (key, value) in &self.0 {
            let Some(name) = key.as_str() else { continue };
            let Some(rest) = prefixes.iter().find_map(|p| name.strip_prefix(p)) else {
                continue;
            };
            if others.iter().any(|other| rest.starts_with(other)) {
                continue;
            }
            if !known.iter().any(|k| k == rest) {
                let spelled: Vec<String> =
                    known.iter().map(|k| format!("{canonical}{k}")).collect();
                return Err(unknown_key(name, &spelled));
            }
            strict.insert(Value::from(rest), value.clone());
        }
        deserialize_keys(strict).map_err(|error| match error {
            ConfigError::InvalidValue { key, message } => ConfigError::InvalidValue {
                key: format!("{canonical}{key}"),
                message,
            },
            other => other,
        })
    }
}
