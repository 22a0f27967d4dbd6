//! Each stage's settings, from its section of the configuration.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use super::error::BuildError;
use crate::config::{ConfigError, CrawlConfig, IndexerKind, open_embedded};
use crate::fetch::Partitioner;
use crate::filter::{
    CanonicalUrlNormalizer, FilterChain, FilterSettings, IncludeExcludeFilter, SchemeFilter,
    ScopeFilter, UrlDepthFilter, UrlFilter,
};
use crate::filter_files::{self, FileKind, Locator};
use crate::frontier::{EMBEDDED, Spout, StatusStore};
use crate::index::{ContentStore, JsonLinesStore, PARSE_DESCRIPTION, PARSE_KEYWORDS};
use crate::parse::{Expression, ExtractFilter, ParseFilter, ParserSettings};
use crate::protocol::{
    HttpClient, HttpClientError, HttpContext, Protocol, ProtocolSettings, Protocols, RobotsCache,
};
use crate::schedule::Scheduler;
use crate::status::UpdaterContext;
use crate::warc::{WarcSettings, WarcWriter};

/// The URL filter chain: the normalizer, then schemes, scope, regular expressions and depth, then
/// the filters of the `urlfilters.config.file` (found by `locator`) in its order, then the user's
/// own filters. The normalizer is returned too, for seeds.
pub(super) fn url_filters(
    config: &FilterSettings,
    locator: &Locator,
    extra: Vec<Arc<dyn UrlFilter>>,
) -> Result<(Arc<CanonicalUrlNormalizer>, FilterChain), BuildError> {
    let mut normalizer = CanonicalUrlNormalizer::new();
    if !config.remove_query_params.is_empty() {
        normalizer = normalizer.remove_query_params(config.remove_query_params.clone());
    }
    let normalizer = Arc::new(normalizer);
    let mut filters = FilterChain::new();
    filters.push(normalizer.clone());
    filters.push(Arc::new(SchemeFilter::new(config.schemes.clone())));
    filters.push(Arc::new(ScopeFilter::new(
        config.ignore_outside_host,
        config.ignore_outside_domain,
    )));
    if !config.include.is_empty() || !config.exclude.is_empty() {
        filters.push(Arc::new(IncludeExcludeFilter::new(
            &config.include,
            &config.exclude,
        )?));
    }
    filters.push(Arc::new(UrlDepthFilter::new(config.max_depth)));
    if let Some(file) = &config.config_file {
        for filter in filter_files::url_filters(file, locator)? {
            filters.push(filter);
        }
    }
    for filter in extra {
        filters.push(filter);
    }
    Ok((normalizer, filters))
}

/// The HTTP client's context: the User-Agent of `http.agent.*`, `resolve` pinning host names to
/// addresses, and an idle connection for each fetch a queue may run at once.
pub(super) fn http_context(
    config: &CrawlConfig,
    resolve: Vec<(String, SocketAddr)>,
) -> HttpContext {
    HttpContext {
        user_agent: config.agent.user_agent(),
        resolve,
        max_idle_per_host: config.fetcher.idle_connections_per_host(),
        ..HttpContext::new(&config.http)
    }
}

/// A proxy, header or credential that the HTTP client cannot use (a program may have changed them
/// after the keys were checked) is refused with its key, as the configuration refuses it.
/// A frontier's two sides as the topology takes them.
pub(crate) type FrontierSides = (Box<dyn Spout>, Arc<dyn StatusStore>);

/// The frontier of the configuration when none was given: the embedded one (`frontier.kind:
/// embedded`, the default), opened as [`Frontiers::open`](crate::config::Frontiers::open) opens
/// it. Other kinds come from their crate's registry.
pub(crate) fn configured_frontier(config: &CrawlConfig) -> Result<FrontierSides, BuildError> {
    let kind = config.frontier.kind.as_str();
    if kind != EMBEDDED {
        return Err(BuildError::NoFrontier {
            kind: kind.to_string(),
        });
    }
    let frontier = open_embedded(config).map_err(|source| BuildError::Embedded {
        path: config.frontier.path.display().to_string(),
        source,
    })?;
    Ok((frontier.spout, frontier.store))
}

