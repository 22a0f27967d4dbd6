//! The searches of the catalog: a [`UrlQuery`] as a query, documents read back as [`StoredUrl`]s,
//! and sorted pages at any depth.

use serde_json::{Value, json};
use squall::frontier::{StoredUrl, UrlQuery};
use tracing::warn;

use crate::client::{EsClient, EsError, SearchHit};
use crate::status_index::schema::{KeyField, read_document};

/// The deepest hit a search reaches with `from` and `size` (the engines' default
/// `index.max_result_window`); deeper pages are reached with `search_after`.
pub(super) const WINDOW: u64 = 10_000;

/// `text` for a wildcard pattern, its wildcards (`*`, `?`) and escape (`\`) taken literally.
pub(super) fn escape_wildcard(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        if matches!(c, '*' | '?' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// The query for the URLs `query` covers, their key in `key_field`.
pub(super) fn url_query(query: &UrlQuery, key_field: &KeyField) -> Value {
    let mut filters = Vec::new();
    if let Some(key) = &query.key {
        filters.push(json!({ "term": { key_field.query_field(): key } }));
    }
    if let Some(text) = &query.contains {
        let mut wildcard = json!({ "value": format!("*{}*", escape_wildcard(text)) });
        if query.ignore_case {
            // Sent only when asked, so that engines without the option serve the other queries.
            wildcard["case_insensitive"] = json!(true);
        }
        filters.push(json!({ "wildcard": { "url": wildcard } }));
    }
    let dated = json!({ "exists": { "field": "nextFetchDate" } });
    match query.scheduled {
        Some(true) => filters.push(dated),
        Some(false) => filters.push(json!({ "bool": { "must_not": [dated] } })),
        None => {}
    }
    if filters.is_empty() {
        json!({ "match_all": {} })
    } else {
        json!({ "bool": { "filter": filters } })
    }
}

/// The listing order: by key (documents without one last), then by URL, which is unique, so that
/// `search_after` neither repeats nor skips.
pub(super) fn url_sort(key_field: &KeyField) -> Value {
    json!([
        { key_field.query_field(): { "order": "asc", "unmapped_type": "keyword" } },
        { "url": { "order": "asc" } }
    ])
}

/// A hit as a [`StoredUrl`]; `None` (logged) for a document without a readable URL or status. A
/// document without a key is listed with an empty one.
pub(super) fn stored_url(hit: &SearchHit, key_field: &KeyField) -> Option<StoredUrl> {
    let document = match read_document(hit.source_or_null(), key_field) {
        Ok(document) => document,
        Err(error) => {
            warn!(%error, id = %hit.id, "unreadable URL document left out of a listing");
            return None;
        }
    };
    let Some(status) = document.status else {
        warn!(id = %hit.id, url = %document.url.url, "URL document without a known status left out of a listing");
        return None;
    };
    Some(StoredUrl {
        url: document.url,
        key: document.key.unwrap_or_default(),
        status,
        next_fetch: document.next_fetch,
        created: document.created,
    })
}

/// One page of a sorted search: `size` hits from `from`, or after `after`; with their documents
/// or (to skip them) without.
async fn search_page(
    client: &EsClient,
    path: &str,
    body: &Value,
    from: u64,
    size: u64,
    after: Option<&Value>,
    with_source: bool,
) -> Result<Vec<SearchHit>, EsError> {
    let mut body = body.clone();
    body["from"] = json!(from);
    body["size"] = json!(size);
    body["track_total_hits"] = json!(false);
    if let Some(after) = after {
        body["search_after"] = after.clone();
    }
    if !with_source {
        body["_source"] = json!(false);
    }
    Ok(client.search(path, &[], body).await?.hits.hits)
}

/// The sort values to continue after `page`, if it was full (a shorter page is the last).
fn next_after(page: &[SearchHit], asked: u64) -> Option<Value> {
    if (page.len() as u64) < asked {
        return None;
    }
    page.last()
        .and_then(|hit| hit.sort.clone())
        .map(Value::from)
}

/// Hits `start..start + size` of a search of `index` with `body` (its query, its sort, which must
/// end with a unique field, and its `_source`): with `from` within the first [`WINDOW`] hits,
/// deeper by walking there with `search_after`.
pub(super) async fn sorted_hits(
    client: &EsClient,
    index: &str,
    body: Value,
    start: u64,
    size: u64,
) -> Result<Vec<SearchHit>, EsError> {
    let path = format!("/{index}/_search");
    let mut hits = Vec::new();
    if size == 0 {
        return Ok(hits);
    }
    let mut from = start;
    let mut after = None;
    if start.saturating_add(size.min(WINDOW)) > WINDOW {
        // `from` cannot reach the page: skip to it, without the documents.
        let mut skip = start;
        while skip > 0 {
            let chunk = skip.min(WINDOW);
            let page = search_page(client, &path, &body, 0, chunk, after.as_ref(), false).await?;
            match next_after(&page, chunk) {
                Some(next) => after = Some(next),
                None => return Ok(hits),
            }
            skip -= chunk;
        }
        from = 0;
    }
    let mut remaining = size;
    while remaining > 0 {
        let chunk = remaining.min(WINDOW - from);
        let page = search_page(client, &path, &body, from, chunk, after.as_ref(), true).await?;
        let next = next_after(&page, chunk);
        remaining -= (page.len() as u64).min(remaining);
        hits.extend(page);
        match next {
            Some(next) => after = Some(next),
            None => break,
        }
        from = 0;
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_in_the_text_are_literal() {
        let cases = [("a*b?c\\d", "a\\*b\\?c\\\\d"), ("/post", "/post")];
        for (text, pattern) in cases {
            assert_eq!(escape_wildcard(text), pattern, "{text}");
        }
    }

    #[test]
    fn a_query_filters_by_key_and_text() {
        let key_field = KeyField::parse("metadata.host.name");
        assert_eq!(
            url_query(&UrlQuery::default(), &key_field),
            json!({ "match_all": {} })
        );
        let query = UrlQuery {
            key: Some("a.test".into()),
            contains: Some("?x".into()),
            ignore_case: true,
            scheduled: None,
        };
        assert_eq!(
            url_query(&query, &key_field),
            json!({ "bool": { "filter": [
                { "term": { "metadata.host%2Ename": "a.test" } },
                { "wildcard": { "url": { "value": "*\\?x*", "case_insensitive": true } } }
            ] } })
        );
        let exact = UrlQuery {
            ignore_case: false,
            ..query
        };
        let filter = &url_query(&exact, &KeyField::default())["bool"]["filter"];
        assert_eq!(filter[0], json!({ "term": { "key": "a.test" } }));
        assert_eq!(
            filter[1],
            json!({ "wildcard": { "url": { "value": "*\\?x*" } } })
        );
        let done = UrlQuery {
            scheduled: Some(false),
            ..UrlQuery::default()
        };
        assert_eq!(
            url_query(&done, &KeyField::default()),
            json!({ "bool": { "filter": [
                { "bool": { "must_not": [{ "exists": { "field": "nextFetchDate" } }] } }
            ] } })
        );
    }
}
