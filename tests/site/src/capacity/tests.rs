use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn host(over: OverCapacity) -> HostCapacity {
    HostCapacity {
        name: "cap-000.test".to_owned(),
        rate: 2.0,
        burst: 4.0,
        unloaded: ms(20),
        growth: 2.0,
        knee: 0.0,
        spread: 1.0,
        over,
    }
}

/// The outcomes of taking at each offset (in ms) from `start`: `Some(u)` or `None` when empty.
fn takes(bucket: &mut TokenBucket, start: Instant, offsets: &[u64]) -> Vec<Option<f64>> {
    offsets
        .iter()
        .map(|&t| bucket.take(start + ms(t)).ok())
        .collect()
}

#[test]
fn the_bucket_is_deterministic_and_refills_at_its_rate() {
    let start = Instant::now();
    let offsets = [0, 0, 0, 0, 0, 400, 500, 1000, 1000, 1400];
    let first = takes(&mut TokenBucket::new(2.0, 4.0, start), start, &offsets);
    let again = takes(&mut TokenBucket::new(2.0, 4.0, start), start, &offsets);
    assert_eq!(first, again);
    let taken: Vec<bool> = first.iter().map(Option::is_some).collect();
    // Four from full, then one token per 500 ms at 2/s.
    let expected = [
        true, true, true, true, false, false, true, true, false, false,
    ];
    assert_eq!(taken, expected);
    assert_eq!(first[0], Some(0.0));
    assert_eq!(first[3], Some(0.75));
}

#[test]
fn an_empty_bucket_says_how_long_until_its_next_token() {
    let start = Instant::now();
    let mut bucket = TokenBucket::new(4.0, 1.0, start);
    assert!(bucket.take(start).is_ok());
    let empty = bucket.take(start + ms(100)).expect_err("empty");
    assert!((empty.wait.as_secs_f64() - 0.15).abs() < 1e-9, "{empty:?}");
    // A time before the last one seen refills nothing and takes nothing.
    assert!(bucket.take(start).is_err());
    assert!(bucket.take(start + ms(350)).is_ok());
}

/// A gate of `host(over)` at `start` whose four tokens were taken then, each served, and its
/// answer to one more request then.
fn drained(over: OverCapacity, start: Instant) -> (HostGate, Answer) {
    let mut gate = HostGate::new(&host(over), start);
    serves(&mut gate, 4, start);
    let refused = gate.answer("/p/1.html", start);
    (gate, refused)
}

/// Asserts `gate` serves `n` requests at `at`.
fn serves(gate: &mut HostGate, n: usize, at: Instant) {
    for _ in 0..n {
        let answer = gate.answer("/", at);
        assert!(matches!(answer, Answer::Serve { .. }), "{answer:?}");
    }
}

#[test]
fn each_host_refuses_with_its_own_answer_once_empty() {
    let start = Instant::now();
    for over in OverCapacity::kinds(7) {
        let (_, refused) = drained(over, start);
        let expected = Answer::Refuse {
            over,
            retry_after: over.retry_after(),
        };
        assert_eq!(refused, expected, "{over:?}");
    }
    assert_eq!(OverCapacity::TooMany.status(), 429);
    assert_eq!(OverCapacity::UnavailableRetryAfter(3).status(), 503);
    assert_eq!(OverCapacity::Unavailable.retry_after(), None);
}

#[test]
fn a_retry_after_window_refuses_again_with_the_same_answer_and_takes_no_token() {
    let start = Instant::now();
    let over = OverCapacity::TooManyRetryAfter(3);
    let (mut gate, refused) = drained(over, start);
    assert!(matches!(refused, Answer::Refuse { .. }));
    // 2.5 s later the bucket has 5 tokens' worth, but the window still holds.
    let again = gate.answer("/", start + ms(2500));
    let rest = Some(Duration::from_secs(1));
    assert_eq!(
        again,
        Answer::Refuse {
            over,
            retry_after: rest
        }
    );
    // Once the window ends, the tokens refilled meanwhile (none taken by refusals) serve.
    serves(&mut gate, 4, start + ms(3000));
}

#[test]
fn a_bare_refusal_opens_no_window() {
    let start = Instant::now();
    let (mut gate, refused) = drained(OverCapacity::Unavailable, start);
    assert!(matches!(refused, Answer::Refuse { .. }));
    serves(&mut gate, 1, start + ms(500));
}

