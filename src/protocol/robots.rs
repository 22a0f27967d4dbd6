//! robots.txt (RFC 9309): fetched once per site, cached, and asked before every fetch.
//!
//! - 2xx: the rules of the group that matches our agent (product token), else the `*` group;
//! - 4xx: no restrictions;
//! - 5xx or unreachable: everything is disallowed for now, and asked again after a short TTL;
//! - up to 5 redirects are followed; only the first 512 KiB are read, the first 500 KiB parsed.
//!
//! The parsing and matching are [`robotxt`]'s (RFC 9309: groups matched by product token, the
//! longest rule wins, `Allow` wins a tie, `*` and `$` patterns; `Crawl-delay` and `Sitemap`).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use moka::Expiry;
use moka::future::Cache;
use url::Url;

use super::http::SiteCredentials;
use super::http::{
    HttpClientError, HttpContext, HttpSettings, authorize, base_builder, redirect_policy,
};
use crate::settings::{keyed_settings, units};

keyed_settings! {
    /// Whether and how robots.txt is asked: the `http.skip.robots` and `robots.*` keys, read
    /// straight from the configuration (each field names its key, `Default` holds its default).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct RobotsSettings {
        /// `http.skip.robots`: ignore robots.txt entirely (only for sites you own).
        "http.skip.robots" => skip: bool = false,
        /// `robots.cache.ttl`: seconds a site's rules are reused.
        "robots.cache.ttl" with "units::seconds" => cache_ttl: Duration =
            Duration::from_secs(24 * 3600),
        /// `robots.error.cache.ttl`: seconds before asking again a site whose robots.txt failed
        /// (5xx, unreachable), during which everything on it is disallowed.
        "robots.error.cache.ttl" with "units::seconds" => error_cache_ttl: Duration =
            Duration::from_secs(600),
    }
}

impl crate::settings::KeyedSettings for RobotsSettings {}

/// Largest robots.txt read; the rest is ignored (RFC 9309 asks for at least 500 KiB).
pub const MAX_ROBOTS_BYTES: usize = 512 * 1024;

/// The Crawl-delay taken for a value too long to hold: about 136 years.
pub const ABSURD_CRAWL_DELAY: Duration = Duration::from_secs(u32::MAX as u64);

/// A `Crawl-delay` too long for a [`Duration`] (`1e39`, `inf`) is read as
/// [`ABSURD_CRAWL_DELAY`] rather than ignored: such a site asked for a very slow crawl, and every
/// limit then refuses or caps it (StormCrawler holds `1e39` the same way). The parser drops a value
/// it cannot hold, so such values are rewritten before it sees them.
fn hold_absurd_crawl_delays(body: &[u8]) -> Cow<'_, [u8]> {
    let absurd = |line: &[u8]| -> bool {
        let Some(value) = crawl_delay_value(line) else {
            return false;
        };
        let value = std::str::from_utf8(value).unwrap_or("");
        value
            .parse::<f64>()
            .is_ok_and(|seconds| seconds >= ABSURD_CRAWL_DELAY.as_secs_f64())
    };
    if !body.split(|&byte| byte == b'\n').any(absurd) {
        return Cow::Borrowed(body);
    }
    let held = format!("Crawl-delay: {}", ABSURD_CRAWL_DELAY.as_secs());
    let lines = body
        .split(|&byte| byte == b'\n')
        .map(|line| match absurd(line) {
            true => held.as_bytes(),
            false => line,
        });
    Cow::Owned(lines.collect::<Vec<_>>().join(&b'\n'))
}

/// The value of a `Crawl-delay` line (any spelling the parser takes: `crawl-delay`, `crawl delay`,
/// `crawldelay`, any case), without its comment; `None` for any other line.
fn crawl_delay_value(line: &[u8]) -> Option<&[u8]> {
    let line = line.trim_ascii_start();
    let key_end = ["crawl-delay", "crawl delay", "crawldelay"]
        .iter()
        .find(|key| {
            line.get(..key.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(key.as_bytes()))
        })?
        .len();
    let rest = line[key_end..].trim_ascii_start();
    let value = rest.strip_prefix(b":").unwrap_or(rest);
    let value = value.split(|&byte| byte == b'#').next().unwrap_or(value);
    Some(value.trim_ascii())
}

/// The rules of a robots.txt file that apply to one agent, parsed. Asked through
/// [`RobotsRules`].
#[derive(Debug)]
pub struct ParsedRobots(robotxt::Robots);

/// What a site's robots.txt says for our user agent.
#[derive(Debug)]
pub enum RobotsRules {
    /// No robots.txt (4xx), or it could not be parsed: everything is allowed.
    AllowAll,
    /// The site could not tell us (5xx, unreachable): nothing is allowed for now.
    DisallowAll {
        /// Why.
        reason: String,
    },
    /// The parsed rules.
    Parsed(Box<ParsedRobots>),
}

