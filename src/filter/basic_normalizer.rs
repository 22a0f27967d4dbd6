//! StormCrawler's BasicURLNormalizer: the basic normalization, plus its query cleanups.

use url::Url;

use super::{CanonicalUrlNormalizer, UrlFilter};
use crate::model::{CrawlUrl, Metadata};

/// StormCrawler's `BasicURLNormalizer` with its parameters, on top of [`CanonicalUrlNormalizer`] (which
/// lowercases scheme and host, writes IDN hosts in punycode, resolves dot segments and normalizes
/// escapes, as `checkValidURI` and `hostIDNtoASCII` ask):
///
/// * `removeAnchorPart` (default true): drop the fragment;
/// * `unmangleQueryString` (default true): a last path segment like `page&a=b` (a query that starts
///   with `&` instead of `?`) becomes `page?a=b`;
/// * `queryElementsToRemove`: query parameters dropped by name;
/// * `removeHashes` (default false): query parameters whose value is 32 hex digits (session ids)
///   are dropped.
///
/// When parameters may be removed (a name is listed or `removeHashes` is on), parameters written
/// in the last path segment after `;` move to the query, and the remaining parameters are sorted
/// by name, as in StormCrawler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BasicUrlNormalizer {
    remove_anchor: bool,
    unmangle_query: bool,
    remove_hashes: bool,
    remove_params: Vec<String>,
    basic: CanonicalUrlNormalizer,
}

impl Default for BasicUrlNormalizer {
    /// StormCrawler's defaults: fragments removed, queries unmangled, nothing else.
    fn default() -> Self {
        BasicUrlNormalizer {
            remove_anchor: true,
            unmangle_query: true,
            remove_hashes: false,
            remove_params: Vec::new(),
            basic: CanonicalUrlNormalizer::new(),
        }
    }
}

impl BasicUrlNormalizer {
    /// Whether the fragment is dropped (`removeAnchorPart`).
    #[must_use]
    pub fn remove_anchor(mut self, remove: bool) -> Self {
        self.remove_anchor = remove;
        self
    }

    /// Whether `page&a=b` becomes `page?a=b` (`unmangleQueryString`).
    #[must_use]
    pub fn unmangle_query(mut self, unmangle: bool) -> Self {
        self.unmangle_query = unmangle;
        self
    }

    /// Whether parameters whose value is a 32-digit hex hash are dropped (`removeHashes`).
    #[must_use]
    pub fn remove_hashes(mut self, remove: bool) -> Self {
        self.remove_hashes = remove;
        self
    }

    /// Query parameters dropped by name (`queryElementsToRemove`).
    #[must_use]
    pub fn remove_params(mut self, names: Vec<String>) -> Self {
        self.remove_params = names;
        self
    }

    /// Normalizes `url`; `None` when the cleaned text is no longer a URL.
    pub fn normalize(&self, url: Url) -> Option<Url> {
        if !matches!(url.scheme(), "http" | "https") {
            return Some(url);
        }
        let fragment = url.fragment().map(str::to_string);
        let mut text = url.as_str().to_string();
        if let Some(hash) = text.find('#') {
            text.truncate(hash);
        }
        if self.unmangle_query {
            text = unmangle(&text);
        }
        let mut url = if text == url.as_str() {
            url
        } else {
            Url::parse(&text).ok()?
        };
        if !self.remove_params.is_empty() || self.remove_hashes {
            self.clean_query(&mut url);
        }
        let mut url = self.basic.normalize(url);
        if !self.remove_anchor {
            url.set_fragment(fragment.as_deref());
        }
        Some(url)
    }

