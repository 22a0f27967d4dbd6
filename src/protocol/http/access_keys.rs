//! How the HTTP client reaches real sites, read from its keys: a proxy (`http.proxy`,
//! `http.proxy.*`), headers sent with every request (`http.custom.headers`) and HTTP Basic
//! credentials for every host or for some (`http.basicauth.*`).
//!
//! Credentials never reach a log: [`Secret`] and [`BasicCredentials`] print a password as `***`,
//! and the values of custom headers are marked sensitive, which their `Debug` hides. A value that
//! cannot be used is refused with the key that holds it.

use std::collections::BTreeMap;
use std::fmt;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use url::Url;

use super::access::{BasicCredentials, ProxyKind, ProxySettings, SiteCredentials};

/// A value that cannot be used: its key, and why.
pub(super) type KeyError = (&'static str, String);

/// A key's value that may hold a password: read and written as a plain string, printed by `Debug`
/// as `***`.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Why a secret could not be read from its file. The message names the file, never the secret.
#[derive(Debug, thiserror::Error)]
pub enum SecretFileError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The file holds more than a file of its kind may ([`crate::bounded_file`]).
    #[error(transparent)]
    TooLarge(crate::bounded_file::BoundedFileError),
    /// Its first line is empty.
    #[error("{path} is empty (the secret is its first line)")]
    Empty {
        /// The file.
        path: std::path::PathBuf,
    },
}

impl From<crate::bounded_file::BoundedFileError> for SecretFileError {
    /// A file that could not be read is [`SecretFileError::Read`]; one over its bound,
    /// [`SecretFileError::TooLarge`].
    fn from(error: crate::bounded_file::BoundedFileError) -> Self {
        match error {
            crate::bounded_file::BoundedFileError::Read { path, source } => {
                SecretFileError::Read { path, source }
            }
            too_large => SecretFileError::TooLarge(too_large),
        }
    }
}

impl Secret {
    /// The secret a file holds: its first line, trimmed (a file written with a trailing newline,
    /// or with a comment below, reads the same). An empty first line is refused.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Secret, SecretFileError> {
        let path = path.as_ref();
        let text = crate::bounded_file::read_to_string(path, crate::bounded_file::SECRET_FILE)?;
        let first = text.lines().next().unwrap_or_default().trim();
        if first.is_empty() {
            return Err(SecretFileError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(Secret(first.to_string()))
    }
}

/// The proxy keys as written.
pub(super) struct ProxyKeys<'a> {
    /// `http.proxy`: the whole proxy as one URL.
    pub url: &'a str,
    /// `http.proxy.host`.
    pub host: &'a str,
    /// `http.proxy.port`.
    pub port: u16,
    /// `http.proxy.type`.
    pub kind: &'a str,
    /// `http.proxy.user`.
    pub user: &'a str,
    /// `http.proxy.pass`.
    pub password: &'a str,
}

impl ProxyKeys<'_> {
    /// The proxy, if one is set: `http.proxy` when given, else the `http.proxy.*` parts.
    pub fn settings(&self) -> Result<Option<ProxySettings>, KeyError> {
        if !self.url.trim().is_empty() {
            return proxy_from_url(self.url.trim()).map(Some);
        }
        if self.host.trim().is_empty() {
            return Ok(None);
        }
        let kind = match self.kind.trim().to_ascii_uppercase().as_str() {
            "HTTP" => ProxyKind::Http,
            "SOCKS" => ProxyKind::Socks,
            other => {
                return Err(invalid(
                    "http.proxy.type",
                    format!("`{other}` is neither HTTP nor SOCKS"),
                ));
            }
        };
        let credentials = (!self.user.is_empty()).then(|| BasicCredentials {
            user: self.user.to_string(),
            password: self.password.to_string(),
        });
        Ok(Some(ProxySettings {
            kind,
            host: self.host.trim().to_string(),
            port: self.port,
            credentials,
        }))
    }
}