fn http_error(error: HttpClientError) -> BuildError {
    match error.invalid_key() {
        Some((key, message)) => ConfigError::InvalidValue {
            key: key.to_string(),
            message: message.to_string(),
        }
        .into(),
        None => error.into(),
    }
}

/// The WARC writer's settings, when WARC output is on; the `warcinfo` records name the software
/// and the User-Agent.
pub(super) fn warc_settings(config: &CrawlConfig) -> Option<WarcSettings> {
    if !config.warc.enabled {
        return None;
    }
    let mut settings = config.warc.clone();
    settings.info.push((
        "http-header-user-agent".to_string(),
        config.agent.user_agent(),
    ));
    Some(settings)
}

/// The HTTP client of `config.http` in `context`, archiving its exchanges when WARC output is on;
/// the writer to finish at the end of the crawl with it.
pub(super) fn http_client(
    config: &CrawlConfig,
    context: &HttpContext,
) -> Result<(HttpClient, Option<WarcWriter>), BuildError> {
    match warc_settings(config) {
        None => Ok((
            HttpClient::new(&config.http, context).map_err(http_error)?,
            None,
        )),
        Some(settings) => {
            let (sink, writer) = crate::warc::start(settings)?;
            let client = HttpClient::archived(&config.http, context, sink).map_err(http_error)?;
            Ok((client, Some(writer)))
        }
    }
}

/// The robots.txt cache, unless robots.txt is skipped.
pub(super) fn robots_cache(
    config: &CrawlConfig,
    context: &HttpContext,
) -> Result<Option<RobotsCache>, BuildError> {
    if config.robots.skip {
        return Ok(None);
    }
    RobotsCache::new(&config.http, context, &config.agent.name, &config.robots)
        .map(Some)
        .map_err(http_error)
}

/// The parser's settings: outlinks keyed as the fetcher keys its queues (`partition.url.mode`);
/// with an indexer, every page's text is extracted (up to `parser.text.max.bytes` when that is set).
pub(super) fn parser_settings(config: &CrawlConfig, indexing: bool) -> ParserSettings {
    let mut settings = config.parser.clone();
    settings.partition_mode = config.fetcher.partition;
    if indexing && settings.max_text_bytes == 0 {
        settings.max_text_bytes = usize::MAX;
    }
    settings
}

/// The parse filters: the [`ExtractFilter`] of the `parsefilter.css` and `parsefilter.xpath` keys
/// when they give any rule, then those of the `jsoup.filters.config.file` and of the
/// `parsefilters.config.file` (found by `locator`), then the user's own (which see what the others
/// extracted). An expression that does not compile is an error naming its key
/// (`parsefilter.css.title`), or its file. With an indexer, the page's meta description and
/// keywords go to `parse.description` and `parse.keywords` unless those keys have rules of their
/// own.
pub(super) fn parse_filters(
    config: &ParserSettings,
    locator: &Locator,
    extra: Vec<Arc<dyn ParseFilter>>,
    indexing: bool,
) -> Result<Vec<Arc<dyn ParseFilter>>, BuildError> {
    let css = extract_rules(&config.extract_css, Expression::Css);
    let meta = [
        (PARSE_DESCRIPTION, "meta[name=description i]@content"),
        (PARSE_KEYWORDS, "meta[name=keywords i]@content"),
    ]
    .into_iter()
    .filter(|(key, _)| {
        indexing
            && cfg!(feature = "extract")
            && !config.extract_css.contains_key(*key)
            && !config.extract_xpath.contains_key(*key)
    })
    .map(|(key, selector)| (key.to_string(), Expression::Css(selector.to_string())));
    let all = css
        .chain(extract_rules(&config.extract_xpath, Expression::XPath))
        .chain(meta);
    let extract = ExtractFilter::new(all).map_err(|error| ConfigError::InvalidValue {
        key: format!("parsefilter.{}.{}", error.expression.kind(), error.key),
        message: format!("invalid {}: {}", error.expression, error.message),
    })?;
    let mut filters: Vec<Arc<dyn ParseFilter>> = Vec::new();
    if !extract.is_empty() {
        filters.push(Arc::new(extract));
    }
    let files = [
        (FileKind::JSoupFilters, &config.jsoup_filters_file),
        (FileKind::ParseFilters, &config.parse_filters_file),
    ];
    for (kind, file) in files {
        if let Some(file) = file {
            filters.extend(filter_files::parse_filters(kind, file, locator)?);
        }
    }
    filters.extend(extra);
    Ok(filters)
}

