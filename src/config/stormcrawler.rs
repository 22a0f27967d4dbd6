//! StormCrawler's (and Storm's) configuration keys that squall knows of but does not implement.
//!
//! A StormCrawler user's `crawler-conf.yaml` and `opensearch-conf.yaml` are read as they are: the
//! keys squall implements apply, the keys below are ignored and named in one warning when the
//! crawler starts ([`CrawlConfig::ignored_keys`](super::CrawlConfig::ignored_keys)), and a key in
//! neither list is an error with a did-you-mean. The names are StormCrawler's, from its
//! `crawler-default.yaml`, its archetypes' configuration files and its modules' documentation.

/// Core keys StormCrawler lists that squall does not implement, with why (or what replaces them).
const IGNORED: &[(&str, &str)] = &[
    (
        "fetcher.queue.mode",
        "squall's fetch queues follow partition.url.mode",
    ),
    (
        "fetcher.max.queue.size",
        "fetcher.max.urls.in.queues bounds the queues",
    ),
    (
        "fetcher.timeout.queue",
        "URLs wait in the frontier, not in the fetcher",
    ),
    ("fetcher.thread.timeout", "http.timeout bounds a fetch"),
    ("fetcher.threads.start.delay", "no thread start-up stagger"),
    (
        "fetcher.metrics.time.bucket.secs",
        "the metrics index is written every es.metrics.interval",
    ),
    ("fetcher.max.throttle.sleep", "no SimpleFetcherBolt"),
    ("fetcherbolt.queue.debug.filepath", "no queue dump"),
    (
        "stormcrawler.metrics.version",
        "squall's metrics have one naming (docs/live-view.md)",
    ),
    ("urlbuffer.class", "the spout runner has one buffer"),
    ("http.accept.language", "not sent"),
    ("http.accept", "not sent"),
    ("http.store.headers", "not stored in metadata"),
    (
        "http.content.partial.as.trimmed",
        "a partial body is a fetch error",
    ),
    ("http.retry.on.connection.failure", "the frontier retries"),
    ("http.trust.everything", "certificates are always checked"),
    ("http.verify.hostnames", "host names are always checked"),
    ("http.credentials.allow.insecure", "not implemented"),
    ("http.credentials.headers", "not implemented"),
    (
        "http.filter.ipaddress.exclude",
        "see http.refuse.private.addresses",
    ),
    (
        "http.filter.ipaddress.include",
        "see http.refuse.private.addresses",
    ),
    ("http.robots.403.allow", "a 403 robots.txt allows all"),
    (
        "http.robots.5xx.allow",
        "a 5xx robots.txt disallows all for robots.error.cache.ttl",
    ),
    ("http.robots.redirect.crossorigin.allow", "not implemented"),
    ("http.robots.redirect.refused.allow", "not implemented"),
    ("http.robots.file.skip", "see http.skip.robots"),
    ("http.robots.headers.skip", "not implemented"),
    ("http.robots.meta.skip", "not implemented"),
    ("http.robots.content.limit", "not implemented"),
    ("http.robots.parser.class", "squall's robots.txt parser"),
    (
        "http.robots.agents",
        "http.agent.name is the robots.txt agent",
    ),
    (
        "http.agent",
        "squall builds the User-Agent from http.agent.*",
    ),
    (
        "robots.noFollow.strict",
        "nofollow links are always left out",
    ),
    ("robots.cache.spec", "see robots.cache.ttl"),
    ("robots.error.cache.spec", "see robots.error.cache.ttl"),
    ("protocols", "see protocol.schemes"),
    ("http.protocol.implementation", "see protocol.schemes"),
    ("https.protocol.implementation", "see protocol.schemes"),
    ("file.protocol.implementation", "no file protocol"),
    ("file.protocol.root", "no file protocol"),
    ("protocol.instances.num", "one HTTP client per crawl"),
    (
        "http.protocol.versions",
        "HTTP/1.1, and HTTP/2 as negotiated with squall's `http2` feature",
    ),
    ("okhttp.protocol.connection.pool", "reqwest's pool"),
    ("protocol.md.prefix", "not implemented"),
    (
        "protocol.delegator.config",
        "see protocol.schemes and the browser's rules",
    ),
    ("navigationfilters.config.file", "not implemented"),
    (
        "selenium.addresses",
        "the browser protocol drives Chromium itself",
    ),
    ("selenium.implicitlyWait", "see browser.*"),
    ("selenium.pageLoadTimeout", "see browser.*"),
    ("selenium.setScriptTimeout", "see browser.*"),
    ("selenium.instances.num", "see browser.*"),
    ("selenium.capabilities", "see browser.*"),
    ("selenium.delegated.protocol", "see browser.*"),
    (
        "jsoup.treat.non.html.as.error",
        "non-HTML pages are kept, not parsed",
    ),
    ("track.anchors", "anchors are not kept"),
    ("detect.mimetype", "the Content-Type and a sniff decide"),
    (
        "detect.charset.maxlength",
        "squall sniffs the first 1024 bytes",
    ),
    ("textextractor.class", "squall's text extractor"),
    ("textextractor.skip.after", "see parser.text.max.bytes"),
    ("textextractor.no.text", "see parser.text.max.bytes"),
    (
        "textextractor.include.pattern",
        "the whole body's text is kept",
    ),
    (
        "textextractor.exclude.tags",
        "script and style are always left out",
    ),
    ("parser.mimetype.whitelist", "no Tika parser"),
    ("parse.tika.config.file", "no Tika parser"),
    ("sitemap.filter.hours.since.modified", "not implemented"),
    ("sitemap.schedule.delay", "not implemented"),
    ("sitemap.sniffContent", "sitemaps are always sniffed"),
    ("sitemap.offset.guess", "not implemented"),
    ("scheduler.class", "see CrawlerBuilder::scheduler"),
    ("scheduler.adaptive.setLastModified", "not implemented"),
    (
        "status.updater.unit.round.date",
        "dates are kept to the second",
    ),
    (
        "http.proxy.manager",
        "one proxy, from http.proxy or http.proxy.*",
    ),
];

