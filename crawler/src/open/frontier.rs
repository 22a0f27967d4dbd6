//! The frontier `frontier.kind` names, opened through the registry of frontier kinds.

use squall::config::{CrawlConfig, Frontiers};

/// A frontier's spout and store, what counts its URLs (`None`: a URLFrontier server), the leases
/// it holds (the queue frontier), and a line that names it.
pub(crate) type ChosenFrontier = squall::frontier::Frontier;

/// The frontier kinds this binary opens: squall's `embedded`, squall-engine's `opensearch` and
/// squall-urlfrontier's `urlfrontier` (`urlfrontier.*` keys, examples/urlfrontier-conf.yaml).
pub(crate) fn frontiers() -> Frontiers {
    let mut frontiers = Frontiers::new();
    squall_engine::register(&mut frontiers);
    squall_urlfrontier::register(&mut frontiers);
    frontiers
}

/// The frontier `frontier.kind` names, opened by the kind registered under that name.
pub(crate) async fn open_frontier(config: &CrawlConfig) -> anyhow::Result<ChosenFrontier> {
    let frontier = frontiers().open(config).await?;
    eprintln!("frontier: {}", frontier.description);
    Ok(frontier)
}
