//! `urlfrontier_servers.json`: squall's URLFrontier server (embedded and queue frontier) against
//! crawler-commons' reference service (RocksDB) under the same client load, and issue 31's aim.

use squall_bench_schema::urlfrontier::ServerRuns;
pub use squall_bench_schema::urlfrontier::{Latency, UrlFrontierServers};

use crate::format::{NONE, count, num, opt_spread, ratio, thousands};
use crate::input::Spread;
use crate::table::table;

/// Issue 31: the embedded squall-frontier at least this many times the reference's URLs/s.
pub const AIM: f64 = 2.0;

const REFERENCE: &str = "reference-rocksdb";
const QUEUE: &str = "squall-queue";
const EMBEDDED: &str = "squall-embedded";

/// A load's URLs/s in a server's runs.
type Load = fn(&ServerRuns) -> Option<&Spread>;

const PUT: (&str, Load) = ("put new", |s| s.put_urls_per_s.as_ref());
const CYCLE: (&str, Load) = ("get, put back", |s| s.cycle_urls_per_s.as_ref());

/// Issue 62's aims over the reference: the queue-backed server's put new and get-and-put-back,
/// the embedded server's two loads.
const QUEUE_AIMS: [(&str, (&str, Load), f64); 4] = [
    (QUEUE, PUT, 1.0),
    (QUEUE, CYCLE, 0.5),
    (EMBEDDED, PUT, 3.0),
    (EMBEDDED, CYCLE, 3.0),
];

fn latency(l: Option<&Latency>) -> String {
    l.map_or_else(
        || NONE.to_string(),
        |l| format!("{} / {}", num(l.p50_ms), num(l.p99_ms)),
    )
}

fn median(s: Option<&Spread>) -> Option<f64> {
    s.map(|s| s.median)
}

/// "### URLFrontier servers": one row per server and phase, then the verdict.
pub fn section(u: Option<&UrlFrontierServers>) -> String {
    let mut out = String::from("### URLFrontier servers\n\n");
    let Some(u) = u else {
        out.push_str("_Not run in this run_ (no `urlfrontier_servers.json`).\n");
        return out;
    };
    out.push_str(&about(u));
    let reference = u.servers.iter().find(|s| s.server == REFERENCE);
    let versus = |mine: Option<f64>, theirs: Option<f64>| match (mine, theirs) {
        (Some(a), Some(b)) if b > 0.0 => ratio(Some(a / b)),
        _ => NONE.to_string(),
    };
    let mut rows = Vec::new();
    for s in &u.servers {
        rows.push(vec![
            s.server.clone(),
            "put new".into(),
            opt_spread(s.put_urls_per_s.as_ref()),
            versus(
                median(s.put_urls_per_s.as_ref()),
                reference.and_then(|r| median(r.put_urls_per_s.as_ref())),
            ),
            latency(s.put_new_call.as_ref()),
            NONE.into(),
        ]);
        rows.push(vec![
            s.server.clone(),
            "get, put back".into(),
            opt_spread(s.cycle_urls_per_s.as_ref()),
            versus(
                median(s.cycle_urls_per_s.as_ref()),
                reference.and_then(|r| median(r.cycle_urls_per_s.as_ref())),
            ),
            latency(s.cycle_put_call.as_ref()),
            latency(s.cycle_get_call.as_ref()),
        ]);
    }
    out.push_str(&table(
        &[
            "server",
            "load",
            "URLs/s",
            "× reference",
            "PutURLs p50 / p99 ms",
            "GetURLs p50 / p99 ms",
        ],
        &rows,
    ));
    if let Some(line) = engine_cpu(u) {
        out.push_str(&format!("\n{line}\n"));
    }
    out.push_str(&format!("\n{}\n", verdict(u)));
    out.push_str(&format!("\n{}\n", queue_verdict(u)));
    out
}

/// What the engine spent under the queue-backed server, per 1,000 URLs of each phase and as cores
/// at the phase's median pace.
fn engine_cpu(u: &UrlFrontierServers) -> Option<String> {
    let queue = u.servers.iter().find(|s| s.server == QUEUE)?;
    let phase = |cpu: Option<&Spread>, rate: Option<&Spread>, load: &str| {
        let (cpu, rate) = (cpu?, rate?);
        let cores = cpu.median * rate.median / 1_000_000.0;
        Some(format!(
            "{} ms of CPU per 1,000 URLs {load} ({} cores at its median pace)",
            opt_spread(Some(cpu)),
            num(cores)
        ))
    };
    let parts: Vec<String> = [
        phase(
            queue.engine_cpu_ms_per_1000_put.as_ref(),
            queue.put_urls_per_s.as_ref(),
            "put new",
        ),
        phase(
            queue.engine_cpu_ms_per_1000_cycle.as_ref(),
            queue.cycle_urls_per_s.as_ref(),
            "got and put back",
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "The engine under the queue-backed server (its process, from /proc): {}.",
            parts.join("; ")
        )
    })
}

