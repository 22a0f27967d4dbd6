//! The site's structure, independent of the port: hosts, pages, their links in every form.

use std::collections::BTreeMap;

use crate::SiteSpec;

/// A tiny deterministic generator (SplitMix64): the same seed gives the same numbers, so a site,
/// or a seeded test that draws from it, replays exactly.
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    /// The generator of `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`; `n` must be non-zero.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            items.get(self.below(items.len()))
        }
    }

    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// A resource of the site: lowercase host name and path (no query, no
/// fragment).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Loc {
    pub(crate) host: String,
    pub(crate) path: String,
}

impl Loc {
    fn new(host: &str, path: impl Into<String>) -> Self {
        Loc {
            host: host.to_owned(),
            path: path.into(),
        }
    }

    fn home(host: &str) -> Self {
        Loc::new(host, "/")
    }

    fn page(host: &str, n: usize) -> Self {
        Loc::new(host, format!("/p/{n}.html"))
    }

    pub(crate) fn url(&self, port: u16) -> String {
        crate::url_for(&self.host, port, &self.path)
    }

    /// The directory of the path (up to and including its last `/`).
    pub(crate) fn dir(&self) -> &str {
        match self.path.rfind('/') {
            Some(i) => &self.path[..=i],
            None => "/",
        }
    }
}

/// How an `href` is written (the resolved target is the same whatever the
/// form; a form that cannot express a target falls back to a simpler one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// `http://host:port/path`
    Absolute,
    /// `http://HOST:port/path` (upper-case host name)
    AbsoluteUpper,
    /// `//host:port/path`
    ProtocolRelative,
    /// `/path`
    RootRelative,
    /// `path` relative to the base directory
    DirRelative,
    /// `../path` from a `/p/` base directory
    DotDot,
}

/// An `<a href>` of a page.
#[derive(Debug, Clone)]
pub(crate) struct Link {
    pub(crate) target: Loc,
    pub(crate) form: Form,
    pub(crate) nofollow: bool,
    pub(crate) fragment: Option<usize>,
}

/// An HTML page.
#[derive(Debug, Clone, Default)]
pub(crate) struct Page {
    pub(crate) title: String,
    /// `<base href>`: host and a directory path ending with `/`.
    pub(crate) base: Option<Loc>,
    /// Has an `<a href="#top">` link.
    pub(crate) self_fragment: bool,
    pub(crate) links: Vec<Link>,
}

/// What a path of a host serves.
#[derive(Debug, Clone)]
pub(crate) enum Doc {
    Html(Page),
    Redirect(Loc),
    Pdf(usize),
    Status(u16),
    Robots,
}

/// The whole site, independent of the port.
pub(crate) struct Model {
    pub(crate) in_scope: Vec<String>,
    pub(crate) outside: Vec<String>,
    pub(crate) robots_host: Option<String>,
    pub(crate) docs: BTreeMap<Loc, Doc>,
}

pub(crate) const ROBOTS_TXT: &str = "User-agent: *\nDisallow: /private/\n";

/// Does the robots.txt of the site forbid this resource?
pub(crate) fn robots_denied(model: &Model, loc: &Loc) -> bool {
    model.robots_host.as_deref() == Some(loc.host.as_str()) && loc.path.starts_with("/private/")
}

struct HostPlan {
    name: String,
    /// Pages reachable through ordinary links (in chain order).
    normal: Vec<usize>,
    unreachable: Vec<usize>,
    nofollow_only: Vec<usize>,
}

impl HostPlan {
    /// The pages a crawler fetches through ordinary links: home and normal pages.
    fn fetchable(&self) -> Vec<Loc> {
        let mut v = vec![Loc::home(&self.name)];
        v.extend(self.normal.iter().map(|&n| Loc::page(&self.name, n)));
        v
    }
}

struct Builder<'a> {
    spec: &'a SiteSpec,
    rng: SplitMix,
    plans: Vec<HostPlan>,
    outside: Vec<String>,
    robots_host: Option<String>,
    pages: BTreeMap<Loc, Page>,
    docs: BTreeMap<Loc, Doc>,
}

