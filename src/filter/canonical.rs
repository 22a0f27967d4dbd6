//! squall's own conservative URL normalizer: a canonical form that never changes the page (for
//! StormCrawler's BasicURLNormalizer, see [`BasicUrlNormalizer`](super::BasicUrlNormalizer)).

use url::Url;

use super::UrlFilter;
use crate::model::{CrawlUrl, Metadata};

/// Rewrites http(s) URLs into a canonical form without ever changing the page they point to.
///
/// Always applied (parsing with the `url` crate already does the first four):
///
/// * lowercase scheme and host, IDN hosts in punycode;
/// * drop the default port;
/// * resolve `.` and `..` path segments;
/// * empty path becomes `/`;
/// * remove the fragment;
/// * percent-encoding normalization in path and query: escapes of unreserved characters
///   (`A-Z a-z 0-9 - . _ ~`) are decoded, the hex digits of the other escapes are uppercased;
/// * a `?` followed by an empty query is removed.
///
/// Optional query cleanup: [`remove_query_params`](Self::remove_query_params) drops parameters
/// by name (a trailing `*` matches any suffix, e.g. `utm_*`), and
/// [`sort_query_params`](Self::sort_query_params) sorts parameters by name (stable, so repeated
/// parameters keep their relative order). Parameters are otherwise kept exactly as written, in
/// order: `?a` stays `?a`.
///
/// It does not strip `www.`, does not add or remove trailing slashes (other than the empty path)
/// and does not change the case of paths. URLs with other schemes are returned unchanged, and the
/// filter never drops a URL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CanonicalUrlNormalizer {
    remove_query_params: Vec<String>,
    sort_query_params: bool,
}

impl CanonicalUrlNormalizer {
    /// A normalizer with no query cleanup.
    pub fn new() -> Self {
        Self::default()
    }

    /// Query parameter names to remove (exact names, or a prefix followed by `*`).
    #[must_use]
    pub fn remove_query_params<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.remove_query_params = names.into_iter().map(Into::into).collect();
        self
    }

    /// Whether to sort query parameters by name (default false).
    #[must_use]
    pub fn sort_query_params(mut self, sort: bool) -> Self {
        self.sort_query_params = sort;
        self
    }

    /// Normalizes a URL; URLs whose scheme is neither `http` nor `https` are returned unchanged.
    pub fn normalize(&self, mut url: Url) -> Url {
        if !matches!(url.scheme(), "http" | "https") {
            return url;
        }
        url.set_fragment(None);

        // Most URLs have nothing to change: only escapes cost a rewrite.
        if url.path().is_empty() {
            url.set_path("/");
        } else if url.path().contains('%') {
            let path = normalize_escapes(url.path());
            if path != url.path() {
                url.set_path(&path);
            }
        }

        let query_needs_work = url.query().is_some_and(|q| {
            q.is_empty()
                || q.contains('%')
                || !self.remove_query_params.is_empty()
                || self.sort_query_params
        });
        if query_needs_work && let Some(query) = url.query().map(|q| self.normalize_query(q)) {
            if query.is_empty() {
                url.set_query(None);
            } else if url.query() != Some(query.as_str()) {
                url.set_query(Some(&query));
            }
        }
        url
    }

    fn normalize_query(&self, query: &str) -> String {
        let query = normalize_escapes(query);
        if self.remove_query_params.is_empty() && !self.sort_query_params {
            return query;
        }
        let mut params: Vec<&str> = query
            .split('&')
            .filter(|param| !self.is_removed(param_name(param)))
            .collect();
        if self.sort_query_params {
            params.sort_by(|a, b| param_name(a).cmp(param_name(b)));
        }
        if params.iter().all(|p| p.is_empty()) {
            return String::new();
        }
        params.join("&")
    }

    fn is_removed(&self, name: &str) -> bool {
        self.remove_query_params
            .iter()
            .any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == pattern,
            })
    }
}

impl UrlFilter for CanonicalUrlNormalizer {
    fn filter(&self, _source: Option<&CrawlUrl>, url: Url, _metadata: &Metadata) -> Option<Url> {
        Some(self.normalize(url))
    }
}

/// The name of a `name=value` (or bare `name`) query parameter.
fn param_name(param: &str) -> &str {
    param.split_once('=').map_or(param, |(name, _)| name)
}

