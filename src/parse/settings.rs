//! The parser's settings: its `parser.*` and `parsefilter.*` keys, the parse filter files, and
//! what it carries to outlinks (`metadata.transfer`, `metadata.track.*`), read straight from the
//! configuration (each field names its key, and `Default` holds each key's default).

use std::collections::BTreeMap;

use serde_with::{As, OneOrMany, Same};

use crate::model::PartitionMode;
use crate::settings::{KeyedSettings, keyed_settings, units};

keyed_settings! {
    /// What the parser keeps of a page and passes on to its outlinks.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ParserSettings {
        /// `parser.emitOutlinks`: whether parsed links become DISCOVERED URLs.
        "parser.emitOutlinks" => emit_outlinks: bool = true,
        /// `parser.emitOutlinks.max.per.page`: outlinks kept per page. -1: no limit.
        "parser.emitOutlinks.max.per.page" with "units::negative_is_none" => max_outlinks: Option<usize> =
            Some(5000),
        /// `redirections.allowed`: whether a redirect's target becomes a DISCOVERED URL.
        "redirections.allowed" => redirections_allowed: bool = true,
        /// `sitemap.discovery`: robots.txt `Sitemap:` lines become DISCOVERED URLs, and sitemaps
        /// are parsed.
        "sitemap.discovery" => sitemaps: bool = true,
        /// `parser.text.max.bytes`: visible text kept per page for parse filters and indexers; 0:
        /// none (with an indexer, 0 keeps all of it).
        "parser.text.max.bytes" => max_text_bytes: usize = 0,
        /// `metadata.transfer`: metadata keys copied from a page to its outlinks (and persisted).
        "metadata.transfer" => transfer_keys: Vec<String> = Vec::new(),
        /// `metadata.track.path`: record `url.path` (the page an outlink was found on).
        "metadata.track.path" => track_path: bool = true,
        /// `metadata.track.depth`: record `depth` (distance from the seeds).
        "metadata.track.depth" => track_depth: bool = true,
        /// `parsefilter.css`: metadata keys, each with a CSS selector or a list of them; what every
        /// match gives (its text content, or with `selector@name` its attribute `name`) is added to
        /// the key, as [`ExtractFilter`](super::ExtractFilter) does. Checked when the crawler is
        /// built.
        "parsefilter.css" with "As::<BTreeMap<Same, OneOrMany<Same>>>" => extract_css: BTreeMap<String, Vec<String>> = BTreeMap::new(),
        /// `parsefilter.xpath`: metadata keys, each with an XPath 1.0 expression or a list of them;
        /// what every match gives (a node's string value, or the string, number or boolean
        /// computed) is added to the key, after the values of `parsefilter.css`.
        "parsefilter.xpath" with "As::<BTreeMap<Same, OneOrMany<Same>>>" => extract_xpath: BTreeMap<String, Vec<String>> = BTreeMap::new(),
        /// `parsefilters.config.file`: a StormCrawler `parsefilters.json`, whose parse filters run
        /// after those of `jsoup.filters.config.file`. Empty: none.
        "parsefilters.config.file" with "units::empty_is_none" => parse_filters_file: Option<String> =
            None,
        /// `jsoup.filters.config.file`: a StormCrawler `jsoupfilters.json` (XPathFilter,
        /// LinkParseFilter), whose filters run after `parsefilter.css` and `parsefilter.xpath`.
        /// Empty: none.
        "jsoup.filters.config.file" with "units::empty_is_none" => jsoup_filters_file: Option<String> =
            None,
        derived {
            /// How outlinks are keyed: not a key of its own, the fetcher's `partition.url.mode` (the
            /// crawler sets it when it starts).
            partition_mode: PartitionMode = PartitionMode::ByHost,
        }
    }
}

impl KeyedSettings for ParserSettings {}