/// The rules of one `parsefilter.*` map, key by key, each key's expressions in their order.
fn extract_rules(
    map: &BTreeMap<String, Vec<String>>,
    kind: fn(String) -> Expression,
) -> impl Iterator<Item = (String, Expression)> + '_ {
    map.iter().flat_map(move |(key, list)| {
        list.iter()
            .map(move |text| (key.clone(), kind(text.clone())))
    })
}

/// The content store `indexer.kind` asks for (`given` in code wins): none, the JSON-lines file,
/// or the one given for `opensearch`.
pub(super) fn content_store(
    config: &CrawlConfig,
    given: Option<Arc<dyn ContentStore>>,
) -> Result<Option<Arc<dyn ContentStore>>, BuildError> {
    if let Some(store) = given {
        return Ok(Some(store));
    }
    match config.indexer.kind {
        IndexerKind::None => Ok(None),
        IndexerKind::File => Ok(Some(Arc::new(JsonLinesStore::open(&config.indexer.file)?))),
        IndexerKind::Opensearch => Err(BuildError::NoContentStore),
    }
}

/// The status updater's context: the schedule's rules, the parser's transferred metadata
/// (persisted too), the partitioner for new outlinks' keys.
pub(super) fn updater_context(
    config: &CrawlConfig,
    scheduler: Arc<dyn Scheduler>,
    partitioner: Partitioner,
) -> UpdaterContext {
    UpdaterContext {
        scheduler,
        max_fetch_errors: config.schedule.max_fetch_errors,
        transfer_keys: config.parser.transfer_keys.clone(),
        partitioner: Some(partitioner),
    }
}

