//! Rendering one URL in a tab: navigate, wait until the page settles, reveal more of it (a "more"
//! button, scrolling), and read the DOM.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use serde::de::DeserializeOwned;
use url::Url;

use crate::error::BrowserError;
use crate::settings::SettleConfig;
use crate::tab::{DocumentResponse, Stopped, Tab};

/// How often the page is looked at while it settles.
const POLL: Duration = Duration::from_millis(50);

/// What rendering produced.
#[derive(Debug)]
pub enum Rendered {
    /// The page, rendered: its document response (the last hop) and the serialized DOM.
    Page {
        /// The document response, after any redirects followed.
        response: DocumentResponse,
        /// The DOM after the page settled, as HTML.
        html: String,
    },
    /// The navigation stopped at its document response, which is the answer.
    Stopped(Stopped),
}

/// Why rendering failed.
#[derive(Debug)]
pub enum RenderError {
    /// The navigation failed in the network (`net::ERR_...`): the site's failure.
    Navigation(String),
    /// The tab's renderer crashed.
    Crashed,
    /// The browser failed.
    Browser(BrowserError),
}

impl From<BrowserError> for RenderError {
    fn from(error: BrowserError) -> Self {
        RenderError::Browser(error)
    }
}

/// Renders `url` in `tab`.
pub async fn render(
    tab: &Tab,
    url: &Url,
    settle: &SettleConfig,
    redirects: (bool, usize),
) -> Result<Rendered, RenderError> {
    tab.reset(redirects.0, redirects.1);
    let started = std::time::Instant::now();
    let navigated = tab
        .page
        .execute(NavigateParams::new(url.as_str()))
        .await
        .map_err(BrowserError::from_cdp)?;
    tracing::debug!(%url, elapsed = ?started.elapsed(), "navigated");
    if let Some(stopped) = tab.watch.lock().stopped.take() {
        return Ok(Rendered::Stopped(stopped));
    }
    if let Some(error) = navigated.result.error_text.filter(|text| !text.is_empty()) {
        return Err(RenderError::Navigation(error));
    }
    let loader = navigated.result.loader_id.map(|id| id.inner().clone());
    tab.watch.lock().set_loader(loader);
    wait_settled(tab, settle).await?;
    tracing::debug!(%url, elapsed = ?started.elapsed(), "settled");
    reveal(tab, settle).await?;
    tracing::debug!(%url, elapsed = ?started.elapsed(), "revealed");
    let html: String = evaluate(tab, SERIALIZE).await?;
    let state = tab.watch.lock();
    let response = state.documents.last().cloned().unwrap_or(DocumentResponse {
        url: url.to_string(),
        status: 200,
        headers: Vec::new(),
    });
    Ok(Rendered::Page { response, html })
}

/// The DOM as HTML, with its doctype.
const SERIALIZE: &str = r#"(() => {
  const d = document.doctype;
  const doctype = d ? "<!DOCTYPE " + d.name + (d.publicId ? ' PUBLIC "' + d.publicId + '"' : "")
    + (d.systemId ? ' "' + d.systemId + '"' : "") + ">\n" : "";
  return doctype + (document.documentElement ? document.documentElement.outerHTML : "");
})()"#;

/// Waits until the configured selector appears, or until the document is loaded and no request
/// has been in flight for the idle time.
async fn wait_settled(tab: &Tab, settle: &SettleConfig) -> Result<(), RenderError> {
    if let Some(selector) = &settle.selector {
        let probe = format!("document.querySelector({}) !== null", js_string(selector));
        loop {
            check_crash(tab)?;
            if evaluate::<bool>(tab, &probe).await? {
                return Ok(());
            }
            tokio::time::sleep(POLL).await;
        }
    }
    loop {
        check_crash(tab)?;
        let quiet_since = {
            let state = tab.watch.lock();
            (!state.busy()).then_some(state.last_activity)
        };
        if let Some(since) = quiet_since {
            let quiet = since.elapsed();
            if quiet >= settle.idle && evaluate::<bool>(tab, LOADED).await? {
                return Ok(());
            }
            let left = settle.idle.saturating_sub(quiet).max(POLL);
            let _ = tokio::time::timeout(left, tab.watch.changed.notified()).await;
        } else {
            let _ = tokio::time::timeout(POLL * 4, tab.watch.changed.notified()).await;
        }
    }
}

const LOADED: &str = "document.readyState === 'complete'";

/// Clicks the "more" button until it is gone, or scrolls to the bottom until the page stops
/// growing, settling after each step.
async fn reveal(tab: &Tab, settle: &SettleConfig) -> Result<(), RenderError> {
    if let Some(button) = &settle.click {
        let click = format!(
            "(() => {{ const e = document.querySelector({}); if (!e) return false; e.scrollIntoView(); e.click(); return true; }})()",
            js_string(button)
        );
        for _ in 0..settle.max_steps {
            if !evaluate::<bool>(tab, &click).await? {
                break;
            }
            tab.touched();
            wait_settled(tab, settle).await?;
        }
    }
    if settle.scroll {
        let scroll = "(() => { const h = document.documentElement.scrollHeight; window.scrollTo(0, h); return h; })()";
        let mut height: f64 = -1.0;
        for _ in 0..settle.max_steps {
            let now: f64 = evaluate(tab, scroll).await?;
            if now <= height {
                break;
            }
            height = now;
            tab.touched();
            wait_settled(tab, settle).await?;
        }
    }
    Ok(())
}

/// Evaluates `expression` in the page and reads its value.
async fn evaluate<T: DeserializeOwned>(tab: &Tab, expression: &str) -> Result<T, RenderError> {
    let params = EvaluateParams::builder()
        .expression(expression)
        .return_by_value(true)
        .build()
        .map_err(|error| BrowserError::Command(error.to_string()))?;
    let answer = tab
        .page
        .execute(params)
        .await
        .map_err(BrowserError::from_cdp)?;
    if let Some(exception) = &answer.result.exception_details {
        return Err(BrowserError::Command(format!("script failed: {}", exception.text)).into());
    }
    let value = answer.result.result.value.clone().unwrap_or_default();
    serde_json::from_value(value)
        .map_err(|error| BrowserError::Command(format!("unexpected script result: {error}")).into())
}

/// Stops waiting for a page whose renderer crashed or whose browser is gone.
fn check_crash(tab: &Tab) -> Result<(), RenderError> {
    if tab.browser_gone() {
        let gone = BrowserError::Gone("the connection to the browser ended".to_string());
        return Err(RenderError::Browser(gone));
    }
    if tab.watch.lock().crashed {
        return Err(RenderError::Crashed);
    }
    Ok(())
}

/// `text` as a JavaScript string literal.
fn js_string(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}
