//! The link checker (`examples/link_checker.rs`) as a team of worker processes over a squall
//! URLFrontier server (in process, on an embedded frontier in a temporary directory), checking the
//! links of a real HTTP site on loopback: 5 "hosts" (listeners on ports of 127.0.0.1, each its own
//! queue: the key is set when seeding) of fine pages, a page that answers 405 to HEAD and 200 to
//! GET, one always 404, one that answers 500 five times and then 200, and a "host" that closes
//! every connection at once.
//!
//! Phase 1: three workers re-check every link about every 2 s (`--recheck-hours 0.0005`,
//! `--failures 3 --min-days 0`, `--delay-requestable 3`). Once the first has reported results, the
//! site holds its next requests (it names itself in its user agent) and the worker is SIGKILLed
//! while it holds links. The phase ends when the frontier shows every link checked 3 times, the
//! flaky link recovered, and the links the dead worker held checked by the others (they lapsed
//! and were handed out again), or at a deadline that only guards against hangs. The two survivors
//! are then SIGKILLed too: they run without `--until-idle`, because with re-checks every 2 s the crawl
//! really is idle between two rounds (nothing due, nothing held), and a worker that exits there
//! would leave the rest of the run to nobody; waiting for that moment would make the test
//! depend on timing.
//!
//! Phase 2 is the cron-style use `--until-idle` is meant for: once every link is due again (and
//! the server has read them, so the crawl is not idle), two fresh workers with the default 24 h
//! re-check and `--min-days 1` check each link once more and must exit by themselves, with
//! success, when nothing is left. Their `--min-days 1` unmarks the 404 link and the dead host:
//! their failures span seconds, not a day.
//!
//! The workers are the example binary that `cargo test` builds beside the test executables (with
//! `--test urlfrontier link_checker::` alone, build it first: `cargo build --example link_checker`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::serving::{connect, serve};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use futures::TryStreamExt;
use serde_json::Value;
use squall::config::ConfigBuilder;
use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::proto::url_item::Item;
use squall_urlfrontier::proto::{
    DiscoveredUrlItem, ListUrlParams, QueueWithinCrawlParams, UrlInfo, UrlItem,
};
use tokio::sync::watch;

type Client = UrlFrontierClient<tonic::transport::Channel>;

/// How many times the flaky page answers 500 before it answers 200.
const FLAKY_FAILURES: u32 = 5;
/// Only against hangs: every wait below ends on a condition long before.
const DEADLINE: Duration = Duration::from_secs(240);

/// The site's state, shared by its listeners.
struct Site {
    flaky_hits: AtomicU32,
    /// The user agent whose requests are held (the worker about to be killed).
    trap: Mutex<Option<String>>,
    /// The URLs of the requests held.
    trapped: Mutex<Vec<String>>,
    /// Lets held requests go (with a 503 nobody reads).
    released: watch::Sender<bool>,
}

async fn answer(
    State(site): State<Arc<Site>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> StatusCode {
    let text = |name: header::HeaderName| {
        let value = headers.get(name).and_then(|v| v.to_str().ok());
        value.unwrap_or_default().to_string()
    };
    let agent = text(header::USER_AGENT);
    if site.trap.lock().expect("trap").as_deref() == Some(agent.as_str()) {
        let url = format!("http://{}{}", text(header::HOST), uri.path());
        site.trapped.lock().expect("trapped").push(url);
        let mut released = site.released.subscribe();
        let _ = released.wait_for(|released| *released).await;
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    match uri.path() {
        "/gone" => StatusCode::NOT_FOUND,
        "/no-head" if method == Method::HEAD => StatusCode::METHOD_NOT_ALLOWED,
        "/flaky" if site.flaky_hits.fetch_add(1, Ordering::SeqCst) < FLAKY_FAILURES => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
        _ => StatusCode::OK,
    }
}

/// Starts the site; its links with their queue keys (`127.0.0.1:PORT`).
async fn start_site(site: &Arc<Site>) -> Vec<(String, String)> {
    let app = axum::Router::new()
        .fallback(answer)
        .with_state(Arc::clone(site));
    let mut links = Vec::new();
    for host in 0..5 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listen");
        let key = listener.local_addr().expect("address").to_string();
        tokio::spawn(axum::serve(listener, app.clone()).into_future());
        let special = ["/no-head", "/gone", "/flaky"].get(host).copied();
        let paths = (0..11).map(|page| format!("/page/{page}"));
        for path in paths.chain(special.map(str::to_string)) {
            links.push((format!("http://{key}{path}"), key.clone()));
        }
    }
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("listen");
    let key = dead.local_addr().expect("address").to_string();
    tokio::spawn(async move {
        while let Ok((connection, _)) = dead.accept().await {
            drop(connection); // closed before any answer
        }
    });
    links.push((format!("http://{key}/"), key));
    links
}

/// The example binary, built beside the test executables.
fn link_checker_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let target = exe
        .parent()
        .and_then(Path::parent)
        .expect("target directory");
    let name = format!("link_checker{}", std::env::consts::EXE_SUFFIX);
    let binary = target.join("examples").join(name);
    assert!(
        binary.exists(),
        "{} is missing: build it with `cargo build --example link_checker -p squall-urlfrontier` \
         (a plain `cargo test -p squall-urlfrontier` builds it too)",
        binary.display()
    );
    binary
}

