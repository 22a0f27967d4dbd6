//! A crawler built in code with the library API, with a URL filter and a parse filter of its own.
//!
//! It serves the generated demo site on loopback and crawls it, so it runs anywhere:
//!
//! ```text
//! cargo run --example custom_crawler
//! ```
//!
//! The URL filter keeps the crawl away from PDF files; the parse filter stores each page's title and
//! word count with its status (they are listed in `metadata.persist`).

use std::path::Path;
use std::sync::Arc;

use squall::config::ConfigBuilder;
use squall::filter::UrlFilter;
use squall::frontier::{EmbeddedFrontier, QueryLimits};
use squall::message::CrawlStats;
use squall::model::{CrawlUrl, Metadata};
use squall::parse::{ParseFilter, ParseResult};
use squall::topology::{CrawlerBuilder, RunLimits};
use squall_testsite::{Site, SiteSpec};
use url::Url;

/// Drops links to PDF files.
struct NoPdf;

impl UrlFilter for NoPdf {
    fn filter(&self, _source: Option<&CrawlUrl>, url: Url, _metadata: &Metadata) -> Option<Url> {
        (!url.path().ends_with(".pdf")).then_some(url)
    }
}

/// Records the page title and a rough word count.
struct TitleAndWords;

impl ParseFilter for TitleAndWords {
    fn filter(&self, _url: &Url, body: &[u8], parse: &mut ParseResult) {
        if let Some(title) = &parse.title {
            parse.metadata.set("page.title", title.clone());
        }
        let words = String::from_utf8_lossy(body).split_whitespace().count();
        parse.metadata.set("page.words", words.to_string());
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let site = Site::start(SiteSpec::small()).await?;

    let config = ConfigBuilder::new()
        .set("http.agent.name=custom-crawler-example")?
        .set("fetcher.server.delay=0.1")?
        .set("spout.min.delay.queries=200")?
        .set("urlfilter.ignore.outside.host=true")?
        .set("metadata.persist=[\"page.*\", _redirTo, error.cause]")?
        .build()?;

    let dir = std::env::temp_dir().join(format!("squall-custom-crawler-{}", std::process::id()));
    let frontier = EmbeddedFrontier::open(Path::new(&dir))?;
    let stats = Arc::new(CrawlStats::default());
    let mut builder = CrawlerBuilder::new(config)
        .frontier(frontier.spout(QueryLimits::default()), frontier.clone())
        .url_filter(NoPdf)
        .parse_filter(TitleAndWords)
        .observer(stats.clone());
    for host in site.host_names() {
        builder = builder.resolve(host, site.addr());
    }
    let crawler = builder.build()?;
    let seeds = site.seeds();
    crawler.inject(seeds.iter().map(String::as_str)).await;

    let summary = crawler.run(RunLimits::until_idle()).await;
    println!("{summary}");

    let home = &seeds[0];
    if let Some(stored) = frontier.lookup(home)? {
        println!(
            "{home}: {} titled {:?}, {} words",
            stored.status,
            stored.metadata.first("page.title").unwrap_or("?"),
            stored.metadata.first("page.words").unwrap_or("?"),
        );
    }
    site.shutdown().await;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