#[test]
fn robots_txt_is_answered_at_once_without_a_token() {
    let start = Instant::now();
    let mut gate = HostGate::new(&host(OverCapacity::TooMany), start);
    for _ in 0..10 {
        assert_eq!(gate.answer(ROBOTS_PATH, start), Answer::NoRobots);
    }
    assert_eq!(gate.bucket().tokens(start), 4.0);
}

/// The load multipliers `gate` answers `n` requests `every` apart with, from `start`.
fn loads(gate: &mut HostGate, start: Instant, every: Duration, n: u32) -> Vec<f64> {
    (0..n)
        .map(|i| match gate.answer("/", start + every * i) {
            Answer::Serve { load, .. } => load,
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn the_latency_follows_the_depletion_of_the_bucket() {
    let start = Instant::now();
    let mut gate = HostGate::new(&host(OverCapacity::TooMany), start);
    let served: Vec<Duration> = (0..4)
        .map(|_| match gate.answer("/", start) {
            Answer::Serve { after, .. } => after,
            other => panic!("{other:?}"),
        })
        .collect();
    // u = 0, 1/4, 2/4, 3/4 before each take; the arrival rate over the 5 s span is 0.05, 0.15,
    // 0.25, 0.35 of the capacity: 20 ms × (1 + 2ρ²), ρ the larger, with no knee.
    let expected = [20.1, 22.5, 30.0, 42.5];
    for (took, want) in served.iter().zip(expected) {
        assert!(
            (took.as_secs_f64() * 1000.0 - want).abs() < 1e-6,
            "{served:?}"
        );
    }
}

#[test]
fn the_latency_grows_with_a_sustained_rate_past_the_knee() {
    let start = Instant::now();
    let mut spec = host(OverCapacity::TooMany);
    (spec.knee, spec.burst) = (0.8, 1000.0);
    let at_rate = |share: f64| {
        let mut gate = HostGate::new(&spec, start);
        let every = Duration::from_secs_f64(1.0 / (spec.rate * share));
        let loads = loads(&mut gate, start, every, 200);
        loads[100..].iter().sum::<f64>() / 100.0
    };
    // Flat to 80 % of the capacity, then 1 + 2((ρ − 0.8)/0.2)²: 1.5 at 90 %, 3 at 100 %.
    assert!((at_rate(0.5) - 1.0).abs() < 1e-9);
    assert!((at_rate(0.8) - 1.0).abs() < 0.01, "{}", at_rate(0.8));
    assert!((at_rate(0.9) - 1.5).abs() < 0.02, "{}", at_rate(0.9));
    assert!((at_rate(1.0) - 3.0).abs() < 0.05, "{}", at_rate(1.0));
    let mut meter = LoadMeter::new(0.2);
    let seen: Vec<f64> = (0..100)
        .map(|n| meter.arrive(start + Duration::from_secs(5 * n)))
        .collect();
    assert!(
        (seen[99] - 0.2).abs() < 0.002,
        "a slow host's rate: {}",
        seen[99]
    );
}

#[test]
fn pages_take_their_own_unloaded_times_whatever_the_load() {
    let mut spec = host(OverCapacity::TooMany);
    spec.spread = 4.0;
    let gate = HostGate::new(&spec, Instant::now());
    let times: Vec<f64> = (0..1000)
        .map(|n| gate.unloaded(&format!("/p/{n}.html")).as_secs_f64() * 1000.0)
        .collect();
    assert!(
        times.iter().all(|t| (10.0..=40.0).contains(t)),
        "half to twice 20 ms"
    );
    let short = times.iter().filter(|t| **t < 20.0).count();
    assert!(
        (400..600).contains(&short),
        "{short} of 1000 under the middle"
    );
    assert_eq!(gate.unloaded("/p/7.html"), gate.unloaded("/p/7.html"));
    assert_eq!(page_factor("/p/7.html", 1.0), 1.0);
    assert_eq!(load_multiplier(f64::NAN, 2.0, 0.8), 1.0);
}

#[test]
fn the_ladder_sums_to_its_total_with_the_designs_figures() {
    let spec = CapacitySpec::ladder(200, 0.2, 20.0, 400.0, 7);
    assert_eq!(spec.hosts.len(), 200);
    assert!(
        (spec.total_rate() - 400.0).abs() < 1e-6,
        "{}",
        spec.total_rate()
    );
    let rates: Vec<f64> = spec.hosts.iter().map(|h| h.rate).collect();
    assert!(
        rates
            .iter()
            .all(|&r| (0.2 - 1e-9..=20.0 + 1e-9).contains(&r))
    );
    let capped = |cap: f64| rates.iter().map(|&r| r.min(cap)).sum::<f64>();
    assert!((capped(1.0) - 110.1).abs() < 0.1, "{}", capped(1.0));
    assert!((capped(4.0) - 233.1).abs() < 0.1, "{}", capped(4.0));
    assert_eq!(rates.iter().filter(|&&r| r < 1.0).count(), 137);
    assert_eq!(spec, CapacitySpec::ladder(200, 0.2, 20.0, 400.0, 7));
    assert_ne!(spec, CapacitySpec::ladder(200, 0.2, 20.0, 400.0, 8));
}

#[test]
fn the_ladder_deals_its_hosts_names_answers_and_latencies() {
    let spec = CapacitySpec::ladder(20, 0.2, 20.0, 40.0, 1);
    assert!((spec.total_rate() - 40.0).abs() < 1e-6);
    assert_eq!(spec.hosts[0].name, "cap-000.test");
    assert_eq!(spec.host_names()[19], "cap-019.test");
    for (i, h) in spec.hosts.iter().enumerate() {
        let kind = std::mem::discriminant(&h.over);
        let seconds = h.over.retry_after().map_or(2, |d| d.as_secs() as u32);
        assert_eq!(kind, std::mem::discriminant(&OverCapacity::kinds(0)[i % 4]));
        assert!((2..=30).contains(&seconds), "{h:?}");
        assert!((ms(10)..=ms(40)).contains(&h.unloaded), "{h:?}");
        assert_eq!(h.burst, (5.0 * h.rate).max(1.0));
    }
    // Shuffled: the names do not climb with the rates.
    let rates: Vec<f64> = spec.hosts.iter().map(|h| h.rate).collect();
    assert!(rates.windows(2).any(|w| w[0] > w[1]));
    assert_eq!(spec.host("cap-003.test"), spec.hosts.get(3));
}

#[test]
fn pages_link_onwards_so_discovery_outruns_fetching() {
    assert_eq!(links_of(None, 10, 4), [0, 1, 2, 3]);
    assert_eq!(links_of(Some(2), 10, 4), [3, 5, 6, 7]);
    assert_eq!(links_of(Some(9), 10, 3), [4, 5, 6]);
    // From the home page, following links reaches every page of a host.
    let pages = 1000;
    let mut seen = vec![false; pages];
    let mut todo = links_of(None, pages, 4);
    while let Some(n) = todo.pop() {
        if !std::mem::replace(&mut seen[n], true) {
            todo.extend(links_of(Some(n), pages, 4));
        }
    }
    assert!(seen.iter().all(|&s| s));
    assert_eq!(page_number("/p/17.html", pages), Some(17));
    for path in [
        "/p/017.html",
        "/p/1000.html",
        "/p/x.html",
        "/p/17",
        "/q/1.html",
    ] {
        assert_eq!(page_number(path, pages), None, "{path}");
    }
}

#[test]
fn a_page_is_rendered_with_absolute_links_on_its_host() {
    let spec = CapacitySpec::ladder(2, 1.0, 2.0, 3.0, 0);
    let html = render(&spec, "cap-001.test", "/p/2.html", 8080).expect("a page");
    assert!(
        html.contains("<a href=\"http://cap-001.test:8080/p/3.html\">"),
        "{html}"
    );
    assert_eq!(html.matches("<a href").count(), LADDER_LINKS);
    assert!(render(&spec, "cap-001.test", "/p/10000.html", 8080).is_none());
}

/// Two hosts that take one request, then refuse: one with a Retry-After, one with a bare 503.
fn one_shot_spec() -> CapacitySpec {
    let one_shot = |name: &str, over| HostCapacity {
        name: name.to_owned(),
        rate: 0.001,
        burst: 1.0,
        unloaded: ms(15),
        growth: 2.0,
        knee: 0.8,
        spread: 1.0,
        over,
    };
    CapacitySpec {
        hosts: vec![
            one_shot("cap-000.test", OverCapacity::TooManyRetryAfter(5)),
            one_shot("cap-001.test", OverCapacity::Unavailable),
        ],
        pages_per_host: 10,
        links_per_page: 3,
        seed: 0,
    }
}

/// A client that resolves every host of `site` to it and goes nowhere else.
fn client(site: &CapacitySite) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10));
    for name in site.host_names() {
        builder = builder.resolve(&name, site.addr());
    }
    builder.build().expect("a client")
}