impl RobotsRules {
    /// Parses a robots.txt body for `agent` (the product token, matched without case); lines
    /// that are not rules are skipped, so text that holds none allows everything.
    pub fn parse(agent: &str, body: &[u8]) -> RobotsRules {
        let body = &body[..body.len().min(MAX_ROBOTS_BYTES)];
        let body = hold_absurd_crawl_delays(body);
        RobotsRules::Parsed(Box::new(ParsedRobots(robotxt::Robots::parse(&body, agent))))
    }

    /// Whether `url` may be fetched.
    pub fn allowed(&self, url: &Url) -> bool {
        match self {
            RobotsRules::AllowAll => true,
            RobotsRules::DisallowAll { .. } => false,
            // The robots.txt file itself is always allowed.
            RobotsRules::Parsed(robots) => robots.0.is_url_allowed(url),
        }
    }

    /// Why `url` is refused, when it is, and whether the refusal is final (the rules say no) or
    /// temporary (robots.txt could not be read: ask again later).
    pub fn refusal(&self, url: &Url) -> Option<(String, bool)> {
        if self.allowed(url) {
            return None;
        }
        Some(match self {
            RobotsRules::DisallowAll { reason } => {
                (format!("robots.txt unavailable ({reason})"), false)
            }
            _ => ("disallowed by robots.txt".to_string(), true),
        })
    }

    /// The Crawl-delay for our agent, if any. A delay too long to hold (`1e39`, `inf`) is
    /// [`ABSURD_CRAWL_DELAY`], which every limit refuses or caps; a negative or non-number
    /// one is none.
    pub fn crawl_delay(&self) -> Option<Duration> {
        match self {
            RobotsRules::Parsed(robots) => robots
                .0
                .crawl_delay()
                .map(|delay| delay.min(ABSURD_CRAWL_DELAY)),
            _ => None,
        }
    }

    /// The `Sitemap:` URLs it lists.
    pub fn sitemaps(&self) -> Vec<Url> {
        match self {
            RobotsRules::Parsed(robots) => robots.0.sitemaps().to_vec(),
            _ => Vec::new(),
        }
    }
}

/// The rules for a URL's site, and whether they were fetched just now (first use).
#[derive(Debug, Clone)]
pub struct RobotsLookup {
    /// The rules.
    pub rules: Arc<RobotsRules>,
    /// True for the lookup that fetched them: the caller then handles the `Sitemap:` lines.
    pub fresh: bool,
}

struct RobotsExpiry {
    ttl: Duration,
    error_ttl: Duration,
}

impl Expiry<String, Arc<RobotsRules>> for RobotsExpiry {
    fn expire_after_create(
        &self,
        _key: &String,
        value: &Arc<RobotsRules>,
        _created_at: Instant,
    ) -> Option<Duration> {
        Some(match value.as_ref() {
            RobotsRules::DisallowAll { .. } => self.error_ttl,
            _ => self.ttl,
        })
    }
}

/// A cache of robots.txt rules per origin (scheme, host and port).
#[derive(Clone)]
pub struct RobotsCache {
    client: reqwest::Client,
    agent: String,
    rules: Cache<String, Arc<RobotsRules>>,
    credentials: SiteCredentials,
}

impl RobotsCache {
    /// A cache that fetches as an HTTP client of `config` and `context` would, matches groups for
    /// `agent` (the product name), keeps rules for `robots.cache.ttl`, and asks again after
    /// `robots.error.cache.ttl` when a site could not answer (`settings`).
    pub fn new(
        config: &HttpSettings,
        context: &HttpContext,
        agent: &str,
        settings: &RobotsSettings,
    ) -> Result<Self, HttpClientError> {
        let (ttl, error_ttl) = (settings.cache_ttl, settings.error_cache_ttl);
        let client = base_builder(config, context, &context.host_resolver(config))?
            .redirect(redirect_policy(5, config, context))
            .build()?;
        Ok(RobotsCache {
            client,
            agent: agent.to_string(),
            credentials: config.credentials().map_err(HttpClientError::key)?,
            rules: Cache::builder()
                .max_capacity(100_000)
                .expire_after(RobotsExpiry { ttl, error_ttl })
                .build(),
        })
    }

    /// The rules for `url`'s site, fetching robots.txt on first use.
    pub async fn rules_for(&self, url: &Url) -> RobotsLookup {
        let origin = url.origin().ascii_serialization();
        let entry = self
            .rules
            .entry(origin.clone())
            .or_insert_with(async move { Arc::new(self.fetch(&origin).await) })
            .await;
        RobotsLookup {
            fresh: entry.is_fresh(),
            rules: entry.into_value(),
        }
    }

