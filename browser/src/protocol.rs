//! The browser protocol: a bounded set of tabs over one browser at a time, restarted when it
//! crashes, grows too large or has rendered enough pages.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::Utc;
use squall::config::CrawlConfig;
use squall::message::{FetchFailure, FetchOutcome, FetchRecord, FetchedResponse};
use squall::model::{Metadata, Status};
use squall::protocol::{Protocol, parse_retry_after};
use tokio::sync::Semaphore;
use tracing::warn;
use url::Url;

use crate::error::BrowserError;
use crate::memory::tree_rss_bytes;
use crate::render::{RenderError, Rendered, render};
use crate::session::Session;
use crate::settings::BrowserConfig;
use crate::tab::{DocumentResponse, Stopped};

/// The name the fetch log records for rendered pages.
pub const PROTOCOL_NAME: &str = "browser";

/// A URL abandoned on this many dead browsers in a row gets FETCH_ERROR instead of going back.
const MAX_ABANDONS: u32 = 2;

/// URLs whose abandons are remembered at most (URLs failed back may be fetched by another process
/// and never come back here).
const MAX_REMEMBERED_ABANDONS: usize = 10_000;

/// How long a browser gets to answer once a page timed out, before it counts as hung (paused,
/// deadlocked) and is replaced.
const LIVENESS_PATIENCE: Duration = Duration::from_secs(5);

/// How often the browser's memory is read, at most.
const RSS_CHECK_EVERY: Duration = Duration::from_millis(500);

/// Renders pages in headless Chromium, for the URLs its [`RenderRules`](crate::RenderRules)
/// select (the others go to plain HTTP).
///
/// - **Tabs**: at most `browser.tabs` pages render at once; a fetch waits for a free tab, which
///   holds its fetcher slot (backpressure).
/// - **Timeouts**: a page not settled within `browser.page.timeout` gets FETCH_ERROR (cause
///   `timeout`), and its tab is closed and replaced.
/// - **Restarts**: the browser is replaced after it crashes or stops answering (a page timed out and
///   the browser does not answer within 5 s), after `browser.restart.pages`
///   pages, or once its processes hold more than `browser.max.rss.mb`. One browser runs at a time:
///   renders in flight on a retired browser finish there before it is closed and the next one
///   starts (new renders wait meanwhile); renders in flight on a browser that died are failed back to
///   the spout unfetched (they stay due and are fetched again), or get FETCH_ERROR (cause
///   `browser`) after dying with 2 browsers in a row.
pub struct BrowserProtocol {
    settings: BrowserConfig,
    tabs: Semaphore,
    current: tokio::sync::Mutex<Option<Arc<Session>>>,
    abandons: Mutex<HashMap<String, u32>>,
    last_rss_check: Mutex<Instant>,
}

impl BrowserProtocol {
    /// Starts the browser of `settings` (so that a missing or broken Chromium is an error now, not
    /// a failure per URL later).
    pub async fn start(settings: BrowserConfig) -> Result<Self, BrowserError> {
        let session = Session::start(&settings).await?;
        Ok(BrowserProtocol {
            tabs: Semaphore::new(settings.tabs),
            settings,
            current: tokio::sync::Mutex::new(Some(Arc::new(session))),
            abandons: Mutex::new(HashMap::new()),
            last_rss_check: Mutex::new(Instant::now()),
        })
    }

    /// Reads the `browser.*` keys of `config` and starts the browser.
    pub async fn from_config(config: &CrawlConfig) -> Result<Self, crate::BrowserStartError> {
        let settings = BrowserConfig::from_config(config)?;
        Ok(Self::start(settings).await?)
    }

    /// The settings.
    pub fn settings(&self) -> &BrowserConfig {
        &self.settings
    }

    /// The process id of the current browser, when squall launched it.
    pub async fn browser_pid(&self) -> Option<u32> {
        self.current.lock().await.as_ref().and_then(|s| s.pid())
    }

    /// Bytes resident in memory for the current browser's processes, when it can be read.
    pub async fn rss_bytes(&self) -> Option<u64> {
        tree_rss_bytes(self.browser_pid().await?)
    }

    /// The browser new renders use, started if there is none or the last one was retired.
    async fn session(&self) -> Result<Arc<Session>, BrowserError> {
        let mut current = self.current.lock().await;
        if let Some(session) = current.as_ref().filter(|s| s.usable()) {
            return Ok(Arc::clone(session));
        }
        if let Some(old) = current.take() {
            old.retire(if old.is_gone() { "gone" } else { "retired" });
            // One browser at a time, so that memory stays bounded: the renders still in flight
            // on the old one finish first, and it is closed before the next starts.
            old.drained(self.settings.page_timeout + LIVENESS_PATIENCE)
                .await;
            old.kill();
        }
        let session = Arc::new(Session::start(&self.settings).await?);
        *current = Some(Arc::clone(&session));
        Ok(session)
    }

