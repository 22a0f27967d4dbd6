//! The HTTP protocol: one reqwest client, a body size cap, and errors turned into fetch outcomes.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use chrono::Utc;
use reqwest::header::{CONTENT_TYPE, LOCATION};
use url::Url;

use crate::model::Status;
use crate::topology::{FetchOutcome, FetchRecord, FetchedResponse};

/// Settings of the HTTP client.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSettings {
    /// The User-Agent header.
    pub user_agent: String,
    /// Time allowed for a whole fetch.
    pub timeout: Duration,
    /// Time allowed to connect.
    pub connect_timeout: Duration,
    /// Body bytes kept; longer bodies are truncated. `None`: no limit.
    pub content_limit: Option<usize>,
    /// Host names resolved to fixed addresses instead of DNS (like curl's `--resolve`).
    pub resolve: Vec<(String, SocketAddr)>,
}

/// Why the HTTP client could not be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the HTTP client: {0}")]
pub struct HttpClientError(#[from] reqwest::Error);

/// Fetches URLs over HTTP(S), without following redirects (they become REDIRECTION statuses).
#[derive(Debug, Clone)]
pub struct HttpClient {
    client: reqwest::Client,
    content_limit: Option<usize>,
}

impl HttpClient {
    /// A client with these settings.
    pub fn new(settings: &HttpSettings) -> Result<Self, HttpClientError> {
        let client = base_builder(settings)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(HttpClient {
            client,
            content_limit: settings.content_limit,
        })
    }

    /// Fetches `url` and records the attempt.
    pub async fn fetch(&self, url: &Url) -> (FetchRecord, FetchOutcome) {
        let started = Utc::now();
        let result = self.get(url).await;
        let finished = Utc::now();
        match result {
            Ok(response) => {
                let record = FetchRecord {
                    started,
                    finished,
                    http_status: Some(response.status_code),
                    error: None,
                    bytes: response.body.len() as u64,
                };
                (record, FetchOutcome::Response(response))
            }
            Err((cause, message)) => {
                let record = FetchRecord {
                    started,
                    finished,
                    http_status: None,
                    error: Some(format!("{cause}: {message}")),
                    bytes: 0,
                };
                let outcome = FetchOutcome::Failed {
                    status: Status::FetchError,
                    cause: cause.to_string(),
                    message,
                };
                (record, outcome)
            }
        }
    }

    async fn get(&self, url: &Url) -> Result<FetchedResponse, (&'static str, String)> {
        let mut response = self
            .client
            .get(url.as_str())
            .send()
            .await
            .map_err(|e| classify(&e))?;
        let header = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                .map(str::to_string)
        };
        let content_type = header(CONTENT_TYPE);
        let location = header(LOCATION);
        let robots_tag = response
            .headers()
            .get_all("x-robots-tag")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect();
        let status_code = response.status().as_u16();
        let mut body = BytesMut::new();
        let mut truncated = false;
        while let Some(chunk) = response.chunk().await.map_err(|e| classify(&e))? {
            match self.content_limit {
                Some(limit) if body.len() + chunk.len() > limit => {
                    body.extend_from_slice(&chunk[..limit - body.len()]);
                    truncated = true;
                    break;
                }
                _ => body.extend_from_slice(&chunk),
            }
        }
        Ok(FetchedResponse {
            status_code,
            content_type,
            location,
            robots_tag,
            body: Bytes::from(body),
            truncated,
        })
    }
}

/// The parts of a client that every request of a crawl shares.
pub(crate) fn base_builder(settings: &HttpSettings) -> reqwest::ClientBuilder {
    let mut builder = reqwest::Client::builder()
        .user_agent(settings.user_agent.clone())
        .timeout(settings.timeout)
        .connect_timeout(settings.connect_timeout)
        .pool_idle_timeout(Duration::from_secs(30));
    for (host, addr) in &settings.resolve {
        builder = builder.resolve(host, *addr);
    }
    builder
}

fn classify(error: &reqwest::Error) -> (&'static str, String) {
    let cause = if error.is_timeout() {
        "timeout"
    } else if error.is_connect() {
        "connection"
    } else if error.is_body() || error.is_decode() {
        "body"
    } else if error.is_redirect() {
        "redirect"
    } else {
        "http"
    };
    // reqwest's Display is terse; its sources carry the detail (refused, DNS, TLS, ...).
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        message.push_str(": ");
        message.push_str(&inner.to_string());
        source = inner.source();
    }
    (cause, message)
}