/// Keys of StormCrawler's Elasticsearch (`es.`) and OpenSearch (`opensearch.`) modules that squall
/// does not implement, without their prefix.
const IGNORED_ENGINE: &[(&str, &str)] = &[
    (
        "concurrentRequests",
        "one bulk request at a time per writer",
    ),
    ("sniff", "squall uses the addresses given"),
    ("status.bulkActions", "see status.updater.batch.size"),
    ("status.flushInterval", "see status.updater.flush.interval"),
    (
        "status.concurrentRequests",
        "one bulk request at a time per writer",
    ),
    ("status.sniff", "squall uses the addresses given"),
    ("status.compression", "not implemented"),
    ("status.responseBufferSize", "not implemented"),
    (
        "status.query.timeout.connect",
        "see es.status.request.timeout",
    ),
    ("status.max.start.offset.pages", "not implemented"),
    ("metrics.sniff", "squall uses the addresses given"),
];

/// Key families of Apache Storm itself (`topology.workers`, `topology.kryo.register`, ...): a
/// StormCrawler configuration sets some; squall has no Storm cluster to give them to.
const STORM_PREFIXES: &[&str] = &["topology.", "storm.", "worker.", "nimbus.", "supervisor."];

/// The prefixes StormCrawler's engine modules read their keys under.
const ENGINE_PREFIXES: &[&str] = &["es.", "opensearch."];

/// Why squall ignores `key`, when it is a StormCrawler or Storm key squall does not implement.
pub fn ignored_reason(key: &str) -> Option<&'static str> {
    if let Some((_, why)) = IGNORED.iter().find(|(name, _)| *name == key) {
        return Some(why);
    }
    if let Some(rest) = ENGINE_PREFIXES.iter().find_map(|p| key.strip_prefix(p)) {
        return IGNORED_ENGINE
            .iter()
            .find(|(name, _)| *name == rest)
            .map(|(_, why)| *why);
    }
    STORM_PREFIXES
        .iter()
        .any(|prefix| key.starts_with(prefix))
        .then_some("an Apache Storm setting: squall does not run on Storm")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::known_keys;

    #[test]
    fn no_ignored_key_is_one_squall_implements() {
        let known = known_keys();
        for (key, _) in IGNORED {
            assert!(!known.iter().any(|k| k == key), "{key} is implemented");
        }
        for key in &known {
            if key.starts_with("topology.") {
                continue; // implemented Storm-style keys are read before the families apply
            }
            assert_eq!(ignored_reason(key), None, "{key} is implemented");
        }
    }

    #[test]
    fn storm_keys_and_engine_keys_are_recognised() {
        assert!(ignored_reason("topology.workers").is_some());
        assert!(ignored_reason("opensearch.status.bulkActions").is_some());
        assert!(ignored_reason("es.metrics.sniff").is_some());
        assert!(ignored_reason("es.metrics.index.name").is_none());
        assert!(ignored_reason("http.agent.nmae").is_none());
        assert!(ignored_reason("status.bulkActions").is_none());
    }
}
