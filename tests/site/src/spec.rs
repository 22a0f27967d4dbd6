//! The parameters of a generated site.

use serde::{Deserialize, Serialize};

/// Parameters of a generated site. The same spec (including `seed`) always
/// produces the same site, byte for byte, for a given port.
///
/// Counts that would leave a host without any normally reachable page are
/// clamped: every host with at least one page keeps at least one page that
/// is reachable by ordinary links.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SiteSpec {
    /// Number of in-scope hosts, named `host-00.test`, `host-01.test`, ...
    pub hosts: usize,
    /// Number of ordinary pages `/p/N.html` per in-scope host (the home page
    /// `/` comes in addition).
    pub pages_per_host: usize,
    /// Seed of the deterministic generator.
    pub seed: u64,
    /// Target number of links on an ordinary reachable page (a few more may be
    /// added to link special paths and nofollow-only pages).
    pub links_per_page: usize,
    /// Number of out-of-scope hosts, named `outside-00.test`, ...
    pub outside_hosts: usize,
    /// Number of pages `/p/N.html` on every out-of-scope host (plus `/`).
    pub outside_pages: usize,
    /// Pages per in-scope host that no page links to (they must never be
    /// requested; only out-of-scope or never-fetched pages link to them).
    pub unreachable_per_host: usize,
    /// Pages per in-scope host that are linked only with `rel="nofollow"`.
    pub nofollow_only_per_host: usize,
    /// Paths `/redirect/N` per in-scope host, each answering 301 to an
    /// ordinary page (sometimes on another in-scope host).
    pub redirects_per_host: usize,
    /// Linked paths `/missing/N` per in-scope host (404).
    pub missing_per_host: usize,
    /// Linked paths `/error/N` per in-scope host (500).
    pub errors_per_host: usize,
    /// Linked resources `/files/N.pdf` per in-scope host (`application/pdf`).
    pub files_per_host: usize,
    /// Index of the in-scope host whose robots.txt disallows `/private/`
    /// (`None`: every host answers 404 for /robots.txt).
    pub robots_host: Option<usize>,
    /// Number of `/private/N.html` pages on the robots host, all linked from
    /// its pages and all disallowed by its robots.txt.
    pub private_pages: usize,
}

impl Default for SiteSpec {
    /// 25 in-scope hosts of 50 pages each, 3 out-of-scope hosts, robots.txt
    /// on `host-01.test`.
    fn default() -> Self {
        SiteSpec {
            hosts: 25,
            pages_per_host: 50,
            seed: 0x5EED_2024,
            links_per_page: 8,
            outside_hosts: 3,
            outside_pages: 5,
            unreachable_per_host: 3,
            nofollow_only_per_host: 2,
            redirects_per_host: 2,
            missing_per_host: 2,
            errors_per_host: 1,
            files_per_host: 2,
            robots_host: Some(1),
            private_pages: 4,
        }
    }
}

impl SiteSpec {
    /// A small site (3 in-scope hosts of 12 pages, 2 out-of-scope hosts), for
    /// fast tests.
    pub fn small() -> Self {
        SiteSpec {
            hosts: 3,
            pages_per_host: 12,
            links_per_page: 5,
            outside_hosts: 2,
            outside_pages: 3,
            unreachable_per_host: 2,
            nofollow_only_per_host: 1,
            private_pages: 2,
            ..SiteSpec::default()
        }
    }

    /// The same spec with another seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Number of ordinary pages `/p/N.html` over all in-scope hosts (home
    /// pages, special paths and private pages not included).
    pub fn total_pages(&self) -> usize {
        self.hosts * self.pages_per_host
    }

    /// Name of in-scope host `i`: `host-00.test`, `host-01.test`, ...
    pub fn host_name(i: usize) -> String {
        format!("host-{i:02}.test")
    }

    /// Name of out-of-scope host `i`: `outside-00.test`, ...
    pub fn outside_host_name(i: usize) -> String {
        format!("outside-{i:02}.test")
    }

    /// Names of the in-scope hosts, in index order.
    pub fn in_scope_host_names(&self) -> Vec<String> {
        (0..self.hosts).map(Self::host_name).collect()
    }

    /// A regular expression matching every URL on an out-of-scope host: a
    /// crawler that excludes it (StormCrawler's and squall's
    /// `urlfilter.exclude`) stays on the site's in-scope hosts, following
    /// links between them.
    pub fn outside_hosts_pattern() -> &'static str {
        r"^https?://outside-\d+\.test[:/]"
    }

    /// The configuration override (`urlfilter.exclude=[...]`) that keeps a
    /// crawl off the out-of-scope hosts, for `--set` or `ConfigBuilder::set`.
    pub fn exclude_outside_hosts() -> String {
        format!("urlfilter.exclude=['{}']", Self::outside_hosts_pattern())
    }

    /// Names of the out-of-scope hosts, in index order.
    pub fn outside_host_names(&self) -> Vec<String> {
        (0..self.outside_hosts)
            .map(Self::outside_host_name)
            .collect()
    }

    /// Every host name the site serves: in-scope hosts first, then
    /// out-of-scope hosts.
    pub fn host_names(&self) -> Vec<String> {
        let mut names = self.in_scope_host_names();
        names.extend(self.outside_host_names());
        names
    }

    /// Name of the host serving a robots.txt, if any (and if it exists).
    pub fn robots_host_name(&self) -> Option<String> {
        self.robots_host
            .filter(|&i| i < self.hosts)
            .map(Self::host_name)
    }

    /// Home page URLs (`http://host-NN.test:PORT/`) of every in-scope host:
    /// the crawl seeds.
    pub fn seeds(&self, port: u16) -> Vec<String> {
        self.in_scope_host_names()
            .iter()
            .map(|h| crate::url_for(h, port, "/"))
            .collect()
    }
}
