//! Parser throughput against a bare tokenizer pass over the same HTML.
//!
//! `cargo bench --bench parser` prints JSON: MiB per second of the parser bolt (link extraction, base
//! href, robots directives, URL resolution, normalization and filtering) and of lol_html visiting
//! every element with a no-op handler, over the same pages, the ratio (goal at least 0.8), and the
//! links found. Each run gives each of the two the same window of time
//! (`SQUALL_BENCH_PARSER_WINDOW`, 3 s; 0.2 s with `--quick`) to go round the pages as often as it
//! can (a pass over all 300 pages takes well under a tenth of a second); the runs alternate which
//! goes first (`SQUALL_BENCH_RUNS`, 5), and each figure is the median over the runs, with the
//! ratio of every run and their spread (max / min).

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{Spread, env_or, print_result, quick, runs};
use lol_html::{HtmlRewriter, Settings, element};
use squall::filter::{CanonicalUrlNormalizer, FilterChain, SchemeFilter};
use squall::message::{AckHandle, FetchOutcome, FetchedPage, FetchedResponse, Tuple};
use squall::model::{CrawlUrl, PartitionMode};
use squall::parse::{ParserBolt, ParserSettings};
use squall_bench_schema::Run;
use squall_bench_schema::stages::Parser;
use url::Url;

/// A realistic page: navigation, an article with inline links, a sidebar, scripts and a footer.
fn page(n: usize) -> String {
    let mut html = String::with_capacity(48 * 1024);
    html.push_str(&format!(
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>Article {n} &amp; more</title>\
         <link rel=stylesheet href=/css/site.css><link rel=canonical href=\"https://news.test/a/{n}\">\
         <script>window.dataLayer=[];function track(e){{dataLayer.push(e)}}</script></head><body>\
         <header><nav class=\"top\"><ul>"
    ));
    for i in 0..40 {
        html.push_str(&format!(
            "<li><a class=\"nav-link\" href=\"/section/{i}/\">Section {i}</a></li>"
        ));
    }
    html.push_str("</ul></nav></header><main><article>");
    for p in 0..60 {
        html.push_str(&format!(
            "<p>Paragraph {p} of article {n}: lorem ipsum dolor sit amet, consectetur adipiscing elit, \
             sed do <em>eiusmod</em> tempor incididunt ut <a href=\"../related/{n}-{p}.html?ref=art&amp;x={p}\">labore</a> \
             et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud <strong>exercitation</strong> ullamco.</p>"
        ));
    }
    html.push_str("</article><aside><h2>Most read</h2><ol>");
    for i in 0..30 {
        html.push_str(&format!(
            "<li><a href=\"https://other{}.test/story/{i}\" rel=\"{}\">Story {i}</a></li>",
            i % 7,
            if i % 5 == 0 { "nofollow" } else { "noopener" }
        ));
    }
    html.push_str("</ol></aside></main><footer><div class=links>");
    for i in 0..20 {
        html.push_str(&format!("<a href=\"/about/{i}#top\">About {i}</a> | "));
    }
    html.push_str("</div><script src=/js/app.js></script></footer></body></html>");
    html
}

fn tokenizer_pass(pages: &[Bytes]) -> usize {
    let mut elements = 0usize;
    for body in pages {
        let settings = Settings::new().append_element_content_handler(element!("*", |_el| {
            elements += 1;
            Ok(())
        }));
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        let _ = rewriter.write(body).and_then(|()| rewriter.end());
    }
    elements
}

