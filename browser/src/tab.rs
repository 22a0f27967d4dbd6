//! One browser tab and what it watches: requests in flight (for network idle), the navigation's
//! document responses (status, headers, redirects), blocked resource types, and crashes.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use base64::Engine;
use chromiumoxide::Page;
use chromiumoxide::cdp::IntoEventKind;
use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams, EventRequestPaused, FailRequestParams,
    FulfillRequestParams, GetResponseBodyParams, HeaderEntry, RequestPattern, RequestStage,
};
use chromiumoxide::cdp::browser_protocol::inspector::EventTargetCrashed;
use chromiumoxide::cdp::browser_protocol::network::{
    ErrorReason, EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, ResourceType,
    SetUserAgentOverrideParams,
};
use chromiumoxide::listeners::EventStream;
use futures::StreamExt;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::error::BrowserError;
use crate::settings::BlockedResource;

/// A document response of the main frame: one hop of a navigation.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentResponse {
    /// The URL requested.
    pub url: String,
    /// The HTTP status.
    pub status: u16,
    /// Response headers, names lowercase.
    pub headers: Vec<(String, String)>,
}

impl DocumentResponse {
    /// The first value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    fn is_html(&self) -> bool {
        self.header("content-type").is_none_or(|value| {
            let value = value.to_ascii_lowercase();
            value.contains("text/html") || value.contains("application/xhtml")
        })
    }
}

/// A navigation stopped on purpose at its document response, which is the answer: a redirect
/// not followed, an error status, or content that is not HTML (its bytes as received).
#[derive(Debug, Clone)]
pub struct Stopped {
    /// The response.
    pub response: DocumentResponse,
    /// Its body.
    pub body: Vec<u8>,
}

/// What the tab's watchers saw during the current render.
#[derive(Debug)]
pub struct TabState {
    /// Network requests started and not finished, with the loader (document) that made them.
    in_flight: HashMap<String, String>,
    /// The loader of the page being rendered, once its navigation answered: requests of earlier
    /// pages whose events arrive late are not counted.
    loader: Option<String>,
    /// Requests that ended during this render. Each event kind has its own listener, so a quick
    /// request's end can be handled before its start (or a redirect hop's start).
    ended: HashSet<String>,
    /// When a request last started or ended.
    pub last_activity: Instant,
    /// Document responses of the main frame, in order (redirect hops, then the page).
    pub documents: Vec<DocumentResponse>,
    /// Set when the navigation was stopped at its document response.
    pub stopped: Option<Stopped>,
    /// The renderer crashed.
    pub crashed: bool,
    follow_redirects: bool,
    max_redirects: usize,
}

impl TabState {
    /// Whether a request of the page being rendered is in flight.
    pub fn busy(&self) -> bool {
        self.in_flight
            .values()
            .any(|loader| self.loader.as_ref().is_none_or(|page| page == loader))
    }

    /// The page being rendered is the document of `loader`.
    pub fn set_loader(&mut self, loader: Option<String>) {
        self.loader = loader;
    }
}

/// State shared between a tab and its watchers.
pub struct Watch {
    state: Mutex<TabState>,
    /// Notified whenever the state changes.
    pub changed: Notify,
}

impl Watch {
    /// The state, for reading or resetting.
    pub fn lock(&self) -> MutexGuard<'_, TabState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn update(&self, change: impl FnOnce(&mut TabState)) {
        change(&mut self.lock());
        self.changed.notify_waiters();
    }
}

