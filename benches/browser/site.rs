//! The JavaScript test application for the browser benchmark, served by a runtime of its own whose
//! threads are named [`SITE_THREADS`], so that the CPU the site uses can be told apart from the
//! driver's.

use std::net::SocketAddr;
use std::sync::Arc;

use squall_testsite::app::{AppSite, AppSpec};
use url::Url;

/// The name of the site's threads.
pub const SITE_THREADS: &str = "bench-site";

/// A post page and the text its script renders into it.
pub struct Post {
    /// `http://app-NN.test:PORT/post/ID`.
    pub url: Url,
    /// The text the rendered page holds (fetched by its script from `/api/post/ID`).
    pub text: String,
}

/// The app site on its own runtime.
pub struct BenchSite {
    runtime: tokio::runtime::Runtime,
    site: AppSite,
    /// Every post page, the hosts taking turns (post 0 of every host, then post 1, ...).
    pub posts: Arc<Vec<Post>>,
}

impl BenchSite {
    /// Serves `spec` on loopback with two threads of its own.
    pub async fn start(spec: AppSpec) -> BenchSite {
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(SITE_THREADS)
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => panic!("the site's runtime: {e}"),
        };
        let site = match runtime.spawn(AppSite::start(spec.clone())).await {
            Ok(Ok(site)) => site,
            Ok(Err(e)) => panic!("site: {e}"),
            Err(e) => panic!("site: {e}"),
        };
        let texts = site.expected().post_texts().clone();
        let mut posts = Vec::new();
        for id in 0..spec.posts_per_host {
            for host in site.host_names() {
                let url = site.url(&host, &format!("/post/{id}"));
                let Some(text) = texts.get(&url).cloned() else {
                    panic!("the site expects no text for {url}");
                };
                match Url::parse(&url) {
                    Ok(url) => posts.push(Post { url, text }),
                    Err(e) => panic!("{url}: {e}"),
                }
            }
        }
        BenchSite {
            runtime,
            site,
            posts: Arc::new(posts),
        }
    }

    /// Every host name, all served at [`BenchSite::addr`].
    pub fn host_names(&self) -> Vec<String> {
        self.site.host_names()
    }

    /// The loopback address the site listens on.
    pub fn addr(&self) -> SocketAddr {
        self.site.addr()
    }

    /// Forgets the requests logged so far (the log would otherwise grow for the whole benchmark).
    pub fn clear_requests(&self) {
        self.site.clear_requests();
    }

    /// Stops the server and its runtime.
    pub async fn stop(self) {
        let _ = self.runtime.spawn(self.site.shutdown()).await;
        self.runtime.shutdown_background();
    }
}