impl Builder<'_> {
    fn form(&mut self) -> Form {
        match self.rng.below(100) {
            0..30 => Form::Absolute,
            30..55 => Form::RootRelative,
            55..82 => Form::DirRelative,
            82..92 => Form::ProtocolRelative,
            92..97 => Form::AbsoluteUpper,
            _ => Form::DotDot,
        }
    }

    fn add(&mut self, from: &Loc, target: Loc, nofollow: bool) {
        let form = self.form();
        let fragment = if self.rng.percent(10) {
            Some(self.rng.below(5))
        } else {
            None
        };
        let link = Link {
            target,
            form,
            nofollow,
            fragment,
        };
        self.pages.entry(from.clone()).or_default().links.push(link);
    }

    /// A normal page (or the home page if there is none) of in-scope host `h`.
    fn normal_of(&mut self, h: usize) -> Loc {
        let plan = &self.plans[h];
        match self.rng.pick(&plan.normal) {
            Some(&n) => Loc::page(&plan.name, n),
            None => Loc::home(&plan.name),
        }
    }

    /// A fetchable page of in-scope host `h`, to carry a link.
    fn carrier_of(&mut self, h: usize) -> Loc {
        let all = self.plans[h].fetchable();
        let i = self.rng.below(all.len());
        all[i].clone()
    }

    fn other_host(&mut self, h: usize) -> usize {
        let n = self.plans.len();
        if n <= 1 {
            h
        } else {
            (h + 1 + self.rng.below(n - 1)) % n
        }
    }

    fn outside_target(&mut self) -> Option<Loc> {
        let host = self.rng.pick(&self.outside)?.clone();
        let k = self.rng.below(self.spec.outside_pages + 1);
        Some(if k == 0 {
            Loc::home(&host)
        } else {
            Loc::page(&host, k - 1)
        })
    }

    /// One of `count` numbered paths of host `name`: `prefix`, a number drawn below `count`,
    /// `suffix` (`/files/1.pdf`).
    fn numbered(
        &mut self,
        name: &str,
        (prefix, suffix): (&str, &str),
        count: usize,
    ) -> Option<Loc> {
        Some(Loc::new(
            name,
            format!("{prefix}{}{suffix}", self.rng.below(count)),
        ))
    }

    /// A random ordinary (followable) target for a link from a normal page of host `h`.
    fn random_target(&mut self, h: usize) -> Loc {
        let name = self.plans[h].name.clone();
        let spec = self.spec;
        loop {
            let t = match self.rng.below(100) {
                0..45 => Some(self.normal_of(h)),
                45..65 => {
                    let o = self.other_host(h);
                    Some(self.normal_of(o))
                }
                65..70 => {
                    let o = self.other_host(h);
                    Some(Loc::home(&self.plans[o].name))
                }
                70..76 => self.outside_target(),
                76..81 if spec.missing_per_host > 0 => {
                    self.numbered(&name, ("/missing/", ""), spec.missing_per_host)
                }
                81..86 if spec.redirects_per_host > 0 => {
                    self.numbered(&name, ("/redirect/", ""), spec.redirects_per_host)
                }
                86..89 if spec.errors_per_host > 0 => {
                    self.numbered(&name, ("/error/", ""), spec.errors_per_host)
                }
                89..94 if spec.files_per_host > 0 => {
                    self.numbered(&name, ("/files/", ".pdf"), spec.files_per_host)
                }
                94..100
                    if spec.private_pages > 0
                        && self.robots_host.as_deref() == Some(name.as_str()) =>
                {
                    self.numbered(&name, ("/private/", ".html"), spec.private_pages)
                }
                _ => None,
            };
            if let Some(t) = t {
                return t;
            }
        }
    }

    /// A target for a page nobody fetches (trap links): anything of the site.
    fn trap_target(&mut self) -> Loc {
        let h = self.rng.below(self.plans.len());
        let plan = &self.plans[h];
        let hidden: Vec<usize> = plan
            .unreachable
            .iter()
            .chain(&plan.nofollow_only)
            .copied()
            .collect();
        match self.rng.pick(&hidden) {
            Some(&n) => Loc::page(&plan.name, n),
            None => self.normal_of(h),
        }
    }
}