/// Starts worker `name`, reporting to `<dir>/<name>.jsonl`, its stderr in `<dir>/<name>.log`.
fn worker(dir: &Path, frontier: &str, name: &str, extra: &[&str]) -> Child {
    let log = std::fs::File::create(dir.join(format!("{name}.log"))).expect("log file");
    let report = dir.join(format!("{name}.jsonl"));
    Command::new(link_checker_binary())
        .args(["--frontier", frontier, "--failures", "3", "--batch", "3"])
        .args(["--delay-requestable", "3", "--report"])
        .arg(report)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("the worker starts")
}

/// The lines worker `name` reported.
fn report(dir: &Path, name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join(format!("{name}.jsonl"))).unwrap_or_default();
    let lines = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"));
    lines.collect()
}

/// The workers' logs, for failure messages.
fn logs(dir: &Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).expect("dir").flatten() {
        if entry.path().extension().is_some_and(|e| e == "log") {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            out += &format!("--- {}\n{text}", entry.path().display());
        }
    }
    out
}

/// A link as the frontier holds it: its metadata (first values) and when it is due (epoch secs).
#[derive(Debug)]
struct Stored {
    meta: HashMap<String, String>,
    due: u64,
}

impl Stored {
    fn get(&self, key: &str) -> &str {
        self.meta.get(key).map_or("", String::as_str)
    }

    fn checks(&self) -> u64 {
        self.get("linkcheck.checks").parse().unwrap_or(0)
    }
}

/// Every link in the frontier, by URL (ListURLs).
async fn stored(client: &mut Client) -> BTreeMap<String, Stored> {
    let params = ListUrlParams {
        size: 1000,
        crawl_id: "DEFAULT".into(),
        ..Default::default()
    };
    let listed = client.list_ur_ls(params).await.expect("ListURLs");
    let items: Vec<UrlItem> = listed.into_inner().try_collect().await.expect("listing");
    let mut out = BTreeMap::new();
    for item in items {
        let (info, due) = match item.item.expect("an item") {
            Item::Known(known) => (known.info, known.refetchable_from_date),
            Item::Discovered(found) => (found.info, 0),
        };
        let info = info.expect("info");
        let meta = info.metadata.into_iter();
        let meta = meta.filter_map(|(k, v)| Some((k, v.values.into_iter().next()?)));
        let meta = meta.collect();
        out.insert(info.url, Stored { meta, due });
    }
    out
}

async fn seed(client: &mut Client, links: &[(String, String)]) {
    let items: Vec<UrlItem> = links
        .iter()
        .map(|(url, key)| UrlItem {
            creation_date: 0,
            id: url.clone(),
            item: Some(Item::Discovered(DiscoveredUrlItem {
                info: Some(UrlInfo {
                    url: url.clone(),
                    key: key.clone(),
                    metadata: HashMap::new(),
                    crawl_id: "DEFAULT".into(),
                }),
            })),
        })
        .collect();
    let acks = client
        .put_ur_ls(futures::stream::iter(items))
        .await
        .expect("PutURLs");
    let acks: Vec<_> = acks.into_inner().try_collect().await.expect("acks");
    assert_eq!(acks.len(), links.len());
    let ok = squall_urlfrontier::proto::ack_message::Status::Ok as i32;
    assert!(acks.iter().all(|ack| ack.status == ok), "{acks:?}");
}

