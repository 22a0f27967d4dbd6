//! What a crawl of real sites asks of the HTTP client besides fetching, as the configuration gives
//! it ([`HttpSettings`](super::HttpSettings)): a proxy every request goes through, headers sent with every
//! request, a cookie jar, and HTTP Basic credentials added to the requests of the hosts they are
//! for. Credentials are never logged: header values carrying them are marked sensitive.

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use url::Url;

use super::access::{BasicCredentials, ProxyKind, ProxySettings, SiteCredentials};
#[cfg(feature = "cookies")]
use super::cookies::CookieJar;

/// `builder` with the proxy and the custom headers.
pub(super) fn apply(
    mut builder: reqwest::ClientBuilder,
    proxy: Option<&ProxySettings>,
    headers: &HeaderMap,
) -> reqwest::Result<reqwest::ClientBuilder> {
    if let Some(proxy) = proxy {
        builder = builder.proxy(to_proxy(proxy)?);
    }
    if !headers.is_empty() {
        builder = builder.default_headers(headers.clone());
    }
    Ok(builder)
}

/// `builder` with the crawl's cookie jar, when it keeps one.
#[cfg(feature = "cookies")]
pub(super) fn with_cookies(
    builder: reqwest::ClientBuilder,
    cookies: Option<&CookieJar>,
) -> reqwest::ClientBuilder {
    match cookies {
        Some(jar) => builder.cookie_provider(std::sync::Arc::clone(&jar.0)),
        None => builder,
    }
}

/// `request` with the `Authorization` header for `url`'s host, when `credentials` has one for it.
/// (reqwest drops the header when a redirect it follows leaves the host.)
pub(crate) fn authorize(
    credentials: &SiteCredentials,
    request: reqwest::RequestBuilder,
    url: &Url,
) -> reqwest::RequestBuilder {
    match credentials.for_url(url).and_then(basic_header) {
        Some(value) => request.header(AUTHORIZATION, value),
        None => request,
    }
}

/// The reqwest proxy for every request.
fn to_proxy(settings: &ProxySettings) -> reqwest::Result<reqwest::Proxy> {
    let scheme = match settings.kind {
        ProxyKind::Http => "http",
        ProxyKind::Socks => "socks5h",
    };
    let host = if settings.host.contains(':') {
        format!("[{}]", settings.host)
    } else {
        settings.host.clone()
    };
    let proxy = reqwest::Proxy::all(format!("{scheme}://{host}:{}", settings.port))?;
    Ok(match &settings.credentials {
        Some(credentials) => proxy.basic_auth(&credentials.user, &credentials.password),
        None => proxy,
    })
}

/// The `Authorization: Basic` value of `credentials`, marked sensitive.
fn basic_header(credentials: &BasicCredentials) -> Option<HeaderValue> {
    let token = base64_encode(format!("{}:{}", credentials.user, credentials.password).as_bytes());
    let mut value = HeaderValue::from_str(&format!("Basic {token}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// Standard base64 with padding (RFC 4648).
fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_rfc_4648_gives_it() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("Aladdin:open sesame", "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="),
        ] {
            assert_eq!(base64_encode(plain.as_bytes()), encoded, "{plain}");
        }
    }

    #[test]
    fn the_basic_header_is_sensitive() {
        let credentials = BasicCredentials {
            user: "Aladdin".to_string(),
            password: "open sesame".to_string(),
        };
        let value = basic_header(&credentials).expect("a valid header");
        assert_eq!(value.as_bytes(), b"Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
        assert!(value.is_sensitive());
        assert!(!format!("{value:?}").contains("QWxh"));
    }
}
