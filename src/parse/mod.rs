//! The parser bolt: turns a fetched page into a status and a list of outlinks.
//!
//! HTML pages have their links extracted (`a`, `area`, frames, canonical and alternate links), resolved
//! against `<base href>`, with `rel="nofollow"`, `<meta name="robots">` and `X-Robots-Tag` honoured.
//! Links then pass through the [`ParseFilter`]s and the URL filter chain. Redirect targets become
//! outlinks too.
//!
//! [`ExtractFilter`] is a parse filter that copies what CSS selectors or XPath expressions select
//! in a page into its metadata (StormCrawler's XPathFilter); the `parsefilter.css` and
//! `parsefilter.xpath` keys set one up for a crawler. StormCrawler's other common parse filters
//! have their counterparts: [`LinkFilter`] (LinkParseFilter), [`DomainFilter`]
//! (DomainParseFilter), [`FormatFilter`] (MimeTypeNormalization) and [`CommaSplitFilter`]
//! (CommaSeparatedToMultivaluedMetadata).
//!
//! What a page says about itself is recorded in its metadata, for parse filters and indexers: its
//! canonical URL ([`keys::CANONICAL`], `canonical`) and whether it asked not to be indexed
//! ([`keys::NOINDEX`], `robots.noindex`, also set by `X-Robots-Tag` on content of any type). They
//! are stored with the status only when `metadata.persist` lists them.
//!
//! With `sitemap.discovery` on, URLs marked `isSitemap=true` are parsed as sitemaps, and so is other
//! content that is not HTML, not marked `isSitemap=false` and looks like a sitemap
//! ([`sitemap::looks_like_sitemap`]); such content is marked `isSitemap=true` once it parses as one.
//! Other content is fetched but not parsed.

mod attributes;
#[cfg(test)]
mod bolt_tests;
mod charset;
mod directives;
mod extract;
mod link_filter;
mod links;
mod metadata_filters;
mod outlinks;
mod settings;
pub mod sitemap;
mod tags;

pub use extract::{Expression, ExtractError, ExtractFilter};
pub use link_filter::LinkFilter;
pub use links::{ExtractedPage, RawLink, extract, extract_with_text};
pub use metadata_filters::{
    CommaSplitFilter, DomainFilter, FormatFilter, PARSE_CONTENT_TYPE, format_of,
};
pub use settings::ParserSettings;

use std::sync::Arc;

use tokio::sync::mpsc;
use url::Url;

use charset::{charset_of, sniff_charset};
use directives::{RobotsDirectives, canonical_url};

use crate::filter::FilterChain;
use crate::message::{
    FetchOutcome, FetchedPage, FetchedResponse, Outlink, PageContent, StatusUpdate,
};
use crate::model::{CrawlUrl, Metadata, Status, keys};

/// What parsing a page produced, open to [`ParseFilter`]s.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParseResult {
    /// The page title.
    pub title: Option<String>,
    /// Resolved links to follow (nofollow links are already left out).
    pub links: Vec<Url>,
    /// The page's metadata; what a filter adds here is stored with the page's status (when its key is
    /// persisted) and passed to outlinks (when transferred). The parser puts the page's canonical URL
    /// here ([`keys::CANONICAL`]) and its noindex mark ([`keys::NOINDEX`]).
    pub metadata: Metadata,
    /// The page asked not to be indexed (`<meta name="robots">` or `X-Robots-Tag`); after the filters
    /// ran, the metadata's [`keys::NOINDEX`] follows this field.
    pub noindex: bool,
    /// Visible text, when `parser.text.max.bytes` asks for it (for an indexer).
    pub text: Option<String>,
}

