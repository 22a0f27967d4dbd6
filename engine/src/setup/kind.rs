//! The `opensearch` frontier kind: what this crate registers in squall's [`Frontiers`].

use async_trait::async_trait;
use squall::config::flux::{FluxClass, FluxPart};
use squall::config::{CrawlConfig, FrontierKind, Frontiers, OpenFailure};
use squall::frontier::Frontier;

use super::keys::{IndexFrontierConfig, PREFIXES};
use super::open::{OpenError, open_index_frontier};
use crate::status_index::spouts::STATUS_INDEX_SPOUTS;

/// The kind's name in `frontier.kind`.
pub const OPENSEARCH: &str = "opensearch";

/// StormCrawler's two engine modules, whose classes have the same names and the same roles.
const MODULES: &[&str] = &["opensearch.", "elasticsearch."];

/// Adds this crate's frontier kind, `opensearch` (an Elasticsearch or OpenSearch cluster, the
/// `es.*` and `opensearch.*` keys, StormCrawler's engine classes), to `frontiers`.
pub fn register(frontiers: &mut Frontiers) {
    frontiers.register(Opensearch);
}

/// squall's kinds with this crate's: `embedded` and `opensearch`.
pub fn frontiers() -> Frontiers {
    let mut frontiers = Frontiers::new();
    register(&mut frontiers);
    frontiers
}

/// Opens the frontier `config` describes, of either kind this crate knows (`frontier.kind`:
/// `embedded`, or `opensearch` with the `es.*` keys). The `es.*` keys are checked whichever
/// frontier is chosen, so that a typo never passes unseen. Another kind (`urlfrontier`: see
/// `squall_urlfrontier::register`) is refused, naming the kinds known here.
pub async fn open(config: &CrawlConfig) -> Result<Frontier, OpenError> {
    Ok(frontiers().open(config).await?)
}

/// `opensearch`: the status index or the queue frontier ([`IndexFrontierConfig`] lists the keys).
struct Opensearch;

#[async_trait]
impl FrontierKind for Opensearch {
    fn name(&self) -> &'static str {
        OPENSEARCH
    }

    fn key_prefixes(&self) -> Vec<&'static str> {
        PREFIXES.to_vec()
    }

    fn flux_classes(&self) -> Vec<FluxClass> {
        MODULES
            .iter()
            .flat_map(|module| module_classes(module))
            .collect()
    }

    /// The `es.*` keys are checked whichever frontier is chosen, so that a typo never passes.
    fn check(&self, config: &CrawlConfig) -> Result<(), OpenFailure> {
        IndexFrontierConfig::from_config(config)?;
        Ok(())
    }

    async fn open(&self, config: &CrawlConfig) -> Result<Frontier, OpenFailure> {
        let index = IndexFrontierConfig::from_config(config)?;
        Ok(open_index_frontier(config, &index).await?)
    }
}

/// The classes of one of StormCrawler's engine modules (`opensearch.`).
fn module_classes(module: &str) -> Vec<FluxClass> {
    let class = |name: &str, part| FluxClass::new(format!("{module}{name}"), part);
    // The status-index spouts of either module, each standing for its `es.status.spout`.
    let mut classes: Vec<FluxClass> = STATUS_INDEX_SPOUTS
        .iter()
        .map(|spout| class(spout.flux_class, FluxPart::Spout).set("es.status.spout", spout.name))
        .collect();
    classes.extend([
        class("persistence.StatusUpdaterBolt", FluxPart::StatusUpdater),
        class("bolt.IndexerBolt", FluxPart::Bolt).set("indexer.kind", "opensearch"),
        class("bolt.DeletionBolt", FluxPart::Bolt)
            .note("squall leaves pages gone from the web in the content index"),
        class("metrics.StatusMetricsBolt", FluxPart::Bolt)
            .note("squall's status counts are Prometheus metrics (--metrics-addr)"),
    ]);
    classes
}