fn parser_pass(parser: &ParserBolt, pages: &[Bytes], base: &Url) -> usize {
    let (ack_tx, _ack_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut links = 0;
    for body in pages {
        let url = CrawlUrl::seed(base.clone());
        let tuple = Tuple {
            ack: AckHandle::new(url.clone(), ack_tx.clone()),
            url,
            key: "news.test".to_string(),
            hints: Default::default(),
        };
        let page = FetchedPage {
            tuple,
            record: None,
            outcome: FetchOutcome::Response(Box::new(FetchedResponse {
                status_code: 200,
                content_type: Some("text/html; charset=utf-8".to_string()),
                location: None,
                robots_tag: Vec::new(),
                etag: None,
                last_modified: None,
                retry_after: None,
                final_url: None,
                body: body.clone(),
                truncated: false,
            })),
            sitemaps: Vec::new(),
            queue: Default::default(),
        };
        let update = parser.process(page);
        links += update.outlinks.len();
        update.ack.ack();
    }
    links
}

/// Runs `pass` (one pass over the pages, returning what it counted) again and again until `window`
/// has passed; MiB per second over the passes made (each of `mib`), and the last pass's count.
fn for_window(window: Duration, mib: f64, mut pass: impl FnMut() -> usize) -> (f64, usize) {
    let started = Instant::now();
    let mut passes = 0usize;
    let mut counted = 0;
    while passes == 0 || started.elapsed() < window {
        counted = black_box(pass());
        passes += 1;
    }
    (
        passes as f64 * mib / started.elapsed().as_secs_f64(),
        counted,
    )
}

fn main() {
    let count = if quick() { 20 } else { 300 };
    let pages: Vec<Bytes> = (0..count).map(|n| Bytes::from(page(n))).collect();
    let bytes: usize = pages.iter().map(Bytes::len).sum();
    let mib = bytes as f64 / (1024.0 * 1024.0);
    let base = match Url::parse("https://news.test/a/1/index.html") {
        Ok(url) => url,
        Err(e) => panic!("{e}"),
    };
    let filters = FilterChain::new()
        .with(CanonicalUrlNormalizer::new())
        .with(SchemeFilter::new(["http", "https"]));
    let parser = ParserBolt::new(
        ParserSettings {
            max_outlinks: None,
            partition_mode: PartitionMode::ByHost,
            sitemaps: false,
            ..ParserSettings::default()
        },
        filters,
        Vec::new(),
    );

    // Warm up, then alternate which goes first.
    black_box(tokenizer_pass(&pages[..pages.len().min(10)]));
    black_box(parser_pass(&parser, &pages[..pages.len().min(10)], &base));
    let window = Duration::from_secs_f64(env_or("PARSER_WINDOW", if quick() { 0.2 } else { 3.0 }));
    let tokenizer = || for_window(window, mib, || tokenizer_pass(&pages));
    let ours_pass = || for_window(window, mib, || parser_pass(&parser, &pages, &base));
    let mut baseline = Vec::new();
    let mut ours = Vec::new();
    let (mut elements, mut links) = (0, 0);
    for run in 0..runs() {
        let (b, o) = if run % 2 == 0 {
            let b = tokenizer();
            (b, ours_pass())
        } else {
            let o = ours_pass();
            (tokenizer(), o)
        };
        (elements, links) = (b.1, o.1);
        baseline.push(b.0);
        ours.push(o.0);
    }
    let ratios: Vec<f64> = ours.iter().zip(&baseline).map(|(o, b)| o / b).collect();
    print_result(&Parser {
        run: Run::named("parser"),
        pages: Some(pages.len() as u64),
        mib: Some(mib),
        window_seconds: Some(window.as_secs_f64()),
        runs: Some(ours.len() as u64),
        order: Some("alternating, tokenizer first in even runs".to_string()),
        spread_tokenizer: Some(Spread::max_over_min(&baseline)),
        spread_parser: Some(Spread::max_over_min(&ours)),
        ratio_spread: Some(Spread::max_over_min(&ratios)),
        tokenizer_mib_per_second: Some(Spread::of(&baseline)),
        parser_mib_per_second: Some(Spread::of(&ours)),
        ratio_parser_to_tokenizer: Some(Spread::of(&ours).median / Spread::of(&baseline).median),
        elements_seen_by_tokenizer: Some(elements as u64),
        outlinks_found_by_parser: Some(links as u64),
        tokenizer_runs: baseline,
        parser_runs: ours,
        ratio_runs: ratios,
    });
}
