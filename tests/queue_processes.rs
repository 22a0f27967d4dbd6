//! Three crawl processes (the example binary, as separate OS processes) share one queue frontier in
//! the real node and crawl six hosts of the generated site at a 0.1 s politeness delay: once with
//! faults (one process killed with SIGKILL, one stopped with SIGSTOP for longer than its lease TTL
//! and then continued) and once without.
//!
//! Every check is a correctness property, read from the processes' fetch logs and cross-checked
//! against the site's own request log (each process has its own User-Agent): no host fetched by
//! two processes at once or closer than the delay, no URL lost, duplicates only for URLs a faulty
//! process fetched before its signal, every surviving process ending by itself on a frontier-wide
//! idle after the last fetch of any process, the killed process's log intact. There is no timed
//! performance assertion: the deadlines only keep a broken crawl from hanging the suite.
//!
//! A process logs a fetch as soon as the attempt completes, before parsing and the status write, so
//! a SIGKILL leaves out of the killed process's log only requests still in flight. As a fallback
//! (a log line lost some other way), a URL in no log counts as fetched when the site got it from
//! the killed process and the urls index holds its new status.
//! When a check fails, the message names each violation with the fetch-log lines involved, ends
//! with the queues and workers documents as the crawl left them, and the fetch logs and the
//! processes' output are kept in a directory it names.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use elasticsearch::{MgetParts, SearchParts};
use serde_json::Value;
use squall_testsite::{RequestRecord, Site, SiteSpec};

use crate::support;
use support::binary::{queue_frontier_args, set_args, site_args};
use support::crawl_process::CrawlProcess as Crawler;
use support::fetch_log::{Fetch, by_host, politeness_problem, read_log};
use support::opensearch;

/// Crawl processes sharing the frontier.
const PROCESSES: usize = 3;
/// The politeness delay (`fetcher.server.delay`).
const DELAY: Duration = Duration::from_millis(100);
/// The processes' lease TTL (`--lease-ttl`).
const LEASE_TTL: Duration = Duration::from_secs(4);
/// The processes' longest hold while other queues wait (`--max-hold`).
const MAX_HOLD: Duration = Duration::from_secs(5);
/// How long the stopped process stays stopped: well past its lease TTL.
const PAUSE: Duration = Duration::from_secs(8);
/// Deadline of the whole crawl (also each process's `--max-duration`): only against hangs.
const DEADLINE: Duration = Duration::from_secs(300);

/// The two cases start three crawlers each: one at a time, so that they do not compete.
static ONE_CRAWL_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The site: six hosts, each with enough pages that a host alone takes well over ten seconds at
/// the delay.
fn site_spec() -> SiteSpec {
    SiteSpec {
        hosts: 6,
        pages_per_host: 120,
        ..SiteSpec::default()
    }
}

/// The User-Agent product name of process `p`.
fn agent(p: usize) -> String {
    format!("squall-proc-{p}")
}

/// Starts crawl process `index` on the two indices, its files in `dir`.
fn start_crawler(index: usize, dir: &Path, urls: &str, queues: &str, site: &Site) -> Crawler {
    let secs = |d: Duration| d.as_secs_f64().to_string();
    let mut args = queue_frontier_args(
        &opensearch::base_url(),
        urls,
        queues,
        (2, 0),
        &format!("proc-{index}"),
    );
    args.extend(
        [
            "--lease-ttl",
            &secs(LEASE_TTL),
            "--max-hold",
            &secs(MAX_HOLD),
            "--until-idle",
            "--max-duration",
            &secs(DEADLINE),
        ]
        .map(str::to_string),
    );
    args.extend(set_args(&[
        &format!("http.agent.name={}", agent(index)),
        &format!("fetcher.server.delay={}", secs(DELAY)),
        "spout.min.delay.queries=200",
        &SiteSpec::exclude_outside_hosts(),
    ]));
    args.extend(site_args(site));
    Crawler::start(index, dir, &args, &[])
}

/// The fault injected into a process, and when.
#[derive(Debug, Clone, Copy)]
struct Faults {
    killed: usize,
    killed_at: DateTime<Utc>,
    paused: usize,
    /// The process was running until at least `stop_before`, stopped from `stop_after` (SIGSTOP
    /// delivered), and stopped until at least `cont_before` (SIGCONT not yet sent).
    stop_before: DateTime<Utc>,
    stop_after: DateTime<Utc>,
    stop_after_instant: Instant,
    cont_before: DateTime<Utc>,
}

