//! A hook that sees each page once the topology is done with it: what the parser found and how
//! the page ended, together.

use super::{FetchRecord, Outlink, PageContent};
use crate::model::{CrawlUrl, Status};

/// A page the topology is done with, as a [`PageSink`] sees it: its URL with the metadata the
/// parser and the parse filters left on it, what the parser found (title, text, outlinks), its
/// final status, and whether that status was written.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ProcessedPage<'a> {
    /// The URL, with its metadata as the parser and the parse filters left it (the canonical URL,
    /// a parse filter's fields, `error.cause` and `error.message` when it failed), before
    /// `metadata.persist` chose what is stored.
    pub url: &'a CrawlUrl,
    /// Its partition key (host, domain or IP).
    pub key: &'a str,
    /// Its final status, as written.
    pub status: Status,
    /// The fetch attempt, when there was one.
    pub fetch: Option<&'a FetchRecord>,
    /// The page's title and text, for an HTML page the parser read (the text when
    /// `parser.text.max.bytes` or an indexer asks for it).
    pub content: Option<&'a PageContent>,
    /// The outlinks kept by the URL filters (written as DISCOVERED unless already known).
    pub outlinks: &'a [Outlink],
    /// Whether the status and outlink writes succeeded; if not, the URL goes back to the frontier
    /// and will be seen again.
    pub written: bool,
}

/// Receives every processed page, on the status updater's task, after its writes and before its
/// URL is acked: keep it quick (hand heavy work to a channel of your own).
///
/// For each URL, in this order: [`CrawlEvent::Fetched`](super::CrawlEvent::Fetched) when its fetch
/// completes (on the fetcher's tasks), then the parse filters (on the parser's task), then the
/// content indexer's write when there is one, then its status and outlink writes, then
/// [`CrawlEvent::Processed`](super::CrawlEvent::Processed) and this sink, then the ack. A URL whose
/// writes failed is seen again when the frontier hands it out anew. The crate's own example (its
/// front page) writes a line per page from a sink.
pub trait PageSink: Send + Sync {
    /// One page.
    fn on_page(&self, page: &ProcessedPage<'_>);
}

/// A sink shared with the code that reads what it gathered.
impl<T: PageSink + ?Sized> PageSink for std::sync::Arc<T> {
    fn on_page(&self, page: &ProcessedPage<'_>) {
        (**self).on_page(page);
    }
}
