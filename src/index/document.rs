//! What a parsed page becomes in the content index: StormCrawler's `AbstractIndexerBolt` rules for
//! the document's id, URL, text and metadata fields.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use url::Url;

use super::ContentDocument;
use super::settings::IndexerSettings;
use crate::message::PageContent;
use crate::model::{CrawlUrl, Metadata, keys, registrable_domain};

/// The metadata key the parser's `<title>` is offered under (StormCrawler's XPathFilter name).
pub const PARSE_TITLE: &str = "parse.title";
/// The metadata key of a page's `<meta name="description">`.
pub const PARSE_DESCRIPTION: &str = "parse.description";
/// The metadata key of a page's `<meta name="keywords">`.
pub const PARSE_KEYWORDS: &str = "parse.keywords";
/// The metadata key a document's host name is offered under.
pub const HOST: &str = "host";
/// The metadata key a document's registrable domain (or host) is offered under.
pub const DOMAIN: &str = "domain";

/// Why a parsed page is not indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skipped {
    /// It asked not to be (meta robots or `X-Robots-Tag` noindex).
    Noindex,
    /// Its metadata lacks the `indexer.md.filter` value.
    Filtered,
}

/// The document of a parsed page, or why there is none.
pub fn build_document(
    settings: &IndexerSettings,
    page: &CrawlUrl,
    content: &PageContent,
) -> Result<ContentDocument, Skipped> {
    let noindex = page.metadata.first(keys::NOINDEX);
    if noindex.is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Err(Skipped::Noindex);
    }
    if let Some(filter) = &settings.filter
        && !filter.admits(&page.metadata)
    {
        return Err(Skipped::Filtered);
    }
    let url = indexed_url(settings, page);
    let metadata = offered_metadata(page, content);
    let mut fields = Map::new();
    if !settings.text_field.is_empty() {
        let text = trimmed_text(content.text.as_deref(), settings.text_max_chars);
        if !settings.ignore_empty_fields || !text.is_empty() {
            fields.insert(settings.text_field.clone(), Value::from(text));
        }
    }
    if !settings.url_field.is_empty() {
        fields.insert(settings.url_field.clone(), Value::from(url.as_str()));
    }
    for entry in &settings.mapping {
        for (name, values) in entry.fields(&metadata) {
            match values.as_slice() {
                [one] if settings.ignore_empty_fields && one.trim().is_empty() => {}
                [one] => {
                    fields.insert(name, Value::from(*one));
                }
                many => {
                    fields.insert(name, Value::from(many.to_vec()));
                }
            }
        }
    }
    // The host field of StormCrawler's content index is always filled, mapped or not.
    if let Some(host) = url.host_str()
        && !fields.contains_key(HOST)
    {
        fields.insert(HOST.to_string(), Value::from(host.to_ascii_lowercase()));
    }
    Ok(ContentDocument {
        id: document_id(url.as_str()),
        url: url.to_string(),
        fields,
    })
}

/// A content document's id: the hex SHA-256 of the URL it is indexed under (StormCrawler's
/// `getDocumentID`).
pub fn document_id(url: &str) -> String {
    hex::encode(Sha256::digest(url.as_bytes()))
}

/// The page's canonical URL when it gives one on its own registrable domain, else its URL.
fn indexed_url(settings: &IndexerSettings, page: &CrawlUrl) -> Url {
    if settings.canonical_key.is_empty() {
        return page.url.clone();
    }
    let Some(canonical) = page
        .metadata
        .first(&settings.canonical_key)
        .map(str::trim)
        .filter(|c| !c.is_empty())
    else {
        return page.url.clone();
    };
    match page.url.join(canonical) {
        Ok(canonical) if domain_of(&canonical) == domain_of(&page.url) => canonical,
        _ => page.url.clone(),
    }
}

/// The registrable domain of a URL's host, or the host itself (lowercase).
fn domain_of(url: &Url) -> Option<String> {
    let host = url.host_str()?.to_ascii_lowercase();
    Some(registrable_domain(&host).unwrap_or(host))
}

/// The page's metadata with what the indexer offers besides, unless a filter set it already: the
/// title as `parse.title`, the host as `host` and the domain as `domain`.
fn offered_metadata(page: &CrawlUrl, content: &PageContent) -> Metadata {
    let mut metadata = page.metadata.clone();
    let mut offer = |key: &str, value: Option<String>| {
        if let Some(value) = value
            && !metadata.contains(key)
        {
            metadata.set(key, value);
        }
    };
    offer(PARSE_TITLE, content.title.clone());
    offer(HOST, page.url.host_str().map(str::to_ascii_lowercase));
    offer(DOMAIN, domain_of(&page.url));
    metadata
}

/// The text trimmed, cut at `max_chars` characters.
fn trimmed_text(text: Option<&str>, max_chars: Option<usize>) -> String {
    let text = text.unwrap_or_default().trim();
    match max_chars.and_then(|max| text.char_indices().nth(max)) {
        Some((cut, _)) => text[..cut].to_string(),
        None => text.to_string(),
    }
}