fn about(u: &UrlFrontierServers) -> String {
    let mut about = Vec::new();
    if let (Some(urls), Some(hosts)) = (u.urls, u.hosts) {
        about.push(format!(
            "{} URLs over {}, a fresh server per run after a warm-up of 1,000",
            thousands(urls),
            count(hosts, "host")
        ));
    }
    let clients = u
        .clients
        .map_or_else(|| "clients".to_string(), |c| count(c, "client"));
    about.push(format!(
        "{clients} on loopback gRPC put the new URLs (500 a call), then loop GetURLs (50 queues of \
         up to 50) and PutURLs of each URL as known; no politeness delay at any server (SetDelay 0)"
    ));
    if let Some(runs) = u.runs {
        let warm_up = match u.warm_up_rounds {
            Some(rounds) if rounds > 0 => format!(
                " after {} of each, not recorded (to warm the engine node's JIT)",
                count(rounds, "warm-up round")
            ),
            _ => String::new(),
        };
        about.push(format!(
            "{} of each server in mirrored order{warm_up}, median (min–max); latencies over every \
             call",
            count(runs, "run")
        ));
    }
    if let Some(why) = &u.reference_left_out {
        about.push(format!("the reference service was left out: {why}"));
    }
    if let Some(source) = &u.reference_source {
        about.push(format!(
            "the reference ran from jars built by hand from {source}"
        ));
    }
    if let Some(commit) = &u.run.commit {
        about.push(format!(
            "commit {commit}{}",
            u.run
                .date
                .as_deref()
                .map_or_else(String::new, |d| format!(", {d}"))
        ));
    }
    format!(
        "{}. Command: `cargo bench --bench urlfrontier_servers` (or `scripts/bench --only urlfrontier_servers`).\n\n{HOW_TO_ADD_THE_REFERENCE}\n\n",
        about.join("; ")
    )
}

/// squall holds no recipe that builds the reference: a run compares with it only when given jars.
const HOW_TO_ADD_THE_REFERENCE: &str = "squall neither holds nor builds the reference service: \
     the benchmark runs it from jars built by hand, named by `URLFRONTIER_REFERENCE_SERVICE_JAR` \
     (its shaded `urlfrontier-service-*.jar`) and `URLFRONTIER_REFERENCE_CLIENT_JAR` (its shaded \
     `urlfrontier-client-*.jar`), with `URLFRONTIER_REFERENCE_SOURCE` saying what they were built \
     from (repository and commit) for this report; without them it measures squall's two servers \
     alone and says why.";

/// Issue 31's aim on the cycle load: embedded ≥ 2 × the reference's URLs/s, p99 no worse.
fn verdict(u: &UrlFrontierServers) -> String {
    let find = |name: &str| u.servers.iter().find(|s| s.server == name);
    let (Some(ours), Some(theirs)) = (find(EMBEDDED), find(REFERENCE)) else {
        return "Issue 31 (embedded ≥ 2 × the reference's URLs/s, p99 no worse): not measured."
            .into();
    };
    let mut parts = Vec::new();
    for (load, rate) in [PUT, CYCLE] {
        if let (Some(a), Some(b)) = (median(rate(ours)), median(rate(theirs))) {
            let met = if a / b >= AIM { "met" } else { "missed" };
            parts.push(format!("{load} {} ({met})", ratio(Some(a / b))));
        }
    }
    let p99 = |l: Option<&Latency>| l.map(|l| l.p99_ms);
    for (call, mine, other) in [
        (
            "PutURLs of new URLs",
            p99(ours.put_new_call.as_ref()),
            p99(theirs.put_new_call.as_ref()),
        ),
        (
            "PutURLs in the cycle",
            p99(ours.cycle_put_call.as_ref()),
            p99(theirs.cycle_put_call.as_ref()),
        ),
        (
            "GetURLs",
            p99(ours.cycle_get_call.as_ref()),
            p99(theirs.cycle_get_call.as_ref()),
        ),
    ] {
        if let (Some(a), Some(b)) = (mine, other) {
            let met = if a <= b { "no worse" } else { "worse" };
            parts.push(format!(
                "{call} p99 {} ms against {} ms ({met})",
                num(a),
                num(b)
            ));
        }
    }
    format!(
        "Issue 31, embedded squall-frontier against the reference (aim ≥ 2 ×, p99 no worse): {}.",
        parts.join("; ")
    )
}

