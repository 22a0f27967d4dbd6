//! What a rendering crawl of an app site finds.

use std::collections::{BTreeMap, BTreeSet};

use super::AppSpec;
use super::posts;
use crate::RequestRecord;

/// What a crawler that renders pages (runs their scripts, clicks "More"
/// until it is gone) finds when started from [`AppSite::seeds`](super::AppSite::seeds).
///
/// URLs are absolute: `http://app-01.test:PORT/post/7`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppExpectation {
    homes: Vec<String>,
    first_page: BTreeSet<String>,
    titles: BTreeMap<String, String>,
    texts: BTreeMap<String, String>,
    clicks: usize,
}

impl AppExpectation {
    /// The expectation for `spec` served on `port`.
    pub(crate) fn compute(spec: &AppSpec, port: u16) -> AppExpectation {
        let mut homes = Vec::new();
        let mut first_page = BTreeSet::new();
        let mut titles = BTreeMap::new();
        let mut texts = BTreeMap::new();
        for host in spec.host_names() {
            homes.push(crate::url_for(&host, port, "/"));
            for id in 0..spec.posts_per_host {
                let url = crate::url_for(&host, port, &format!("/post/{id}"));
                if spec.page_ids(0).contains(&id) {
                    first_page.insert(url.clone());
                }
                titles.insert(url.clone(), posts::title(&host, id));
                texts.insert(url, posts::text(&host, id));
            }
        }
        AppExpectation {
            homes,
            first_page,
            titles,
            texts,
            clicks: spec.pages() - 1,
        }
    }

    /// The home page `/` of every host: the seeds, and the target of every
    /// post page's rendered "home" link.
    pub fn homes(&self) -> &[String] {
        &self.homes
    }

    /// Every post URL `/post/ID` of every host: the links "More" reveals,
    /// page after page.
    pub fn post_urls(&self) -> BTreeSet<String> {
        self.texts.keys().cloned().collect()
    }

    /// The post URLs linked after the first page only: what a crawler that
    /// renders `/` without clicking "More" finds.
    pub fn first_page_post_urls(&self) -> &BTreeSet<String> {
        &self.first_page
    }

    /// Every document URL a full rendering crawl fetches: the homes and
    /// every post (`/scroll`, `/go/ID` and `/never-settles` are linked
    /// from nowhere).
    pub fn documents(&self) -> BTreeSet<String> {
        self.homes
            .iter()
            .chain(self.texts.keys())
            .cloned()
            .collect()
    }

    /// Post URL → the text its rendered `<p class="post-text">` holds.
    pub fn post_texts(&self) -> &BTreeMap<String, String> {
        &self.texts
    }

    /// Post URL → the title its rendered `<h1>` (and its link on `/`)
    /// holds.
    pub fn post_titles(&self) -> &BTreeMap<String, String> {
        &self.titles
    }

    /// Clicks on "More" needed on `/` to show every post of a host (the
    /// number of pages minus one); after that many the button is gone.
    pub fn clicks_to_show_all(&self) -> usize {
        self.clicks
    }
}

/// Whether `path` (query allowed) is a document of an app site: `/`,
/// `/scroll`, `/post/*`, `/go/*` or `/never-settles`; not `/api/`,
/// `/static/` or `/robots.txt`.
pub fn is_navigation(path: &str) -> bool {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    matches!(path, "/" | "/scroll" | "/never-settles")
        || path.starts_with("/post/")
        || path.starts_with("/go/")
}

/// The document requests of `requests` (see [`is_navigation`]), in order:
/// for politeness checks that count navigations, not the API calls and
/// static resources their scripts make.
pub fn navigations(requests: &[RequestRecord]) -> Vec<RequestRecord> {
    requests
        .iter()
        .filter(|r| is_navigation(&r.path))
        .cloned()
        .collect()
}
