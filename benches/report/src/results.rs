//! Every benchmark's file found in a results directory, each read as its section's input type.

use std::path::Path;

use anyhow::Result;

use crate::as_given::AsGivenResult;
use crate::browser::Browser;
use crate::end_to_end::EndToEnd;
use crate::input::read_optional;
use crate::live_view::LiveView;
use crate::machine::Machine;
use crate::one_host::OneHost;
use crate::pace::Pace;
use crate::scale_out::ScaleOut;
use crate::shared_crawl::SharedCrawl;
use crate::spouts::Spouts;
use crate::stages::StageFiles;
use crate::urlfrontier::UrlFrontier;
use crate::urlfrontier_servers::UrlFrontierServers;

/// Everything found in a results directory; `None` where the file does not exist.
#[derive(Debug, Clone, Default)]
pub struct Results {
    /// `machine.json`.
    pub machine: Option<Machine>,
    /// The stage benchmarks' files.
    pub stages: StageFiles,
    /// `spouts.json`.
    pub spouts: Option<Spouts>,
    /// `one_host.json`.
    pub one_host: Option<OneHost>,
    /// `shared_crawl.json`.
    pub shared_crawl: Option<SharedCrawl>,
    /// `scale_out.json`.
    pub scale_out: Option<ScaleOut>,
    /// `end_to_end.json`.
    pub end_to_end: Option<EndToEnd>,
    /// `as_given.json`.
    pub as_given: Option<AsGivenResult>,
    /// `browser.json`.
    pub browser: Option<Browser>,
    /// `urlfrontier.json`.
    pub urlfrontier: Option<UrlFrontier>,
    /// `urlfrontier_servers.json`.
    pub urlfrontier_servers: Option<UrlFrontierServers>,
    /// `live_view.json`.
    pub live_view: Option<LiveView>,
    /// `pace.json`.
    pub pace: Option<Pace>,
}

impl Results {
    /// Reads every known result file that exists in `dir`.
    pub fn read_dir(dir: &Path) -> Result<Self> {
        Ok(Self {
            machine: read_optional(dir, "machine.json")?,
            stages: StageFiles::read_dir(dir)?,
            spouts: read_optional(dir, "spouts.json")?,
            one_host: read_optional(dir, "one_host.json")?,
            shared_crawl: read_optional(dir, "shared_crawl.json")?,
            scale_out: read_optional(dir, "scale_out.json")?,
            end_to_end: read_optional(dir, "end_to_end.json")?,
            as_given: read_optional(dir, "as_given.json")?,
            browser: read_optional(dir, "browser.json")?,
            urlfrontier: read_optional(dir, "urlfrontier.json")?,
            urlfrontier_servers: read_optional(dir, "urlfrontier_servers.json")?,
            live_view: read_optional(dir, "live_view.json")?,
            pace: read_optional(dir, "pace.json")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_is_none_and_unknown_fields_are_ignored() -> Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(
            dir.path().join("writer.json"),
            r#"{"extra": 1, "batch": 5}"#,
        )?;
        let results = Results::read_dir(dir.path())?;
        assert!(results.spouts.is_none());
        assert_eq!(results.stages.writer.and_then(|w| w.batch), Some(5));
        Ok(())
    }

    #[test]
    fn bad_file_error_names_file() -> Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(
            dir.path().join("spouts.json"),
            r#"{"sizes": [{"urls": "x"}]}"#,
        )?;
        let err = Results::read_dir(dir.path())
            .err()
            .map(|e| format!("{e:#}"))
            .unwrap_or_default();
        assert!(err.contains("spouts.json"), "{err}");
        assert!(err.contains("sizes[0].urls"), "{err}");
        Ok(())
    }
}