impl Model {
    /// Generates the site described by `spec`.
    pub(crate) fn generate(spec: &SiteSpec) -> Model {
        let mut rng = SplitMix::new(spec.seed);
        let mut plans = Vec::with_capacity(spec.hosts);
        for name in spec.in_scope_host_names() {
            let p = spec.pages_per_host;
            let mut idx: Vec<usize> = (0..p).collect();
            rng.shuffle(&mut idx);
            let u = spec.unreachable_per_host.min(p.saturating_sub(1));
            let nf = spec
                .nofollow_only_per_host
                .min(p.saturating_sub(1).saturating_sub(u));
            let nofollow_only = idx.split_off(p - nf);
            let unreachable = idx.split_off(p - nf - u);
            plans.push(HostPlan {
                name,
                normal: idx,
                unreachable,
                nofollow_only,
            });
        }
        let mut b = Builder {
            spec,
            rng,
            plans,
            outside: spec.outside_host_names(),
            robots_host: spec.robots_host_name(),
            pages: BTreeMap::new(),
            docs: BTreeMap::new(),
        };
        b.build_in_scope();
        b.build_hidden();
        b.build_outside();
        b.finish_pages();
        Model {
            in_scope: b.plans.iter().map(|p| p.name.clone()).collect(),
            outside: b.outside,
            robots_host: b.robots_host,
            docs: b.docs,
        }
    }
}

