//! The seeds: given on the command line, in `--seeds` files and in the flux's seed files, injected
//! before the crawl starts.

use std::path::PathBuf;

use anyhow::{Context, bail};
use squall::config::flux::FluxTopology;
use squall::frontier::{Catalog, UrlQuery};
use squall::redact;
use squall::topology::Crawler;

use crate::args::Args;

/// The seed URLs and the seed files, read as they are injected (a batch at a time).
pub(crate) struct Seeds {
    /// The URLs given (and the demo site's).
    pub(crate) urls: Vec<String>,
    /// `--seeds`, then the flux's seed files.
    files: Vec<PathBuf>,
}

impl Seeds {
    /// The seeds `args` give, with the seed files of `flux`.
    pub(crate) fn given(args: &Args, flux: Option<&FluxTopology>) -> anyhow::Result<Self> {
        let flux_files = match flux {
            Some(flux) => flux.seed_files()?,
            None => Vec::new(),
        };
        Ok(Seeds {
            urls: args.seed_urls.clone(),
            files: args.seeds_file.iter().cloned().chain(flux_files).collect(),
        })
    }

    /// Injects every seed, saying which were skipped and how many went in; with none, refuses a
    /// frontier that holds nothing ([`refuse_an_empty_crawl`]).
    pub(crate) async fn inject(
        &self,
        crawler: &Crawler,
        catalog: Option<&dyn Catalog>,
    ) -> anyhow::Result<()> {
        let mut report = crawler.inject(&self.urls).await;
        for path in &self.files {
            let more = crawler.inject_file(path).await?;
            report.accepted += more.accepted;
            report.rejected.extend(more.rejected);
        }
        for (seed, reason) in &report.rejected {
            eprintln!("skipping seed {:?}: {reason}", redact::url_text(seed));
        }
        if report.accepted > 0 {
            eprintln!("{} seeds injected", report.accepted);
            Ok(())
        } else {
            refuse_an_empty_crawl(catalog, report.rejected.len()).await
        }
    }
}

/// With no seed injected, a frontier that holds no URL leaves nothing to crawl: an error, rather
/// than a crawl that waits forever. A frontier that cannot be counted (a URLFrontier server) is
/// left to run. An index that counts none is refreshed and counted again: seeds injected just
/// before (StormCrawler's injection topology, then its crawl) may not show yet.
async fn refuse_an_empty_crawl(
    catalog: Option<&dyn Catalog>,
    rejected: usize,
) -> anyhow::Result<()> {
    let Some(catalog) = catalog else {
        return Ok(());
    };
    let count = || async {
        catalog
            .count(&UrlQuery::default())
            .await
            .context("cannot count the URLs the frontier holds")
    };
    if count().await? > 0 {
        return Ok(());
    }
    catalog
        .settle()
        .await
        .context("cannot refresh the frontier to count the URLs it holds")?;
    if count().await? > 0 {
        return Ok(());
    }
    let seeds = match rejected {
        0 => "no seed was given".to_string(),
        1 => "the one seed given is not valid".to_string(),
        n => format!("none of the {n} seeds given is valid"),
    };
    bail!("nothing to crawl: {seeds}, and the frontier holds no URL")
}
