//! "### Spouts": each spout's rate and query latency at each frontier size, against the reference.

use std::fmt::Write as _;

use super::input::{HEADLINE_SPOUT, REFERENCE_SPOUT, ShardSkew, SpoutResult, SpoutSize, Spouts};
use super::input::{equal_budget, find, sorted_sizes, spout_names};
use crate::format::{NONE, divide, num, opt_spread, ratio, setting, size, spread, thousands};
use crate::table::{not_run, table};

/// "### Spouts": method, one table per size, headlines and shard skew.
pub fn spouts_section(spouts: Option<&Spouts>) -> String {
    let mut out = String::from("### Spouts\n\n");
    let Some(s) = spouts else {
        out.push_str(&not_run("spouts.json"));
        return out;
    };
    let sizes = sorted_sizes(s);
    out.push_str(&method(s));
    if sizes.is_empty() {
        out.push_str("`spouts.json` has no sizes.\n");
        return out;
    }
    let names = spout_names(&sizes);
    for sz in &sizes {
        let _ = writeln!(out, "\n#### {} URLs\n", size(sz.urls));
        if let Some(line) = size_line(sz) {
            let _ = writeln!(out, "{line}\n");
        }
        out.push_str(&size_table(sz, &names));
        out.push_str(&super::round_trip::tables(sz));
    }
    if let Some(all) = &s.all_due {
        out.push_str(&all_due(all, &names));
    }
    let headlines = headlines(&sizes);
    if !headlines.is_empty() {
        out.push_str("\nHeadlines:\n\n");
        for h in headlines {
            let _ = writeln!(out, "- {h}");
        }
    }
    let skew_rows: Vec<Vec<String>> = sizes
        .iter()
        .filter_map(|sz| {
            let shards = sz.shards.as_ref()?;
            Some(vec![
                size(sz.urls),
                skew_cell(shards.status_routed.as_ref()),
                skew_cell(shards.urls.as_ref()),
            ])
        })
        .collect();
    if !skew_rows.is_empty() {
        out.push_str("\nShard skew:\n\n");
        out.push_str(&table(
            &[
                "URLs",
                "status index routed by host: skew (largest/mean)",
                "urls index: skew",
            ],
            &skew_rows,
        ));
    }
    out
}

/// The "all due" case: its table, and the queue spout's URLs/s over the aggregation spout's.
fn all_due(all: &SpoutSize, names: &[String]) -> String {
    let mut out = format!(
        "\n#### All due: {} URLs, every one due\n\nA frontier just seeded or just migrated, in \
         indices of its own ({} due).\n\n",
        size(all.urls),
        all.due_urls.map_or_else(|| "?".to_string(), thousands)
    );
    out.push_str(&size_table(all, names));
    out.push_str(&super::round_trip::tables(all));
    let rate = |name: &str| {
        find(all, name)
            .and_then(|sp| sp.urls_per_second.as_ref())
            .map(|s| s.median)
    };
    if let (Some(queue), Some(aggregation)) = (rate("queue"), rate("aggregation"))
        && aggregation > 0.0
    {
        let _ = writeln!(
            out,
            "\nQueue over aggregation, all due: {:.2}.",
            queue / aggregation
        );
    }
    out
}

