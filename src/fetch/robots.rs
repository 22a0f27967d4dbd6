//! robots.txt: fetched once per site, cached, and asked before every fetch.

use std::sync::Arc;
use std::time::Duration;

use moka::future::Cache;
use texting_robots::Robot;
use url::Url;

use super::http::{HttpClientError, HttpSettings, base_builder};

/// Largest robots.txt read; the rest is ignored (RFC 9309 asks for at least 500 KiB).
const MAX_ROBOTS_BYTES: usize = 512 * 1024;

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
    Parsed(Box<Robot>),
}

impl RobotsRules {
    /// Whether `url` may be fetched.
    pub fn allowed(&self, url: &Url) -> bool {
        match self {
            RobotsRules::AllowAll => true,
            RobotsRules::DisallowAll { .. } => false,
            RobotsRules::Parsed(robot) => robot.allowed(url.as_str()),
        }
    }

    /// The Crawl-delay for our agent, if any.
    pub fn crawl_delay(&self) -> Option<Duration> {
        match self {
            RobotsRules::Parsed(robot) => robot
                .delay
                .filter(|d| d.is_finite() && *d >= 0.0)
                .map(Duration::from_secs_f32),
            _ => None,
        }
    }
}

/// A cache of robots.txt rules per origin (scheme, host and port).
#[derive(Clone)]
pub struct RobotsCache {
    client: reqwest::Client,
    agent: String,
    rules: Cache<String, Arc<RobotsRules>>,
}

impl RobotsCache {
    /// A cache that fetches with these HTTP settings and matches groups for `agent` (the product name).
    pub fn new(
        settings: &HttpSettings,
        agent: &str,
        ttl: Duration,
    ) -> Result<Self, HttpClientError> {
        let client = base_builder(settings)
            .redirect(reqwest::redirect::Policy::limited(5))
            .build()?;
        Ok(RobotsCache {
            client,
            agent: agent.to_string(),
            rules: Cache::builder()
                .max_capacity(100_000)
                .time_to_live(ttl)
                .build(),
        })
    }

    /// The rules for `url`'s site, fetching robots.txt on first use.
    pub async fn rules_for(&self, url: &Url) -> Arc<RobotsRules> {
        let origin = url.origin().ascii_serialization();
        self.rules
            .get_with(origin.clone(), async move {
                Arc::new(self.fetch(&origin).await)
            })
            .await
    }

    async fn fetch(&self, origin: &str) -> RobotsRules {
        let robots_url = format!("{origin}/robots.txt");
        let mut response = match self.client.get(&robots_url).send().await {
            Ok(response) => response,
            Err(error) => {
                return RobotsRules::DisallowAll {
                    reason: format!("robots.txt unreachable: {error}"),
                };
            }
        };
        let status = response.status();
        if status.is_client_error() {
            return RobotsRules::AllowAll;
        }
        if !status.is_success() {
            return RobotsRules::DisallowAll {
                reason: format!("robots.txt answered {status}"),
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
                        reason: format!("robots.txt body failed: {error}"),
                    };
                }
            }
        }
        match Robot::new(&self.agent, &body) {
            Ok(robot) => RobotsRules::Parsed(Box::new(robot)),
            Err(_) => RobotsRules::AllowAll,
        }
    }
}
