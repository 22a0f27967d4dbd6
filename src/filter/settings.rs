//! Which outlinks, redirect targets and seeds are kept: the `urlfilter.*`, `urlnormalizer.*`,
//! `max.depth` and `urlfilters.config.file` keys, read straight from the configuration (each field
//! names its key, `Default` holds its default).

use crate::settings::{KeyedSettings, keyed_settings, units};

/// The default of `urlfilter.max.length`, in bytes.
pub const DEFAULT_MAX_URL_LENGTH: usize = 2048;

keyed_settings! {
    /// The settings of the URL filter chain.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct FilterSettings {
        /// `urlfilter.ignore.outside.host`: keep only outlinks and redirect targets on the host of
        /// the page they were found on (seeds are always kept).
        "urlfilter.ignore.outside.host" => ignore_outside_host: bool = false,
        /// `urlfilter.ignore.outside.domain`: keep only outlinks and redirect targets on the
        /// registrable domain of the page they were found on (seeds are always kept).
        "urlfilter.ignore.outside.domain" => ignore_outside_domain: bool = false,
        /// `urlfilter.schemes`: URL schemes that may be crawled; never empty.
        "urlfilter.schemes" => schemes: Vec<String> = vec!["http".to_string(), "https".to_string()],
        /// `urlfilter.max.length`: seeds, outlinks and redirect targets longer than this many
        /// bytes are refused (StormCrawler's `BasicURLFilter` `maxLength`; 2048, the longest URL
        /// the sitemaps protocol allows and browsers reliably follow). -1: no limit (`None`).
        "urlfilter.max.length" with "units::negative_is_none" => max_length: Option<usize> = Some(DEFAULT_MAX_URL_LENGTH),
        /// `urlfilter.include`: regular expressions; when any is given, a URL must match one.
        "urlfilter.include" => include: Vec<String> = Vec::new(),
        /// `urlfilter.exclude`: regular expressions; a URL matching one is dropped.
        "urlfilter.exclude" => exclude: Vec<String> = Vec::new(),
        /// `urlnormalizer.remove.query.params`: query parameters to drop (`utm_*` wildcards
        /// allowed).
        "urlnormalizer.remove.query.params" => remove_query_params: Vec<String> = Vec::new(),
        /// `max.depth`: outlinks deeper than this from the seeds are dropped. -1: no limit
        /// (`None`).
        "max.depth" with "units::negative_is_none" => max_depth: Option<u32> = None,
        /// `urlfilters.config.file`: a StormCrawler `urlfilters.json`, whose URL filters run after
        /// squall's own (`urlfilter.*`, `urlnormalizer.*`, `max.depth`), in its order. Empty: none.
        "urlfilters.config.file" with "units::empty_is_none" => config_file: Option<String> = None,
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
        if self.max_length == Some(0) {
            return Err((
                "urlfilter.max.length",
                "must be a number of bytes above 0, or -1 for no limit".to_string(),
            ));
        }
        Ok(())
    }
}
