//! The parser bolt: turns a fetched page into a status and a list of outlinks.
//!
//! HTML pages have their links extracted (`a`, `area`, frames, canonical and alternate links), resolved
//! against `<base href>`, with `rel="nofollow"`, `<meta name="robots">` and `X-Robots-Tag` honoured.
//! Links then pass through the [`ParseFilter`]s and the URL filter chain. Redirect targets become
//! outlinks too. Other content is fetched but not parsed.

mod links;

pub use links::{ExtractedPage, RawLink, extract};

use std::collections::HashSet;
use std::sync::Arc;

use tokio::sync::mpsc;
use url::Url;

use crate::filter::FilterChain;
use crate::model::{CrawlUrl, Metadata, PartitionMode, Status, keys, partition_key};
use crate::status::key_matches;
use crate::topology::{FetchOutcome, FetchedPage, Outlink, StatusUpdate};

/// What parsing a page produced, open to [`ParseFilter`]s.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParseResult {
    /// The page title.
    pub title: Option<String>,
    /// Resolved links to follow (nofollow links are already left out).
    pub links: Vec<Url>,
    /// The page's metadata; what a filter adds here is stored with the page's status (when its key is
    /// persisted) and passed to outlinks (when transferred).
    pub metadata: Metadata,
    /// The page asked not to be indexed.
    pub noindex: bool,
}

/// A hook that sees every parsed HTML page and may change what was found.
pub trait ParseFilter: Send + Sync {
    /// Called once per parsed page, with its URL and raw body.
    fn filter(&self, url: &Url, body: &[u8], parse: &mut ParseResult);
}

/// Settings of the parser.
#[derive(Debug, Clone, PartialEq)]
pub struct ParserSettings {
    /// Whether links become outlinks at all (`parser.emitOutlinks`).
    pub emit_outlinks: bool,
    /// Outlinks kept per page (`parser.emitOutlinks.max.per.page`).
    pub max_outlinks: Option<usize>,
    /// Whether redirect targets become outlinks (`redirections.allowed`).
    pub redirections_allowed: bool,
    /// How outlinks are keyed.
    pub partition_mode: PartitionMode,
    /// Metadata keys passed from a page to its outlinks (`metadata.transfer`).
    pub transfer_keys: Vec<String>,
    /// Record `url.path` on outlinks.
    pub track_path: bool,
    /// Record `depth` on outlinks.
    pub track_depth: bool,
}

/// The parser stage.
pub struct ParserBolt {
    settings: ParserSettings,
    filters: FilterChain,
    parse_filters: Vec<Arc<dyn ParseFilter>>,
}

impl ParserBolt {
    /// A parser that passes outlinks through `filters` and pages through `parse_filters`.
    pub fn new(
        settings: ParserSettings,
        filters: FilterChain,
        parse_filters: Vec<Arc<dyn ParseFilter>>,
    ) -> Self {
        ParserBolt {
            settings,
            filters,
            parse_filters,
        }
    }

    /// Runs until the input closes.
    pub async fn run(
        self,
        mut input: mpsc::Receiver<FetchedPage>,
        out: mpsc::Sender<StatusUpdate>,
    ) {
        while let Some(page) = input.recv().await {
            let started = std::time::Instant::now();
            let update = self.process(page);
            metrics::histogram!("squall_parse_seconds").record(started.elapsed().as_secs_f64());
            if out.send(update).await.is_err() {
                break;
            }
        }
    }

