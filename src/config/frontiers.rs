//! The frontier kinds `frontier.kind` can name, as [`Protocols`](crate::protocol::Protocols) is
//! for protocols: each crate contributes its kinds to a [`Frontiers`] registry, and opening a
//! frontier by kind goes through it.
//!
//! A kind ([`FrontierKind`]) says four things: its name, as `frontier.kind` writes it; the key
//! prefixes it reads (`es.`, `urlfrontier.`), which a [`ConfigBuilder`] given the registry
//! ([`ConfigBuilder::frontiers`]) keeps as written instead of refusing them; the StormCrawler
//! classes a Flux topology may name for it ([`FluxClass`]), which [`FluxTopology::load`] maps to
//! it; and how it opens, from the [`CrawlConfig`], into the [`Frontier`] a crawl or a server takes
//! (spout, status store, catalog, a line for people, leases).
//!
//! The core registers `embedded` ([`Frontiers::new`]); `squall_engine::register` adds
//! `opensearch`, `squall_urlfrontier::register` adds `urlfrontier`, and a binary composes them:
//!
//! ```text
//! let mut frontiers = Frontiers::new();
//! squall_engine::register(&mut frontiers);
//! squall_urlfrontier::register(&mut frontiers);
//! let config = ConfigBuilder::new().frontiers(&frontiers).yaml_file(path)?.build()?;
//! let frontier = frontiers.open(&config).await?;
//! ```
//!
//! # A new frontier kind: its module and one registration
//!
//! 1. Its module: a type implementing [`FrontierKind`] (a name, `open`; the key prefixes it
//!    reads, its Flux classes and a check of its keys when it has them), opening a
//!    [`Spout`](crate::frontier::Spout) and a [`StatusStore`](crate::frontier::StatusStore) that
//!    pass [`conformance`](crate::frontier::conformance), with its keys read by
//!    [`CrawlConfig::extension`] under its prefix.
//! 2. One registration: `frontiers.register(MyKind)`, in the crate's `register` function or in the
//!    binary. `frontier.kind: my-kind` then opens it, its keys are kept for it, and a flux naming
//!    its classes crawls it; nothing in the core changes.
//!
//! ```
//! use async_trait::async_trait;
//! use squall::config::{ConfigBuilder, CrawlConfig, FrontierKind, Frontiers, OpenFailure};
//! use squall::frontier::{EmbeddedFrontier, Frontier, QueryLimits};
//! use std::sync::Arc;
//!
//! /// The embedded frontier in the directory `scratch.dir` names.
//! struct Scratch;
//!
//! #[async_trait]
//! impl FrontierKind for Scratch {
//!     fn name(&self) -> &'static str {
//!         "scratch"
//!     }
//!
//!     fn key_prefixes(&self) -> Vec<&'static str> {
//!         vec!["scratch."]
//!     }
//!
//!     async fn open(&self, config: &CrawlConfig) -> Result<Frontier, OpenFailure> {
//!         #[derive(Default, serde::Serialize, serde::Deserialize)]
//!         #[serde(deny_unknown_fields, default)]
//!         struct Keys {
//!             dir: String,
//!         }
//!         let keys: Keys = config.extension(&["scratch."])?;
//!         let frontier = EmbeddedFrontier::open(keys.dir.as_ref())?;
//!         Ok(Frontier {
//!             spout: Box::new(frontier.spout(QueryLimits::default())),
//!             store: Arc::new(frontier.clone()),
//!             catalog: Some(Arc::new(frontier)),
//!             description: format!("scratch frontier in {}", keys.dir),
//!             leases: None,
//!         })
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut frontiers = Frontiers::new();
//! frontiers.register(Scratch);
//! let dir = tempfile::tempdir()?;
//! let config = ConfigBuilder::new()
//!     .frontiers(&frontiers)
//!     .set("http.agent.name=docs-example")?
//!     .set("frontier.kind=scratch")?
//!     .set_text("scratch.dir", &dir.path().display().to_string())?
//!     .build()?;
//! let frontier = frontiers.open(&config).await?;
//! assert!(frontier.description.starts_with("scratch frontier in"));
//! # Ok(()) }
//! ```
//!
//! [`ConfigBuilder`]: super::ConfigBuilder
//! [`ConfigBuilder::frontiers`]: super::ConfigBuilder::frontiers
//! [`FluxTopology::load`]: super::flux::FluxTopology::load

use std::sync::Arc;

use async_trait::async_trait;

use super::CrawlConfig;
use super::flux::FluxClass;
use crate::frontier::{EMBEDDED, EmbeddedFrontier, Frontier, FrontierError};

/// Why a frontier kind could not open its frontier, or refused its keys: the kind's own error.
pub type OpenFailure = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A kind of frontier that `frontier.kind` can name: how it opens from the configuration, and
/// what the configuration and Flux files hold for it.
#[async_trait]
pub trait FrontierKind: Send + Sync {
    /// Its name, as `frontier.kind` writes it.
    fn name(&self) -> &'static str;