/// What a crawl left behind, for the checks.
struct Outcome {
    fetches: Vec<Fetch>,
    /// Violations found while reading the logs (malformed lines).
    log_problems: Vec<String>,
    /// Per process: the fetches in its log.
    per_process: Vec<usize>,
    /// Per surviving process: stdout, exit success, and when it wrote its summary (its end).
    ends: BTreeMap<usize, (String, bool, Option<DateTime<Utc>>)>,
    requests: Vec<RequestRecord>,
    reachable: BTreeSet<String>,
    site_problems: Vec<String>,
    queues_state: String,
    /// The urls index's documents (`_source`, or null) of the reachable URLs in no fetch log.
    unlogged: BTreeMap<String, Value>,
    tails: String,
    /// The fetch logs and the processes' output, kept when a check fails.
    dir: Option<tempfile::TempDir>,
}

/// Runs three crawlers to the end, injecting faults when `faulty`; returns what the checks need.
/// The indices are deleted and the processes ended even when the crawl fails.
async fn crawl(faulty: bool) -> (Outcome, Option<Faults>) {
    use futures::FutureExt;
    let engine = opensearch::client().await;
    let site = Site::start(site_spec()).await.expect("site");
    let urls = opensearch::unique_index("procs-urls");
    let queues = opensearch::unique_index("procs-queues");
    let result = std::panic::AssertUnwindSafe(run(&engine, &site, &urls, &queues, faulty))
        .catch_unwind()
        .await;
    for index in [urls.clone(), queues.clone(), format!("{queues}-workers")] {
        opensearch::delete_index(&engine, &index).await;
    }
    site.shutdown().await;
    match result {
        Ok(outcome) => outcome,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

async fn run(
    engine: &elasticsearch::Elasticsearch,
    site: &Site,
    urls: &str,
    queues: &str,
    faulty: bool,
) -> (Outcome, Option<Faults>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut crawlers: Vec<Crawler> = (0..PROCESSES)
        .map(|p| start_crawler(p, dir.path(), urls, queues, site))
        .collect();
    let started = Instant::now();

    let faults = if faulty {
        Some(inject_faults(&mut crawlers, started).await)
    } else {
        None
    };
    let killed = faults.map(|f| f.killed);

    // The others end by themselves once the whole frontier is idle.
    let mut hung = Vec::new();
    for crawler in crawlers.iter_mut() {
        if Some(crawler.index) == killed {
            continue;
        }
        while crawler.running() {
            if started.elapsed() > DEADLINE + Duration::from_secs(30) {
                hung.push(crawler.index);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let queues_state = format!(
        "{}workers:\n{}",
        index_documents(engine, queues).await,
        index_documents(engine, &format!("{queues}-workers")).await
    );
    let tails: String = crawlers
        .iter()
        .map(Crawler::tail)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        hung.is_empty(),
        "processes {hung:?} did not end within {DEADLINE:?} (the crawl hung)\n{tails}\nqueues:\n{queues_state}"
    );

    let mut fetches = Vec::new();
    let mut log_problems = Vec::new();
    let mut per_process = Vec::new();
    let mut ends = BTreeMap::new();
    for crawler in crawlers.iter_mut() {
        let (entries, problems) = read_log(crawler.index, &crawler.log);
        per_process.push(entries.len());
        fetches.extend(entries);
        log_problems.extend(problems);
        if Some(crawler.index) == killed {
            continue;
        }
        let success = crawler.child.wait().map(|s| s.success()).unwrap_or(false);
        let stdout = std::fs::read_to_string(&crawler.stdout).unwrap_or_default();
        let end = std::fs::metadata(&crawler.summary)
            .and_then(|m| m.modified())
            .ok()
            .map(DateTime::<Utc>::from);
        ends.insert(crawler.index, (stdout, success, end));
    }
    let expected = site.expected();
    let requests = site.requests();
    let distinct: BTreeSet<&str> = fetches.iter().map(|f| f.url.as_str()).collect();
    let unlogged: Vec<String> = expected
        .reachable_in_scope_urls()
        .into_iter()
        .filter(|u| !distinct.contains(u.as_str()))
        .collect();
    let unlogged = url_documents(engine, urls, &unlogged).await;
    eprintln!(
        "crawl over after {:.1} s: fetches per process {per_process:?}, {} fetches of {} URLs, {} requests at the site",
        started.elapsed().as_secs_f64(),
        fetches.len(),
        distinct.len(),
        requests.len()
    );
    let outcome = Outcome {
        fetches,
        log_problems,
        per_process,
        ends,
        site_problems: expected.check_requests(&requests),
        reachable: expected.reachable_in_scope_urls(),
        requests,
        queues_state,
        unlogged,
        tails,
        dir: None,
    };
    drop(crawlers);
    (
        Outcome {
            dir: Some(dir),
            ..outcome
        },
        faults,
    )
}

/// Once the crawl is under way: SIGKILL process 0; then, once process 1 is seen fetching after
/// that, SIGSTOP it for [`PAUSE`] (past its lease TTL) and SIGCONT it.
async fn inject_faults(crawlers: &mut [Crawler], started: Instant) -> Faults {
    let (killed, paused) = (0, 1);
    let wait_for = |what: String| {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{what} within two minutes: the work is not shared"
        );
    };
    while crawlers[killed].fetched() < 10
        || crawlers.iter().map(Crawler::fetched).sum::<usize>() < 40
    {
        wait_for(format!(
            "process {killed} did not fetch 10 pages (logs: {:?})",
            crawlers.iter().map(Crawler::fetched).collect::<Vec<_>>()
        ));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    crawlers[killed].kill();
    let killed_at = Utc::now();
    let before = crawlers[paused].fetched();
    while crawlers[paused].fetched() < before + 5 {
        wait_for(format!(
            "process {paused} did not fetch 5 pages after the kill (it has {before})"
        ));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stop_before = Utc::now();
    crawlers[paused].signal("STOP");
    let stop_after = Utc::now();
    let stop_after_instant = Instant::now();
    tokio::time::sleep(PAUSE).await;
    let cont_before = Utc::now();
    crawlers[paused].signal("CONT");
    Faults {
        killed,
        killed_at,
        paused,
        stop_before,
        stop_after,
        stop_after_instant,
        cont_before,
    }
}

/// The documents of a small index (the queues, the workers) as the crawl left it, for failure
/// messages.
async fn index_documents(engine: &elasticsearch::Elasticsearch, index: &str) -> String {
    let answer = engine
        .search(SearchParts::Index(&[index]))
        .size(100)
        .send()
        .await;
    let Ok(answer) = answer else {
        return format!("({index} could not be read)");
    };
    let body: Value = answer.json().await.unwrap_or_default();
    let mut state = String::new();
    for hit in body["hits"]["hits"].as_array().into_iter().flatten() {
        let _ = writeln!(state, "{}", hit["_source"]);
    }
    state
}

/// The urls index's documents (`_source`, null when missing) of `urls`.
async fn url_documents(
    engine: &elasticsearch::Elasticsearch,
    index: &str,
    urls: &[String],
) -> BTreeMap<String, Value> {
    let mut documents = BTreeMap::new();
    if urls.is_empty() {
        return documents;
    }
    let ids: Vec<String> = urls
        .iter()
        .map(|u| squall_engine::status_index::schema::document_id(u))
        .collect();
    let answer = engine
        .mget(MgetParts::Index(index))
        .body(serde_json::json!({ "ids": ids }))
        .send()
        .await;
    let body: Value = match answer {
        Ok(answer) => answer.json().await.unwrap_or_default(),
        Err(_) => Value::Null,
    };
    let docs = body["docs"].as_array().cloned().unwrap_or_default();
    for (i, url) in urls.iter().enumerate() {
        let source = docs
            .get(i)
            .map(|d| d["_source"].clone())
            .unwrap_or_default();
        documents.insert(url.clone(), source);
    }
    documents
}

/// The interval a fetch kept its host busy, as far as this process's own clock shows. A fetch of
/// the stopped process that spans its stop ends, for the host, when the process stopped: the
/// request was answered while the process was frozen (checked against the site's log apart).
fn busy_interval(fetch: &Fetch, faults: Option<Faults>) -> (DateTime<Utc>, DateTime<Utc>) {
    match faults {
        Some(f)
            if fetch.process == f.paused
                && fetch.started < f.stop_after
                && fetch.finished > f.cont_before =>
        {
            (fetch.started, fetch.finished.min(f.stop_after))
        }
        _ => (fetch.started, fetch.finished),
    }
}

/// No host fetched by two processes at once, nor by two processes closer than the delay (end of
/// one fetch to start of the other), from the fetch logs.
fn check_politeness(fetches: &[Fetch], faults: Option<Faults>) -> Vec<String> {
    let delay = TimeDelta::from_std(DELAY).unwrap_or_default();
    // Log times are truncated to milliseconds.
    let slack = TimeDelta::milliseconds(1);
    let mut problems = Vec::new();
    for (host, list) in by_host(fetches) {
        for (i, a) in list.iter().enumerate() {
            let (a_start, a_end) = busy_interval(a, faults);
            for b in &list[i + 1..] {
                if b.process == a.process {
                    continue;
                }
                let (b_start, b_end) = busy_interval(b, faults);
                if b_start >= a_end + delay - slack || a_start >= b_end + delay - slack {
                    continue;
                }
                problems.push(politeness_problem(
                    host,
                    b_start < a_end && a_start < b_end,
                    a,
                    b,
                ));
            }
        }
    }
    problems
}

/// Whether an earlier fetch by `fetch`'s process may be repeated: the process was killed, or was
/// stopped after the fetch began.
fn may_be_repeated(fetch: &Fetch, faults: Option<Faults>) -> bool {
    faults.is_some_and(|f| {
        fetch.process == f.killed || (fetch.process == f.paused && fetch.started < f.stop_after)
    })
}

/// The processes (User-Agents) the site got `url` from.
fn requesters<'a>(outcome: &'a Outcome, url: &str) -> Vec<&'a str> {
    outcome
        .requests
        .iter()
        .filter(|r| r.url == url)
        .map(|r| r.user_agent.as_deref().unwrap_or("?"))
        .collect()
}

/// Whether `url`, in no fetch log, was fetched by the killed process and its status written. A
/// process logs each fetch as it completes, before its write, so this only covers a log line lost
/// some other way.
fn written_by_the_killed_process(outcome: &Outcome, url: &str, faults: Option<Faults>) -> bool {
    let Some(faults) = faults else {
        return false;
    };
    let killed_agent = format!("{}/", agent(faults.killed));
    let from_killed = requesters(outcome, url)
        .iter()
        .any(|ua| ua.starts_with(&killed_agent));
    let written = outcome
        .unlogged
        .get(url)
        .and_then(|doc| doc["status"].as_str())
        .is_some_and(|status| status != "DISCOVERED");
    from_killed && written
}

/// Every reachable page fetched at least once (in a fetch log; or, for the killed process, at the
/// site with its status written); a page fetched twice only after a fetch by the killed process,
/// or by the stopped one before its stop.
fn check_urls(outcome: &Outcome, faults: Option<Faults>) -> Vec<String> {
    let mut by_url: BTreeMap<&str, Vec<&Fetch>> = BTreeMap::new();
    for fetch in &outcome.fetches {
        by_url.entry(&fetch.url).or_default().push(fetch);
    }
    let mut problems = Vec::new();
    for url in &outcome.reachable {
        if by_url.contains_key(url.as_str()) || written_by_the_killed_process(outcome, url, faults)
        {
            continue;
        }
        let document = outcome.unlogged.get(url).cloned().unwrap_or_default();
        problems.push(format!(
            "lost: {url} is in no fetch log; the site got it from {:?}; urls index: {document}",
            requesters(outcome, url)
        ));
    }
    for (url, mut list) in by_url {
        if !outcome.reachable.contains(url) {
            problems.push(format!(
                "fetched but not reachable: {url} (process {})",
                list[0].process
            ));
        }
        list.sort_by_key(|f| f.started);
        let earlier = &list[..list.len() - 1];
        if earlier.iter().any(|f| !may_be_repeated(f, faults)) {
            let lines: Vec<String> = list
                .iter()
                .map(|f| format!("  process {}: {}", f.process, f.line))
                .collect();
            problems.push(format!(
                "{url} fetched {} times, not only after a fault:\n{}",
                list.len(),
                lines.join("\n")
            ));
        }
    }
    problems
}

/// The site's view: nothing out of scope requested, and a URL requested again only after a
/// request of a faulty process (some of the killed process's fetches never reached its log).
fn check_site_requests(outcome: &Outcome, faults: Option<Faults>) -> Vec<String> {
    let mut problems: Vec<String> = outcome
        .site_problems
        .iter()
        .filter(|p| !p.starts_with("requested "))
        .cloned()
        .collect();
    let mut by_url: BTreeMap<&str, Vec<&RequestRecord>> = BTreeMap::new();
    for r in outcome.requests.iter().filter(|r| r.path != "/robots.txt") {
        by_url.entry(&r.url).or_default().push(r);
    }
    let faulty = |r: &RequestRecord| {
        faults.is_some_and(|f| {
            let ua = r.user_agent.as_deref().unwrap_or_default();
            ua.starts_with(&format!("{}/", agent(f.killed)))
                || (ua.starts_with(&format!("{}/", agent(f.paused)))
                    && r.at <= f.stop_after_instant)
        })
    };
    for (url, list) in by_url {
        if list[..list.len() - 1].iter().any(|r| !faulty(r)) {
            let agents: Vec<&str> = list
                .iter()
                .map(|r| r.user_agent.as_deref().unwrap_or("?"))
                .collect();
            problems.push(format!(
                "the site got {url} {} times, not only after a fault: {agents:?}",
                list.len()
            ));
        }
    }
    // A fetch of the stopped process that spans its stop: the site must have answered it before
    // the stop (a request sent after SIGCONT would be a fetch under a lapsed lease).
    if let Some(f) = faults {
        let paused_agent = format!("{}/", agent(f.paused));
        for fetch in outcome.fetches.iter().filter(|x| {
            x.process == f.paused && x.started < f.stop_after && x.finished > f.cont_before
        }) {
            let answered_before_stop = outcome.requests.iter().any(|r| {
                r.url == fetch.url
                    && r.at <= f.stop_after_instant
                    && r.user_agent
                        .as_deref()
                        .is_some_and(|ua| ua.starts_with(&paused_agent))
            });
            if !answered_before_stop {
                problems.push(format!(
                    "process {} sent a request only after SIGCONT, under a lapsed lease: {}",
                    f.paused, fetch.line
                ));
            }
        }
    }
    problems
}

/// Every surviving process ended by itself, idle, with success, and not before the last fetch of
/// any process (its idle is the whole frontier's).
fn check_ends(outcome: &Outcome) -> Vec<String> {
    let last = outcome.fetches.iter().max_by_key(|f| f.finished);
    let mut problems = Vec::new();
    for (p, (stdout, success, end)) in &outcome.ends {
        if !success {
            problems.push(format!("process {p} did not exit with success"));
        }
        if !stdout.contains("crawl stopped (Idle)") {
            problems.push(format!(
                "process {p} did not stop as idle: {}",
                stdout.trim()
            ));
        }
        match (end, last) {
            (None, _) => problems.push(format!("process {p} wrote no summary")),
            (Some(end), Some(last)) if *end < last.finished => problems.push(format!(
                "process {p} ended at {end} before the last fetch (the frontier was not idle): process {}: {}",
                last.process, last.line
            )),
            _ => {}
        }
    }
    problems
}

/// The killed process's log: the fetches it completed, whole lines, each one a request the site
/// got from it.
fn check_killed_log(outcome: &Outcome, faults: Faults) -> Vec<String> {
    let mut problems = Vec::new();
    let own: Vec<&Fetch> = outcome
        .fetches
        .iter()
        .filter(|f| f.process == faults.killed)
        .collect();
    if own.is_empty() {
        problems.push(format!(
            "the killed process {}'s fetch log is empty (it was killed after fetching)",
            faults.killed
        ));
    }
    let killed_agent = format!("{}/", agent(faults.killed));
    for fetch in own {
        if fetch.finished > faults.killed_at {
            problems.push(format!(
                "the killed process logged a fetch finished after its kill: {}",
                fetch.line
            ));
        }
        let requested = outcome.requests.iter().any(|r| {
            r.url == fetch.url
                && r.user_agent
                    .as_deref()
                    .is_some_and(|ua| ua.starts_with(&killed_agent))
        });
        if !requested {
            problems.push(format!(
                "the killed process logged a fetch the site never got from it: {}",
                fetch.line
            ));
        }
    }
    problems
}

/// Fails with every violation, named, and what helps to understand them.
fn assert_no_violations(case: &str, mut outcome: Outcome, problems: Vec<String>) {
    if problems.is_empty() {
        return;
    }
    let mut report = format!(
        "{case}: {} violation(s); fetches per process {:?}\n",
        problems.len(),
        outcome.per_process
    );
    for problem in problems.iter().take(40) {
        let _ = writeln!(report, "- {problem}");
    }
    if let Some(dir) = outcome.dir.take() {
        let _ = writeln!(
            report,
            "fetch logs and output kept in {}",
            dir.keep().display()
        );
    }
    let _ = writeln!(
        report,
        "{}\nqueues index at the end:\n{}",
        outcome.tails, outcome.queues_state
    );
    panic!("{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_and_a_stopped_process_lose_nothing_and_never_share_a_host() {
    let _one = ONE_CRAWL_AT_A_TIME.lock().await;
    let (outcome, faults) = crawl(true).await;
    let faults = faults.expect("faults injected");
    let after_cont = |p: usize| {
        outcome
            .fetches
            .iter()
            .filter(|f| f.process == p && f.started > faults.cont_before)
            .count()
    };
    eprintln!(
        "after SIGCONT: process {} fetched {}, process 2 fetched {}",
        faults.paused,
        after_cont(faults.paused),
        after_cont(2)
    );
    assert!(
        outcome
            .fetches
            .iter()
            .any(|f| f.started > faults.cont_before),
        "test setup: the crawl was over before the stopped process went on (make the site bigger)"
    );
    let mut problems = outcome.log_problems.clone();
    problems.extend(check_killed_log(&outcome, faults));
    problems.extend(check_politeness(&outcome.fetches, Some(faults)));
    problems.extend(support::site_politeness::problems(
        &outcome.requests,
        "squall-proc-",
        DELAY,
    ));
    problems.extend(check_urls(&outcome, Some(faults)));
    problems.extend(check_site_requests(&outcome, Some(faults)));
    problems.extend(check_ends(&outcome));
    assert_no_violations(
        &format!(
            "SIGKILL of process {} at {}, SIGSTOP of process {} from {}..{} to {}",
            faults.killed,
            faults.killed_at,
            faults.paused,
            faults.stop_before,
            faults.stop_after,
            faults.cont_before
        ),
        outcome,
        problems,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_processes_share_six_hosts() {
    let _one = ONE_CRAWL_AT_A_TIME.lock().await;
    let (outcome, _) = crawl(false).await;
    let mut problems = outcome.log_problems.clone();
    problems.extend(check_politeness(&outcome.fetches, None));
    problems.extend(support::site_politeness::problems(
        &outcome.requests,
        "squall-proc-",
        DELAY,
    ));
    problems.extend(check_urls(&outcome, None));
    problems.extend(check_site_requests(&outcome, None));
    problems.extend(check_ends(&outcome));
    let total: usize = outcome.per_process.iter().sum();
    for (p, n) in outcome.per_process.iter().enumerate() {
        if *n * 5 < total {
            problems.push(format!(
                "the work is not shared: process {p} fetched {n} of {total} pages (less than a fifth)"
            ));
        }
    }
    assert_no_violations("no faults", outcome, problems);
}

/// The checks themselves, on made-up logs: each violation is found and named.
#[test]
fn the_checks_name_what_is_violated() {
    let t0 = Utc::now();
    let ms = TimeDelta::milliseconds;
    let fetch = |process: usize, url: &str, start: i64, end: i64| Fetch {
        process,
        url: format!("http://h.test:1/{url}"),
        key: "h.test".to_string(),
        started: t0 + ms(start),
        finished: t0 + ms(end),
        line: format!("{process} {url} {start}..{end}"),
    };
    let polite = [
        fetch(0, "a", 0, 10),
        fetch(1, "b", 110, 120),
        fetch(1, "c", 125, 130),
    ];
    assert!(check_politeness(&polite, None).is_empty());
    let at_once = [fetch(0, "a", 0, 50), fetch(1, "b", 40, 60)];
    let problems = check_politeness(&at_once, None);
    assert!(problems[0].contains("at once"), "{problems:?}");
    let too_close = [fetch(0, "a", 0, 10), fetch(1, "b", 60, 70)];
    let problems = check_politeness(&too_close, None);
    assert!(
        problems[0].contains("closer than the delay"),
        "{problems:?}"
    );

    // A fetch of the stopped process spanning its stop keeps the host only until the stop.
    let faults = Faults {
        killed: 0,
        killed_at: t0,
        paused: 1,
        stop_before: t0 + ms(20),
        stop_after: t0 + ms(25),
        stop_after_instant: Instant::now(),
        cont_before: t0 + ms(5000),
    };
    let across_stop = [fetch(1, "a", 20, 5010), fetch(2, "b", 4500, 4510)];
    assert!(check_politeness(&across_stop, Some(faults)).is_empty());
    assert_eq!(check_politeness(&across_stop, None).len(), 1);

    let outcome = |fetches: Vec<Fetch>, reachable: &[&str]| Outcome {
        fetches,
        log_problems: Vec::new(),
        per_process: Vec::new(),
        ends: BTreeMap::new(),
        requests: Vec::new(),
        reachable: reachable
            .iter()
            .map(|u| format!("http://h.test:1/{u}"))
            .collect(),
        site_problems: Vec::new(),
        queues_state: String::new(),
        unlogged: BTreeMap::new(),
        tails: String::new(),
        dir: None,
    };
    let lost = outcome(vec![fetch(2, "a", 0, 1)], &["a", "b"]);
    let problems = check_urls(&lost, None);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with("lost: http://h.test:1/b is in no fetch log"));
    // In no log, but fetched by the killed process and written: its log line died with it.
    let mut unlogged = outcome(vec![fetch(2, "a", 0, 1)], &["a", "b"]);
    unlogged.requests.push(RequestRecord {
        method: "GET".to_string(),
        host: "h.test".to_string(),
        path: "/b".to_string(),
        url: "http://h.test:1/b".to_string(),
        status: 200,
        user_agent: Some(format!("{}/0.1.0", agent(0))),
        at: Instant::now(),
    });
    unlogged.unlogged.insert(
        "http://h.test:1/b".to_string(),
        serde_json::json!({ "status": "FETCHED" }),
    );
    assert!(check_urls(&unlogged, Some(faults)).is_empty());
    assert_eq!(check_urls(&unlogged, None).len(), 1);
    unlogged.unlogged.insert(
        "http://h.test:1/b".to_string(),
        serde_json::json!({ "status": "DISCOVERED" }),
    );
    assert_eq!(
        check_urls(&unlogged, Some(faults)).len(),
        1,
        "not written: lost"
    );
    // Fetched again after the killed process, or after the stopped one before its stop: allowed.
    let repeated = outcome(
        vec![
            fetch(0, "a", 0, 1),
            fetch(2, "a", 9000, 9001),
            fetch(1, "b", 10, 11),
            fetch(2, "b", 9100, 9101),
        ],
        &["a", "b"],
    );
    assert!(check_urls(&repeated, Some(faults)).is_empty());
    let problems = check_urls(&repeated, None);
    assert_eq!(problems.len(), 2, "{problems:?}");
    // Fetched twice by a healthy process, or by the stopped one after it went on: named.
    let twice = outcome(
        vec![
            fetch(2, "a", 0, 1),
            fetch(2, "a", 9000, 9001),
            fetch(1, "b", 6000, 6001),
            fetch(2, "b", 9100, 9101),
        ],
        &["a", "b"],
    );
    let problems = check_urls(&twice, Some(faults));
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("fetched 2 times, not only after a fault"));

    let mut ended_early = outcome(vec![fetch(1, "a", 0, 1000)], &["a"]);
    ended_early.ends.insert(
        2,
        (
            "crawl stopped (Idle) after".to_string(),
            true,
            Some(t0 + ms(500)),
        ),
    );
    let problems = check_ends(&ended_early);
    assert!(
        problems[0].contains("before the last fetch"),
        "{problems:?}"
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("log");
    std::fs::write(
        &log,
        "{\"url\":\"u\",\"key\":\"k\",\"started\":\"2026-01-01T00:00:00.000Z\",\"finished\":\"2026-01-01T00:00:00.001Z\"}\n{\"url\":\"v\",\"ke",
    )
    .expect("write");
    let (entries, problems) = read_log(0, &log);
    assert_eq!(entries.len(), 1);
    assert_eq!(problems.len(), 2, "a partial last line: {problems:?}");
}
