//! `urlfrontier.json`: URLs per second through the URLFrontier API (squall's server, clients on
//! loopback gRPC) against the same frontier read in process by the spout runner, on the embedded
//! and the queue frontier.

pub use squall_bench_schema::urlfrontier::{Frontier, UrlFrontier};

use crate::format::{NONE, count, opt_spread, ratio, setting, thousands};
use crate::table::table;

/// Issue 17: through the API at least this many times the in-process rate, on every frontier.
pub const AIM: f64 = 0.7;

/// "### URLFrontier API": in process against through the API per frontier, and the verdict.
pub fn section(u: Option<&UrlFrontier>) -> String {
    let mut out = String::from("### URLFrontier API\n\n");
    let Some(u) = u else {
        out.push_str("_Not run in this run_ (no `urlfrontier.json`).\n");
        return out;
    };
    out.push_str(&about(u));
    let rows: Vec<Vec<String>> = u
        .frontiers
        .iter()
        .map(|f| {
            let mut ratio_cell = ratio(f.ratio());
            if f.ratio().is_some_and(|r| r < AIM) {
                ratio_cell.push_str(" (below aim)");
            }
            vec![
                f.frontier.clone(),
                opt_spread(f.in_process.as_ref()),
                opt_spread(f.api.as_ref()),
                ratio_cell,
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "frontier",
            "in process, URLs/s",
            "through the API, URLs/s",
            "API / in process",
        ],
        &rows,
    ));
    out.push_str(&format!("\n{}\n", verdict(u)));
    out
}

/// The setup and the command, before the table.
fn about(u: &UrlFrontier) -> String {
    let mut about = Vec::new();
    if let (Some(urls), Some(hosts)) = (u.urls, u.hosts) {
        about.push(format!(
            "{} due URLs over {}, a fresh frontier per run",
            thousands(urls),
            count(hosts, "host")
        ));
    }
    let batch = u.batch.map_or_else(String::new, |b| {
        format!(" in batches of up to {}", thousands(b))
    });
    let clients = u
        .clients
        .map_or_else(|| "clients".to_string(), |c| count(c, "client"));
    about.push(format!(
        "every URL taken out and written back as FETCHED{batch}, in process by the frontier's \
         spout under the spout runner, or through the API by {clients} on loopback gRPC to \
         squall's server (GetURLs, then PutURLs of each URL)"
    ));
    if let Some(runs) = u.runs {
        let order = if runs > 1 { " in mirrored order" } else { "" };
        about.push(format!(
            "{} of each{order}, median (min–max)",
            count(runs, "run")
        ));
    }
    if let Some(commit) = &u.run.commit {
        let date = u
            .run
            .date
            .as_deref()
            .map_or_else(String::new, |d| format!(", {d}"));
        about.push(format!("commit {commit}{date}"));
    }
    format!(
        "{}. Command: `cargo bench --bench urlfrontier` (or `scripts/bench --only urlfrontier`).\n\n",
        about.join("; ")
    )
}

/// Issue 17's aim, judged on the frontier with the smallest ratio.
fn verdict(u: &UrlFrontier) -> String {
    let aim = format!(
        "Issue 17, throughput through the API ≥ {} × the in-process spout on the same frontier",
        setting(AIM)
    );
    let measured: Vec<(&str, f64)> = u
        .frontiers
        .iter()
        .filter_map(|f| Some((f.frontier.as_str(), f.ratio()?)))
        .collect();
    let unmeasured: Vec<&str> = u
        .frontiers
        .iter()
        .filter(|f| f.ratio().is_none())
        .map(|f| f.frontier.as_str())
        .collect();
    let Some((worst, r)) = measured.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1)) else {
        return format!("{aim}: not measured (no frontier with both figures).");
    };
    let mut text = if r >= AIM {
        format!("{aim}: met ({}, the {worst} frontier", ratio(Some(r)))
    } else {
        format!(
            "{aim}: **missed** ({}, the {worst} frontier",
            ratio(Some(r))
        )
    };
    if measured.len() > 1 {
        text.push_str(" decides");
    }
    text.push(')');
    if !unmeasured.is_empty() {
        text.push_str(&format!("; no figure for {}", unmeasured.join(", ")));
    }
    text.push('.');
    text
}

