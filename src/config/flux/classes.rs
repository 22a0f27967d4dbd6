//! StormCrawler's spout and bolt classes, each mapped to the squall component that does its job.

/// What a StormCrawler class is in squall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A spout over the status index: `es.status.spout` (aggregation, collapsing, hybrid).
    StatusSpout(&'static str),
    /// The spout of a URLFrontier server.
    UrlFrontierSpout,
    /// StormCrawler's FileSpout: seeds from files.
    FileSpout,
    /// URLPartitionerBolt: squall's fetcher keys URLs by `partition.url.mode`.
    Partitioner,
    /// FetcherBolt: squall's fetcher.
    Fetcher,
    /// SiteMapParserBolt: squall's parser reads sitemaps.
    Sitemaps,
    /// JSoupParserBolt: squall's HTML parser.
    Parser,
    /// Tika's redirection and parser bolts: squall has no Tika.
    Tika,
    /// The content indexer: `indexer.kind` (`opensearch`, or `none` for DummyIndexer).
    Indexer(&'static str),
    /// A status updater writing to the engine.
    EngineStatusUpdater,
    /// A status updater writing to a URLFrontier server.
    UrlFrontierStatusUpdater,
    /// DeletionBolt: removes pages gone from the web from the content index.
    Deletion,
    /// StatusMetricsBolt: counts of the status index by status.
    StatusMetrics,
    /// URLFilterBolt: squall filters seeds and outlinks with the same filters.
    UrlFilter,
    /// The WARC bolt: `warc.enabled`.
    Warc,
}

/// The packages StormCrawler's classes live in: today's and the one before the Apache move.
const PACKAGES: &[&str] = &[
    "org.apache.stormcrawler.",
    "com.digitalpebble.stormcrawler.",
];

/// StormCrawler's two engine modules, whose classes have the same names and the same roles.
const ENGINE_MODULES: &[&str] = &["opensearch.", "elasticsearch."];

/// Classes of either engine module, by name within it, with their role.
const ENGINE_CLASSES: &[(&str, Role)] = &[
    (
        "persistence.AggregationSpout",
        Role::StatusSpout("aggregation"),
    ),
    (
        "persistence.CollapsingSpout",
        Role::StatusSpout("collapsing"),
    ),
    ("persistence.HybridSpout", Role::StatusSpout("hybrid")),
    ("persistence.StatusUpdaterBolt", Role::EngineStatusUpdater),
    ("bolt.IndexerBolt", Role::Indexer("opensearch")),
    ("bolt.DeletionBolt", Role::Deletion),
    ("metrics.StatusMetricsBolt", Role::StatusMetrics),
];

/// The other classes, by name within the package, with their role.
const CLASSES: &[(&str, Role)] = &[
    ("urlfrontier.Spout", Role::UrlFrontierSpout),
    ("spout.FileSpout", Role::FileSpout),
    ("bolt.URLPartitionerBolt", Role::Partitioner),
    ("bolt.FetcherBolt", Role::Fetcher),
    ("bolt.SimpleFetcherBolt", Role::Fetcher),
    ("bolt.SiteMapParserBolt", Role::Sitemaps),
    ("bolt.JSoupParserBolt", Role::Parser),
    ("tika.RedirectionBolt", Role::Tika),
    ("tika.ParserBolt", Role::Tika),
    ("indexing.DummyIndexer", Role::Indexer("none")),
    (
        "urlfrontier.StatusUpdaterBolt",
        Role::UrlFrontierStatusUpdater,
    ),
    ("bolt.URLFilterBolt", Role::UrlFilter),
    ("warc.WARCHdfsBolt", Role::Warc),
];

/// The role of `class`, or `None` for a class squall does not map.
pub fn role(class: &str) -> Option<Role> {
    let within = PACKAGES
        .iter()
        .find_map(|package| class.strip_prefix(package))?;
    let (table, name) = match ENGINE_MODULES.iter().find_map(|m| within.strip_prefix(m)) {
        Some(name) => (ENGINE_CLASSES, name),
        None => (CLASSES, within),
    };
    table
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, role)| *role)
}

impl Role {
    /// Whether the class is a spout.
    pub fn is_spout(self) -> bool {
        matches!(
            self,
            Role::StatusSpout(_) | Role::UrlFrontierSpout | Role::FileSpout
        )
    }

    /// Whether the class takes constructor arguments squall reads.
    pub fn takes_arguments(self) -> bool {
        matches!(self, Role::FileSpout)
    }

    /// What squall does in its place, for people, when it differs from StormCrawler's class.
    pub fn note(self) -> Option<&'static str> {
        match self {
            Role::Partitioner => Some("squall's fetcher keys URLs by partition.url.mode"),
            Role::Sitemaps => Some("squall's parser reads sitemaps (sitemap.* keys)"),
            Role::Tika => Some(
                "squall has no Tika: documents other than HTML, feeds and sitemaps are fetched \
                 and given their status, their text is not extracted",
            ),
            Role::Deletion => Some("squall leaves pages gone from the web in the content index"),
            Role::StatusMetrics => {
                Some("squall's status counts are Prometheus metrics (--metrics-addr)")
            }
            Role::UrlFilter => Some("squall filters seeds with the crawl's URL filters"),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_packages_map_and_others_do_not() {
        assert_eq!(
            role("org.apache.stormcrawler.opensearch.persistence.AggregationSpout"),
            Some(Role::StatusSpout("aggregation"))
        );
        assert_eq!(
            role("com.digitalpebble.stormcrawler.bolt.FetcherBolt"),
            Some(Role::Fetcher)
        );
        assert_eq!(role("org.apache.stormcrawler.bolt.NoSuchBolt"), None);
        assert_eq!(role("com.example.MyBolt"), None);
    }
}
