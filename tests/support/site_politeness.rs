//! Politeness across crawl processes, read from the test site's own request log: each process sends
//! its own User-Agent (`PREFIX<N>/...`), and requests of one host by two processes must arrive at
//! least the delay apart (robots.txt requests aside).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use squall_testsite::RequestRecord;

/// One request as the check sees it: when it arrived, from which process, for which path.
type Arrival<'a> = (Instant, Option<usize>, &'a str);

/// The violations: requests of one host by processes `PREFIX<a>` and `PREFIX<b>`, `a != b`, closer
/// than `delay`.
pub fn problems(requests: &[RequestRecord], prefix: &str, delay: Duration) -> Vec<String> {
    let process_of = |r: &RequestRecord| {
        r.user_agent
            .as_deref()
            .and_then(|ua| ua.split('/').next())
            .and_then(|name| name.strip_prefix(prefix))
            .and_then(|n| n.parse::<usize>().ok())
    };
    let mut by_host: BTreeMap<&str, Vec<Arrival<'_>>> = BTreeMap::new();
    for r in requests.iter().filter(|r| r.path != "/robots.txt") {
        by_host
            .entry(&r.host)
            .or_default()
            .push((r.at, process_of(r), &r.path));
    }
    let mut problems = Vec::new();
    for (host, mut list) in by_host {
        list.sort_by_key(|r| r.0);
        for pair in list.windows(2) {
            let ((a_at, a, a_path), (b_at, b, b_path)) = (pair[0], pair[1]);
            if a != b && b_at.duration_since(a_at) < delay {
                problems.push(format!(
                    "the site got {host}{b_path} from process {b:?} {:?} after {host}{a_path} from process {a:?}",
                    b_at.duration_since(a_at)
                ));
            }
        }
    }
    problems
}