/// `http.proxy`: `http://[user:password@]host[:port]` or `socks5://...` (`socks`, `socks5h` too).
fn proxy_from_url(text: &str) -> Result<ProxySettings, KeyError> {
    let url = Url::parse(text).map_err(|e| invalid("http.proxy", format!("not a URL: {e}")))?;
    let (kind, default_port) = match url.scheme() {
        "http" => (ProxyKind::Http, 8080),
        "socks" | "socks5" | "socks5h" => (ProxyKind::Socks, 1080),
        other => {
            return Err(invalid(
                "http.proxy",
                format!("scheme `{other}` is neither http nor socks5"),
            ));
        }
    };
    let host = url
        .host_str()
        .ok_or_else(|| invalid("http.proxy", "the URL has no host".to_string()))?;
    let decode = |s: &str| {
        percent_decode(s).ok_or_else(|| invalid("http.proxy", "bad %-escape in the user".into()))
    };
    let credentials = if url.username().is_empty() {
        None
    } else {
        Some(BasicCredentials {
            user: decode(url.username())?,
            password: decode(url.password().unwrap_or_default())?,
        })
    };
    Ok(ProxySettings {
        kind,
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
        port: url.port().unwrap_or(default_port),
        credentials,
    })
}

/// `%XX` escapes of a URL's user or password decoded; `None` when they are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `http.custom.headers`: `Name=value` entries, as StormCrawler writes them (the first `=` splits),
/// made headers whose values are marked sensitive (they may carry an API key). A name or value
/// HTTP does not allow is an error naming the header.
pub(super) fn custom_headers(entries: &[String]) -> Result<HeaderMap, KeyError> {
    let mut headers = HeaderMap::new();
    for entry in entries {
        let (name, value) = entry.split_once('=').unwrap_or((entry, ""));
        let (name, value) = (name.trim(), value.trim());
        let header_name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            invalid(
                "http.custom.headers",
                format!("`{name}` is not a valid header name (write `Name=value`)"),
            )
        })?;
        let mut header_value = HeaderValue::from_str(value).map_err(|_| {
            invalid(
                "http.custom.headers",
                format!("the value of `{name}` has characters a header may not carry"),
            )
        })?;
        header_value.set_sensitive(true);
        headers.append(header_name, header_value);
    }
    Ok(headers)
}

/// `http.basicauth.*`: the credentials for every host (when a user is given) and by host.
pub(super) fn site_credentials(
    user: &str,
    password: &str,
    hosts: &BTreeMap<String, BasicCredentials>,
) -> Result<SiteCredentials, KeyError> {
    let mut by_host = BTreeMap::new();
    for (host, credentials) in hosts {
        let host = host.trim().to_ascii_lowercase();
        if host.is_empty() || host.contains(['/', ':', '@']) && !host.starts_with('[') {
            return Err(invalid(
                "http.basicauth.hosts",
                format!("`{host}` is not a host name (no scheme, port or path)"),
            ));
        }
        if credentials.user.contains(':') {
            return Err(invalid(
                "http.basicauth.hosts",
                format!("the user for `{host}` has a `:`, which Basic authentication forbids"),
            ));
        }
        by_host.insert(host, credentials.clone());
    }
    if user.contains(':') {
        return Err(invalid(
            "http.basicauth.user",
            "has a `:`, which Basic authentication forbids".to_string(),
        ));
    }
    let every_host = (!user.is_empty()).then(|| BasicCredentials {
        user: user.to_string(),
        password: password.to_string(),
    });
    Ok(SiteCredentials {
        every_host,
        by_host,
    })
}