/// The status and `Retry-After` of a GET of `path` on `host`.
async fn get(
    client: &reqwest::Client,
    site: &CapacitySite,
    host: &str,
    path: &str,
) -> (u16, Option<String>) {
    let response = client
        .get(site.url(host, path))
        .send()
        .await
        .expect("an answer");
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (response.status().as_u16(), retry_after)
}

#[tokio::test]
async fn the_real_site_serves_then_answers_over_capacity_as_each_host_does() {
    let site = CapacitySite::start(one_shot_spec())
        .await
        .expect("the site");
    let client = client(&site);
    let (a, b) = ("cap-000.test", "cap-001.test");
    assert_eq!(get(&client, &site, a, "/robots.txt").await, (404, None));
    assert_eq!(get(&client, &site, a, "/").await, (200, None));
    assert_eq!(
        get(&client, &site, a, "/p/1.html").await,
        (429, Some("5".to_owned()))
    );
    let again = get(&client, &site, a, "/p/2.html").await;
    assert!(
        matches!(again, (429, Some(ref s)) if ["4", "5"].contains(&s.as_str())),
        "{again:?}"
    );
    assert_eq!(get(&client, &site, b, "/p/3.html").await, (200, None));
    assert_eq!(get(&client, &site, b, "/p/4.html").await, (503, None));
    let records = site.records();
    let statuses: Vec<u16> = records.iter().map(|r| r.request.status).collect();
    assert_eq!(statuses, [404, 200, 429, 429, 200, 503]);
    let over: Vec<bool> = records.iter().map(|r| r.over_capacity).collect();
    assert_eq!(over, [false, false, true, true, false, true]);
    assert_eq!(
        (records[1].served_in, records[1].load),
        (ms(15), 1.0),
        "an unloaded host serves at its unloaded latency"
    );
    assert_eq!(records[2].retry_after, Some(Duration::from_secs(5)));
    assert!(records.windows(2).all(|w| w[0].at() <= w[1].at()));
    assert_eq!(site.seeds()[1], site.url(b, "/"));
    let window = (site.started(), Instant::now() + ms(1));
    let verdict = judge(&records, site.spec(), window, Duration::ZERO);
    let figures = (
        verdict.figures.requests,
        verdict.figures.refused,
        verdict.figures.inside_retry_after,
    );
    assert_eq!(figures, (5, 3, 1), "robots.txt left out: {verdict:#?}");
    site.shutdown().await;
}