    /// The key prefixes it reads (`es.`), kept as written by a [`ConfigBuilder`] that knows the
    /// registry; none by default.
    ///
    /// [`ConfigBuilder`]: super::ConfigBuilder
    fn key_prefixes(&self) -> Vec<&'static str> {
        Vec::new()
    }

    /// The StormCrawler classes a Flux topology may name for it; none by default.
    fn flux_classes(&self) -> Vec<FluxClass> {
        Vec::new()
    }

    /// Checks its keys when another kind is opened, so that a typo in them never passes unseen;
    /// nothing to check by default.
    fn check(&self, config: &CrawlConfig) -> Result<(), OpenFailure> {
        let _ = config;
        Ok(())
    }

    /// Opens the frontier `config` describes.
    async fn open(&self, config: &CrawlConfig) -> Result<Frontier, OpenFailure>;
}

/// Why [`Frontiers::open`] could not open a frontier.
#[derive(Debug, thiserror::Error)]
pub enum FrontierOpenError {
    /// `frontier.kind` names no registered kind.
    #[error("frontier.kind: {}", unknown_kind(kind, known))]
    UnknownKind {
        /// The kind named.
        kind: String,
        /// The kinds registered, in order.
        known: Vec<String>,
    },
    /// A kind refused its keys, or could not open its frontier: its own error.
    #[error(transparent)]
    Kind(OpenFailure),
}

/// The words for a kind nobody registered.
pub(super) fn unknown_kind(kind: &str, known: &[String]) -> String {
    format!(
        "unknown frontier kind `{kind}`; the kinds are {}",
        known.join(", ")
    )
}

/// The frontier kinds a program can open, by name: `embedded` and those crates register.
#[derive(Clone)]
pub struct Frontiers {
    kinds: Vec<Arc<dyn FrontierKind>>,
}

impl std::fmt::Debug for Frontiers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Default for Frontiers {
    fn default() -> Self {
        Self::new()
    }
}

impl Frontiers {
    /// The core's kinds: `embedded`, squall's frontier in a directory on local disk.
    pub fn new() -> Self {
        Frontiers {
            kinds: vec![Arc::new(Embedded)],
        }
    }

    /// Adds `kind`, in place of a kind of the same name registered before.
    pub fn register(&mut self, kind: impl FrontierKind + 'static) -> &mut Self {
        self.kinds.retain(|known| known.name() != kind.name());
        self.kinds.push(Arc::new(kind));
        self
    }

    /// The kind named `name`.
    pub fn kind(&self, name: &str) -> Option<&dyn FrontierKind> {
        let found = self.kinds.iter().find(|kind| kind.name() == name);
        found.map(|kind| kind.as_ref())
    }

    /// The names of the kinds, in the order registered.
    pub fn names(&self) -> Vec<String> {
        let names = self.kinds.iter().map(|kind| kind.name().to_string());
        names.collect()
    }

    /// The key prefixes the kinds read.
    pub fn key_prefixes(&self) -> Vec<&'static str> {
        self.kinds
            .iter()
            .flat_map(|kind| kind.key_prefixes())
            .collect()
    }

    /// The Flux classes of the kinds, each with its kind's name.
    pub fn flux_classes(&self) -> Vec<(String, FluxClass)> {
        let classes = self.kinds.iter().flat_map(|kind| {
            let name = kind.name();
            let classes = kind.flux_classes().into_iter();
            classes.map(move |class| (name.to_string(), class))
        });
        classes.collect()
    }

    /// Opens the frontier of the kind `frontier.kind` names, after every kind checked its keys.
    pub async fn open(&self, config: &CrawlConfig) -> Result<Frontier, FrontierOpenError> {
        for kind in &self.kinds {
            kind.check(config).map_err(FrontierOpenError::Kind)?;
        }
        let name = config.frontier.kind.as_str();
        let Some(kind) = self.kind(name) else {
            return Err(FrontierOpenError::UnknownKind {
                kind: name.to_string(),
                known: self.names(),
            });
        };
        kind.open(config).await.map_err(FrontierOpenError::Kind)
    }
}

/// `embedded`: [`EmbeddedFrontier`] at `frontier.path`, the `frontier.*` keys.
struct Embedded;

#[async_trait]
impl FrontierKind for Embedded {
    fn name(&self) -> &'static str {
        EMBEDDED
    }

    async fn open(&self, config: &CrawlConfig) -> Result<Frontier, OpenFailure> {
        Ok(open_embedded(config)?)
    }
}

/// The embedded frontier of `config` (`frontier.kind: embedded`): [`EmbeddedFrontier`] at
/// `frontier.path`, the `frontier.*` keys applied, its spout sized for `spout.parallelism`. Opened
/// at once (no I/O to wait on), for [`Frontiers::open`] and for a crawler built with no frontier
/// of its own.
pub(crate) fn open_embedded(config: &CrawlConfig) -> Result<Frontier, FrontierError> {
    let path = &config.frontier.path;
    let frontier = EmbeddedFrontier::open_with(path, config.frontier.embedded_options())?;
    let limits = config.frontier.query_limits();
    let spout = frontier.spout(limits.for_instances(config.spout.parallelism));
    Ok(Frontier {
        spout: Box::new(spout),
        store: Arc::new(frontier.clone()),
        catalog: Some(Arc::new(frontier)),
        description: format!("embedded frontier in {}", path.display()),
        leases: None,
    })
}