/// A hook that sees every parsed HTML page and may change what was found.
pub trait ParseFilter: Send + Sync {
    /// Called once per parsed page, with its URL and raw body.
    fn filter(&self, url: &Url, body: &[u8], parse: &mut ParseResult);
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
            sitemaps,
            queue,
        } = page;
        let mut url = tuple.url;
        let mut outlinks = Vec::new();
        let mut content = None;
        let status = match outcome {
            FetchOutcome::Failed {
                status,
                cause,
                message,
            } => {
                url.metadata.set(keys::ERROR_CAUSE, cause.as_str());
                url.metadata.set(keys::ERROR_MESSAGE, message);
                status
            }
            // The fetcher fails abandoned attempts back before the parser; a pipeline of your own
            // that passes one on gets a fetch error, which is retried.
            FetchOutcome::Abandoned { cause, message } => {
                url.metadata.set(keys::ERROR_CAUSE, cause.as_str());
                url.metadata.set(keys::ERROR_MESSAGE, message);
                Status::FetchError
            }
            FetchOutcome::Response(response) => {
                self.process_guarded(&mut url, *response, &mut outlinks, &mut content)
            }
        };
        if self.settings.sitemaps && !sitemaps.is_empty() {
            let mut announced = self.outlinks(&url, sitemaps, None);
            for outlink in &mut announced {
                outlink.url.metadata.set(keys::IS_SITEMAP, "true");
            }
            outlinks.extend(announced);
        }
        StatusUpdate {
            url,
            key: tuple.key,
            status,
            outlinks,
            fetch: record,
            queue,
            content,
            ack: tuple.ack,
        }
    }

    /// [`process_response`](Self::process_response), with a panic on the way (in the parser, a
    /// parse filter, a URL filter) turned into an error status for this page alone: the page keeps
    /// the metadata it came with, gains the reason, and has no outlinks; the stage goes on.
    fn process_guarded(
        &self,
        url: &mut CrawlUrl,
        response: FetchedResponse,
        outlinks: &mut Vec<Outlink>,
        content: &mut Option<PageContent>,
    ) -> Status {
        let mut working = url.clone();
        let processed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.process_response(&mut working, response, outlinks, content)
        }));
        match processed {
            Ok(status) => {
                *url = working;
                status
            }
            Err(payload) => {
                let message = crate::error_text::panic_message(payload.as_ref());
                tracing::warn!(url = %url.url, "the parser stage panicked on this page: {message}");
                outlinks.clear();
                *content = None;
                mark_parse_error(url, format!("the parser stage panicked: {message}"));
                Status::Error
            }
        }
    }

    fn process_response(
        &self,
        url: &mut CrawlUrl,
        response: FetchedResponse,
        outlinks: &mut Vec<Outlink>,
        content: &mut Option<PageContent>,
    ) -> Status {
        let status = Status::from_http_code(response.status_code);
        url.metadata
            .set(keys::FETCH_STATUS_CODE, response.status_code.to_string());
        if response.truncated {
            url.metadata.set(keys::TRIMMED, "true");
        } else {
            url.metadata.remove(keys::TRIMMED);
        }
        match status {
            Status::Redirection if response.status_code != 304 => {
                let target = response
                    .location
                    .as_deref()
                    .and_then(|location| url.url.join(location.trim()).ok());
                match target {
                    Some(target) => {
                        url.metadata.set(keys::REDIRECT_TO, target.as_str());
                        if self.settings.redirections_allowed {
                            *outlinks =
                                self.outlinks(url, vec![target], self.settings.max_outlinks);
                        }
                    }
                    None => {
                        url.metadata
                            .set(keys::ERROR_CAUSE, "redirect_without_location");
                    }
                }
            }
            Status::Fetched if response.status_code == 200 => {
                let (page, read) = self.process_content(url, &response, outlinks);
                *content = page;
                if !read {
                    return Status::Error;
                }
            }
            _ => {}
        }
        status
    }

    /// Reads a 200 response: records its validators and page-level metadata, then parses it as a
    /// sitemap, as HTML, or not at all. An HTML page's title and text are returned, with `false`
    /// when the page is a sitemap that could not be read (an error).
    fn process_content(
        &self,
        url: &mut CrawlUrl,
        response: &FetchedResponse,
        outlinks: &mut Vec<Outlink>,
    ) -> (Option<PageContent>, bool) {
        record_validators(&mut url.metadata, response);
        // After followed redirects, links resolve against where the content came from.
        let base_url = match &response.final_url {
            Some(final_url) => {
                url.metadata.set(keys::REDIRECT_TO, final_url.as_str());
                final_url.clone()
            }
            None => url.url.clone(),
        };
        // What the previous fetch recorded about the page's content is stale now.
        url.metadata.remove(keys::CANONICAL);
        url.metadata.remove(keys::NOINDEX);
        url.metadata.remove(keys::SITEMAP_TRIMMED);
        let header = RobotsDirectives::from_header(&response.robots_tag);
        let content_type = response.content_type.as_deref();
        let kind = self.content_kind(&url.metadata, &base_url, content_type, &response.body);
        if kind == Content::Html {
            return match self.html_outlinks(url, &base_url, response, header) {
                Ok((links, content)) => {
                    *outlinks = links;
                    (Some(content), true)
                }
                Err(failure) => {
                    tracing::warn!(url = %url.url, "page not parsed: {failure}");
                    mark_parse_error(url, failure);
                    (None, false)
                }
            };
        }
        // Content that is not HTML can still ask not to be indexed, by its header.
        if header.noindex {
            url.metadata.set(keys::NOINDEX, "true");
        }
        if let Content::Sitemap { sniffed } = kind {
            match self.sitemap_outlinks(url, &base_url, response, sniffed) {
                Some(links) => *outlinks = links,
                None => return (None, false),
            }
        }
        (None, true)
    }

    /// How a fetched body is read. A URL marked `isSitemap=true` is a sitemap; then HTML is HTML,
    /// never sniffed. Other content not marked `isSitemap=false` (as StormCrawler marks the pages a
    /// sitemap lists) is a sitemap when it looks like one.
    fn content_kind(
        &self,
        metadata: &Metadata,
        location: &Url,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Content {
        let marked = metadata.first(keys::IS_SITEMAP);
        if self.settings.sitemaps && marked == Some("true") {
            return Content::Sitemap { sniffed: false };
        }
        if is_html(content_type, body) {
            return Content::Html;
        }
        if self.settings.sitemaps
            && marked != Some("false")
            && sitemap::looks_like_sitemap(location, content_type, body)
        {
            return Content::Sitemap { sniffed: true };
        }
        Content::Other
    }

    /// Parses an HTML page: its metadata joins the page's, and its links become outlinks unless the
    /// `X-Robots-Tag` header says nofollow. Its title and text are returned beside.
    fn html_outlinks(
        &self,
        url: &mut CrawlUrl,
        base_url: &Url,
        response: &FetchedResponse,
        header: RobotsDirectives,
    ) -> Result<(Vec<Outlink>, PageContent), String> {
        let content_type = response.content_type.as_deref();
        let parse = self.parse(url, base_url, &response.body, content_type, header)?;
        for (key, values) in parse.metadata.iter() {
            url.metadata.set_values(key, values.to_vec());
        }
        let content = PageContent {
            title: parse.title,
            text: parse.text,
        };
        if header.nofollow || !self.settings.emit_outlinks {
            return Ok((Vec::new(), content));
        }
        // Filters (the scope above all) judge links against the page they are on: after followed
        // redirects, the final URL.
        let page = if *base_url == url.url {
            std::borrow::Cow::Borrowed(&*url)
        } else {
            std::borrow::Cow::Owned(CrawlUrl {
                url: base_url.clone(),
                metadata: url.metadata.clone(),
            })
        };
        Ok((
            self.outlinks(&page, parse.links, self.settings.max_outlinks),
            content,
        ))
    }

    /// A sitemap's entries as outlinks: pages, and further sitemaps marked `isSitemap=true`. A body
    /// that was only `sniffed` as a sitemap is marked `isSitemap=true` once it parses as one; if it
    /// does not, it is content that is not parsed, not an error. A sitemap marked `isSitemap=true`
    /// that cannot be read is an error (`None`), its cause in `error.cause` and `error.message`.
    /// A sitemap of which only the start was read keeps the entries found there, and records the
    /// cut in [`keys::SITEMAP_TRIMMED`], with a warning.
    fn sitemap_outlinks(
        &self,
        url: &mut CrawlUrl,
        location: &Url,
        response: &FetchedResponse,
        sniffed: bool,
    ) -> Option<Vec<Outlink>> {
        let parse = if response.truncated {
            sitemap::parse_sitemap_prefix
        } else {
            sitemap::parse_sitemap
        };
        let content_type = response.content_type.as_deref();
        let limits = sitemap::SitemapLimits::default();
        match parse(location, content_type, &response.body, &limits) {
            Ok(parsed) => {
                if sniffed {
                    url.metadata.set(keys::IS_SITEMAP, "true");
                }
                if let Some(cut) = parsed.cut {
                    record_sitemap_cut(url, cut, &parsed, response.truncated);
                }
                Some(self.sitemap_entries(url, location, parsed))
            }
            Err(_) if sniffed => Some(Vec::new()),
            Err(error) => {
                let message = match response.truncated {
                    true => format!("{error} (body cut at http.content.limit)"),
                    false => error.to_string(),
                };
                tracing::warn!(url = %url.url, "sitemap not read: {message}");
                url.metadata.set(keys::ERROR_CAUSE, "sitemap");
                url.metadata.set(keys::ERROR_MESSAGE, message);
                None
            }
        }
    }

    /// A parsed sitemap's pages and nested sitemaps as outlinks of `url`.
    fn sitemap_entries(
        &self,
        url: &CrawlUrl,
        location: &Url,
        parsed: sitemap::Sitemap,
    ) -> Vec<Outlink> {
        let pages = parsed.urls.into_iter().map(|entry| entry.url).collect();
        let mut outlinks = self.outlinks(url, pages, None);
        let mut nested = self.outlinks(url, parsed.sitemaps, None);
        for outlink in &mut nested {
            outlink.url.metadata.set(keys::IS_SITEMAP, "true");
        }
        for outlink in &mut outlinks {
            outlink.url.metadata.remove(keys::IS_SITEMAP);
            outlink
                .url
                .metadata
                .set(keys::SITEMAP_SOURCE, location.as_str());
        }
        outlinks.extend(nested);
        outlinks
    }

    /// Parses an HTML page and runs the parse filters. The result's metadata holds the page's
    /// canonical URL and its noindex mark (from the page or the `header`) before the filters run;
    /// after them, the noindex mark follows [`ParseResult::noindex`].
    fn parse(
        &self,
        page: &CrawlUrl,
        base_url: &Url,
        body: &[u8],
        content_type: Option<&str>,
        header: RobotsDirectives,
    ) -> Result<ParseResult, String> {
        let charset = content_type
            .and_then(charset_of)
            .map(str::to_string)
            .or_else(|| sniff_charset(body));
        let extracted = links::extraction(body, charset.as_deref(), self.settings.max_text_bytes);
        if let Some(failure) = extracted.failure {
            return Err(failure);
        }
        let base = extracted
            .base
            .as_deref()
            .and_then(|b| base_url.join(b).ok())
            .unwrap_or_else(|| base_url.clone());
        let mut links = Vec::new();
        if !extracted.nofollow {
            links.reserve(extracted.links.len());
            let followed = extracted.links.iter().filter(|link| !link.nofollow);
            links.extend(followed.filter_map(|link| base.join(link.href).ok()));
        }
        let mut metadata = Metadata::new();
        if let Some(canonical) = canonical_url(&base, extracted.canonical.as_deref()) {
            metadata.set(keys::CANONICAL, canonical.as_str());
        }
        let noindex = extracted.noindex || header.noindex;
        if noindex {
            metadata.set(keys::NOINDEX, "true");
        }
        let mut result = ParseResult {
            title: extracted.title,
            links,
            metadata,
            noindex,
            text: extracted.text,
        };
        for filter in &self.parse_filters {
            filter.filter(&page.url, body, &mut result);
        }
        if result.noindex {
            result.metadata.set(keys::NOINDEX, "true");
        } else {
            result.metadata.remove(keys::NOINDEX);
        }
        Ok(result)
    }
}