fn invalid(key: &'static str, message: String) -> KeyError {
    (key, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounded_file::testing::{assert_over_the_bound, file_holding, padded_file};

    fn credentials(user: &str, password: &str) -> BasicCredentials {
        BasicCredentials {
            user: user.to_string(),
            password: password.to_string(),
        }
    }

    fn keys<'a>(url: &'a str, host: &'a str, kind: &'a str) -> ProxyKeys<'a> {
        ProxyKeys {
            url,
            host,
            port: 3128,
            kind,
            user: "u",
            password: "p",
        }
    }

    #[test]
    fn a_secret_file_gives_its_first_line_and_an_empty_one_is_refused() {
        let (dir, path) = file_holding("key", "  s3cret \n# the key for the test node\n");
        assert_eq!(Secret::from_file(&path).expect("read").0, "s3cret");
        std::fs::write(&path, "\nlater\n").expect("write");
        let empty = Secret::from_file(&path).expect_err("empty first line");
        assert!(empty.to_string().contains("is empty"), "{empty}");
        let missing = Secret::from_file(dir.path().join("none")).expect_err("missing");
        assert!(missing.to_string().contains("cannot read"), "{missing}");
    }

    #[test]
    fn a_secret_file_over_its_bound_is_refused_by_name_without_the_secret() {
        let over = crate::bounded_file::SECRET_FILE.limit + 1;
        let (_dir, path) = padded_file("token", "s3cret\n#", "\n", over);
        let refused = Secret::from_file(&path).expect_err("over");
        // The whole message: the path and the bound, nothing of the file.
        assert_over_the_bound(&refused, &path, "65536 bytes for a secret file");
    }

    #[test]
    fn the_proxy_from_its_parts_or_one_url() {
        assert_eq!(keys("", "", "HTTP").settings().expect("no proxy"), None);
        let parts = keys("", "proxy.test", "http").settings().expect("valid");
        assert_eq!(
            parts,
            Some(ProxySettings {
                kind: ProxyKind::Http,
                host: "proxy.test".to_string(),
                port: 3128,
                credentials: Some(credentials("u", "p")),
            })
        );
        let url = keys("socks5://me:s%40cret@[::1]", "ignored", "HTTP")
            .settings()
            .expect("valid");
        assert_eq!(
            url,
            Some(ProxySettings {
                kind: ProxyKind::Socks,
                host: "::1".to_string(),
                port: 1080,
                credentials: Some(credentials("me", "s@cret")),
            })
        );
        let (key, _) = keys("", "proxy.test", "FTP").settings().expect_err("FTP");
        assert_eq!(key, "http.proxy.type");
        let (key, message) = keys("ftp://p.test", "", "HTTP")
            .settings()
            .expect_err("ftp");
        assert_eq!(key, "http.proxy");
        assert!(message.contains("`ftp`"), "{message}");
    }

    #[test]
    fn custom_headers_split_at_the_first_equals_sign_and_hide_their_values() {
        let headers = custom_headers(&["X-Api-Key = a=b".to_string(), "X-Empty".to_string()])
            .expect("valid headers");
        assert_eq!(
            headers.get("x-api-key").map(|v| v.as_bytes()),
            Some(&b"a=b"[..])
        );
        assert_eq!(headers.get("x-empty").map(|v| v.as_bytes()), Some(&b""[..]));
        assert!(!format!("{headers:?}").contains("a=b"));
        let (_, message) = custom_headers(&["Bad Name=v".to_string()]).expect_err("a space");
        assert!(message.contains("`Bad Name`"), "{message}");
        let (_, message) = custom_headers(&["X-Ok=a\u{7}b".to_string()]).expect_err("a bell");
        assert!(message.contains("`X-Ok`"), "{message}");
    }

    #[test]
    fn a_host_s_own_credentials_win_and_stay_with_it() {
        let hosts = BTreeMap::from([("Intranet.test".to_string(), credentials("a", "b"))]);
        let site = site_credentials("", "", &hosts).expect("valid");
        let url = |s: &str| Url::parse(s).expect("test URL");
        assert_eq!(
            site.for_url(&url("http://intranet.test:8080/x")),
            Some(&credentials("a", "b"))
        );
        assert_eq!(site.for_url(&url("http://other.test/")), None);
        let with_default = site_credentials("all", "c", &hosts).expect("valid");
        assert_eq!(
            with_default.for_url(&url("http://other.test/")),
            Some(&credentials("all", "c"))
        );
        assert_eq!(
            with_default.for_url(&url("http://intranet.test/")),
            Some(&credentials("a", "b"))
        );
        let bad = BTreeMap::from([("https://a.test/".to_string(), credentials("a", "b"))]);
        let (key, _) = site_credentials("", "", &bad).expect_err("a URL, not a host");
        assert_eq!(key, "http.basicauth.hosts");
    }

    #[test]
    fn no_password_reaches_a_debug_print() {
        let secret = credentials("crawler", "hunter2");
        let site = SiteCredentials {
            every_host: Some(secret.clone()),
            by_host: BTreeMap::from([("a.test".to_string(), secret.clone())]),
        };
        let proxy = ProxySettings {
            kind: ProxyKind::Http,
            host: "proxy.test".to_string(),
            port: 3128,
            credentials: Some(secret),
        };
        let printed = format!("{site:?} {proxy:?}");
        assert!(!printed.contains("hunter2"), "{printed}");
        assert!(printed.contains("crawler"), "{printed}");
    }
}
