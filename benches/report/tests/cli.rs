//! Runs `bench-report` on sample result files in a temporary directory.

use std::path::Path;
use std::process::{Command, Output};

use anyhow::{Result, ensure};

/// Sample `spouts.json` with two sizes.
const SPOUTS: &str = r#"{"benchmark":"spouts","window_seconds":20.0,"runs":3,"shards":4,
 "runner":{"min_delay_ms":0,"max_pending":2000,"purgatory_seconds":30},
 "query_budget":{"hosts_per_query":100,"urls_per_host":10},
 "sizes":[
  {"urls":1000000,"hosts":20000,"due_urls":100000,"load_seconds":120.0,
   "shards":{"status_routed":{"docs":[260000,240000,250000,250000],"skew":1.04},
             "urls":{"docs":[250100,249900,250000,250000],"skew":1.0}},
   "spouts":[
    {"spout":"aggregation","urls_per_second":{"median":2100,"min":1950,"max":2230},
     "query_ms_p50":{"median":180,"min":170,"max":195},"query_ms_p99":{"median":420,"min":390,"max":470},
     "first_url_seconds":{"median":0.35,"min":0.3,"max":0.41},"hosts_per_1000_urls":{"median":98,"min":97,"max":100},
     "new_host_seconds":{"median":12.1,"min":10.5,"max":14.0},"new_host_missed":0,"new_host_trials":3,"queries":540},
    {"spout":"queue","urls_per_second":{"median":42000,"min":40100,"max":43800},
     "query_ms_p50":{"median":4,"min":3.6,"max":4.5},"query_ms_p99":{"median":15,"min":12,"max":19},
     "first_url_seconds":{"median":0.02,"min":0.015,"max":0.03},"hosts_per_1000_urls":null,
     "new_host_seconds":{"median":1.1,"min":0.9,"max":1.4},"new_host_missed":0,"new_host_trials":3,"queries":21000}]},
  {"urls":5000000,"hosts":100000,"due_urls":500000,"load_seconds":610.0,
   "shards":{"status_routed":{"docs":[1400000,1200000,1150000,1250000],"skew":1.12},
             "urls":{"docs":[1250300,1249700,1250000,1250000],"skew":1.0}},
   "spouts":[
    {"spout":"aggregation","urls_per_second":{"median":480,"min":440,"max":510},
     "query_ms_p50":{"median":900,"min":850,"max":960},"query_ms_p99":{"median":2100,"min":1900,"max":2400},
     "first_url_seconds":null,"hosts_per_1000_urls":{"median":97,"min":96,"max":99},
     "new_host_seconds":null,"new_host_missed":3,"new_host_trials":3,"queries":110},
    {"spout":"queue","urls_per_second":{"median":39000,"min":37000,"max":40500},
     "query_ms_p50":{"median":5,"min":4.4,"max":5.8},"query_ms_p99":{"median":22,"min":18,"max":30},
     "first_url_seconds":{"median":0.03,"min":0.02,"max":0.04},"hosts_per_1000_urls":{"median":94,"min":92,"max":96},
     "new_host_seconds":{"median":1.3,"min":1.0,"max":1.7},"new_host_missed":0,"new_host_trials":3,"queries":19500}]}]}"#;

/// Sample `writer.json`.
const WRITER: &str = r#"{"benchmark":"writer","documents":200000,"batch":1000,
 "writer_docs_per_second":{"median":38000,"min":36500,"max":39100},
 "bulk_docs_per_second":{"median":40000,"min":39000,"max":41200},"ratio_writer_to_bulk":0.95}"#;

/// Sample `parser.json`, below its aim.
const PARSER: &str = r#"{"benchmark":"parser","elements_seen_by_tokenizer":125700,"mib":6.8,
 "outlinks_found_by_parser":43500,"pages":300,"parser_mib_per_second":{"median":54,"min":51,"max":56.5},
 "ratio_parser_to_tokenizer":0.54,"tokenizer_mib_per_second":{"median":100,"min":97,"max":103}}"#;

/// Sample `politeness.json`.
const POLITENESS: &str = r#"{"benchmark":"politeness","delay_seconds":0.5,"fetches":1350,"hosts":50,
 "ideal_pages_per_second":100.0,"overall_pages_per_second":103.2,"overall_ratio_to_ideal":1.03,
 "overlapping_fetches":0,"smallest_gap_seconds":0.500012,"steady_pages_per_second":99.46,
 "steady_ratio_to_ideal":0.9946,"summary":"fine"}"#;

/// Sample `shared_crawl.json`: one run, one process doing everything.
const SHARED_CRAWL: &str = r#"{"benchmark":"shared_crawl","processes":3,"hosts":6,"pages_per_host":400,
 "site_urls":2418,"delay_seconds":0.1,"ideal_pages_per_second":60.0,"runs":1,
 "crawls":[{"fetches":2418,"seconds":100.0,"pages_per_second":24.2,"ratio_to_ideal":0.403,
   "processes":[{"fetches":2418,"share":1.0,"hosts":6,"stop":"Idle","exited_seconds":110.0},
                {"fetches":0,"share":0.0,"hosts":0,"stop":"Idle","exited_seconds":66.0},
                {"fetches":0,"share":0.0,"hosts":0,"stop":"Idle","exited_seconds":66.5}],
   "cross_process_overlaps":0,"missing_urls":0,"fetched_more_than_once":0}],
 "pages_per_second":{"median":24.2,"min":24.2,"max":24.2},"ratio_to_ideal":0.403,"smallest_share":0.0}"#;

/// Runs the binary with `args`.
fn run(args: &[&str]) -> Result<Output> {
    Ok(Command::new(env!("CARGO_BIN_EXE_bench-report"))
        .args(args)
        .output()?)
}

