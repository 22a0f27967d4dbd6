//! The crawl's cookie jar (`http.use.cookies`), bounded: a site that sets a new cookie on every
//! response, or a crawl of millions of hosts, cannot grow it without end. Cookies are kept by the
//! rules of RFC 6265 (domain, path, `Secure`, expiry) by the `cookie_store` crate, the store
//! reqwest's own jar uses, one store per site (registrable domain), so that a request looks only
//! at its own site's cookies. Beyond [`CookieLimits`] a new cookie is not kept: the refusal is
//! counted (`squall_cookies_refused_total`, [`CookieJar::refused`]) and logged, at warn level on
//! the 1st, 10th, 100th... refusal.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use cookie_store::{Cookie, CookieStore, RawCookie, StoreAction};
use reqwest::header::HeaderValue;
use url::Url;

/// The bounds on what the jar keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CookieLimits {
    /// The most cookies kept for one cookie domain (a host, or the `Domain` a cookie names):
    /// 50, as browsers keep.
    pub per_domain: usize,
    /// The most cookies kept in all: 100,000.
    pub total: usize,
    /// The longest `Set-Cookie` value kept (name, value and attributes): 4096 bytes, the size
    /// RFC 6265 asks user agents to keep and browsers bound a cookie to.
    pub cookie_bytes: usize,
}

impl Default for CookieLimits {
    fn default() -> Self {
        CookieLimits {
            per_domain: 50,
            total: 100_000,
            cookie_bytes: 4096,
        }
    }
}

/// Why a cookie was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// Over [`CookieLimits::cookie_bytes`].
    TooLarge,
    /// Its domain holds [`CookieLimits::per_domain`] cookies already.
    DomainFull,
    /// The jar holds [`CookieLimits::total`] cookies already.
    JarFull,
}

/// The crawl's cookie jar: cookies a server sets are sent back to it on the crawl's later
/// requests, within [`CookieLimits`]. Clones share the jar; two jars are equal only when they are
/// the same jar.
#[derive(Clone, Default)]
pub struct CookieJar(pub(super) Arc<BoundedStore>);

impl CookieJar {
    /// An empty jar with the default [`CookieLimits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty jar with `limits`.
    pub fn with_limits(limits: CookieLimits) -> Self {
        CookieJar(Arc::new(BoundedStore {
            limits,
            ..BoundedStore::default()
        }))
    }

    /// How many cookies the jar holds.
    pub fn len(&self) -> usize {
        self.0.lock().total
    }

    /// Whether the jar holds no cookie.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many cookies were not kept because a bound was hit.
    pub fn refused(&self) -> u64 {
        self.0.refused.load(Ordering::Relaxed)
    }
}

impl PartialEq for CookieJar {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for CookieJar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CookieJar")
    }
}

/// The store behind a [`CookieJar`], given to reqwest as its cookie provider.
#[derive(Default)]
pub(super) struct BoundedStore {
    limits: CookieLimits,
    state: Mutex<Sites>,
    refused: AtomicU64,
}

/// The cookies, a store per site. Invariant: `total` is the sum of the sites' counts, and each
/// site's `per_domain` counts the cookies its store holds under each domain (expired ones too,
/// until a sweep removes them); a site or domain with none is not in its map.
#[derive(Default)]
struct Sites {
    sites: HashMap<String, Site>,
    total: usize,
}

/// One site's cookies.
#[derive(Default)]
struct Site {
    store: CookieStore,
    per_domain: HashMap<String, usize>,
}

/// The site `url` belongs to: its registrable domain, or its host when it has none (an IP
/// address, `localhost`).
fn site_of(url: &Url) -> Option<String> {
    let host = url.host_str()?;
    Some(crate::model::registrable_domain(host).unwrap_or_else(|| host.to_string()))
}

/// Whether `n` is 1, 10, 100...
fn is_power_of_ten(mut n: u64) -> bool {
    while n >= 10 && n.is_multiple_of(10) {
        n /= 10;
    }
    n == 1
}

impl BoundedStore {
    fn lock(&self) -> MutexGuard<'_, Sites> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts and logs a cookie from `url` not kept.
    fn refuse(&self, why: Refusal, url: &Url) {
        metrics::counter!("squall_cookies_refused_total").increment(1);
        let count = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
        let limits = &self.limits;
        let reason = match why {
            Refusal::TooLarge => format!("it is over {} bytes", limits.cookie_bytes),
            Refusal::DomainFull => format!("its domain holds {} already", limits.per_domain),
            Refusal::JarFull => format!("the jar holds {} already", limits.total),
        };
        let host = url.host_str().unwrap_or_default();
        if is_power_of_ten(count) {
            tracing::warn!(
                "a cookie from {host} not kept: {reason} ({count} cookies not kept so far)"
            );
        } else {
            tracing::debug!("a cookie from {host} not kept: {reason}");
        }
    }