/// The frontier and its API / in-process ratio, for the plot's category labels.
pub fn ratio_label(f: &Frontier) -> String {
    match f.ratio() {
        Some(r) => format!("{}: API {}×", f.frontier, ratio(Some(r))),
        None => format!("{}: API {NONE}", f.frontier),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of both frontiers: the embedded one at `embedded` API / in process.
    fn sample(embedded: f64) -> UrlFrontier {
        let json = format!(
            r#"{{"benchmark":"urlfrontier","urls":20000,"hosts":200,"clients":4,"batch":500,"runs":3,
            "engine":"http://127.0.0.1:9200","frontiers":[
             {{"frontier":"embedded","in_process":{{"median":40000,"min":38000,"max":41000}},
              "api":{{"median":{},"min":1,"max":{}}},"ratio_api_to_in_process":{embedded},
              "runs":[{{"run":0,"path":"in_process","urls_per_s":40000}}]}},
             {{"frontier":"queue","in_process":{{"median":3000,"min":2900,"max":3100}},
              "api":{{"median":2700,"min":2600,"max":2800}},"ratio_api_to_in_process":0.9}}]}}"#,
            40000.0 * embedded,
            40000.0 * embedded + 1.0,
        );
        crate::input::parse(&json).expect("JSON")
    }

    #[test]
    fn the_section_gives_each_frontier_the_setup_and_the_verdict() {
        let u = sample(0.8);
        let md = section(Some(&u));
        assert!(md.starts_with("### URLFrontier API\n\n"), "{md}");
        assert!(
            md.contains("20,000 due URLs over 200 hosts, a fresh frontier per run; every URL"),
            "{md}"
        );
        assert!(
            md.contains("FETCHED in batches of up to 500, in process"),
            "{md}"
        );
        assert!(md.contains("by 4 clients on loopback gRPC"), "{md}");
        assert!(md.contains("3 runs of each in mirrored order"), "{md}");
        assert!(md.contains("`cargo bench --bench urlfrontier`"), "{md}");
        assert!(md.contains("`scripts/bench --only urlfrontier`"), "{md}");
        assert!(
            md.contains("| embedded | 40,000 (38,000–41,000) | 32,000 (1.00–32,001) | 0.80 |"),
            "{md}"
        );
        assert!(
            md.contains("| queue | 3,000 (2,900–3,100) | 2,700 (2,600–2,800) | 0.90 |"),
            "{md}"
        );
        assert!(
            md.contains("≥ 0.7 × the in-process spout on the same frontier: met (0.80, the embedded frontier decides)."),
            "{md}"
        );
    }

    #[test]
    fn the_smaller_ratio_decides() {
        let md = section(Some(&sample(0.5)));
        assert!(md.contains("| 0.50 (below aim) |"), "{md}");
        assert!(
            md.contains(": **missed** (0.50, the embedded frontier decides)."),
            "{md}"
        );
        assert!(!md.contains("| 0.90 (below aim)"), "{md}");
    }

    #[test]
    fn missing_figures_are_named() {
        let u: UrlFrontier = crate::input::parse(
            r#"{"frontiers":[{"frontier":"embedded","in_process":{"median":100,"min":90,"max":110},
                "api":{"median":80,"min":70,"max":90}},{"frontier":"queue"}]}"#,
        )
        .expect("JSON");
        let md = section(Some(&u));
        assert!(
            md.contains("| embedded | 100 (90.0–110) | 80.0 (70.0–90.0) | 0.80 |"),
            "the ratio of the medians when the file has none: {md}"
        );
        assert!(md.contains("| queue | – | – | – |"), "{md}");
        assert!(
            md.contains("met (0.80, the embedded frontier); no figure for queue."),
            "{md}"
        );
        let none = section(Some(&UrlFrontier::default()));
        assert!(none.contains(": not measured"), "{none}");
        assert!(section(None).contains("no `urlfrontier.json`"));
    }

    #[test]
    fn the_plot_is_drawn() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let results = crate::results::Results {
            urlfrontier: Some(sample(0.8)),
            ..Default::default()
        };
        let drawn = crate::plots::draw_all(&results, &[], dir.path())?;
        assert!(
            drawn.iter().any(|p| p.file == "urlfrontier.svg"),
            "{drawn:?}"
        );
        let svg = std::fs::read_to_string(dir.path().join("urlfrontier.svg"))?;
        assert!(svg.contains("embedded: API 0.80×"), "{svg}");
        assert!(svg.contains("through the API"), "{svg}");
        Ok(())
    }

    #[test]
    fn results_read_the_file() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(
            dir.path().join("urlfrontier.json"),
            r#"{"urls":5,"frontiers":[{"frontier":"queue"}]}"#,
        )?;
        let results = crate::results::Results::read_dir(dir.path())?;
        let u = results.urlfrontier.expect("read");
        assert_eq!(u.urls, Some(5));
        assert_eq!(u.frontiers[0].frontier, "queue");
        Ok(())
    }
}
