//! The parameters of an app site.

use std::time::Duration;

/// Parameters of an [`AppSite`](super::AppSite). The same spec always
/// produces the same hosts, posts, titles and texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppSpec {
    /// Number of hosts, named `app-00.test`, `app-01.test`, ...
    pub hosts: usize,
    /// Number of posts per host, with ids `0..posts_per_host`.
    pub posts_per_host: usize,
    /// Posts per page of `/api/posts` (0 counts as 1).
    pub page_size: usize,
    /// Delay before every `/api/` answer, to simulate a slow backend.
    pub api_delay: Duration,
}

impl Default for AppSpec {
    /// 3 hosts of 25 posts, 10 posts a page (so 3 pages: a browser clicks
    /// "More" twice to see them all), no API delay.
    fn default() -> Self {
        AppSpec {
            hosts: 3,
            posts_per_host: 25,
            page_size: 10,
            api_delay: Duration::ZERO,
        }
    }
}

impl AppSpec {
    /// A small app for quick tests: 2 hosts of 5 posts, 2 posts a page (3
    /// pages: pages of 2, 2 and 1 posts).
    pub fn small() -> AppSpec {
        AppSpec {
            hosts: 2,
            posts_per_host: 5,
            page_size: 2,
            api_delay: Duration::ZERO,
        }
    }

    /// Every host name, `app-00.test`, `app-01.test`, ...
    pub fn host_names(&self) -> Vec<String> {
        (0..self.hosts)
            .map(|i| format!("app-{i:02}.test"))
            .collect()
    }

    /// Posts per page, at least 1.
    pub fn effective_page_size(&self) -> usize {
        self.page_size.max(1)
    }

    /// Number of pages of `/api/posts` per host: at least 1 (an empty
    /// page 0 when there are no posts).
    pub fn pages(&self) -> usize {
        self.posts_per_host
            .div_ceil(self.effective_page_size())
            .max(1)
    }

    /// The ids of the posts on page `page` of `/api/posts` (empty past the
    /// last page).
    pub fn page_ids(&self, page: usize) -> std::ops::Range<usize> {
        let size = self.effective_page_size();
        let start = page.saturating_mul(size).min(self.posts_per_host);
        let end = start.saturating_add(size).min(self.posts_per_host);
        start..end
    }
}