#[tokio::test]
async fn the_real_site_listens_only_on_127_0_0_0_8() {
    for addr in ["0.0.0.0:0", "[::1]:0"] {
        let addr = addr.parse().expect("an address");
        let refused = CapacitySite::start_on(one_shot_spec(), addr).await;
        assert!(refused.is_err(), "{addr}");
    }
}

/// A record of `host` and `path`, `at` ms after `t0`, answered `status` after `served` ms,
/// announcing `retry_after` seconds.
fn record(
    t0: Instant,
    host: &str,
    path: &str,
    at: u64,
    status: u16,
    served: u64,
    retry_after: Option<u64>,
) -> CapacityRecord {
    CapacityRecord {
        request: crate::RequestRecord {
            method: "GET".to_owned(),
            host: host.to_owned(),
            path: path.to_owned(),
            url: crate::url_for(host, 80, path),
            status,
            user_agent: None,
            at: t0 + ms(at),
        },
        served_in: ms(served),
        load: served as f64
            / if host.ends_with("000.test") {
                10.0
            } else {
                20.0
            },
        retry_after: retry_after.map(Duration::from_secs),
        over_capacity: matches!(status, 429 | 503),
    }
}

/// Two hosts: `a` of 2 req/s at 10 ms, `b` of 0.5 req/s at 20 ms.
fn two_hosts() -> CapacitySpec {
    let mut spec = one_shot_spec();
    spec.hosts[0].rate = 2.0;
    spec.hosts[0].unloaded = ms(10);
    spec.hosts[1].rate = 0.5;
    spec.hosts[1].unloaded = ms(20);
    spec
}

