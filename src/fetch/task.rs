//! One fetch task: the checks before the request, the global rate limit, fencing, and the request
//! itself through the URL's protocol.

use std::sync::Arc;
use std::time::Duration;

use tracing::debug;

use super::checks::{self, Denied, SiteNotes};
use super::pace::Signal;
use super::queues::{Learned, fail_fenced};
use super::settings::FetcherSettings;
use crate::frontier::QueueReport;
use crate::message::{CrawlEvent, CrawlObserver, FetchOutcome, FetchedPage, Tuple};
use crate::model::keys;
use crate::protocol::{Protocol, Protocols, RobotsCache};

/// The global cap on fetches per second.
pub(super) type GlobalLimiter = governor::DefaultDirectRateLimiter;

/// What every fetch task shares.
pub(super) struct FetchContext {
    /// The protocols, by scheme.
    pub protocols: Protocols,
    /// robots.txt, when it is obeyed.
    pub robots: Option<RobotsCache>,
    /// The fetcher's settings.
    pub settings: FetcherSettings,
    /// The global rate limit, when there is one.
    pub limiter: Option<GlobalLimiter>,
    /// Told of each fetch attempt.
    pub observer: Arc<dyn CrawlObserver>,
}

/// A finished fetch task.
pub(super) struct Completed {
    /// The URL's queue.
    pub key: String,
    /// `None` when the fetch was fenced at the last moment (its URL was failed back unfetched).
    pub page: Option<FetchedPage>,
    /// What the fetch taught about the queue.
    pub learned: Learned,
}

/// Checks `tuple`'s URL, waits for the global rate limit, and fetches it unless its lease was lost
/// meanwhile.
pub(super) async fn fetch_one(context: &FetchContext, key: String, tuple: Tuple) -> Completed {
    let url = &tuple.url.url;
    let protocol = match checks::protocol_for(&context.protocols, url, &tuple.url.metadata).await {
        Ok(protocol) => protocol,
        Err(denied) => return refused(key, tuple, denied, SiteNotes::default()),
    };
    let (site, denied) = checks::robots(context.robots.as_ref(), &context.settings, url).await;
    if let Some(denied) = denied {
        return refused(key, tuple, denied, site);
    }
    if let Some(limiter) = &context.limiter {
        limiter.until_ready().await;
    }
    // Fencing again, just before the request: the lease was valid when the URL left its queue,
    // but it may have lapsed since (a robots.txt fetch, the global rate limit, a paused process).
    if !tuple.hints.may_fetch() {
        fail_fenced(&key, tuple, "request");
        let learned = Learned {
            crawl_delay: site.crawl_delay,
            ..Learned::default()
        };
        return Completed {
            key,
            page: None,
            learned,
        };
    }
    fetch(context, protocol.as_ref(), key, tuple, site).await
}

/// Makes the request, records it (metrics, observer) and reads the server's Retry-After hold.
async fn fetch(
    context: &FetchContext,
    protocol: &dyn Protocol,
    key: String,
    tuple: Tuple,
    site: SiteNotes,
) -> Completed {
    let started = tokio::time::Instant::now();
    let (record, outcome) = protocol.fetch(&tuple.url.url, &tuple.url.metadata).await;
    let took = started.elapsed();
    metrics::histogram!("squall_fetch_seconds").record(took.as_secs_f64());
    metrics::counter!("squall_fetch_bytes_total").increment(record.bytes);
    metrics::counter!("squall_fetch_total").increment(1);
    context.observer.on_event(&CrawlEvent::Fetched {
        url: crate::redact::url_text(tuple.url.url.as_str()).into_owned(),
        key: key.clone(),
        fetch: record.clone(),
    });
    if let FetchOutcome::Abandoned { message, .. } = &outcome {
        return abandoned(key, tuple, message, site, started);
    }
    let codes = &context.settings.pace.status_codes;
    let hold = retry_after_hold(&outcome, context.settings.max_retry_after, codes);
    let blocked_until = hold.map(|hold| {
        debug!(key = %key, ?hold, "the server asked us to wait (Retry-After)");
        chrono::Utc::now() + chrono::TimeDelta::from_std(hold).unwrap_or_default()
    });
    let learned = Learned {
        contacted_server: true,
        crawl_delay: site.crawl_delay,
        hold,
        signal: Signal::of(&outcome, took, codes),
        started: Some(started),
    };
    let page = FetchedPage {
        tuple,
        record: Some(record),
        outcome,
        sitemaps: site.sitemaps,
        queue: QueueReport {
            blocked_until,
            crawl_delay: site.crawl_delay,
            last_fetch: Some(chrono::Utc::now()),
            pace: None,
        },
    };
    Completed {
        key,
        page: Some(page),
        learned,
    }
}

/// An attempt the protocol gave up for a reason that is not the URL's: the URL is failed back to
/// the spout unfetched and stays due.
fn abandoned(
    key: String,
    tuple: Tuple,
    message: &str,
    site: SiteNotes,
    started: tokio::time::Instant,
) -> Completed {
    debug!(key = %key, url = %crate::redact::url_text(tuple.url.url.as_str()), message, "fetch abandoned; left due");
    metrics::counter!("squall_fetch_abandoned_total").increment(1);
    tuple
        .ack
        .fail(format!("the fetch was abandoned ({message}); left due"));
    let learned = Learned {
        contacted_server: true,
        crawl_delay: site.crawl_delay,
        started: Some(started),
        ..Learned::default()
    };
    Completed {
        key,
        page: None,
        learned,
    }
}

/// The Retry-After of an answer that holds its queue (a 429, a 503, or one of `codes`,
/// `urlfrontier.backoff.status.codes`: [`Signal::holds`]), capped at `max`.
fn retry_after_hold(outcome: &FetchOutcome, max: Duration, codes: &[u16]) -> Option<Duration> {
    match outcome {
        FetchOutcome::Response(response) if Signal::holds(response.status_code, codes) => {
            response.retry_after.map(|wait| wait.min(max))
        }
        _ => None,
    }
}

/// A URL that may not be fetched: a status with the cause, and no request made.
fn refused(key: String, mut tuple: Tuple, denied: Denied, site: SiteNotes) -> Completed {
    tuple
        .url
        .metadata
        .set(keys::ERROR_CAUSE, denied.cause.as_str());
    let page = FetchedPage {
        tuple,
        record: None,
        outcome: FetchOutcome::Failed {
            status: denied.status,
            cause: denied.cause,
            message: denied.message,
        },
        sitemaps: site.sitemaps,
        queue: QueueReport {
            crawl_delay: site.crawl_delay,
            ..QueueReport::default()
        },
    };
    let learned = Learned {
        crawl_delay: site.crawl_delay,
        ..Learned::default()
    };
    Completed {
        key,
        page: Some(page),
        learned,
    }
}