    /// Keeps one `Set-Cookie` value from `url`, within the limits.
    fn keep(&self, sites: &mut Sites, value: &HeaderValue, url: &Url) {
        if value.len() > self.limits.cookie_bytes {
            return self.refuse(Refusal::TooLarge, url);
        }
        let parsed = std::str::from_utf8(value.as_bytes())
            .ok()
            .and_then(|text| RawCookie::parse(text).ok());
        let Some(raw) = parsed else {
            return tracing::debug!("a Set-Cookie from {url} that is not a cookie, not kept");
        };
        let cookie = match Cookie::try_from_raw_cookie(&raw, url) {
            Ok(cookie) => cookie.into_owned(),
            Err(error) => return tracing::debug!("a cookie from {url} not kept: {error}"),
        };
        let Some(site_name) = site_of(url) else {
            return;
        };
        let domain = String::from(&cookie.domain);
        let path = String::from(&cookie.path);
        let name = cookie.name().to_string();
        let site = sites.sites.entry(site_name.clone()).or_default();
        let known = site.store.contains_any(&domain, &path, &name);
        let refusal = match known || cookie.is_expired() {
            true => None,
            false => self.full(sites, &site_name, &domain),
        };
        if let Some(why) = refusal {
            sites.drop_if_empty(&site_name);
            return self.refuse(why, url);
        }
        sites.insert(&site_name, cookie, url, (&domain, &path, &name));
    }

    /// Why a new cookie for `domain` in `site` cannot be kept, if it cannot; expired cookies are
    /// swept out first when they would make room.
    fn full(&self, sites: &mut Sites, site: &str, domain: &str) -> Option<Refusal> {
        let count = |sites: &Sites| {
            let held = sites.sites.get(site).and_then(|s| s.per_domain.get(domain));
            held.copied().unwrap_or(0)
        };
        if count(sites) >= self.limits.per_domain {
            sites.sweep(site);
            if count(sites) >= self.limits.per_domain {
                return Some(Refusal::DomainFull);
            }
        }
        if sites.total >= self.limits.total {
            let names: Vec<String> = sites.sites.keys().cloned().collect();
            names.iter().for_each(|name| sites.sweep(name));
            if sites.total >= self.limits.total {
                return Some(Refusal::JarFull);
            }
        }
        None
    }
}

impl Sites {
    /// Inserts `cookie` (named by `key`: domain, path, name) into `site`'s store, keeping the
    /// counts; an expired cookie that replaces a stored one removes it.
    fn insert(&mut self, site: &str, cookie: Cookie<'static>, url: &Url, key: (&str, &str, &str)) {
        let Some(entry) = self.sites.get_mut(site) else {
            return;
        };
        let (domain, _, _) = key;
        match entry.store.insert(cookie, url) {
            Ok(StoreAction::Inserted) => {
                *entry.per_domain.entry(domain.to_string()).or_default() += 1;
                self.total += 1;
            }
            Ok(StoreAction::ExpiredExisting) => self.remove(site, key),
            Ok(StoreAction::UpdatedExisting) => {}
            Err(error) => tracing::debug!("a cookie from {url} not kept: {error}"),
        }
        self.drop_if_empty(site);
    }

    /// Removes the cookie named by `key` from `site`, keeping the counts.
    fn remove(&mut self, site: &str, (domain, path, name): (&str, &str, &str)) {
        let Some(entry) = self.sites.get_mut(site) else {
            return;
        };
        if entry.store.remove(domain, path, name).is_none() {
            return;
        }
        self.total = self.total.saturating_sub(1);
        if let Some(count) = entry.per_domain.get_mut(domain) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                entry.per_domain.remove(domain);
            }
        }
    }

    /// Removes `site`'s expired cookies.
    fn sweep(&mut self, site: &str) {
        let Some(entry) = self.sites.get(site) else {
            return;
        };
        let expired: Vec<(String, String, String)> = entry
            .store
            .iter_any()
            .filter(|cookie| cookie.is_expired())
            .map(|c| {
                (
                    String::from(&c.domain),
                    String::from(&c.path),
                    c.name().to_string(),
                )
            })
            .collect();
        for (domain, path, name) in &expired {
            self.remove(site, (domain, path, name));
        }
        self.drop_if_empty(site);
    }

    /// Forgets `site` when it holds no cookie.
    fn drop_if_empty(&mut self, site: &str) {
        if self
            .sites
            .get(site)
            .is_some_and(|s| s.per_domain.is_empty())
        {
            self.sites.remove(site);
        }
    }
}

impl reqwest::cookie::CookieStore for BoundedStore {
    fn set_cookies(&self, cookie_headers: &mut dyn Iterator<Item = &HeaderValue>, url: &Url) {
        let mut sites = self.lock();
        for value in cookie_headers {
            self.keep(&mut sites, value, url);
        }
    }

    fn cookies(&self, url: &Url) -> Option<HeaderValue> {
        let site = site_of(url)?;
        let sites = self.lock();
        let store = &sites.sites.get(&site)?.store;
        let pairs: Vec<String> = store
            .get_request_values(url)
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        if pairs.is_empty() {
            return None;
        }
        HeaderValue::from_maybe_shared(Bytes::from(pairs.join("; "))).ok()
    }
}

#[cfg(test)]
#[path = "cookies_tests.rs"]
mod tests;