/// A log of both hosts, judged in the window 10 s to 20 s after `t0` with a floor of 1 s.
fn synthetic_log(t0: Instant) -> Vec<CapacityRecord> {
    let (a, b) = ("cap-000.test", "cap-001.test");
    let r =
        |host, at, status, served, retry| record(t0, host, "/p/1.html", at, status, served, retry);
    vec![
        r(a, 9_500, 200, 10, None),
        r(b, 10_000, 200, 20, None),
        r(a, 10_600, 200, 10, None),
        r(a, 11_000, 429, 0, Some(3)),
        r(a, 12_000, 429, 0, Some(2)),
        r(b, 12_000, 503, 0, None),
        r(b, 12_500, 200, 40, None),
        r(a, 15_000, 200, 10, None),
        record(t0, a, ROBOTS_PATH, 15_100, 404, 0, None),
        r(a, 19_900, 200, 12, None),
        r(a, 20_000, 200, 30, None),
        r(b, 30_000, 200, 20, None),
    ]
}

#[test]
fn the_judge_reads_rates_ideals_and_refusals_in_the_window() {
    let t0 = Instant::now();
    let spec = two_hosts();
    let verdict = judge(
        &synthetic_log(t0),
        &spec,
        (t0 + ms(10_000), t0 + ms(20_000)),
        ms(1000),
    );
    assert_eq!(verdict.window, ms(10_000));
    assert_eq!((verdict.figures.requests, verdict.figures.refused), (8, 3));
    assert!((verdict.useful_per_s - 0.5).abs() < 1e-9, "{verdict:#?}");
    assert!((verdict.ideal_per_s - 1.5).abs() < 1e-9);
    let one_at_a_time = 1.0 / 1.01 + 0.5;
    assert!((verdict.ideal_one_at_a_time_per_s - one_at_a_time).abs() < 1e-9);
    assert!((verdict.ratio() - 0.5 / 1.5).abs() < 1e-9);
    assert!((verdict.figures.refused_share() - 0.375).abs() < 1e-9);
    let rows: Vec<(usize, usize, usize)> = verdict
        .hosts
        .iter()
        .map(|h| (h.figures.requests, h.figures.useful, h.figures.refused))
        .collect();
    assert_eq!(rows, [(5, 3, 2), (3, 2, 1)]);
    // a's three 200s in the window and b's second are all of /p/1.html, served before.
    assert_eq!(verdict.figures.repeated, 4);
}

#[test]
fn the_judge_finds_retry_after_breaches_short_gaps_and_slow_answers() {
    let t0 = Instant::now();
    let verdict = judge(
        &synthetic_log(t0),
        &two_hosts(),
        (t0 + ms(10_000), t0 + ms(20_000)),
        ms(1000),
    );
    // The second 429 came 1 s into a 3 s window; 15.0 s is after both windows.
    assert_eq!(verdict.figures.inside_retry_after, 1);
    // a: 10.6 after 9.51 is 1.09 s, 11.0 after 10.61 is 0.39 s, 20.0 after 19.912 is 0.088 s;
    // b: 12.5 after 12.0 is 0.5 s. The robots.txt request is no gap.
    assert_eq!(verdict.figures.gaps_under_floor, 3);
    assert_eq!(verdict.figures.smallest_gap, Some(ms(88)));
    let gaps: Vec<usize> = verdict
        .hosts
        .iter()
        .map(|h| h.figures.gaps_under_floor)
        .collect();
    assert_eq!(gaps, [2, 1]);
    // In the window, a's 200s took 10, 10, 12 ms (1, 1, 1.2 × unloaded; the 30 ms one at 20.0 s
    // is past it), b's 20 and 40 ms (1, 2 ×).
    let close = |got: Option<f64>, want: f64| got.is_some_and(|g| (g - want).abs() < 1e-9);
    assert!(
        close(verdict.hosts[0].p95, 1.2),
        "{:?}",
        verdict.hosts[0].p95
    );
    assert!(close(verdict.p95_over_unloaded_max(), 2.0));
    assert!(close(verdict.p95_over_unloaded_median(), 1.6));
    // Every answer: 1, 1, 1, 1.2, 2; the 95th percentile by nearest rank is the fifth.
    assert!(close(verdict.p95_every_answer, 2.0));
    assert_eq!(verdict.hosts_p95_over(1.5), 1);
}

