//! Which outlinks, redirect targets and seeds are kept: the `urlfilter.*`, `urlnormalizer.*`,
//! `max.depth` and `urlfilters.config.file` keys, read straight from the configuration (each field
//! names its key, `Default` holds its default).

use serde::{Deserialize, Serialize};

use crate::settings::KeyedSettings;

/// The settings of the URL filter chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FilterSettings {
    /// `urlfilter.ignore.outside.host`: keep only outlinks and redirect targets on the host of the
    /// page they were found on (seeds are always kept).
    #[serde(rename = "urlfilter.ignore.outside.host")]
    pub ignore_outside_host: bool,
    /// `urlfilter.ignore.outside.domain`: keep only outlinks and redirect targets on the
    /// registrable domain of the page they were found on (seeds are always kept).
    #[serde(rename = "urlfilter.ignore.outside.domain")]
    pub ignore_outside_domain: bool,
    /// `urlfilter.schemes`: URL schemes that may be crawled; never empty.
    #[serde(rename = "urlfilter.schemes")]
    pub schemes: Vec<String>,
    /// `urlfilter.include`: regular expressions; when any is given, a URL must match one.
    #[serde(rename = "urlfilter.include")]
    pub include: Vec<String>,
    /// `urlfilter.exclude`: regular expressions; a URL matching one is dropped.
    #[serde(rename = "urlfilter.exclude")]
    pub exclude: Vec<String>,
    /// `urlnormalizer.remove.query.params`: query parameters to drop (`utm_*` wildcards allowed).
    #[serde(rename = "urlnormalizer.remove.query.params")]
    pub remove_query_params: Vec<String>,
    /// `max.depth`: outlinks deeper than this from the seeds are dropped. -1: no limit (`None`).
    #[serde(
        rename = "max.depth",
        with = "crate::settings::units::negative_is_none"
    )]
    pub max_depth: Option<u32>,
    /// `urlfilters.config.file`: a StormCrawler `urlfilters.json`, whose URL filters run after
    /// squall's own (`urlfilter.*`, `urlnormalizer.*`, `max.depth`), in its order. Empty: none.
    #[serde(
        rename = "urlfilters.config.file",
        with = "crate::settings::units::empty_is_none"
    )]
    pub config_file: Option<String>,
}

impl Default for FilterSettings {
    fn default() -> Self {
        FilterSettings {
            ignore_outside_host: false,
            ignore_outside_domain: false,
            schemes: vec!["http".to_string(), "https".to_string()],
            include: Vec::new(),
            exclude: Vec::new(),
            remove_query_params: Vec::new(),
            max_depth: None,
            config_file: None,
        }
    }
}

impl KeyedSettings for FilterSettings {
    fn check(&self) -> Result<(), (&'static str, String)> {
        if self.schemes.is_empty() {
            return Err((
                "urlfilter.schemes",
                "must allow at least one scheme".to_string(),
            ));
        }
        Ok(())
    }
}
