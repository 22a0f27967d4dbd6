//! What a correct crawl of the site does.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::model::{Doc, Loc, Model, robots_denied};
use crate::request::RequestRecord;
use crate::spec::SiteSpec;

/// The expected crawl status of a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ExpectedStatus {
    /// Answers 200: an HTML page (parsed, its links followed) or a non-HTML
    /// resource such as a PDF (fetched, not parsed).
    Fetched,
    /// Answers 301; the `Location` target is discovered as a new URL.
    Redirection,
    /// Answers 404 or 500.
    FetchError,
    /// Disallowed by the host's robots.txt: listed, never requested (status
    /// ERROR with a robots reason in squall's terms).
    RobotsDenied,
}

/// Which links a crawler follows, for [`Site::expected_with`](crate::Site::expected_with).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// Every in-scope host of the site, whatever page links to it (a crawl
    /// that excludes the out-of-scope hosts, e.g. with
    /// [`SiteSpec::outside_hosts_pattern`](crate::SiteSpec::outside_hosts_pattern)).
    #[default]
    SiteHosts,
    /// Only links (and redirects) to the host of the page they are found on,
    /// as StormCrawler's `urlfilter.ignore.outside.host`: the seeds' hosts,
    /// each reached from its own seed.
    SourceHost,
}

/// What a crawler must do when started from the site's seeds, if it stays on
/// the site's in-scope hosts (see [`Scope`]), respects `rel="nofollow"` and robots.txt, records a
/// redirect's target as a new URL (without following it within the same
/// fetch), drops fragments and has no depth limit.
///
/// URLs are absolute and normalized: `http://host-03.test:PORT/p/17.html`
/// (lowercase host, explicit port, path as written, no fragment).
/// `/robots.txt` is not part of the page expectations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Expectation {
    port: u16,
    statuses: BTreeMap<String, ExpectedStatus>,
    redirects: BTreeMap<String, String>,
    must_not_request: BTreeSet<String>,
    in_scope_hosts: BTreeSet<String>,
}

impl Expectation {
    /// Simulates a correct crawl of `model` served on `port`, following links
    /// as `scope` says.
    pub(crate) fn compute(model: &Model, port: u16, scope: Scope) -> Expectation {
        let in_scope: HashSet<&str> = model.in_scope.iter().map(String::as_str).collect();
        let mut statuses = BTreeMap::new();
        let mut redirects = BTreeMap::new();
        let mut cx = Crawl {
            in_scope: &in_scope,
            scope,
            avoid: BTreeSet::new(),
            seen: BTreeSet::new(),
            queue: VecDeque::new(),
        };
        let mut nofollow: Vec<Loc> = Vec::new();
        for host in &model.in_scope {
            cx.discover(
                None,
                &Loc {
                    host: host.clone(),
                    path: "/".to_owned(),
                },
            );
        }
        while let Some(loc) = cx.queue.pop_front() {
            let url = loc.url(port);
            if robots_denied(model, &loc) {
                statuses.insert(url, ExpectedStatus::RobotsDenied);
                continue;
            }
            let status = match model.docs.get(&loc) {
                Some(Doc::Html(page)) => {
                    for link in &page.links {
                        if !link.nofollow {
                            cx.discover(Some(&loc), &link.target);
                        } else if in_scope.contains(link.target.host.as_str()) {
                            nofollow.push(link.target.clone());
                        } else {
                            cx.avoid.insert(link.target.clone());
                        }
                    }
                    ExpectedStatus::Fetched
                }
                Some(Doc::Pdf(_) | Doc::Robots) => ExpectedStatus::Fetched,
                Some(Doc::Redirect(target)) => {
                    redirects.insert(url.clone(), target.url(port));
                    cx.discover(Some(&loc), target);
                    ExpectedStatus::Redirection
                }
                Some(Doc::Status(_)) | None => ExpectedStatus::FetchError,
            };
            statuses.insert(url, status);
        }
        let fetched = |loc: &Loc| {
            !robots_denied(model, loc)
                && cx.seen.contains(loc)
                && in_scope.contains(loc.host.as_str())
        };
        let mut must_not: BTreeSet<String> = BTreeSet::new();
        for loc in cx
            .avoid
            .iter()
            .chain(&nofollow)
            .chain(&cx.seen)
            .chain(model.docs.keys())
        {
            if loc.path != "/robots.txt" && !fetched(loc) {
                must_not.insert(loc.url(port));
            }
        }
        Expectation {
            port,
            statuses,
            redirects,
            must_not_request: must_not,
            in_scope_hosts: model.in_scope.iter().cloned().collect(),
        }
    }