/// One sentence on how the spouts were measured.
fn method(s: &Spouts) -> String {
    let mut parts = vec![match s.window_seconds {
        Some(w) => format!(
            "Each spout fed an immediate-ack fetcher for a window of {} s",
            setting(w)
        ),
        None => "Each spout fed an immediate-ack fetcher".to_string(),
    }];
    if let Some(runs) = s.runs {
        parts.push(format!(
            "{} per spout and size (median, with min–max over the runs)",
            crate::format::count(runs, "run")
        ));
    }
    if let Some(order) = &s.order {
        let mut text = "the spouts take turns within each run".to_string();
        if let Some(scheme) = &order.scheme {
            text.push_str(&format!(", in an order balanced over runs ({scheme})"));
        }
        if order.balanced == Some(false) {
            text.push_str(" — not balanced in this run (odd number of runs)");
        }
        parts.push(text);
    }
    if let Some(r) = &s.runner {
        let mut settings = Vec::new();
        if let Some(d) = r.min_delay_ms {
            settings.push(format!("min delay {} ms", setting(d)));
        }
        if let Some(p) = r.max_pending {
            settings.push(format!("max pending {}", thousands(p)));
        }
        if let Some(p) = r.purgatory_seconds {
            settings.push(format!("purgatory {} s", setting(p)));
        }
        if !settings.is_empty() {
            parts.push(format!("runner: {}", settings.join(", ")));
        }
    }
    if let Some(q) = &s.query_budget {
        let mut budget = Vec::new();
        if let Some(h) = q.hosts_per_query {
            budget.push(format!("{} hosts per query", thousands(h)));
        }
        if let Some(u) = q.urls_per_host {
            budget.push(format!("{} URLs per host", thousands(u)));
        }
        match (q.queues_held, q.claims_per_query) {
            (Some(held), Some(claims)) => budget.push(format!(
                "the queue spout holds up to {} queues and claims up to {} per query",
                thousands(held),
                thousands(claims)
            )),
            (Some(held), None) => budget.push(format!(
                "the queue spout holds up to {} queues",
                thousands(held)
            )),
            _ => {}
        }
        if !budget.is_empty() {
            parts.push(format!("query budget: {}", budget.join(", ")));
        }
    }
    if let Some(shards) = s.shards {
        parts.push(format!(
            "status index and urls index of {shards} shards each"
        ));
    }
    let mut out = format!("{}.\n", parts.join("; "));
    let extra: Vec<String> = sorted_sizes(s)
        .iter()
        .flat_map(|sz| sz.spouts.iter())
        .filter(|sp| !equal_budget(sp))
        .map(|sp| sp.label.clone().unwrap_or_else(|| sp.spout.clone()))
        .fold(Vec::new(), |mut seen, label| {
            if !seen.contains(&label) {
                seen.push(label);
            }
            seen
        });
    if !extra.is_empty() {
        out.push_str(&format!(
            "\nRows outside the equal budget, shown for reference and left out of the headlines and \
             the acceptance figures: {}.\n",
            extra
                .iter()
                .map(|l| format!("`{l}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out
}

/// "20,000 hosts, 100,000 URLs due; index loaded in 120 s."
fn size_line(sz: &SpoutSize) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(h) = sz.hosts {
        parts.push(format!("{} hosts", thousands(h)));
    }
    if let Some(d) = sz.due_urls {
        parts.push(format!("{} URLs due", thousands(d)));
    }
    let mut line = parts.join(", ");
    if let Some(l) = sz.load_seconds {
        if !line.is_empty() {
            line.push_str("; ");
        }
        line.push_str(&format!("index loaded in {} s", num(l)));
    }
    (!line.is_empty()).then(|| format!("{line}."))
}

/// The spout table at one size.
fn size_table(sz: &SpoutSize, names: &[String]) -> String {
    let reference = find(sz, REFERENCE_SPOUT).and_then(|r| r.urls_per_second.map(|u| u.median));
    let rows: Vec<Vec<String>> = names
        .iter()
        .filter_map(|n| find(sz, n))
        .map(|sp| {
            vec![
                sp.label.clone().unwrap_or_else(|| sp.spout.clone()),
                opt_spread(sp.urls_per_second.as_ref()),
                ratio(divide(sp.urls_per_second.map(|u| u.median), reference)),
                opt_spread(sp.query_ms_p50.as_ref()),
                opt_spread(sp.query_ms_p99.as_ref()),
                opt_spread(sp.first_url_seconds.as_ref()),
                opt_spread(sp.hosts_per_1000_urls.as_ref()),
                new_host_cell(sp),
            ]
        })
        .collect();
    table(
        &[
            "spout",
            "URLs/s (median, min–max)",
            "× aggregation",
            "query p50 ms",
            "query p99 ms",
            "first URL s",
            "hosts per 1,000 URLs",
            "new host s",
        ],
        &rows,
    )
}

/// The new host cell: spread, and how many trials did not see the host.
pub fn new_host_cell(sp: &SpoutResult) -> String {
    let missed = sp.new_host_missed.unwrap_or(0);
    match (sp.new_host_seconds.as_ref(), sp.new_host_trials) {
        (Some(s), trials) => {
            let mut cell = spread(s);
            if missed > 0 {
                match trials {
                    Some(t) => cell.push_str(&format!(" ({missed} of {t} not seen)")),
                    None => cell.push_str(&format!(" ({missed} not seen)")),
                }
            }
            cell
        }
        (None, Some(t)) if t > 0 && missed == t => format!("not seen in {t} trials"),
        (None, _) => NONE.to_string(),
    }
}

/// Headline comparisons of the queue spout with the aggregation spout.
fn headlines(sizes: &[&SpoutSize]) -> Vec<String> {
    let median = |sz: &SpoutSize, name: &str| {
        find(sz, name).and_then(|sp| sp.urls_per_second.map(|u| u.median))
    };
    let mut out: Vec<String> = sizes
        .iter()
        .filter_map(|sz| {
            let r = divide(median(sz, HEADLINE_SPOUT), median(sz, REFERENCE_SPOUT))?;
            Some(format!(
                "{HEADLINE_SPOUT} spout / {REFERENCE_SPOUT} spout URLs per second at {}: {}×",
                size(sz.urls),
                ratio(Some(r))
            ))
        })
        .collect();
    let p99 =
        |sz: &SpoutSize| find(sz, HEADLINE_SPOUT).and_then(|sp| sp.query_ms_p99.map(|q| q.median));
    if let (Some(first), Some(last)) = (sizes.first(), sizes.last())
        && sizes.len() > 1
        && let (Some(a), Some(b)) = (p99(first), p99(last))
    {
        let change = divide(Some(b), Some(a))
            .map(|r| format!(" ({}×)", ratio(Some(r))))
            .unwrap_or_default();
        out.push(format!(
            "{HEADLINE_SPOUT} spout p99 query latency: {} ms at {} → {} ms at {}{change}",
            num(a),
            size(first.urls),
            num(b),
            size(last.urls)
        ));
    }
    out
}

/// Skew of one index, with the largest shard and the mean.
fn skew_cell(s: Option<&ShardSkew>) -> String {
    let Some(s) = s else {
        return NONE.to_string();
    };
    let largest = s.docs.iter().copied().max();
    let mean = (!s.docs.is_empty())
        .then(|| s.docs.iter().map(|d| *d as f64).sum::<f64>() / s.docs.len() as f64);
    let skew = s.skew.or_else(|| divide(largest.map(|l| l as f64), mean));
    let mut cell = ratio(skew);
    if let (Some(l), Some(m)) = (largest, mean) {
        cell.push_str(&format!(" (largest {}, mean {})", thousands(l), num(m)));
    }
    cell
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::parse;

    const SPOUTS: &str = r#"{"benchmark":"spouts","window_seconds":20.0,"runs":3,"shards":8,
      "runner":{"min_delay_ms":0,"max_pending":2000,"purgatory_seconds":30},
      "query_budget":{"hosts_per_query":100,"urls_per_host":10},
      "sizes":[
       {"urls":5000000,"hosts":100000,"due_urls":500000,"load_seconds":600.0,
        "shards":{"status_routed":{"docs":[700000,600000],"skew":1.12},"urls":{"docs":[625000,625000],"skew":1.0}},
        "spouts":[
         {"spout":"aggregation","urls_per_second":{"median":500.0,"min":450.0,"max":520.0},
          "query_ms_p99":{"median":800.0,"min":700.0,"max":900.0},
          "new_host_seconds":null,"new_host_missed":3,"new_host_trials":3},
         {"spout":"queue","urls_per_second":{"median":20000.0,"min":19000.0,"max":21000.0},
          "query_ms_p99":{"median":40.0,"min":35.0,"max":45.0},
          "new_host_seconds":{"median":2.5,"min":2.0,"max":3.0},"new_host_missed":1,"new_host_trials":3}]},
       {"urls":1000000,
        "spouts":[
         {"spout":"aggregation","urls_per_second":{"median":1000.0,"min":900.0,"max":1100.0}},
         {"spout":"queue","urls_per_second":{"median":25000.0,"min":24000.0,"max":26000.0},
          "query_ms_p99":{"median":20.0,"min":18.0,"max":22.0}},
         {"spout":"hybrid","hosts_per_1000_urls":null}]}]}"#;

    fn spouts() -> String {
        let s: Spouts = match parse(SPOUTS) {
            Ok(s) => s,
            Err(e) => panic!("sample spouts.json: {e:#}"),
        };
        spouts_section(Some(&s))
    }

    #[test]
    fn spouts_tables_in_size_order_with_ratios() {
        let md = spouts();
        let one = md.find("#### 1 M URLs").unwrap_or(usize::MAX);
        let five = md.find("#### 5 M URLs").unwrap_or(0);
        assert!(one < five, "{md}");
        assert!(md.contains("20 s"), "{md}");
        assert!(md.contains("max pending 2,000"), "{md}");
        assert!(md.contains("100,000 hosts, 500,000 URLs due; index loaded in 600 s."));
        assert!(
            md.contains("| queue | 25,000 (24,000–26,000) | 25.00 | – | 20.0 (18.0–22.0) |"),
            "{md}"
        );
        assert!(
            md.contains("| aggregation | 1,000 (900–1,100) | 1.00 |"),
            "{md}"
        );
        assert!(
            md.contains("| hybrid | – | – | – | – | – | – | – |"),
            "{md}"
        );
        assert!(md.contains("not seen in 3 trials"), "{md}");
        assert!(md.contains("2.50 (2.00–3.00) (1 of 3 not seen)"), "{md}");
    }

    #[test]
    fn extra_rows_are_labelled_and_set_apart() -> anyhow::Result<()> {
        let s: Spouts = parse(
            r#"{"runs":1,"order":{"scheme":"ABBA","balanced":false,"runs":[["aggregation","queue","queue-1000"]]},
            "query_budget":{"hosts_per_query":100,"urls_per_host":10,"queues_held":100,"claims_per_query":100},
            "sizes":[{"urls":1000000,"spouts":[
              {"spout":"aggregation","urls_per_second":{"median":500,"min":500,"max":500}},
              {"spout":"queue","urls_per_second":{"median":1000,"min":1000,"max":1000}},
              {"spout":"queue-1000","label":"queue (1000 held)","equal_budget":false,"queues_held":1000,
               "urls_per_second":{"median":4000,"min":4000,"max":4000}}]}]}"#,
        )?;
        let md = spouts_section(Some(&s));
        assert!(md.contains("1 run per spout and size"), "{md}");
        assert!(
            md.contains("in an order balanced over runs (ABBA) — not balanced in this run"),
            "{md}"
        );
        assert!(
            md.contains("the queue spout holds up to 100 queues and claims up to 100 per query"),
            "{md}"
        );
        assert!(
            md.contains("acceptance figures: `queue (1000 held)`."),
            "{md}"
        );
        assert!(
            md.contains("| queue (1000 held) | 4,000 (4,000–4,000) | 8.00 |"),
            "{md}"
        );
        assert!(md.contains("URLs per second at 1 M: 2.00×"), "{md}");
        Ok(())
    }

    #[test]
    fn spouts_headlines_and_skew() {
        let md = spouts();
        assert!(
            md.contains("- queue spout / aggregation spout URLs per second at 1 M: 25.00×"),
            "{md}"
        );
        assert!(md.contains("at 5 M: 40.00×"), "{md}");
        assert!(
            md.contains("- queue spout p99 query latency: 20.0 ms at 1 M → 40.0 ms at 5 M (2.00×)"),
            "{md}"
        );
        assert!(
            md.contains("| 5 M | 1.12 (largest 700,000, mean 650,000) | 1.00 (largest 625,000, mean 625,000) |"),
            "{md}"
        );
        assert!(!md.contains("| 1 M | "), "no shard data at 1 M: {md}");
    }

    #[test]
    fn missing_spouts_say_not_run() {
        assert!(spouts_section(None).contains("Not run in this run"));
    }
}