async fn crawl_idle(client: &mut Client) -> bool {
    let params = QueueWithinCrawlParams {
        crawl_id: "DEFAULT".into(),
        ..Default::default()
    };
    let stats = client.get_stats(params).await.expect("GetStats");
    stats.into_inner().counts.get("squall.idle") == Some(&1)
}

fn now_secs() -> u64 {
    u64::try_from(chrono::Utc::now().timestamp()).expect("after 1970")
}

/// Waits for `done`, polling; panics at the deadline with `what` and the workers' logs.
async fn wait_for(what: &str, deadline: Instant, dir: &Path, mut done: impl AsyncFnMut() -> bool) {
    while !done().await {
        assert!(
            Instant::now() < deadline,
            "gave up waiting for {what}\n{}",
            logs(dir)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn kill(mut child: Child) {
    child.kill().expect("kill");
    child.wait().expect("wait");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_check_every_link_and_one_killed_loses_nothing() {
    let started = Instant::now();
    let deadline = started + DEADLINE;
    link_checker_binary();
    let site = Arc::new(Site {
        flaky_hits: AtomicU32::new(0),
        trap: Mutex::new(None),
        trapped: Mutex::new(Vec::new()),
        released: watch::Sender::new(false),
    });
    let links = start_site(&site).await;
    let frontier_dir = tempfile::tempdir().expect("temp dir");
    let dir = tempfile::tempdir().expect("temp dir");
    let dir = dir.path();
    let config = ConfigBuilder::new()
        .set("http.agent.name=squall-frontier")
        .and_then(|b| b.set_text("frontier.path", &frontier_dir.path().display().to_string()))
        .and_then(|b| b.set("fetcher.server.delay=0.05"))
        .and_then(|b| b.set("spout.min.delay.queries=100"))
        .and_then(|b| b.set("spout.ttl.purgatory=0.5"))
        .and_then(ConfigBuilder::build)
        .expect("config");
    let server = serve(config).await;
    let address = server.addr().to_string();
    let mut client = connect(&server).await;
    seed(&mut client, &links).await;

    // Phase 1: three workers, re-checks every ~2 s; the first is killed while it holds links.
    let recheck = ["--recheck-hours", "0.0005", "--min-days", "0"];
    let victim = worker(dir, &address, "victim", &recheck);
    let survivors = [
        worker(dir, &address, "survivor-1", &recheck),
        worker(dir, &address, "survivor-2", &recheck),
    ];
    wait_for("the first worker's results", deadline, dir, async || {
        report(dir, "victim").len() >= 3
    })
    .await;
    *site.trap.lock().expect("trap") = Some(format!("squall-link-checker/{}", victim.id()));
    wait_for("a request of the first worker", deadline, dir, async || {
        !site.trapped.lock().expect("trapped").is_empty()
    })
    .await;
    kill(victim);
    site.released.send_replace(true);
    let held = site.trapped.lock().expect("trapped").clone();
    eprintln!("killed the first worker while it checked {held:?}");

    let survivors_checked = |url: &str| {
        let lines = [report(dir, "survivor-1"), report(dir, "survivor-2")].concat();
        lines.iter().any(|line| line["url"] == url)
    };
    let flaky = links
        .iter()
        .map(|(url, _)| url.clone())
        .find(|url| url.ends_with("/flaky"))
        .expect("flaky link");
    wait_for("every link checked 3 times", deadline, dir, async || {
        let state = stored(&mut client).await;
        state.len() == links.len()
            && state.values().all(|link| link.checks() >= 3)
            && state[&flaky].get("linkcheck.status") == "200"
            && held.iter().all(|url| survivors_checked(url))
    })
    .await;
    for mut survivor in survivors {
        let exited = survivor.try_wait().expect("try_wait");
        assert!(exited.is_none(), "a worker exited early\n{}", logs(dir));
        kill(survivor);
    }
    let phase1 = stored(&mut client).await;
    check_after_rechecks(&phase1, &links);
    let reports = [
        report(dir, "victim"),
        report(dir, "survivor-1"),
        report(dir, "survivor-2"),
    ]
    .concat();
    let flaky_lines: Vec<&Value> = reports.iter().filter(|l| l["url"] == flaky).collect();
    assert!(
        flaky_lines.iter().any(|line| line["broken"] == true),
        "the flaky link was reported broken before it recovered: {flaky_lines:?}"
    );
    eprintln!(
        "phase 1: {} results reported, {:.1}s",
        reports.len(),
        started.elapsed().as_secs_f64()
    );

    // Phase 2: once every link is due and read, two --until-idle workers check each once more.
    wait_for("every link due", deadline, dir, async || {
        let state = stored(&mut client).await;
        state.values().all(|link| link.due < now_secs())
    })
    .await;
    wait_for("the crawl to have due links", deadline, dir, async || {
        !crawl_idle(&mut client).await
    })
    .await;
    let last_pass = ["--until-idle", "--min-days", "1"];
    let mut finishers = [
        worker(dir, &address, "last-1", &last_pass),
        worker(dir, &address, "last-2", &last_pass),
    ];
    let mut statuses = Vec::new();
    wait_for(
        "the --until-idle workers to exit",
        deadline,
        dir,
        async || {
            statuses = finishers
                .iter_mut()
                .filter_map(|f| f.try_wait().expect("try_wait"))
                .collect();
            statuses.len() == finishers.len()
        },
    )
    .await;
    assert!(
        statuses.iter().all(|status| status.success()),
        "{statuses:?}\n{}",
        logs(dir)
    );
    let last = stored(&mut client).await;
    check_last_pass(&phase1, &last);
    server.shutdown().await;
    eprintln!("done in {:.1}s", started.elapsed().as_secs_f64());
}

/// After phase 1: every link checked, the fine ones fine, the 404 and the dead host broken.
fn check_after_rechecks(state: &BTreeMap<String, Stored>, links: &[(String, String)]) {
    assert_eq!(state.len(), links.len(), "nothing lost: {state:#?}");
    for (url, link) in state {
        assert!(link.checks() >= 3, "{url}: {link:?}");
        let (status, failures, broken) = (
            link.get("linkcheck.status"),
            link.get("linkcheck.failures"),
            link.get("linkcheck.broken"),
        );
        if url.contains("/page/") || url.ends_with("/no-head") || url.ends_with("/flaky") {
            assert_eq!((status, failures, broken), ("200", "0", "false"), "{url}");
            assert!(!link.meta.contains_key("linkcheck.first.failure"), "{url}");
        } else {
            let expected = if url.ends_with("/gone") {
                "404"
            } else {
                "error"
            };
            assert!(status.starts_with(expected), "{url}: {link:?}");
            assert_eq!(failures, link.checks().to_string(), "{url}");
            assert_eq!(broken, "true", "{url}: {link:?}");
            assert!(link.meta.contains_key("linkcheck.first.failure"), "{url}");
        }
    }
}

/// After the --until-idle pass: each link checked once more and due in a day; failures of seconds
/// are no longer "broken" under --min-days 1.
fn check_last_pass(before: &BTreeMap<String, Stored>, after: &BTreeMap<String, Stored>) {
    assert_eq!(before.len(), after.len());
    let tomorrow = now_secs() + 23 * 3600;
    for (url, link) in after {
        let earlier = &before[url];
        assert!(link.checks() > earlier.checks(), "{url}: {link:?}");
        assert!(link.due > tomorrow, "{url}: {link:?}");
        if earlier.get("linkcheck.broken") == "true" {
            assert_eq!(link.get("linkcheck.broken"), "false", "{url}: {link:?}");
            let first = "linkcheck.first.failure";
            assert_eq!(link.get(first), earlier.get(first), "{url}");
        } else {
            assert_eq!(link.get("linkcheck.status"), "200", "{url}");
        }
    }
}