/// Issue 62's aims: the queue-backed server at the reference's put pace and half its cycle, the
/// embedded rows at 3 ×.
fn queue_verdict(u: &UrlFrontierServers) -> String {
    let find = |name: &str| u.servers.iter().find(|s| s.server == name);
    let Some(theirs) = find(REFERENCE) else {
        return "Issue 62 (queue-backed put new ≥ 1.0 ×, get, put back ≥ 0.5 ×; embedded ≥ 3 ×): \
                not measured."
            .into();
    };
    let mut parts = Vec::new();
    for (server, (load, rate), aim) in QUEUE_AIMS {
        let Some(ours) = find(server) else { continue };
        if let (Some(a), Some(b)) = (median(rate(ours)), median(rate(theirs))) {
            let met = if a / b >= aim { "met" } else { "missed" };
            parts.push(format!(
                "{server} {load} {} (aim ≥ {}, {met})",
                ratio(Some(a / b)),
                num(aim)
            ));
        }
    }
    format!("Issue 62, against the reference: {}.", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> UrlFrontierServers {
        crate::input::parse(
            r#"{"benchmark":"urlfrontier_servers","urls":20000,"hosts":200,"clients":4,"runs":3,
            "reference_source":"crawler-commons/url-frontier 69399d2",
            "servers":[
              {"server":"squall-embedded","put_urls_per_s":{"median":30000,"min":29000,"max":31000},
               "cycle_urls_per_s":{"median":20000,"min":19000,"max":21000},
               "put_new_call":{"p50_ms":10,"p99_ms":20},"cycle_get_call":{"p50_ms":5,"p99_ms":9},
               "cycle_put_call":{"p50_ms":8,"p99_ms":15}},
              {"server":"squall-queue","put_urls_per_s":{"median":10000,"min":9000,"max":11000},
               "cycle_urls_per_s":{"median":5000,"min":4000,"max":6000},
               "engine_cpu_ms_per_1000_put":{"median":120,"min":110,"max":130},
               "engine_cpu_ms_per_1000_cycle":{"median":160,"min":150,"max":170}},
              {"server":"reference-rocksdb","put_urls_per_s":{"median":10000,"min":9000,"max":11000},
               "cycle_urls_per_s":{"median":12000,"min":11000,"max":13000},
               "put_new_call":{"p50_ms":30,"p99_ms":60},"cycle_get_call":{"p50_ms":4,"p99_ms":8},
               "cycle_put_call":{"p50_ms":20,"p99_ms":40}}]}"#,
        )
        .expect("sample")
    }

    #[test]
    fn the_section_shows_each_server_and_the_verdict() {
        let md = section(Some(&sample()));
        assert!(md.contains("| squall-embedded | put new | 30,000"), "{md}");
        assert!(md.contains("3.00"), "{md}");
        assert!(md.contains("put new 3.00 (met)"), "{md}");
        assert!(md.contains("get, put back 1.67 (missed)"), "{md}");
        assert!(
            md.contains("GetURLs p99 9.00 ms against 8.00 ms (worse)"),
            "{md}"
        );
        assert!(
            md.contains("`cargo bench --bench urlfrontier_servers`"),
            "{md}"
        );
        assert!(
            md.contains("jars built by hand from crawler-commons/url-frontier 69399d2"),
            "{md}"
        );
        assert!(md.contains("`URLFRONTIER_REFERENCE_SERVICE_JAR`"), "{md}");
    }

    #[test]
    fn the_queue_rows_show_the_engine_cpu_and_issue_62() {
        let md = section(Some(&sample()));
        assert!(
            md.contains("120 (110–130) ms of CPU per 1,000 URLs put new (1.20 cores"),
            "{md}"
        );
        assert!(md.contains("got and put back (0.800 cores"), "{md}");
        assert!(
            md.contains("squall-queue put new 1.00 (aim ≥ 1.00, met)"),
            "{md}"
        );
        assert!(
            md.contains("squall-queue get, put back 0.42 (aim ≥ 0.500, missed)"),
            "{md}"
        );
        assert!(
            md.contains("squall-embedded get, put back 1.67 (aim ≥ 3.00, missed)"),
            "{md}"
        );
    }

    #[test]
    fn a_missing_file_says_so() {
        assert!(section(None).contains("no `urlfrontier_servers.json`"));
    }
}