    /// Moves `;` parameters of the last path segment to the query, drops the unwanted parameters
    /// and sorts the others by name.
    fn clean_query(&self, url: &mut Url) {
        let mut params: Vec<String> = Vec::new();
        let path = url.path().to_string();
        if let Some((head, last)) = path.rsplit_once('/')
            && let Some((segment, matrix)) = last.split_once(';')
        {
            let rebuilt: Vec<&str> = head.split('/').filter(|p| !p.trim().is_empty()).collect();
            let mut new_path = rebuilt.iter().fold(String::new(), |acc, p| acc + "/" + p);
            if !segment.trim().is_empty() {
                new_path.push('/');
                new_path.push_str(segment);
            }
            url.set_path(&new_path);
            params.extend(url.query().into_iter().flat_map(split_params));
            params.extend(matrix.split(';').map(str::to_string));
        } else {
            params.extend(url.query().into_iter().flat_map(split_params));
        }
        if params.is_empty() {
            return;
        }
        params.retain(|param| {
            let (name, value) = param.split_once('=').unwrap_or((param, ""));
            let removed = param.is_empty()
                || self.remove_params.iter().any(|removed| removed == name)
                || (self.remove_hashes && is_hash(value));
            !removed
        });
        params.sort_by(|a, b| param_name(a).cmp(param_name(b)));
        if params.is_empty() {
            url.set_query(None);
        } else {
            url.set_query(Some(&params.join("&")));
        }
    }
}

/// The `&`-separated parameters of a query.
fn split_params(query: &str) -> Vec<String> {
    query.split('&').map(str::to_string).collect()
}

/// The name of a `name=value` parameter.
fn param_name(param: &str) -> &str {
    param.split_once('=').map_or(param, |(name, _)| name)
}

/// Whether `value` is 32 hex digits.
fn is_hash(value: &str) -> bool {
    value.len() == 32 && value.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `page&a=b` as the last `/` part of `url`, with no `?` in it, becomes `page?a=b`.
fn unmangle(url: &str) -> String {
    let (head, last) = url.rsplit_once('/').unwrap_or(("", url));
    let Some(amp) = last.find('&') else {
        return url.to_string();
    };
    if last.contains('?') || last.find('=').is_none_or(|eq| eq == 0) {
        return url.to_string();
    }
    format!("{head}/{}?{}", &last[..amp], &last[amp + 1..])
}

impl UrlFilter for BasicUrlNormalizer {
    fn filter(&self, _source: Option<&CrawlUrl>, url: Url, _metadata: &Metadata) -> Option<Url> {
        self.normalize(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalized(n: &BasicUrlNormalizer, url: &str) -> String {
        let url = Url::parse(url).expect("test URL");
        n.normalize(url).map(String::from).unwrap_or_default()
    }

    #[test]
    fn defaults_drop_the_anchor_and_unmangle_the_query() {
        let n = BasicUrlNormalizer::default();
        assert_eq!(normalized(&n, "HTTP://A.test/a#x"), "http://a.test/a");
        assert_eq!(
            normalized(&n, "http://a.test/p&a=b&c=d"),
            "http://a.test/p?a=b&c=d"
        );
        assert_eq!(
            normalized(&n, "http://a.test/p?x&a=b"),
            "http://a.test/p?x&a=b"
        );
        assert_eq!(normalized(&n, "http://a.test/p&x"), "http://a.test/p&x");
        assert_eq!(
            normalized(&n, "http://a.test/%7euser"),
            "http://a.test/~user"
        );
        let kept = n.clone().remove_anchor(false).unmangle_query(false);
        assert_eq!(
            normalized(&kept, "http://a.test/p&a=b#top"),
            "http://a.test/p&a=b#top"
        );
    }

    #[test]
    fn listed_params_and_hashes_are_removed_and_the_rest_sorted() {
        let n = BasicUrlNormalizer::default()
            .remove_params(vec!["utm_source".into()])
            .remove_hashes(true);
        assert_eq!(
            normalized(&n, "http://a.test/p?z=1&utm_source=x&a=2"),
            "http://a.test/p?a=2&z=1"
        );
        assert_eq!(
            normalized(
                &n,
                "http://a.test/p?sid=0123456789abcdef0123456789ABCDEF&b=1"
            ),
            "http://a.test/p?b=1"
        );
        assert_eq!(
            normalized(
                &n,
                "http://a.test/d/p;jsessionid=0123456789abcdef0123456789abcdef?b=1"
            ),
            "http://a.test/d/p?b=1"
        );
        assert_eq!(
            normalized(&n, "http://a.test/p?utm_source=x"),
            "http://a.test/p"
        );
    }
}