    /// The port the URLs refer to.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Every URL a correct crawl lists (discovers), with its expected status.
    pub fn statuses(&self) -> &BTreeMap<String, ExpectedStatus> {
        &self.statuses
    }

    /// The expected status of `url` (a normalized absolute URL), if the URL
    /// is discovered by a correct crawl.
    pub fn status(&self, url: &str) -> Option<ExpectedStatus> {
        self.statuses.get(url).copied()
    }

    /// Number of discovered URLs with the given status.
    pub fn count(&self, status: ExpectedStatus) -> usize {
        self.statuses.values().filter(|&&s| s == status).count()
    }

    /// Number of discovered URLs (all statuses).
    pub fn len(&self) -> usize {
        self.statuses.len()
    }

    /// Whether no URL is discovered (only for a site without hosts).
    pub fn is_empty(&self) -> bool {
        self.statuses.is_empty()
    }

    /// Redirecting URLs discovered by the crawl, with their `Location` target.
    pub fn redirects(&self) -> &BTreeMap<String, String> {
        &self.redirects
    }

    /// Names of the in-scope hosts (the seeds' hosts).
    pub fn in_scope_hosts(&self) -> &BTreeSet<String> {
        &self.in_scope_hosts
    }

    /// URLs the crawler must request exactly once: every discovered URL
    /// except the robots-denied ones.
    pub fn reachable_in_scope_urls(&self) -> BTreeSet<String> {
        self.statuses
            .iter()
            .filter(|(_, s)| **s != ExpectedStatus::RobotsDenied)
            .map(|(u, _)| u.clone())
            .collect()
    }

    /// URLs the crawler must never request: out-of-scope URLs (linked or
    /// not), robots-denied URLs, unreachable pages, nofollow-only targets,
    /// and every other resource of the site that a correct crawl never
    /// reaches. `/robots.txt` URLs are not included.
    pub fn must_not_request(&self) -> &BTreeSet<String> {
        &self.must_not_request
    }

    /// Compares the server's request log with the expectation and describes
    /// every discrepancy (empty: the crawl was exactly right).
    ///
    /// Every URL of [`Expectation::reachable_in_scope_urls`] must have been
    /// requested exactly once and no other URL requested, except
    /// `/robots.txt` of in-scope hosts (any number of times, the crawler's
    /// caching policy is its own business).
    pub fn check_requests(&self, records: &[RequestRecord]) -> Vec<String> {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for r in records {
            if r.path == "/robots.txt" && self.in_scope_hosts.contains(&r.host) {
                continue;
            }
            *counts.entry(r.url.as_str()).or_default() += 1;
        }
        let mut problems = Vec::new();
        for url in self.reachable_in_scope_urls() {
            match counts.remove(url.as_str()) {
                None => problems.push(format!("never requested: {url}")),
                Some(1) => {}
                Some(n) => problems.push(format!("requested {n} times: {url}")),
            }
        }
        for (url, n) in counts {
            let why = if self.must_not_request.contains(url) {
                "must not be requested"
            } else {
                "unexpected request"
            };
            problems.push(format!("{why} ({n}x): {url}"));
        }
        problems
    }

    /// The expectation as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// State of the simulated crawl.
struct Crawl<'a> {
    in_scope: &'a HashSet<&'a str>,
    scope: Scope,
    /// Out-of-scope URLs seen in links or redirects.
    avoid: BTreeSet<Loc>,
    /// In-scope URLs discovered.
    seen: BTreeSet<Loc>,
    queue: VecDeque<Loc>,
}

impl Crawl<'_> {
    /// `loc` found on the page at `from` (None for a seed).
    fn discover(&mut self, from: Option<&Loc>, loc: &Loc) {
        let other_host = from.is_some_and(|from| from.host != loc.host);
        if self.scope == Scope::SourceHost && other_host {
            // Dropped by the filter, but it may still be reached from its own host.
            return;
        }
        if !self.in_scope.contains(loc.host.as_str()) {
            self.avoid.insert(loc.clone());
        } else if self.seen.insert(loc.clone()) {
            self.queue.push_back(loc.clone());
        }
    }
}

impl SiteSpec {
    /// What a correct crawler started from [`SiteSpec::seeds`] must do, for a
    /// site served on `port`.
    pub fn expectation(&self, port: u16) -> Expectation {
        Expectation::compute(&Model::generate(self), port, Scope::SiteHosts)
    }
}
