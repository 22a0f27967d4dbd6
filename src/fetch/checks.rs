//! What is asked before a URL is fetched: is there a protocol for its scheme, does the protocol
//! refuse it (a private address), does robots.txt allow it, is the site's crawl delay acceptable.

use std::sync::Arc;
use std::time::Duration;

use url::Url;

use super::settings::FetcherSettings;
use crate::message::FetchFailure;
use crate::model::{Metadata, Status};
use crate::protocol::{Protocol, Protocols, RobotsCache, RobotsRules};

/// Why a URL is not fetched: the status it gets and its cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Denied {
    /// ERROR when final; FETCH_ERROR when the URL may be tried again later.
    pub status: Status,
    /// Recorded as the URL's `error.cause`.
    pub cause: FetchFailure,
    /// A human-readable message.
    pub message: String,
}

/// What the site's robots.txt said, passed on with the URL whether it is fetched or not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct SiteNotes {
    /// Sitemaps it announces, when it was read for this URL (first use).
    pub sitemaps: Vec<Url>,
    /// Its Crawl-delay for our agent.
    pub crawl_delay: Option<Duration>,
}

/// The protocol that fetches `url`, unless none serves its scheme or it (or the scheme's
/// fallback) refuses the URL.
pub(super) async fn protocol_for(
    protocols: &Protocols,
    url: &Url,
    metadata: &Metadata,
) -> Result<Arc<dyn Protocol>, Denied> {
    let Some(protocol) = protocols.for_url(url, metadata) else {
        return Err(Denied {
            status: Status::Error,
            cause: FetchFailure::UnsupportedScheme,
            message: format!("no protocol fetches {}: URLs", url.scheme()),
        });
    };
    let fallback = protocols.fallback_for(url.scheme());
    let mut refusal = protocol.refusal(url).await;
    if let (None, Some(fallback)) = (&refusal, fallback) {
        refusal = fallback.refusal(url).await;
    }
    match refusal {
        Some(refusal) => Err(Denied {
            status: Status::Error,
            cause: refusal.cause,
            message: refusal.message,
        }),
        None => Ok(Arc::clone(protocol)),
    }
}

/// What robots.txt says about `url` (read over HTTP, for `http` and `https` URLs only; `robots`
/// is `None` when it is ignored): the site's notes, and a denial when it refuses the URL or asks
/// for a crawl delay above the limit.
pub(super) async fn robots(
    robots: Option<&RobotsCache>,
    settings: &FetcherSettings,
    url: &Url,
) -> (SiteNotes, Option<Denied>) {
    let robots = robots.filter(|_| matches!(url.scheme(), "http" | "https"));
    let Some(robots) = robots else {
        return (SiteNotes::default(), None);
    };
    let lookup = robots.rules_for(url).await;
    let notes = SiteNotes {
        sitemaps: if lookup.fresh {
            lookup.rules.sitemaps()
        } else {
            Vec::new()
        },
        crawl_delay: lookup.rules.crawl_delay(),
    };
    let denied = rules_denial(&lookup.rules, url)
        .or_else(|| crawl_delay_denial(settings, notes.crawl_delay));
    (notes, denied)
}

/// The rules' refusal of `url`: ERROR when they forbid it, FETCH_ERROR when robots.txt could not
/// be read (to be tried again).
fn rules_denial(rules: &RobotsRules, url: &Url) -> Option<Denied> {
    let (message, is_final) = rules.refusal(url)?;
    Some(Denied {
        status: if is_final {
            Status::Error
        } else {
            Status::FetchError
        },
        cause: FetchFailure::RobotsTxt,
        message,
    })
}

/// ERROR for a Crawl-delay above `fetcher.max.crawl.delay`, unless the delay is to be capped.
fn crawl_delay_denial(settings: &FetcherSettings, crawl_delay: Option<Duration>) -> Option<Denied> {
    let delay = crawl_delay.filter(|d| *d > settings.max_crawl_delay)?;
    (!settings.max_crawl_delay_force).then(|| Denied {
        status: Status::Error,
        cause: FetchFailure::CrawlDelay,
        message: format!(
            "robots.txt Crawl-delay of {delay:?} exceeds fetcher.max.crawl.delay ({:?})",
            settings.max_crawl_delay
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{HttpClient, HttpContext, HttpSettings};
    use crate::testing::url;

    #[tokio::test]
    async fn a_scheme_without_protocol_or_a_refused_url_is_denied() {
        let config = HttpSettings {
            refuse_private_addresses: true,
            ..HttpSettings::default()
        };
        let http = HttpClient::new(&config, &HttpContext::new(&config)).expect("client");
        let protocols = Protocols::http(http);
        // A public address (an address, so that nothing is looked up).
        let public = url("https://93.184.216.34/");
        let allowed = protocol_for(&protocols, &public, &Metadata::default()).await;
        assert!(allowed.is_ok());
        let Err(denied) =
            protocol_for(&protocols, &url("ftp://example.org/"), &Metadata::default()).await
        else {
            panic!("ftp has no protocol");
        };
        assert_eq!(denied.status, Status::Error);
        assert_eq!(denied.cause, FetchFailure::UnsupportedScheme);
        assert!(denied.message.contains("ftp"), "{}", denied.message);
        let Err(denied) = protocol_for(
            &protocols,
            &url("http://192.168.1.1/"),
            &Metadata::default(),
        )
        .await
        else {
            panic!("a private address is refused");
        };
        assert_eq!(denied.cause, FetchFailure::PrivateAddress);
    }

    #[test]
    fn robots_refusals_are_final_or_for_now() {
        let page = url("http://a.test/private/x");
        let rules = RobotsRules::parse("squall", b"User-agent: *\nDisallow: /private/\n");
        let denied = rules_denial(&rules, &page).expect("disallowed");
        assert_eq!(
            (denied.status, denied.cause),
            (Status::Error, FetchFailure::RobotsTxt)
        );
        let unavailable = RobotsRules::DisallowAll {
            reason: "answered 503".to_string(),
        };
        let denied = rules_denial(&unavailable, &page).expect("unavailable");
        assert_eq!(denied.status, Status::FetchError);
        assert_eq!(rules_denial(&RobotsRules::AllowAll, &page), None);
    }

    #[test]
    fn a_long_crawl_delay_is_denied_unless_capped() {
        let settings = FetcherSettings {
            max_crawl_delay: Duration::from_secs(10),
            ..FetcherSettings::default()
        };
        assert_eq!(
            crawl_delay_denial(&settings, Some(Duration::from_secs(10))),
            None
        );
        let denied =
            crawl_delay_denial(&settings, Some(Duration::from_secs(11))).expect("too long");
        assert_eq!(denied.cause, FetchFailure::CrawlDelay);
        let capped = FetcherSettings {
            max_crawl_delay_force: true,
            ..settings
        };
        assert_eq!(
            crawl_delay_denial(&capped, Some(Duration::from_secs(11))),
            None
        );
    }
}