    /// Retires `session` if it rendered enough pages or holds too much memory.
    fn maybe_retire(&self, session: &Session, pages: u64) {
        if self.settings.restart_pages > 0 && pages >= self.settings.restart_pages {
            session.retire("pages");
            return;
        }
        let (Some(limit), Some(pid)) = (self.settings.max_rss_bytes, session.pid()) else {
            return;
        };
        let due = self.last_rss_check.lock().is_ok_and(|mut last| {
            let due = last.elapsed() >= RSS_CHECK_EVERY;
            if due {
                *last = Instant::now();
            }
            due
        });
        if let Some(rss) = due.then(|| tree_rss_bytes(pid)).flatten() {
            metrics::gauge!("squall_browser_rss_bytes").set(rss as f64);
            if rss > limit {
                session.retire("memory");
            }
        }
    }

    async fn render_once(&self, url: &Url) -> Result<Rendered, Failure> {
        let session = self.session().await.map_err(Failure::Unavailable)?;
        let _active = session.begin_render();
        let patience = self.settings.page_timeout;
        let tab = match tokio::time::timeout(patience, session.take_tab(&self.settings)).await {
            Ok(Ok(tab)) => tab,
            Ok(Err(error)) => return Err(self.browser_failed(&session, url, error)),
            Err(_) => {
                let failure = Failure::Site(FetchFailure::Browser, "no tab opened in time".into());
                return Err(self.timed_out(&session, url, failure).await);
            }
        };
        let redirects = (self.settings.follow_redirects, self.settings.max_redirects);
        let work = render(&tab, url, &self.settings.settle, redirects);
        match tokio::time::timeout(patience, work).await {
            Ok(Ok(rendered)) => {
                let pages = session.put_tab(tab);
                self.forget(url);
                self.maybe_retire(&session, pages);
                Ok(rendered)
            }
            Ok(Err(RenderError::Navigation(error))) => {
                session.put_tab(tab);
                Err(Failure::Site(FetchFailure::Connection, error))
            }
            Ok(Err(error)) => {
                tokio::spawn(tab.close());
                session.count_page();
                Err(match error {
                    RenderError::Browser(error) => self.browser_failed(&session, url, error),
                    _ => self.abandon_or_fail(url, "the tab crashed while rendering".into()),
                })
            }
            Err(_) => {
                // A tab that timed out is not reused.
                tokio::spawn(tab.close());
                session.count_page();
                let message = format!("the page did not settle within {patience:?}");
                let failure = Failure::Site(FetchFailure::Timeout, message);
                Err(self.timed_out(&session, url, failure).await)
            }
        }
    }

    /// After a timeout: a browser that no longer answers is hung (paused, deadlocked) and is
    /// replaced, and the URL goes back; otherwise the page is to blame (`failure`).
    async fn timed_out(&self, session: &Session, url: &Url, failure: Failure) -> Failure {
        if session.responds(LIVENESS_PATIENCE).await {
            return failure;
        }
        session.retire("hung");
        session.kill();
        self.abandon_or_fail(url, "the browser stopped answering".to_string())
    }

    /// A DevTools failure: if the browser is gone, the URL goes back (or fails after repeats);
    /// otherwise it is this page's failure.
    fn browser_failed(&self, session: &Session, url: &Url, error: BrowserError) -> Failure {
        if matches!(error, BrowserError::Gone(_)) || session.is_gone() {
            session.retire("gone");
            return self.abandon_or_fail(url, format!("the browser died while rendering: {error}"));
        }
        Failure::Site(FetchFailure::Browser, error.to_string())
    }

    fn abandon_or_fail(&self, url: &Url, message: String) -> Failure {
        let count = self.abandons.lock().map_or(MAX_ABANDONS, |mut counts| {
            if counts.len() >= MAX_REMEMBERED_ABANDONS {
                counts.clear();
            }
            let count = counts.entry(url.to_string()).or_insert(0);
            *count += 1;
            *count
        });
        if count >= MAX_ABANDONS {
            self.forget(url);
            return Failure::Site(FetchFailure::Browser, message);
        }
        Failure::Abandoned(message)
    }