    async fn fetch(&self, origin: &str) -> RobotsRules {
        let robots_url = format!("{origin}/robots.txt");
        let request = match Url::parse(&robots_url) {
            Ok(url) => authorize(&self.credentials, self.client.get(url.as_str()), &url),
            Err(_) => self.client.get(&robots_url),
        };
        let mut response = match request.send().await {
            Ok(response) => response,
            Err(error) => {
                return RobotsRules::DisallowAll {
                    reason: format!("unreachable: {}", crate::error_text::with_causes(&error)),
                };
            }
        };
        let status = response.status();
        if status.is_client_error() {
            return RobotsRules::AllowAll;
        }
        if !status.is_success() {
            return RobotsRules::DisallowAll {
                reason: format!("answered {status}"),
            };
        }
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let room = MAX_ROBOTS_BYTES.saturating_sub(body.len());
                    body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    if body.len() >= MAX_ROBOTS_BYTES {
                        break;
                    }
                }
                Ok(None) => break,
                Err(error) => {
                    return RobotsRules::DisallowAll {
                        reason: format!("body failed: {}", crate::error_text::with_causes(&error)),
                    };
                }
            }
        }
        RobotsRules::parse(&self.agent, &body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::url;

    #[test]
    fn an_absurd_crawl_delay_is_held_as_absurd_not_ignored() {
        for text in ["1e39", "inf", "99999999999999999999"] {
            let body = format!("User-agent: *\nCrawl-delay: {text}\n");
            let rules = RobotsRules::parse("squall", body.as_bytes());
            assert_eq!(rules.crawl_delay(), Some(ABSURD_CRAWL_DELAY), "{text}");
        }
        let rules = RobotsRules::parse("squall", b"User-agent: *\nCrawl-delay: 2.5\n");
        assert_eq!(rules.crawl_delay(), Some(Duration::from_millis(2500)));
        for text in ["-1", "NaN", "soon"] {
            let body = format!("User-agent: *\nCrawl-delay: {text}\n");
            let rules = RobotsRules::parse("squall", body.as_bytes());
            assert_eq!(rules.crawl_delay(), None, "{text}");
        }
    }

    // The examples of RFC 9309, section 5, and its matching rules.
    #[test]
    fn rfc9309_group_matching_and_longest_match() {
        let text =
            b"User-Agent: *\nDisallow: *.gif$\nDisallow: /example/\nAllow: /publications/\n\n\
User-Agent: foobot\nDisallow:/\nAllow:/example/page.html\nAllow:/example/allowed.gif\n\n\
User-Agent: barbot\nUser-Agent: bazbot\nDisallow: /example/page.html\n\n\
User-Agent: quxbot\n";
        let foobot = RobotsRules::parse("FooBot", text);
        assert!(foobot.allowed(&url("http://a.test/example/page.html")));
        assert!(foobot.allowed(&url("http://a.test/example/allowed.gif")));
        assert!(!foobot.allowed(&url("http://a.test/other")));
        let barbot = RobotsRules::parse("barbot", text);
        assert!(!barbot.allowed(&url("http://a.test/example/page.html")));
        assert!(
            barbot.allowed(&url("http://a.test/x.gif")),
            "groups do not merge with *"
        );
        let quxbot = RobotsRules::parse("quxbot", text);
        assert!(
            quxbot.allowed(&url("http://a.test/example/page.html")),
            "an empty group allows all"
        );
        let other = RobotsRules::parse("squall", text);
        assert!(!other.allowed(&url("http://a.test/images/x.gif")));
        assert!(!other.allowed(&url("http://a.test/example/")));
        assert!(other.allowed(&url("http://a.test/publications/")));
        assert!(other.allowed(&url("http://a.test/robots.txt")));
    }

    #[test]
    fn allow_wins_a_tie_and_longest_rule_wins() {
        let rules = RobotsRules::parse(
            "squall",
            b"User-agent: *\nAllow: /p\nDisallow: /p\nDisallow: /folder\nAllow: /folder/page\n",
        );
        assert!(rules.allowed(&url("http://a.test/p")));
        assert!(rules.allowed(&url("http://a.test/folder/page")));
        assert!(!rules.allowed(&url("http://a.test/folder/other")));
    }

    #[test]
    fn crawl_delay_and_sitemaps() {
        let rules = RobotsRules::parse(
            "squall",
            b"User-agent: *\nCrawl-delay: 2.5\nDisallow: /private/\nSitemap: http://a.test/sitemap.xml\n",
        );
        assert_eq!(rules.crawl_delay(), Some(Duration::from_millis(2500)));
        assert_eq!(rules.sitemaps(), [url("http://a.test/sitemap.xml")]);
        assert!(rules.refusal(&url("http://a.test/private/x")).is_some());
    }

    #[test]
    fn unavailable_robots_disallow_everything_with_a_reason() {
        let rules = RobotsRules::DisallowAll {
            reason: "answered 503".to_string(),
        };
        let (refusal, is_final) = rules.refusal(&url("http://a.test/")).expect("refused");
        assert!(refusal.contains("503"), "{refusal}");
        assert!(!is_final, "an unavailable robots.txt refuses only for now");
        assert!(RobotsRules::AllowAll.allowed(&url("http://a.test/anything")));
    }
}