fn hex_value(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Whether appending `decoded` to `out` could form a new escape with a lone `%` before it (as in
/// `%%300`, where decoding `%30` would turn a literal `%`, `0`, `0` into the escape `%00`).
fn completes_escape(out: &str, decoded: u8) -> bool {
    if !decoded.is_ascii_hexdigit() {
        return false;
    }
    match out.as_bytes() {
        [.., b'%'] => true,
        [.., b'%', h] => h.is_ascii_hexdigit(),
        _ => false,
    }
}

/// Decodes escapes of unreserved characters and uppercases the hex digits of the others. A `%`
/// not followed by two hex digits is left alone.
fn normalize_escapes(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(&h), Some(&l)) = (bytes.get(i + 1), bytes.get(i + 2))
            && let (Some(hv), Some(lv)) = (hex_value(h), hex_value(l))
        {
            let decoded = hv * 16 + lv;
            if is_unreserved(decoded) && !completes_escape(&out, decoded) {
                out.push(char::from(decoded));
            } else {
                out.push('%');
                out.push(char::from(h.to_ascii_uppercase()));
                out.push(char::from(l.to_ascii_uppercase()));
            }
            i += 3;
            continue;
        }
        // Copy the whole (possibly multi-byte) character.
        let ch_len = s[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&s[i..i + ch_len]);
        i += ch_len;
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::testing::url;

    fn norm(s: &str) -> String {
        CanonicalUrlNormalizer::new().normalize(url(s)).to_string()
    }

    /// Each URL normalizes to the one beside it.
    fn assert_normalized(cases: &[(&str, &str)]) {
        for (raw, expected) in cases {
            assert_eq!(norm(raw), *expected, "normalizing {raw}");
        }
    }

    #[test]
    fn lowercases_scheme_and_host_but_not_path() {
        assert_normalized(&[(
            "HTTP://WWW.Example.COM/Path/A",
            "http://www.example.com/Path/A",
        )]);
    }

    #[test]
    fn keeps_www_and_trailing_slashes() {
        assert_normalized(&[
            ("http://www.example.com/dir/", "http://www.example.com/dir/"),
            ("http://www.example.com/dir", "http://www.example.com/dir"),
        ]);
    }

    #[test]
    fn drops_default_ports_only() {
        assert_normalized(&[
            ("http://example.com:80/", "http://example.com/"),
            ("https://example.com:443/", "https://example.com/"),
            ("http://example.com:8080/", "http://example.com:8080/"),
            ("https://example.com:80/", "https://example.com:80/"),
        ]);
    }

    #[test]
    fn resolves_dot_segments() {
        assert_normalized(&[
            ("http://example.com/a/./b/../c", "http://example.com/a/c"),
            ("http://example.com/../a", "http://example.com/a"),
        ]);
    }

    #[test]
    fn removes_fragment() {
        assert_normalized(&[
            ("http://example.com/a#top", "http://example.com/a"),
            ("http://example.com/a?x=1#", "http://example.com/a?x=1"),
        ]);
    }

    #[test]
    fn decodes_unreserved_escapes() {
        assert_normalized(&[(
            "http://example.com/%7Euser/%41%62%2D%2e%5F%30?q=%7e%61",
            "http://example.com/~user/Ab-._0?q=~a",
        )]);
    }

    #[test]
    fn uppercases_other_escapes() {
        assert_normalized(&[
            (
                "http://example.com/a%2fb%c3%a9?q=%3d%26",
                "http://example.com/a%2Fb%C3%A9?q=%3D%26",
            ),
            // A lone percent sign is left as it is.
            (
                "http://example.com/100%?x=%zz",
                "http://example.com/100%?x=%zz",
            ),
            // Decoding must not turn a lone percent sign into an escape.
            (
                "http://example.com/%%300?q=%4%31%2e",
                "http://example.com/%%300?q=%4%31.",
            ),
            ("http://example.com/%%7e%%41", "http://example.com/%~%%41"),
        ]);
    }

    #[test]
    fn empty_path_becomes_slash() {
        assert_normalized(&[
            ("http://example.com", "http://example.com/"),
            ("http://example.com?a=1", "http://example.com/?a=1"),
        ]);
    }

    #[test]
    fn removes_empty_query() {
        assert_normalized(&[
            ("http://example.com/a?", "http://example.com/a"),
            ("http://example.com/a?#f", "http://example.com/a"),
        ]);
    }

    #[test]
    fn keeps_query_params_as_written_by_default() {
        assert_normalized(&[(
            "http://example.com/?b=2&a&c=&a=1",
            "http://example.com/?b=2&a&c=&a=1",
        )]);
    }

    #[test]
    fn removes_listed_query_params() {
        let n = CanonicalUrlNormalizer::new().remove_query_params(["utm_*", "sessionid"]);
        let out = n.normalize(url(
            "http://example.com/p?utm_source=x&id=3&sessionid=abc&utm_medium&flag&sessionidx=1",
        ));
        assert_eq!(out.as_str(), "http://example.com/p?id=3&flag&sessionidx=1");
        let out = n.normalize(url("http://example.com/p?utm_source=x&sessionid=1"));
        assert_eq!(out.as_str(), "http://example.com/p");
    }

    #[test]
    fn sorts_query_params_stably_when_asked() {
        let n = CanonicalUrlNormalizer::new().sort_query_params(true);
        let out = n.normalize(url("http://example.com/?b=2&a=9&c&a=1"));
        assert_eq!(out.as_str(), "http://example.com/?a=9&a=1&b=2&c");
        let n = n.remove_query_params(["c"]);
        let out = n.normalize(url("http://example.com/?c=1&b&a="));
        assert_eq!(out.as_str(), "http://example.com/?a=&b");
    }

    #[test]
    fn other_schemes_are_unchanged_and_filter_never_drops() {
        let n = CanonicalUrlNormalizer::new();
        let mailto = url("mailto:Someone@Example.com#x");
        assert_eq!(n.normalize(mailto.clone()), mailto);
        let kept = n.filter(None, url("https://example.com/#x"), &Metadata::new());
        assert_eq!(kept, Some(url("https://example.com/")));
    }

    /// Percent-decodes every escape: two URLs that decode to the same bytes point to the same page
    /// (as long as no reserved character was decoded, which the normalizer never does).
    fn decode_all(s: &str) -> Vec<u8> {
        let b = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%'
                && let (Some(h), Some(l)) = (
                    b.get(i + 1).copied().and_then(hex_value),
                    b.get(i + 2).copied().and_then(hex_value),
                )
            {
                out.push(h * 16 + l);
                i += 3;
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        out
    }

    fn url_strategy() -> impl Strategy<Value = String> {
        let scheme = prop_oneof![Just("http"), Just("https"), Just("HTTP"), Just("HtTpS")];
        let host = "[a-zA-Z0-9]{1,8}(\\.[a-zA-Z0-9-]{1,8}){0,2}";
        let port = prop_oneof![
            Just(String::new()),
            Just(":80".to_string()),
            Just(":443".to_string()),
            (1u16..9999).prop_map(|p| format!(":{p}"))
        ];
        let piece = "([a-zA-Z0-9._~!$&'()*+,;=:@ é/?-]|%[0-9a-fA-F]{2}|%|\\.\\.|\\.){0,6}";
        let path = proptest::collection::vec(piece, 0..4).prop_map(|s| s.join("/"));
        let query = proptest::option::of(
            proptest::collection::vec(
                "(utm_[a-z]{1,3}|[a-c]|%[0-9a-fA-F]{2})(=([a-z0-9%.~]|%[0-9a-fA-F]{2}){0,4})?",
                0..5,
            )
            .prop_map(|p| p.join("&")),
        );
        let fragment = proptest::option::of("[a-z0-9%#?]{0,5}");
        (scheme, host, port, path, query, fragment).prop_map(
            |(scheme, host, port, path, query, fragment)| {
                let mut s = format!("{scheme}://{host}{port}/{path}");
                if let Some(q) = query {
                    s.push('?');
                    s.push_str(&q);
                }
                if let Some(f) = fragment {
                    s.push('#');
                    s.push_str(&f);
                }
                s
            },
        )
    }

    proptest! {
        #[test]
        fn normalizing_is_idempotent(s in url_strategy(), sort in any::<bool>(), remove in any::<bool>()) {
            let Ok(u) = Url::parse(&s) else { return Ok(()); };
            let mut n = CanonicalUrlNormalizer::new().sort_query_params(sort);
            if remove {
                n = n.remove_query_params(["utm_*", "b"]);
            }
            let once = n.normalize(u);
            let twice = n.normalize(once.clone());
            prop_assert_eq!(&twice, &once);
            // The serialization parses back to the same URL.
            prop_assert_eq!(Url::parse(once.as_str()).ok(), Some(once));
        }

        #[test]
        fn default_normalization_keeps_the_page(s in url_strategy()) {
            let Ok(u) = Url::parse(&s) else { return Ok(()); };
            let out = CanonicalUrlNormalizer::new().normalize(u.clone());
            prop_assert_eq!(out.scheme(), u.scheme());
            prop_assert_eq!(out.host_str(), u.host_str());
            prop_assert_eq!(out.port_or_known_default(), u.port_or_known_default());
            prop_assert_eq!(decode_all(out.path()), decode_all(u.path()));
            prop_assert_eq!(
                decode_all(out.query().unwrap_or("")),
                decode_all(u.query().unwrap_or(""))
            );
            prop_assert_eq!(out.fragment(), None);
        }
    }
}