    fn forget(&self, url: &Url) {
        if let Ok(mut counts) = self.abandons.lock() {
            counts.remove(url.as_str());
        }
    }
}

/// Why a render produced no page.
enum Failure {
    /// The site's (or the page's) failure: FETCH_ERROR with this cause.
    Site(FetchFailure, String),
    /// Not the URL's fault: it goes back to the spout.
    Abandoned(String),
    /// No browser could be started.
    Unavailable(BrowserError),
}

#[async_trait]
impl Protocol for BrowserProtocol {
    async fn fetch(&self, url: &Url, _metadata: &Metadata) -> (FetchRecord, FetchOutcome) {
        let started = Utc::now();
        let permit = self.tabs.acquire().await;
        if permit.is_err() {
            let failure = Failure::Site(FetchFailure::Browser, "the browser is closed".into());
            return failed(started, failure);
        }
        metrics::gauge!("squall_browser_tabs_busy").increment(1.0);
        let result = self.render_once(url).await;
        metrics::gauge!("squall_browser_tabs_busy").decrement(1.0);
        match result {
            Ok(rendered) => answered(started, url, rendered, self.settings.content_limit),
            Err(failure) => failed(started, failure),
        }
    }

    fn accepts(&self, url: &Url, metadata: &Metadata) -> bool {
        self.settings.rules.renders(url, metadata)
    }
}

/// A rendered page, or the response the navigation stopped at.
fn answered(
    started: chrono::DateTime<Utc>,
    url: &Url,
    rendered: Rendered,
    limit: Option<usize>,
) -> (FetchRecord, FetchOutcome) {
    metrics::counter!("squall_browser_pages_total").increment(1);
    let (response, mut body, content_type) = match rendered {
        Rendered::Page { response, html, .. } => (
            response,
            html.into_bytes(),
            Some("text/html; charset=utf-8".to_string()),
        ),
        Rendered::Stopped(Stopped { response, body }) => {
            let content_type = response.header("content-type").map(str::to_string);
            (response, body, content_type)
        }
    };
    let truncated = limit.is_some_and(|limit| body.len() > limit);
    if let Some(limit) = limit.filter(|_| truncated) {
        body.truncate(limit);
    }
    let record = FetchRecord {
        started,
        finished: Utc::now(),
        http_status: Some(response.status),
        error: None,
        bytes: body.len() as u64,
        protocol: PROTOCOL_NAME,
    };
    let mut fetched = fetched(url, &response, body, content_type);
    fetched.truncated = truncated;
    (record, FetchOutcome::Response(Box::new(fetched)))
}

fn fetched(
    url: &Url,
    response: &DocumentResponse,
    body: Vec<u8>,
    content_type: Option<String>,
) -> FetchedResponse {
    let header = |name: &str| response.header(name).map(str::to_string);
    let final_url = Url::parse(&response.url).ok().filter(|last| last != url);
    let retry_after = matches!(response.status, 429 | 503)
        .then(|| response.header("retry-after").and_then(parse_retry_after))
        .flatten();
    FetchedResponse {
        status_code: response.status,
        content_type,
        location: header("location"),
        robots_tag: response
            .headers
            .iter()
            .filter(|(name, _)| name == "x-robots-tag")
            .map(|(_, value)| value.clone())
            .collect(),
        etag: header("etag"),
        last_modified: header("last-modified"),
        retry_after,
        final_url,
        body: body.into(),
        truncated: false,
    }
}

fn failed(started: chrono::DateTime<Utc>, failure: Failure) -> (FetchRecord, FetchOutcome) {
    let (outcome, error) = match failure {
        Failure::Site(cause, message) => {
            let error = format!("{cause}: {message}");
            let outcome = FetchOutcome::Failed {
                status: Status::FetchError,
                cause,
                message,
            };
            (outcome, error)
        }
        Failure::Abandoned(message) => {
            let error = format!("abandoned: {message}");
            let outcome = FetchOutcome::Abandoned {
                cause: FetchFailure::Browser,
                message,
            };
            (outcome, error)
        }
        Failure::Unavailable(problem) => {
            warn!(%problem, "no browser to render with");
            let message = problem.to_string();
            let error = format!("browser: {message}");
            let outcome = FetchOutcome::Failed {
                status: Status::FetchError,
                cause: FetchFailure::Browser,
                message,
            };
            (outcome, error)
        }
    };
    let record = FetchRecord {
        started,
        finished: Utc::now(),
        http_status: None,
        error: Some(error),
        bytes: 0,
        protocol: PROTOCOL_NAME,
    };
    (record, outcome)
}