    /// Decides a fetched page's status and outlinks.
    pub fn process(&self, page: FetchedPage) -> StatusUpdate {
        let FetchedPage {
            tuple,
            record,
            outcome,
        } = page;
        let mut url = tuple.url;
        let mut outlinks = Vec::new();
        let status = match outcome {
            FetchOutcome::Failed {
                status,
                cause,
                message,
            } => {
                url.metadata.set(keys::ERROR_CAUSE, cause);
                url.metadata.set(keys::ERROR_MESSAGE, message);
                status
            }
            FetchOutcome::Response(response) => {
                let status = Status::from_http_code(response.status_code);
                url.metadata
                    .set(keys::FETCH_STATUS_CODE, response.status_code.to_string());
                match status {
                    Status::Redirection => {
                        let target = response
                            .location
                            .as_deref()
                            .and_then(|location| url.url.join(location.trim()).ok());
                        match target {
                            Some(target) => {
                                url.metadata.set(keys::REDIRECT_TO, target.as_str());
                                if self.settings.redirections_allowed {
                                    outlinks = self.outlinks(&url, vec![target]);
                                }
                            }
                            None => {
                                url.metadata
                                    .set(keys::ERROR_CAUSE, "redirect_without_location");
                            }
                        }
                        status
                    }
                    Status::Fetched if response.status_code == 200 => {
                        if is_html(response.content_type.as_deref(), &response.body) {
                            let nofollow_header = response
                                .robots_tag
                                .iter()
                                .any(|t| t.to_ascii_lowercase().contains("nofollow"));
                            let parse =
                                self.parse(&url, &response.body, response.content_type.as_deref());
                            for (key, values) in parse.metadata.iter() {
                                url.metadata.set_values(key, values.to_vec());
                            }
                            if !nofollow_header && self.settings.emit_outlinks {
                                outlinks = self.outlinks(&url, parse.links);
                            }
                        }
                        status
                    }
                    other => other,
                }
            }
        };
        StatusUpdate {
            url,
            key: tuple.key,
            status,
            outlinks,
            fetch: record,
            ack: tuple.ack,
        }
    }

    fn parse(&self, page: &CrawlUrl, body: &[u8], content_type: Option<&str>) -> ParseResult {
        let extracted = extract(body, content_type.and_then(charset_of));
        let base = extracted
            .base
            .as_deref()
            .and_then(|b| page.url.join(b).ok())
            .unwrap_or_else(|| page.url.clone());
        let links = if extracted.nofollow {
            Vec::new()
        } else {
            extracted
                .links
                .iter()
                .filter(|l| !l.nofollow)
                .filter_map(|l| base.join(&l.href).ok())
                .collect()
        };
        let mut result = ParseResult {
            title: extracted.title,
            links,
            metadata: Metadata::new(),
            noindex: extracted.noindex,
        };
        for filter in &self.parse_filters {
            filter.filter(&page.url, body, &mut result);
        }
        result
    }

    /// Normalizes, filters and deduplicates links, and gives each its inherited metadata and key.
    fn outlinks(&self, parent: &CrawlUrl, links: Vec<Url>) -> Vec<Outlink> {
        let mut seen = HashSet::new();
        let mut outlinks = Vec::new();
        let inherited = self.inherited_metadata(parent);
        for link in links {
            if self
                .settings
                .max_outlinks
                .is_some_and(|max| outlinks.len() >= max)
            {
                break;
            }
            let Some(link) = self.filters.filter(Some(parent), link, &inherited) else {
                continue;
            };
            if link == parent.url || !seen.insert(link.as_str().to_string()) {
                continue;
            }
            let key = partition_key(&link, &inherited, self.settings.partition_mode);
            outlinks.push(Outlink {
                url: CrawlUrl {
                    url: link,
                    metadata: inherited.clone(),
                },
                key,
            });
        }
        outlinks
    }

    fn inherited_metadata(&self, parent: &CrawlUrl) -> Metadata {
        let mut metadata = Metadata::new();
        for (key, values) in parent.metadata.iter() {
            if key_matches(&self.settings.transfer_keys, key) {
                metadata.set_values(key, values.to_vec());
            }
        }
        if self.settings.track_path {
            metadata.set(keys::URL_PATH, parent.url.as_str());
        }
        if self.settings.track_depth {
            metadata.set(keys::DEPTH, (parent.depth() + 1).to_string());
        }
        metadata
    }
}

/// The `charset` parameter of a Content-Type header.
fn charset_of(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"'))
    })
}

/// Whether a body should be parsed as HTML: by its declared type, or by sniffing when none is given.
fn is_html(content_type: Option<&str>, body: &[u8]) -> bool {
    match content_type {
        Some(ct) => {
            let mime = ct
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            mime == "text/html" || mime == "application/xhtml+xml"
        }
        None => {
            let head = &body[..body.len().min(512)];
            let text = String::from_utf8_lossy(head).to_ascii_lowercase();
            text.contains("<html") || text.contains("<!doctype html")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_type_helpers() {
        assert_eq!(
            charset_of("text/html; charset=\"ISO-8859-1\""),
            Some("ISO-8859-1")
        );
        assert_eq!(charset_of("text/html"), None);
        assert!(is_html(Some("text/html; charset=utf-8"), b""));
        assert!(!is_html(Some("application/pdf"), b"<html>"));
        assert!(is_html(None, b"<!DOCTYPE html><html>"));
    }
}