/// The text of `dir/name`.
fn read(dir: &Path, name: &str) -> Result<String> {
    Ok(std::fs::read_to_string(dir.join(name))?)
}

#[test]
fn draws_plots_writes_summary_and_splices() -> Result<()> {
    let root = tempfile::tempdir()?;
    let dir = root.path().join("benches").join("results");
    std::fs::create_dir_all(&dir)?;
    for (name, text) in [
        ("spouts.json", SPOUTS),
        ("writer.json", WRITER),
        ("parser.json", PARSER),
        ("politeness.json", POLITENESS),
        ("shared_crawl.json", SHARED_CRAWL),
    ] {
        std::fs::write(dir.join(name), text)?;
    }
    let doc = root.path().join("BENCHMARKS.md");
    std::fs::write(
        &doc,
        "# Benchmarks\n\n## Results\n\n<!-- results:begin -->\nold\n<!-- results:end -->\n\nend\n",
    )?;
    let dir_arg = dir.to_string_lossy();
    let doc_arg = doc.to_string_lossy();
    let out = run(&["--results", &dir_arg, "--update-markdown", &doc_arg])?;
    ensure!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    for (file, title) in [
        (
            "spouts-urls-per-second.svg",
            "URLs emitted per second (immediate-ack fetcher)",
        ),
        (
            "spouts-query-latency.svg",
            "Spout query latency, p50 (dashed) and p99 (solid)",
        ),
        (
            "shard-skew.svg",
            "Documents per shard at 5 M URLs (skew: status 1.12, urls 1.00)",
        ),
        (
            "stage-ratios.svg",
            "squall against its baseline (ratio, 1.0 = baseline)",
        ),
    ] {
        let svg = read(&dir, file)?;
        ensure!(svg.starts_with("<svg"), "{file} is not an SVG");
        ensure!(svg.contains("<text"), "{file} has no text");
        ensure!(svg.contains(title), "{file} lacks its title");
        ensure!(
            (2_000..500_000).contains(&svg.len()),
            "{file} is {} bytes",
            svg.len()
        );
    }
    let latency = read(&dir, "spouts-query-latency.svg")?;
    ensure!(
        latency.contains("\nqueue\n</text>"),
        "legend names the spouts"
    );

    let summary = read(&dir, "summary.md")?;
    ensure!(summary.contains(
        "![URLs emitted per second (immediate-ack fetcher)](spouts-urls-per-second.svg)"
    ));
    ensure!(summary.contains("_Not run in this run_ (no `machine.json`)"));
    ensure!(summary.contains("| fetcher | not run in this run |"));
    ensure!(summary.contains("| 0.54 (below aim) | ≥ 0.8 |"));
    ensure!(summary.contains("| queue | 42,000 (40,100–43,800) | 20.00 |"));
    ensure!(summary.contains("### Shared crawl"));
    ensure!(summary.contains("| 1 | 2,418 | 24.2 | 0.40 (below aim) | 1.00 / 0.00 / 0.00 |"));
    ensure!(summary.contains("### Acceptance (issue 44)"));
    ensure!(
        summary.contains("| 20.00 (42,000 ÷ 2,100 URLs/s) | met |"),
        "queue ÷ aggregation at 1 M"
    );
    ensure!(summary.contains("not measured (this run has no 10 M size)"));
    ensure!(summary.contains("| 0.00 (run 1: 1.00 / 0.00 / 0.00) | **missed** |"));

    let stdout = String::from_utf8_lossy(&out.stdout);
    ensure!(
        stdout.contains("](benches/results/stage-ratios.svg)"),
        "{stdout}"
    );
    let spliced = std::fs::read_to_string(&doc)?;
    ensure!(
        spliced
            .starts_with("# Benchmarks\n\n## Results\n\n<!-- results:begin -->\n\n### Machine\n")
    );
    ensure!(spliced.ends_with("<!-- results:end -->\n\nend\n"));
    ensure!(!spliced.contains("old"));
    ensure!(spliced.contains("](benches/results/spouts-urls-per-second.svg)"));
    Ok(())
}

#[test]
fn only_existing_inputs_are_drawn() -> Result<()> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("writer.json"), WRITER)?;
    let out = run(&["--results", &dir.path().to_string_lossy()])?;
    ensure!(out.status.success());
    ensure!(dir.path().join("stage-ratios.svg").exists());
    ensure!(!dir.path().join("spouts-urls-per-second.svg").exists());
    ensure!(!dir.path().join("shard-skew.svg").exists());
    let stdout = String::from_utf8_lossy(&out.stdout);
    ensure!(
        stdout.contains("![squall against its baseline (ratio, 1.0 = baseline)](stage-ratios.svg)")
    );
    ensure!(!stdout.contains("spouts-query-latency.svg"));
    Ok(())
}

#[test]
fn bad_input_and_missing_markers_are_errors() -> Result<()> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("politeness.json"), r#"{"hosts": "fifty"}"#)?;
    let out = run(&["--results", &dir.path().to_string_lossy()])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure!(!out.status.success());
    ensure!(stderr.contains("politeness.json"), "{stderr}");
    ensure!(stderr.contains("`hosts`"), "{stderr}");

    std::fs::write(dir.path().join("politeness.json"), POLITENESS)?;
    let doc = dir.path().join("doc.md");
    std::fs::write(&doc, "no markers here\n")?;
    let out = run(&[
        "--results",
        &dir.path().to_string_lossy(),
        "--update-markdown",
        &doc.to_string_lossy(),
    ])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure!(!out.status.success());
    ensure!(stderr.contains("<!-- results:begin -->"), "{stderr}");
    ensure!(
        !dir.path().join("summary.md").exists(),
        "nothing is written when the markers are missing"
    );
    Ok(())
}