#[test]
fn the_judge_of_an_empty_log_says_nothing_happened() {
    let t0 = Instant::now();
    let verdict = judge(&[], &two_hosts(), (t0, t0), Duration::ZERO);
    assert_eq!(
        (
            verdict.figures.requests,
            verdict.useful_per_s,
            verdict.figures.refused_share()
        ),
        (0, 0.0, 0.0)
    );
    assert!(
        (verdict.ideal_per_s - 2.5).abs() < 1e-9,
        "a floor of 0 leaves the capacity"
    );
    assert_eq!(verdict.figures.smallest_gap, None);
    assert_eq!(verdict.p95_over_unloaded_median(), None);
    assert_eq!(verdict.p95_every_answer, None);
    assert_eq!(verdict.hosts_p95_over(1.5), 0);
}

#[test]
fn the_restart_bar_holds_each_host_to_its_learned_pace_in_the_first_minute() {
    let t0 = Instant::now();
    let (a, b) = ("cap-000.test", "cap-001.test");
    let mut log: Vec<CapacityRecord> = (0..35)
        .map(|i| record(t0, a, "/", 1000 * i, 200, 10, None))
        .collect();
    log.extend((0..7).map(|i| record(t0, b, "/", 8000 * i, 200, 10, None)));
    log.extend((0..5).map(|i| record(t0, b, ROBOTS_PATH, 100 * i, 404, 0, None)));
    log.push(record(t0, b, "/", 61_000, 200, 10, None));
    let learned = HashMap::from([
        (a.to_owned(), Duration::from_secs(2)),
        (b.to_owned(), Duration::from_secs(10)),
    ]);
    // a: 35 against 1.1 × 30 + 1 = 34; b: 7 against 7.6 (robots.txt and the 61st second left out).
    let problems = first_minute(&log, t0, &learned);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("cap-000.test: 35 requests"),
        "{problems:?}"
    );
    assert!(first_minute(&log[1..], t0, &learned).is_empty());
    assert_eq!(allowed_in_first_minute(Duration::ZERO), None);
}

#[test]
fn a_hosts_pace_is_the_median_gap_of_its_last_requests_before_the_stop() {
    let t0 = Instant::now();
    let (a, b) = ("cap-000.test", "cap-001.test");
    // a: gaps of 1 s, then 2, 2, 3, 2, 9 s over its last six requests; one after the stop.
    let arrivals = [0, 1_000, 2_000, 4_000, 6_000, 9_000, 11_000, 20_000, 40_000];
    let mut log: Vec<CapacityRecord> = arrivals
        .iter()
        .map(|&at| record(t0, a, "/", at, 200, 10, None))
        .collect();
    // b: five requests (and robots.txt) are too few for a pace.
    log.extend((0..5).map(|i| record(t0, b, "/", 500 * i, 200, 10, None)));
    log.extend((0..3).map(|i| record(t0, b, ROBOTS_PATH, 100 * i, 404, 0, None)));
    log.sort_by_key(CapacityRecord::at);
    let paces = paces_before(&log, t0 + ms(30_000));
    assert_eq!(paces.len(), 1, "{paces:?}");
    assert_eq!(paces.get(a), Some(&ms(2_000)), "{paces:?}");
    // The same bar over ten seconds: 1.1 × 10 / 2 + 1 = 6.5 requests.
    assert_eq!(allowed_in(ms(10_000), ms(2_000)), Some(6.5));
    let learned = HashMap::from([(a.to_owned(), ms(2_000))]);
    assert!(over_pace(&log, (t0, ms(10_000)), &learned).is_empty());
    assert_eq!(over_pace(&log, (t0, ms(2_500)), &learned).len(), 1);
}

#[test]
fn a_refusal_repeated_inside_a_window_does_not_stretch_it() {
    let t0 = Instant::now();
    let a = "cap-000.test";
    let log = vec![
        record(t0, a, "/p/1.html", 0, 429, 0, Some(3)),
        // Inside: its Retry-After, the rest rounded up, would reach 3.5 s.
        record(t0, a, "/p/2.html", 2_500, 429, 0, Some(1)),
        // After the window the host announced (3 s), though before the rounded-up rest.
        record(t0, a, "/p/3.html", 3_200, 200, 10, None),
    ];
    let verdict = judge(&log, &two_hosts(), (t0, t0 + ms(10_000)), Duration::ZERO);
    assert_eq!(verdict.figures.inside_retry_after, 1);
}
