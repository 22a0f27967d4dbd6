//! The `urlfrontier` frontier kind: what this crate registers in squall's [`Frontiers`].

use async_trait::async_trait;
use squall::config::flux::{FluxClass, FluxPart};
use squall::config::{CrawlConfig, FrontierKind, Frontiers, OpenFailure};
use squall::frontier::Frontier;

use super::{PREFIX, open};

/// The kind's name in `frontier.kind`.
pub const URLFRONTIER: &str = "urlfrontier";

/// Adds this crate's frontier kind, `urlfrontier` (a URLFrontier server, over gRPC; the
/// `urlfrontier.*` keys; StormCrawler's URLFrontier spout and status updater), to `frontiers`.
pub fn register(frontiers: &mut Frontiers) {
    frontiers.register(UrlFrontier);
}

/// `urlfrontier`: [`open`]'s spout and status store, with no catalog (the server lists its URLs).
struct UrlFrontier;

#[async_trait]
impl FrontierKind for UrlFrontier {
    fn name(&self) -> &'static str {
        URLFRONTIER
    }

    fn key_prefixes(&self) -> Vec<&'static str> {
        vec![PREFIX]
    }

    fn flux_classes(&self) -> Vec<FluxClass> {
        vec![
            FluxClass::new("urlfrontier.Spout", FluxPart::Spout),
            FluxClass::new("urlfrontier.StatusUpdaterBolt", FluxPart::StatusUpdater),
        ]
    }

    async fn open(&self, config: &CrawlConfig) -> Result<Frontier, OpenFailure> {
        let (spout, store, description) = open(config).await?;
        Ok(Frontier {
            spout,
            store,
            catalog: None,
            description,
            leases: None,
        })
    }
}