/// Records on `url` that its page could not be parsed, and why (`error.cause` = `parse`).
fn mark_parse_error(url: &mut CrawlUrl, message: String) {
    url.metadata.set(keys::ERROR_CAUSE, "parse");
    url.metadata.set(keys::ERROR_MESSAGE, message);
}

/// How a fetched body is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Content {
    /// A sitemap: its entries become outlinks.
    Sitemap {
        /// Not marked `isSitemap=true`, but looks like one.
        sniffed: bool,
    },
    /// An HTML page: its links become outlinks.
    Html,
    /// Anything else: fetched, not parsed.
    Other,
}

/// Records that only the start of a sitemap was read, `http_cut` when the fetcher cut its body at
/// `http.content.limit`, and logs it.
fn record_sitemap_cut(
    url: &mut CrawlUrl,
    cut: sitemap::SitemapCut,
    parsed: &sitemap::Sitemap,
    http_cut: bool,
) {
    let at = if http_cut {
        " (body cut at http.content.limit)"
    } else {
        ""
    };
    let record = format!(
        "{cut}{at}; {} entries kept, {} skipped",
        parsed.len(),
        parsed.skipped
    );
    tracing::warn!(url = %url.url, "sitemap cut: {record}");
    url.metadata.set(keys::SITEMAP_TRIMMED, record);
}

/// Records a 200 response's validators for the next, conditional, fetch (a 304 keeps the ones
/// stored).
fn record_validators(metadata: &mut Metadata, response: &FetchedResponse) {
    match &response.etag {
        Some(etag) => metadata.set(keys::ETAG, etag.as_str()),
        None => {
            metadata.remove(keys::ETAG);
        }
    }
    match &response.last_modified {
        Some(modified) => metadata.set(keys::LAST_MODIFIED, modified.as_str()),
        None => {
            metadata.remove(keys::LAST_MODIFIED);
        }
    }
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
    fn html_by_type_or_by_sniffing() {
        assert!(is_html(Some("text/html; charset=utf-8"), b""));
        assert!(!is_html(Some("application/pdf"), b"<html>"));
        assert!(is_html(None, b"<!DOCTYPE html><html>"));
    }
}
