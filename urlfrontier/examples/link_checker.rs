//! A stateless link-checking worker over any URLFrontier server; run as many as you like.
//!
//! Each round it gets due links (GetURLs), checks a few at a time (HEAD, or GET when HEAD fails or
//! answers 405/501) and puts them back as known, due again in `--recheck-hours`. All it knows of a
//! link is in the link's metadata: `linkcheck.checks`, `linkcheck.status` (HTTP status or error),
//! `linkcheck.failures` (consecutive), `linkcheck.first.failure` (epoch seconds) and
//! `linkcheck.broken` (once the failures number `--failures` and span `--min-days`). A worker that
//! dies loses nothing: the links it held are handed out again after `--delay-requestable` seconds.
//!
//! Run: `cargo run -p squall-urlfrontier --example link_checker -- --frontier 127.0.0.1:7071`

use std::fs::OpenOptions;
use std::io::Write;
use std::time::{Duration, Instant};

use clap::Parser;
use futures::{StreamExt, TryStreamExt};
use squall_urlfrontier::proto::ack_message::Status as Ack;
use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::proto::{self, AckMessage, GetParams, StringList, UrlInfo, UrlItem};

/// Check links handed out by a URLFrontier server; put them back with what was found.
#[derive(Debug, Parser)]
struct Args {
    /// The URLFrontier server (`host:port` or `http://host:port`).
    #[arg(long)]
    frontier: String,
    /// The crawl whose links are checked.
    #[arg(long, default_value = "DEFAULT")]
    crawl: String,
    /// Hours until a link is checked again.
    #[arg(long, default_value_t = 24.0)]
    recheck_hours: f64,
    /// Consecutive failures before a link is reported broken.
    #[arg(long, default_value_t = 3)]
    failures: u64,
    /// Days the failures must span before a link is reported broken.
    #[arg(long, default_value_t = 2.0)]
    min_days: f64,
    /// Links asked for per queue (host) in one round, from at most 4 queues.
    #[arg(long, default_value_t = 10)]
    batch: u32,
    /// Seconds the links handed out stay this worker's before they go to another.
    #[arg(long, default_value_t = 120)]
    delay_requestable: u32,
    /// Exit once nothing came and the crawl is idle: as a squall server says, or for any other
    /// server, nothing came for 3 s and no link is in process.
    #[arg(long)]
    until_idle: bool,
    /// Append one JSON line per checked link to this file.
    #[arg(long)]
    report: Option<std::path::PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let address = format!("http://{}", args.frontier.trim_start_matches("http://"));
    let mut frontier = UrlFrontierClient::connect(address).await?;
    let http = reqwest::Client::builder()
        .user_agent(format!("squall-link-checker/{}", std::process::id()))
        .timeout(Duration::from_secs(20))
        .build()?;
    let ask = GetParams {
        max_urls_per_queue: args.batch,
        max_queues: 4,
        delay_requestable: args.delay_requestable,
        item: Some(proto::get_params::Item::CrawlId(args.crawl.clone())),
        ..GetParams::default()
    };
    let stats = proto::QueueWithinCrawlParams {
        crawl_id: args.crawl.clone(),
        ..Default::default()
    };
    let mut last_work = Instant::now();
    loop {
        let got = frontier.get_ur_ls(ask.clone()).await?.into_inner();
        let links: Vec<UrlInfo> = got.try_collect().await?;
        if links.is_empty() {
            // Idle: a squall server says so; any other once its answers stayed empty for the
            // reference service's politeness gate and nobody holds a link (`inProcess`).
            if args.until_idle {
                let stats = frontier.get_stats(stats.clone()).await?.into_inner();
                let settled = last_work.elapsed() >= squall_urlfrontier::client::IDLE_SETTLE;
                let idle = match stats.counts.get("squall.idle") {
                    Some(idle) => *idle == 1,
                    None => settled && stats.in_process == 0,
                };
                if idle {
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
            continue;
        }
        let checking = futures::stream::iter(links).map(|link| check(&args, &http, link));
        let (items, lines): (Vec<_>, Vec<_>) = checking.buffer_unordered(4).unzip().await;
        let acks = frontier.put_ur_ls(futures::stream::iter(items)).await?;
        let acks: Vec<AckMessage> = acks.into_inner().try_collect().await?;
        for ack in acks.iter().filter(|ack| ack.status != Ack::Ok as i32) {
            eprintln!("not stored, left to lapse and be checked again: {}", ack.id);
        }
        if let Some(path) = &args.report {
            let mut file = OpenOptions::new().create(true).append(true).open(path)?;
            file.write_all(lines.concat().as_bytes())?;
        }
        last_work = Instant::now();
    }
}

/// Checks a link (its status: the HTTP status code or the error; fine on a 2xx). Returns it to put
/// back as known, due again after the re-check delay, its metadata updated; and its report line.
async fn check(args: &Args, http: &reqwest::Client, mut link: UrlInfo) -> (UrlItem, String) {
    let response = match http.head(&link.url).send().await {
        Ok(head) if !matches!(head.status().as_u16(), 405 | 501) => Ok(head),
        _ => http.get(&link.url).send().await,
    };
    let (status, ok) = match response.map(|response| response.status()) {
        Ok(code) => (code.as_u16().to_string(), code.is_success()),
        Err(e) => (format!("error: {:#}", anyhow::Error::new(e)), false),
    };
    let now = u64::try_from(chrono::Utc::now().timestamp()).unwrap_or(0);
    let meta = &mut link.metadata;
    let read = |key: &str| meta.get(key)?.values.first()?.parse::<u64>().ok();
    let checks = read("linkcheck.checks").unwrap_or(0) + 1;
    let previous = read("linkcheck.failures").unwrap_or(0);
    let failures = if ok { 0 } else { previous + 1 };
    let first = read("linkcheck.first.failure");
    let since = first.filter(|_| failures > 1).unwrap_or(now);
    let days = now.saturating_sub(since) as f64 / 86_400.0;
    let broken = failures >= args.failures && days >= args.min_days;
    meta.remove("linkcheck.first.failure");
    let first = (failures > 0).then(|| ("linkcheck.first.failure", since.to_string()));
    let squall_status = if ok { "FETCHED" } else { "FETCH_ERROR" };
    let values = [
        ("linkcheck.checks", checks.to_string()),
        ("linkcheck.status", status.clone()),
        ("linkcheck.failures", failures.to_string()),
        ("linkcheck.broken", broken.to_string()),
        ("squall.status", squall_status.to_string()),
    ];
    for (key, value) in values.into_iter().chain(first) {
        let values = vec![value];
        meta.insert(key.to_string(), StringList { values });
    }
    let line = serde_json::json!({"url": link.url, "ok": ok, "status": status, "checks": checks,
        "failures": failures, "broken": broken});
    let known = proto::KnownUrlItem {
        info: Some(link),
        refetchable_from_date: now.saturating_add((args.recheck_hours * 3600.0).ceil() as u64),
    };
    let item = UrlItem {
        creation_date: 0,
        id: String::new(),
        item: Some(proto::url_item::Item::Known(known)),
    };
    (item, format!("{line}\n"))
}
