//! StormCrawler's spout and bolt classes, each mapped to the squall component that does its job:
//! the core's own classes here, and those of the frontier kinds registered in
//! [`Frontiers`](crate::config::Frontiers) (each kind names its spouts and bolts, [`FluxClass`]).

/// What a StormCrawler class is in squall.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
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
    /// DummyIndexer: `indexer.kind: none`.
    NoIndexer,
    /// URLFilterBolt: squall filters seeds and outlinks with the same filters.
    UrlFilter,
    /// The WARC bolt: `warc.enabled`.
    Warc,
    /// A class of the frontier kind `kind`: its spout, its status updater or another of its bolts.
    Frontier {
        /// The kind's name, as `frontier.kind` writes it.
        kind: String,
        /// The class, as the kind registered it.
        class: FluxClass,
    },
}

/// What a class a frontier kind registers does in a topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FluxPart {
    /// A spout over the kind's frontier: the topology crawls it (`frontier.kind` set to the kind,
    /// the spout's `parallelism` to `spout.parallelism`).
    Spout,
    /// The bolt that writes statuses to the kind's frontier (`frontier.kind` set to the kind).
    StatusUpdater,
    /// Another bolt of the kind's module (a content indexer, a metrics bolt): only its keys.
    Bolt,
}

/// A StormCrawler class that a frontier kind maps to itself: its name, what it is, the keys it
/// sets and what squall does differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FluxClass {
    /// Its name within StormCrawler's package (`org.apache.stormcrawler.` or, before the Apache
    /// move, `com.digitalpebble.stormcrawler.`): `opensearch.persistence.AggregationSpout`.
    pub name: String,
    /// What it is.
    pub part: FluxPart,
    /// The keys it sets beside `frontier.kind`, as `(key, value)` text.
    pub settings: Vec<(String, String)>,
    /// What squall does in its place, for people, when it differs from StormCrawler's class.
    pub note: Option<String>,
}

impl FluxClass {
    /// A class named `name` (within the package) that is `part`, setting no key of its own.
    pub fn new(name: impl Into<String>, part: FluxPart) -> Self {
        FluxClass {
            name: name.into(),
            part,
            settings: Vec::new(),
            note: None,
        }
    }

    /// The class, setting `key` to `value` too.
    pub fn set(mut self, key: &str, value: &str) -> Self {
        self.settings.push((key.to_string(), value.to_string()));
        self
    }

    /// The class, with `note` saying what squall does in its place.
    pub fn note(mut self, note: &str) -> Self {
        self.note = Some(note.to_string());
        self
    }
}

/// The packages StormCrawler's classes live in: today's and the one before the Apache move.
const PACKAGES: &[&str] = &[
    "org.apache.stormcrawler.",
    "com.digitalpebble.stormcrawler.",
];

/// The core's classes, by name within the package, with their role.
const CLASSES: &[(&str, Role)] = &[
    ("spout.FileSpout", Role::FileSpout),
    ("bolt.URLPartitionerBolt", Role::Partitioner),
    ("bolt.FetcherBolt", Role::Fetcher),
    ("bolt.SimpleFetcherBolt", Role::Fetcher),
    ("bolt.SiteMapParserBolt", Role::Sitemaps),
    ("bolt.JSoupParserBolt", Role::Parser),
    ("tika.RedirectionBolt", Role::Tika),
    ("tika.ParserBolt", Role::Tika),
    ("indexing.DummyIndexer", Role::NoIndexer),
    ("bolt.URLFilterBolt", Role::UrlFilter),
    ("warc.WARCHdfsBolt", Role::Warc),
];

/// The role of `class`, among the core's classes and `registered` (each with its kind's name),
/// or `None` for a class squall does not map.
pub fn role(class: &str, registered: &[(String, FluxClass)]) -> Option<Role> {
    let name = PACKAGES
        .iter()
        .find_map(|package| class.strip_prefix(package))?;
    let core = CLASSES
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, role)| role.clone());
    core.or_else(|| {
        registered
            .iter()
            .find(|(_, registered)| registered.name == name)
            .map(|(kind, class)| Role::Frontier {
                kind: kind.clone(),
                class: class.clone(),
            })
    })
}

impl Role {
    /// Whether the class is a spout.
    pub fn is_spout(&self) -> bool {
        match self {
            Role::FileSpout => true,
            Role::Frontier { class, .. } => class.part == FluxPart::Spout,
            _ => false,
        }
    }

    /// Whether the class takes constructor arguments squall reads.
    pub fn takes_arguments(&self) -> bool {
        matches!(self, Role::FileSpout)
    }

    /// What squall does in its place, for people, when it differs from StormCrawler's class.
    pub fn note(&self) -> Option<&str> {
        match self {
            Role::Partitioner => Some("squall's fetcher keys URLs by partition.url.mode"),
            Role::Sitemaps => Some("squall's parser reads sitemaps (sitemap.* keys)"),
            Role::Tika => Some(
                "squall has no Tika: documents other than HTML, feeds and sitemaps are fetched \
                 and given their status, their text is not extracted",
            ),
            Role::UrlFilter => Some("squall filters seeds with the crawl's URL filters"),
            Role::Frontier { class, .. } => class.note.as_deref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_packages_map_and_others_do_not() {
        let spout = FluxClass::new("opensearch.persistence.AggregationSpout", FluxPart::Spout)
            .set("es.status.spout", "aggregation");
        let registered = [("opensearch".to_string(), spout.clone())];
        assert_eq!(
            role(
                "org.apache.stormcrawler.opensearch.persistence.AggregationSpout",
                &registered
            ),
            Some(Role::Frontier {
                kind: "opensearch".to_string(),
                class: spout
            })
        );
        assert_eq!(
            role("com.digitalpebble.stormcrawler.bolt.FetcherBolt", &[]),
            Some(Role::Fetcher)
        );
        assert_eq!(
            role(
                "org.apache.stormcrawler.opensearch.persistence.AggregationSpout",
                &[]
            ),
            None
        );
        assert_eq!(
            role("org.apache.stormcrawler.bolt.NoSuchBolt", &registered),
            None
        );
        assert_eq!(role("com.example.MyBolt", &registered), None);
    }
}