/// The protocol of each scheme, as `protocol.schemes` names them among `named` (later entries of a
/// name win); `http` and `https` fall back on the one named `http`.
pub(super) fn protocols(
    config: &ProtocolSettings,
    named: Vec<(String, Arc<dyn Protocol>)>,
) -> Result<Protocols, BuildError> {
    let named: std::collections::HashMap<String, Arc<dyn Protocol>> = named.into_iter().collect();
    let mut protocols = Protocols::new();
    for (scheme, name) in &config.schemes {
        let Some(protocol) = named.get(name) else {
            let mut known: Vec<&str> = named.keys().map(String::as_str).collect();
            known.sort_unstable();
            return Err(BuildError::UnknownProtocol {
                scheme: scheme.clone(),
                name: name.clone(),
                known: known.join(", "),
            });
        };
        protocols.register(scheme.as_str(), Arc::clone(protocol));
    }
    if let Some(http) = named.get("http") {
        for scheme in ["http", "https"] {
            protocols.fallback(scheme, Arc::clone(http));
        }
    }
    Ok(protocols)
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;
    use url::Url;

    use super::*;
    use crate::message::{FetchFailure, FetchOutcome, FetchRecord};
    use crate::model::Metadata;

    /// A protocol that fails every fetch with a cause of its own choosing, so that tests can tell
    /// protocols apart.
    struct Failing(FetchFailure);

    #[async_trait]
    impl Protocol for Failing {
        async fn fetch(&self, _url: &Url, _metadata: &Metadata) -> (FetchRecord, FetchOutcome) {
            let now = chrono::Utc::now();
            let record = FetchRecord {
                started: now,
                finished: now,
                http_status: None,
                error: None,
                bytes: 0,
                protocol: "test",
            };
            let outcome = FetchOutcome::Failed {
                status: crate::model::Status::FetchError,
                cause: self.0,
                message: String::new(),
            };
            (record, outcome)
        }
    }

    fn schemes(pairs: &[(&str, &str)]) -> ProtocolSettings {
        ProtocolSettings {
            schemes: pairs
                .iter()
                .map(|(scheme, name)| (scheme.to_string(), name.to_string()))
                .collect(),
        }
    }

    async fn cause_of(protocols: &Protocols, scheme: &str) -> Option<FetchFailure> {
        let protocol = protocols.for_scheme(scheme)?;
        let url = Url::parse(&format!("{scheme}://a.test/")).expect("test URL");
        match protocol.fetch(&url, &Metadata::new()).await.1 {
            FetchOutcome::Failed { cause, .. } | FetchOutcome::Abandoned { cause, .. } => {
                Some(cause)
            }
            FetchOutcome::Response(_) => None,
        }
    }

    #[test]
    fn the_connection_pool_keeps_a_connection_per_fetch_a_queue_may_run() {
        let mut config =
            crate::config::CrawlConfig::from_yaml_str("http.agent.name: t").expect("config");
        let idle = |config: &CrawlConfig| http_context(config, Vec::new()).max_idle_per_host;
        assert_eq!(idle(&config), 4);
        config.fetcher.threads_per_queue = 50;
        assert_eq!(idle(&config), 50);
    }

    #[tokio::test]
    async fn each_scheme_gets_the_protocol_its_name_picks() {
        let named: Vec<(String, Arc<dyn Protocol>)> = vec![
            ("http".to_string(), Arc::new(Failing(FetchFailure::Http))),
            (
                "browser".to_string(),
                Arc::new(Failing(FetchFailure::Timeout)),
            ),
        ];
        let config = schemes(&[("http", "http"), ("https", "browser")]);
        let protocols = protocols(&config, named).expect("both names are registered");
        assert_eq!(cause_of(&protocols, "http").await, Some(FetchFailure::Http));
        assert_eq!(
            cause_of(&protocols, "https").await,
            Some(FetchFailure::Timeout)
        );
        assert!(protocols.for_scheme("ftp").is_none());
    }

    #[test]
    fn the_parsefilter_keys_add_an_extract_filter_before_the_user_s() {
        let config = |yaml: &str| {
            crate::config::CrawlConfig::from_yaml_str(&format!("http.agent.name: t\n{yaml}"))
                .expect("config")
        };
        let none = config("");
        assert!(
            parse_filters(&none.parser, &Locator::default(), Vec::new(), false)
                .expect("no rule")
                .is_empty()
        );
        let some = config("parsefilter.css: {title: h1}\nparsefilter.xpath: {}");
        assert_eq!(
            parse_filters(&some.parser, &Locator::default(), Vec::new(), false)
                .expect("valid")
                .len(),
            1
        );
        let invalid = config("parsefilter.xpath: {a: [//a, '//b[']}");
        let Err(error) = parse_filters(&invalid.parser, &Locator::default(), Vec::new(), false)
        else {
            panic!("an invalid XPath was accepted");
        };
        let message = error.to_string();
        assert!(message.contains("`parsefilter.xpath.a`"), "{message}");
        assert!(message.contains("//b["), "{message}");
        let invalid = config("parsefilter.css:\n  title: 'h1['");
        let Err(error) = super::super::CrawlerBuilder::new(invalid).build() else {
            panic!("an invalid selector was accepted");
        };
        let message = error.to_string();
        assert!(message.contains("`parsefilter.css.title`"), "{message}");
        assert!(message.contains("CSS selector `h1[`"), "{message}");
    }

    #[test]
    fn warc_output_is_off_by_default_and_its_keys_are_checked() {
        let config = |yaml: &str| {
            crate::config::CrawlConfig::from_yaml_str(&format!("http.agent.name: t\n{yaml}"))
        };
        assert_eq!(warc_settings(&config("").expect("defaults")), None);
        let on = config("warc.enabled: true\nwarc.dir: /tmp/w\nwarc.max.file.size: 5000")
            .expect("valid");
        let settings = warc_settings(&on).expect("on");
        assert_eq!(settings.dir, std::path::PathBuf::from("/tmp/w"));
        assert_eq!(settings.max_file_size, 5000);
        assert!(
            settings.info.iter().any(|(name, value)| {
                name == "http-header-user-agent" && value.starts_with("t/")
            })
        );
        for bad in ["warc.max.file.size: 0", "warc.prefix: a/b"] {
            let Err(error) = config(&format!("warc.enabled: true\n{bad}")) else {
                panic!("accepted {bad}");
            };
            let key = bad.split(':').next().unwrap_or_default();
            assert!(error.to_string().contains(key), "{error}");
        }
    }

    #[test]
    fn an_unusable_warc_directory_stops_the_build_and_is_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"").expect("file");
        let config = crate::config::CrawlConfig::from_yaml_str(&format!(
            "http.agent.name: t\nwarc.enabled: true\nwarc.dir: {}",
            file.join("warc").display()
        ))
        .expect("config");
        let frontier =
            crate::frontier::EmbeddedFrontier::open(&dir.path().join("frontier")).expect("open");
        let built = super::super::CrawlerBuilder::new(config)
            .frontier(
                frontier.spout(crate::frontier::QueryLimits::default()),
                frontier.clone(),
            )
            .build();
        let Err(error) = built else {
            panic!("built with an unusable WARC directory");
        };
        let message = error.to_string();
        assert!(
            message.contains("cannot create the WARC directory"),
            "{message}"
        );
        assert!(message.contains("a-file"), "{message}");
    }

    #[test]
    fn a_key_changed_in_code_past_its_check_is_refused_with_its_name() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config =
            crate::config::CrawlConfig::from_yaml_str("http.agent.name: t").expect("config");
        config.http.custom_headers = vec!["Bad Name=1".to_string()];
        let frontier = crate::frontier::EmbeddedFrontier::open(dir.path()).expect("open");
        let built = super::super::CrawlerBuilder::new(config)
            .frontier(
                frontier.spout(crate::frontier::QueryLimits::default()),
                frontier.clone(),
            )
            .build();
        let Err(BuildError::Config(ConfigError::InvalidValue { key, message })) = built else {
            panic!("built with a header name that has a space");
        };
        assert_eq!(key, "http.custom.headers");
        assert!(message.contains("Bad Name"), "{message}");
    }

    #[test]
    fn an_unregistered_name_is_an_error_naming_scheme_and_name() {
        let named: Vec<(String, Arc<dyn Protocol>)> =
            vec![("http".to_string(), Arc::new(Failing(FetchFailure::Http)))];
        let Err(error) = protocols(&schemes(&[("https", "browser")]), named) else {
            panic!("an unknown protocol name was accepted");
        };
        let message = error.to_string();
        assert!(message.contains("`https`"), "{message}");
        assert!(message.contains("`browser`"), "{message}");
        assert!(message.contains("known: http"), "{message}");
    }

    #[test]
    fn with_no_frontier_given_the_embedded_one_of_the_configuration_opens_and_others_are_named() {
        let dir = tempfile::tempdir().expect("dir");
        let yaml = format!(
            "http.agent.name: t\nfrontier.path: {}\n",
            dir.path().join("here").display()
        );
        let config = crate::config::CrawlConfig::from_yaml_str(&yaml).expect("config");
        let built = super::super::CrawlerBuilder::new(config).build();
        assert!(built.is_ok(), "{:?}", built.err());
        drop(built);
        assert!(dir.path().join("here").is_dir(), "opened at frontier.path");
        let mut config =
            crate::config::CrawlConfig::from_yaml_str("http.agent.name: t").expect("config");
        config.frontier.kind = "opensearch".to_string();
        let Err(error) = super::super::CrawlerBuilder::new(config).build() else {
            panic!("built with no opensearch frontier given");
        };
        let message = error.to_string();
        assert!(message.contains("`opensearch`"), "{message}");
        assert!(message.contains("squall_engine::register"), "{message}");
    }
}