/// A tab of the browser, watched.
pub struct Tab {
    /// The page.
    pub page: Page,
    /// What its watchers saw.
    pub watch: Arc<Watch>,
    /// Set when the connection to the browser ended.
    browser_gone: Arc<AtomicBool>,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Tab {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Tab {
    /// Opens a tab with `user_agent`, blocking `block`, watching its requests; `browser_gone` is
    /// set when the browser's connection ends.
    pub async fn open(
        browser: &chromiumoxide::Browser,
        user_agent: &str,
        block: &[BlockedResource],
        browser_gone: Arc<AtomicBool>,
    ) -> Result<Tab, BrowserError> {
        let page = browser
            .new_page("about:blank")
            .await
            .map_err(BrowserError::from_cdp)?;
        wait_for_main_frame(&page).await?;
        let watch = Arc::new(Watch {
            state: Mutex::new(TabState {
                in_flight: HashMap::new(),
                loader: None,
                ended: HashSet::new(),
                last_activity: Instant::now(),
                documents: Vec::new(),
                stopped: None,
                crashed: false,
                follow_redirects: false,
                max_redirects: 0,
            }),
            changed: Notify::new(),
        });
        let mut tasks = watch_network(&page, &watch).await?;
        tasks.push(intercept(&page, &watch, block).await?);
        page.execute(SetUserAgentOverrideParams::new(user_agent))
            .await
            .map_err(BrowserError::from_cdp)?;
        Ok(Tab {
            page,
            watch,
            browser_gone,
            tasks,
        })
    }

    /// Whether the browser of this tab is gone.
    pub fn browser_gone(&self) -> bool {
        self.browser_gone.load(Ordering::SeqCst)
    }

    /// Forgets the last render, before the next one.
    pub fn reset(&self, follow_redirects: bool, max_redirects: usize) {
        self.watch.update(|state| {
            state.in_flight.clear();
            state.loader = None;
            state.ended.clear();
            state.last_activity = Instant::now();
            state.documents.clear();
            state.stopped = None;
            state.follow_redirects = follow_redirects;
            state.max_redirects = max_redirects;
        });
    }

    /// Counts an action on the page (a click, a scroll) as activity: the quiet time that settles
    /// the page starts again, giving the page's reaction time to begin.
    pub fn touched(&self) {
        self.watch
            .update(|state| state.last_activity = Instant::now());
    }

    /// Closes the tab (best effort: the browser may be gone).
    pub async fn close(self) {
        let page = self.page.clone();
        drop(self);
        let _ = page.close().await;
    }
}

/// Waits until the DevTools client knows the tab's main frame: a navigation issued before that is
/// dropped by the client, and would hang until the page timeout.
async fn wait_for_main_frame(page: &Page) -> Result<(), BrowserError> {
    for _ in 0..200 {
        if page
            .mainframe()
            .await
            .map_err(BrowserError::from_cdp)?
            .is_some()
        {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    Err(BrowserError::Command(
        "the new tab's main frame never appeared".to_string(),
    ))
}

/// The stream of `page`'s events of type `T`.
async fn listen<T: IntoEventKind>(page: &Page) -> Result<EventStream<T>, BrowserError> {
    page.event_listener::<T>()
        .await
        .map_err(BrowserError::from_cdp)
}

/// Tracks requests in flight and crashes.
async fn watch_network(
    page: &Page,
    watch: &Arc<Watch>,
) -> Result<Vec<JoinHandle<()>>, BrowserError> {
    let mut started = listen::<EventRequestWillBeSent>(page).await?;
    let mut finished = listen::<EventLoadingFinished>(page).await?;
    let mut failed = listen::<EventLoadingFailed>(page).await?;
    let mut crashed = listen::<EventTargetCrashed>(page).await?;
    let (w1, w2, w3, w4) = (watch.clone(), watch.clone(), watch.clone(), watch.clone());
    Ok(vec![
        tokio::spawn(async move {
            while let Some(event) = started.next().await {
                let id = event.request_id.inner().clone();
                let loader = event.loader_id.inner().clone();
                w1.update(|state| {
                    if !state.ended.contains(&id) {
                        state.in_flight.insert(id, loader);
                    }
                    state.last_activity = Instant::now();
                });
            }
        }),
        tokio::spawn(async move {
            while let Some(event) = finished.next().await {
                w2.update(|state| ended(state, event.request_id.inner()));
            }
        }),
        tokio::spawn(async move {
            while let Some(event) = failed.next().await {
                w3.update(|state| ended(state, event.request_id.inner()));
            }
        }),
        tokio::spawn(async move {
            if crashed.next().await.is_some() {
                w4.update(|state| state.crashed = true);
            }
        }),
    ])
}

fn ended(state: &mut TabState, id: &str) {
    state.in_flight.remove(id);
    state.ended.insert(id.to_string());
    state.last_activity = Instant::now();
}

/// Pauses blocked resource types (failed at once) and the documents' responses (the main frame's
/// are recorded, and stopped when they are the answer).
async fn intercept(
    page: &Page,
    watch: &Arc<Watch>,
    block: &[BlockedResource],
) -> Result<JoinHandle<()>, BrowserError> {
    let mut patterns: Vec<RequestPattern> = block
        .iter()
        .map(|blocked| {
            RequestPattern::builder()
                .resource_type(resource_type(*blocked))
                .request_stage(RequestStage::Request)
                .build()
        })
        .collect();
    patterns.push(
        RequestPattern::builder()
            .resource_type(ResourceType::Document)
            .request_stage(RequestStage::Response)
            .build(),
    );
    let mut paused = listen::<EventRequestPaused>(page).await?;
    page.execute(EnableParams::builder().patterns(patterns).build())
        .await
        .map_err(BrowserError::from_cdp)?;
    let page = page.clone();
    let watch = watch.clone();
    let main_frame = page.target_id().inner().clone();
    Ok(tokio::spawn(async move {
        while let Some(event) = paused.next().await {
            let page = page.clone();
            let watch = watch.clone();
            let main = event.frame_id.inner() == &main_frame;
            tokio::spawn(async move { on_paused(&page, &watch, &event, main).await });
        }
    }))
}

fn resource_type(blocked: BlockedResource) -> ResourceType {
    match blocked {
        BlockedResource::Image => ResourceType::Image,
        BlockedResource::Font => ResourceType::Font,
        BlockedResource::Media => ResourceType::Media,
        BlockedResource::Stylesheet => ResourceType::Stylesheet,
    }
}

/// Decides what happens to one paused request.
async fn on_paused(page: &Page, watch: &Watch, event: &EventRequestPaused, main_frame: bool) {
    let id = event.request_id.clone();
    let at_response = event.response_status_code.is_some() || event.response_error_reason.is_some();
    if !at_response {
        let _ = page
            .execute(FailRequestParams::new(id, ErrorReason::BlockedByClient))
            .await;
        return;
    }
    let Some(code) = event.response_status_code.filter(|_| main_frame) else {
        let _ = page.execute(ContinueRequestParams::new(id)).await;
        return;
    };
    let response = DocumentResponse {
        url: event.request.url.clone(),
        status: u16::try_from(code).unwrap_or(0),
        headers: event
            .response_headers
            .iter()
            .flatten()
            .map(|entry| (entry.name.to_ascii_lowercase(), entry.value.clone()))
            .collect(),
    };
    let stop = {
        let mut state = watch.lock();
        state.documents.push(response.clone());
        let hops = state.documents.len() - 1;
        let redirect =
            (300..400).contains(&response.status) && response.header("location").is_some();
        if redirect {
            !state.follow_redirects || hops >= state.max_redirects
        } else {
            !(200..300).contains(&response.status) || !response.is_html()
        }
    };
    if !stop {
        let _ = page.execute(ContinueRequestParams::new(id)).await;
        return;
    }
    let body = if (300..400).contains(&response.status) {
        Vec::new()
    } else {
        response_body(page, &id).await
    };
    watch.update(|state| state.stopped = Some(Stopped { response, body }));
    // An empty page ends the navigation at once (an aborted one leaves it pending); the answer is
    // the response recorded above.
    let blank = FulfillRequestParams::builder()
        .request_id(id)
        .response_code(200)
        .response_header(HeaderEntry::new("content-type", "text/html"))
        .body(String::new())
        .build();
    if let Ok(blank) = blank {
        let _ = page.execute(blank).await;
    }
}

/// The body of a response paused at its response stage (empty when it cannot be read).
async fn response_body(
    page: &Page,
    id: &chromiumoxide::cdp::browser_protocol::fetch::RequestId,
) -> Vec<u8> {
    let Ok(answer) = page.execute(GetResponseBodyParams::new(id.clone())).await else {
        return Vec::new();
    };
    let body = &answer.result;
    if body.base64_encoded {
        base64::engine::general_purpose::STANDARD
            .decode(&body.body)
            .unwrap_or_default()
    } else {
        body.body.clone().into_bytes()
    }
}