impl Builder<'_> {
    fn build_in_scope(&mut self) {
        let spec = self.spec;
        let n_hosts = self.plans.len();
        for h in 0..n_hosts {
            let name = self.plans[h].name.clone();
            let home = Loc::home(&name);
            self.pages.entry(home.clone()).or_default();
            let normal = self.plans[h].normal.clone();
            // Home: chain head, a few normal pages, other homes.
            if let Some(&first) = normal.first() {
                self.add(&home, Loc::page(&name, first), false);
            }
            for _ in 0..normal.len().min(4) {
                let t = self.normal_of(h);
                self.add(&home, t, false);
            }
            if n_hosts > 1 {
                let next = Loc::home(&self.plans[(h + 1) % n_hosts].name);
                self.add(&home, next, false);
                let o = self.other_host(h);
                let other = Loc::home(&self.plans[o].name);
                self.add(&home, other, false);
            }
            // Normal pages: a chain through all of them, then random links.
            for (i, &n) in normal.iter().enumerate() {
                let from = Loc::page(&name, n);
                self.pages.entry(from.clone()).or_default();
                if let Some(&next) = normal.get(i + 1) {
                    self.add(&from, Loc::page(&name, next), false);
                }
                while self.pages.get(&from).map_or(0, |p| p.links.len()) < spec.links_per_page {
                    let t = self.random_target(h);
                    self.add(&from, t, false);
                }
            }
            // Every special path is linked at least once.
            let mut specials = Vec::new();
            for k in 0..spec.redirects_per_host {
                let o = if self.rng.percent(70) {
                    h
                } else {
                    self.other_host(h)
                };
                let target = self.normal_of(o);
                let loc = Loc::new(&name, format!("/redirect/{k}"));
                self.docs.insert(loc.clone(), Doc::Redirect(target));
                specials.push(loc);
            }
            for k in 0..spec.missing_per_host {
                let loc = Loc::new(&name, format!("/missing/{k}"));
                self.docs.insert(loc.clone(), Doc::Status(404));
                specials.push(loc);
            }
            for k in 0..spec.errors_per_host {
                let loc = Loc::new(&name, format!("/error/{k}"));
                self.docs.insert(loc.clone(), Doc::Status(500));
                specials.push(loc);
            }
            for k in 0..spec.files_per_host {
                let loc = Loc::new(&name, format!("/files/{k}.pdf"));
                self.docs.insert(loc.clone(), Doc::Pdf(k));
                specials.push(loc);
            }
            if self.robots_host.as_deref() == Some(name.as_str()) {
                self.docs
                    .insert(Loc::new(&name, "/robots.txt"), Doc::Robots);
                for k in 0..spec.private_pages {
                    let loc = Loc::new(&name, format!("/private/{k}.html"));
                    self.pages.entry(loc.clone()).or_default();
                    specials.push(loc);
                }
            }
            for loc in specials {
                let from = self.carrier_of(h);
                self.add(&from, loc, false);
            }
            // Nofollow-only pages: one or two nofollow links each.
            for n in self.plans[h].nofollow_only.clone() {
                for _ in 0..1 + self.rng.below(2) {
                    let from = self.carrier_of(h);
                    self.add(&from, Loc::page(&name, n), true);
                }
            }
            // A few nofollow links to ordinary pages (harmless).
            for _ in 0..2 {
                let from = self.carrier_of(h);
                let t = self.normal_of(h);
                self.add(&from, t, true);
            }
        }
    }

    /// Unreachable, nofollow-only and private pages: they link to hidden pages (traps).
    fn build_hidden(&mut self) {
        for h in 0..self.plans.len() {
            let name = self.plans[h].name.clone();
            let plan = &self.plans[h];
            let mut hidden: Vec<Loc> = plan
                .unreachable
                .iter()
                .chain(&plan.nofollow_only)
                .map(|&n| Loc::page(&name, n))
                .collect();
            if self.robots_host.as_deref() == Some(name.as_str()) {
                hidden.extend(
                    (0..self.spec.private_pages)
                        .map(|k| Loc::new(&name, format!("/private/{k}.html"))),
                );
            }
            for from in hidden {
                self.pages.entry(from.clone()).or_default();
                for _ in 0..3 {
                    let t = self.trap_target();
                    self.add(&from, t, false);
                }
                let t = self.normal_of(h);
                self.add(&from, t, false);
            }
        }
    }

    fn build_outside(&mut self) {
        for host in self.outside.clone() {
            let mut locs = vec![Loc::home(&host)];
            locs.extend((0..self.spec.outside_pages).map(|k| Loc::page(&host, k)));
            for from in &locs {
                self.pages.entry(from.clone()).or_default();
                if self.plans.is_empty() {
                    continue;
                }
                for _ in 0..3 {
                    let t = self.trap_target();
                    self.add(from, t, false);
                }
                if let Some(t) = self.outside_target() {
                    self.add(from, t, false);
                }
            }
        }
    }

    /// Titles, `<base href>`, `#top` links, duplicates; pages into docs.
    fn finish_pages(&mut self) {
        let in_scope: Vec<String> = self.plans.iter().map(|p| p.name.clone()).collect();
        let pages = std::mem::take(&mut self.pages);
        for (loc, mut page) in pages {
            page.title = match loc.path.as_str() {
                "/" => format!("Home of {}", loc.host),
                p => format!("{} {}", loc.host, p),
            };
            if loc.path != "/" && self.rng.percent(15) && !in_scope.is_empty() {
                let host = if self.rng.percent(50) {
                    loc.host.clone()
                } else {
                    in_scope[self.rng.below(in_scope.len())].clone()
                };
                let dir = if self.rng.percent(50) { "/" } else { "/p/" };
                page.base = Some(Loc::new(&host, dir));
            } else {
                page.self_fragment = self.rng.percent(20);
            }
            if !page.links.is_empty() && self.rng.percent(35) {
                let i = self.rng.below(page.links.len());
                let mut dup = page.links[i].clone();
                if self.rng.percent(50) {
                    dup.form = self.form();
                }
                page.links.push(dup);
            }
            self.rng.shuffle(&mut page.links);
            self.docs.insert(loc, Doc::Html(page));
        }
    }
}
