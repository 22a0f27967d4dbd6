//! The end-to-end crawls on two versions of the engine in one run (`second_engine` of
//! `end_to_end.json`): each version's pages/s and engine CPU per page, and second over first.

use squall_bench_schema::end_to_end::{EndToEnd, Frontier, SecondEngine};

use crate::format::{NONE, num, opt_spread, ratio};
use crate::table::table;

/// "#### Two versions of the engine", or nothing when the run had no second node.
pub fn section(e: &EndToEnd) -> String {
    let Some(second) = &e.second_engine else {
        return String::new();
    };
    let (first_name, second_name) = (name(&second.first), name(&second.second));
    let rows = vec![
        row("queue", &first_name, e.queue.as_ref()),
        row("queue", &second_name, second.queue.as_ref()),
        row("aggregation", &first_name, e.aggregation.as_ref()),
        row("aggregation", &second_name, second.aggregation.as_ref()),
    ];
    // (the `-among` crawls' frontier lives in the first node only, untouched by these crawls)
    let background = match e.background.as_ref().and_then(|b| b.urls) {
        Some(urls) if urls > 0 => format!(
            "; the first also holds the {} URLs the `among` rows crawl among, which these crawls \
             do not touch",
            crate::format::thousands(urls)
        ),
        _ => String::new(),
    };
    format!(
        "\n#### Two versions of the engine\n\n\
         The queue and aggregation crawls above again on a second node, {second_name}, beside \
         {first_name}'s in the same run: both nodes up throughout with the same heap, the \
         crawls of each version interleaved, median (min–max) over the runs{background}.\n\n\
         {}\n{}\n",
        table(
            &[
                "frontier",
                "engine",
                "pages/s",
                "engine CPU per page",
                "crawler CPU per page",
                "peak RSS",
            ],
            &rows,
        ),
        sentence(second, &first_name, &second_name)
    )
}

/// An engine's name as recorded, or a placeholder for a run that could not read it.
fn name(recorded: &Option<String>) -> String {
    recorded
        .clone()
        .unwrap_or_else(|| "(version not read)".to_string())
}

fn row(frontier: &str, engine: &str, f: Option<&Frontier>) -> Vec<String> {
    let ms = |s: Option<&squall_bench_schema::Spread>| {
        s.map_or_else(
            || NONE.to_string(),
            |s| format!("{} ms", opt_spread(Some(s))),
        )
    };
    vec![
        frontier.to_string(),
        engine.to_string(),
        opt_spread(f.and_then(|f| f.pages_per_second.as_ref())),
        ms(f.and_then(|f| f.engine_cpu_ms_per_page.as_ref())),
        ms(f.and_then(|f| f.cpu_ms_per_page.as_ref())),
        f.and_then(|f| f.peak_rss_mib.as_ref())
            .map_or_else(|| NONE.to_string(), |s| format!("{} MiB", num(s.max))),
    ]
}

/// Second over first, per frontier: pages/s and the engine's CPU per page.
fn sentence(s: &SecondEngine, first: &str, second: &str) -> String {
    format!(
        "{second} over {first}: queue frontier {} × the pages/s at {} × the engine's CPU per \
         page; aggregation spout {} × the pages/s at {} × the engine's CPU per page.\n",
        ratio(s.ratio_queue_pages),
        ratio(s.ratio_queue_engine_cpu),
        ratio(s.ratio_aggregation_pages),
        ratio(s.ratio_aggregation_engine_cpu),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_without_a_second_node_has_no_section() {
        let e: EndToEnd = serde_json::from_str(r#"{"benchmark":"end_to_end"}"#).expect("json");
        assert_eq!(section(&e), "");
    }

    #[test]
    fn both_versions_get_rows_and_the_ratios_are_said() {
        let spread = |m: f64| format!(r#"{{"median":{m},"min":{m},"max":{m}}}"#);
        let frontier = |pages: f64, cpu: f64| {
            format!(
                r#"{{"pages_per_second":{},"engine_cpu_ms_per_page":{}}}"#,
                spread(pages),
                spread(cpu)
            )
        };
        let json = format!(
            r#"{{"benchmark":"end_to_end","queue":{},"aggregation":{},
                "second_engine":{{"first":"OpenSearch 2.19.6","second":"OpenSearch 3.9.0",
                "queue":{},"aggregation":{},"ratio_queue_pages":1.01,"ratio_queue_engine_cpu":0.8,
                "ratio_aggregation_pages":0.97,"ratio_aggregation_engine_cpu":1.2}}}}"#,
            frontier(1980.0, 0.45),
            frontier(1700.0, 0.9),
            frontier(2000.0, 0.36),
            frontier(1650.0, 1.08)
        );
        let e: EndToEnd = serde_json::from_str(&json).expect("json");
        let text = section(&e);
        assert!(
            text.contains("| queue | OpenSearch 2.19.6 | 1,980"),
            "{text}"
        );
        assert!(
            text.contains("| aggregation | OpenSearch 3.9.0 | 1,650"),
            "{text}"
        );
        assert!(text.contains("1.01 × the pages/s at 0.80 ×"), "{text}");
        assert!(text.contains("0.97 × the pages/s at 1.20 ×"), "{text}");
    }
}
