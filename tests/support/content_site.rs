//! A small site on loopback whose pages say how they are to be indexed: meta description and
//! keywords, meta robots and `X-Robots-Tag` noindex, canonical URLs on the same domain and on
//! another, text that is not HTML, and a second host of the same domain. Shared by the content
//! indexer's tests (JSON-lines file and content index).
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::net::SocketAddr;

use axum::Router;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use squall::topology::CrawlerBuilder;

use super::http::{html, serve};

/// The host names the site answers for (all on one loopback address).
pub const HOSTS: [&str; 3] = ["www.site.test", "blog.site.test", "elsewhere.test"];

/// The running site.
pub struct ContentSite {
    addr: SocketAddr,
}

impl ContentSite {
    /// Serves the site on a fresh loopback port.
    pub async fn start() -> Self {
        let app = Router::new()
            .route("/", get(home))
            .route(
                "/a",
                get(|| async { html(page("A", "Page A says hello.", "")) }),
            )
            .route(
                "/b",
                get(|| async { html(page("B", "Page B, linked from a noindex page.", "")) }),
            )
            .route(
                "/noindex",
                get(|| async {
                    html(page(
                        "Hidden",
                        "<meta name=\"robots\" content=\"noindex\"> <a href=\"/b\">b</a>",
                        "",
                    ))
                }),
            )
            .route("/header-noindex", get(header_noindex))
            .route(
                "/canonical",
                get(|| async {
                    html(page(
                        "Session copy",
                        "The canonical page.",
                        "<link rel=\"canonical\" href=\"/canonical-target\">",
                    ))
                }),
            )
            .route(
                "/offsite-canonical",
                get(|| async {
                    html(page(
                        "Syndicated",
                        "Its canonical URL is elsewhere.",
                        "<link rel=\"canonical\" href=\"http://elsewhere.test/original\">",
                    ))
                }),
            )
            .route(
                "/notes.txt",
                get(|| async {
                    ([(header::CONTENT_TYPE, "text/plain")], "plain notes").into_response()
                }),
            );
        ContentSite {
            addr: serve(app).await,
        }
    }

    /// A URL of the site.
    pub fn url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.addr.port())
    }

    /// The seed: the home page of `www.site.test`.
    pub fn seeds(&self) -> Vec<String> {
        vec![self.url("www.site.test", "/")]
    }

    /// `builder` resolving every host of the site to its loopback address.
    pub fn resolve(&self, mut builder: CrawlerBuilder) -> CrawlerBuilder {
        for host in HOSTS {
            builder = builder.resolve(host, self.addr);
        }
        builder
    }

    /// The crawl binary's `--resolve` arguments for every host of the site.
    pub fn resolve_args(&self) -> Vec<String> {
        HOSTS
            .iter()
            .flat_map(|host| {
                [
                    "--resolve".to_string(),
                    format!("{host}:{}", self.addr.ip()),
                ]
            })
            .collect()
    }

    /// The URLs the content index must hold, as indexed (canonical URLs applied).
    pub fn indexed_urls(&self) -> BTreeSet<String> {
        let www = |path| self.url("www.site.test", path);
        BTreeSet::from([
            www("/"),
            www("/a"),
            www("/b"),
            // /canonical?session=1 names /canonical-target as its canonical URL.
            www("/canonical-target"),
            // Its canonical URL is on another domain: ignored.
            www("/offsite-canonical"),
            self.url("blog.site.test", "/"),
        ])
    }

    /// URLs fetched and FETCHED that must not be in the content index.
    pub fn not_indexed_urls(&self) -> Vec<String> {
        ["/noindex", "/header-noindex", "/notes.txt"]
            .iter()
            .map(|path| self.url("www.site.test", path))
            .collect()
    }

    /// Every URL the crawl fetches with a 200.
    pub fn fetched_urls(&self) -> BTreeSet<String> {
        let mut urls: BTreeSet<String> = self.not_indexed_urls().into_iter().collect();
        for path in [
            "/",
            "/a",
            "/b",
            "/canonical?session=1",
            "/offsite-canonical",
        ] {
            urls.insert(self.url("www.site.test", path));
        }
        urls.insert(self.url("blog.site.test", "/"));
        urls
    }
}

/// An HTML page with `title`, `body` and `head` markup.
fn page(title: &str, body: &str, head: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><title>{title}</title>{head}</head><body>{body}</body></html>"
    )
}

/// The home page of `www.site.test` (with its meta tags and links), or of `blog.site.test`.
async fn home(headers: HeaderMap) -> Response {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if host.starts_with("blog.") {
        return html(page("Blog", "The blog of the site.", ""));
    }
    if host.starts_with("elsewhere.") {
        return (axum::http::StatusCode::NOT_FOUND, "not here").into_response();
    }
    let port = host.rsplit(':').next().unwrap_or_default();
    let links = [
        "/a",
        "/noindex",
        "/header-noindex",
        "/canonical?session=1",
        "/offsite-canonical",
        "/notes.txt",
    ]
    .iter()
    .map(|path| format!("<a href=\"{path}\">{path}</a>"))
    .collect::<String>();
    let body = format!("Welcome home. {links} <a href=\"http://blog.site.test:{port}/\">blog</a>");
    let head = "<meta name=\"description\" content=\"The home page\">\
                <meta name=\"Keywords\" content=\"alpha, beta\">";
    html(page("Home", &body, head))
}

/// A page whose `X-Robots-Tag` header asks not to be indexed.
async fn header_noindex() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html"),
            (header::HeaderName::from_static("x-robots-tag"), "noindex"),
        ],
        page("Header", "Hidden by its header.", ""),
    )
        .into_response()
}
