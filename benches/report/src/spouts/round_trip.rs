//! Where each millisecond of a URL's round trip goes, at one frontier size: the spout's stages as
//! the benchmark's client saw them, and the engine's work from its node statistics, per URL
//! emitted and written back; and the raw `_bulk` ceiling of the same node beside each spout's rate.

use squall_bench_schema::end_to_end::EngineWork;

use super::input::{SpoutResult, SpoutSize};
use crate::format::{NONE, num, thousands};
use crate::table::table;

/// The client-side stages shown, in round order, with their column names.
const STAGES: &[(&str, &str)] = &[
    ("query", "query (all)"),
    ("claim_round", "claim round"),
    ("listing", "of it listing"),
    ("claiming", "of it claiming"),
    ("reading", "reading"),
    ("handing_out", "handing out"),
    ("releasing", "releasing"),
    ("runner", "runner, outside queries"),
    ("write_back", "write-back (alongside)"),
];

/// The engine's kinds of work shown.
const KINDS: &[&str] = &["search", "indexing", "refresh", "get", "merge"];

/// The two tables for one size, or nothing when the run recorded no stages.
pub fn tables(sz: &SpoutSize) -> String {
    let measured: Vec<&SpoutResult> = sz.spouts.iter().filter(|s| !s.stages.is_empty()).collect();
    if measured.is_empty() {
        return String::new();
    }
    let ceiling = sz.raw_bulk_docs_per_second.as_ref().map(|s| s.median);
    let mut header = vec!["spout", "URLs/s", "of the raw `_bulk`"];
    header.extend(STAGES.iter().map(|(_, name)| *name));
    let stage_rows: Vec<Vec<String>> = measured.iter().map(|sp| stage_row(sp, ceiling)).collect();
    let mut engine_header = vec!["spout", "engine CPU"];
    engine_header.extend(KINDS.iter().copied());
    let engine_rows: Vec<Vec<String>> = measured.iter().map(|sp| engine_row(sp)).collect();
    let ceiling_text = ceiling.map_or_else(
        || "not measured".to_string(),
        |c| format!("{} docs/s", thousands(c.round() as u64)),
    );
    format!(
        "\nWhere a URL's round trip goes (milliseconds per URL emitted and written back, over all \
         windows; the raw `_bulk` ceiling of this node on this urls index: {ceiling_text}). The \
         spout's stages as the benchmark waited on them (the queue spout's claim round is its \
         listing and claiming, with dropped leases alongside; the write-back runs alongside the \
         queries):\n\n{}\nThe engine's work from its node statistics, per URL (milliseconds, and \
         shard-level operations per URL):\n\n{}",
        table(&header, &stage_rows),
        table(&engine_header, &engine_rows),
    )
}

fn stage_row(sp: &SpoutResult, ceiling: Option<f64>) -> Vec<String> {
    let rate = sp.urls_per_second.as_ref().map(|s| s.median);
    let mut row = vec![
        label(sp),
        rate.map_or_else(|| NONE.to_string(), |r| thousands(r.round() as u64)),
        match (rate, ceiling) {
            (Some(r), Some(c)) if c > 0.0 => format!("{:.3}", r / c),
            _ => NONE.to_string(),
        },
    ];
    for (stage, _) in STAGES {
        let cell = sp
            .stages
            .iter()
            .find(|s| s.stage == *stage)
            .and_then(|s| s.ms_per_url)
            .map_or_else(|| NONE.to_string(), ms);
        row.push(cell);
    }
    row
}

fn engine_row(sp: &SpoutResult) -> Vec<String> {
    let mut row = vec![label(sp)];
    let Some(engine) = &sp.engine else {
        row.extend(std::iter::repeat_n(NONE.to_string(), KINDS.len() + 1));
        return row;
    };
    row.push(engine.cpu_ms_per_page.map_or_else(|| NONE.to_string(), ms));
    row.extend(KINDS.iter().map(|kind| kind_cell(engine, kind)));
    row
}

fn kind_cell(engine: &EngineWork, kind: &str) -> String {
    engine.kinds.get(kind).map_or_else(
        || NONE.to_string(),
        |k| format!("{} ({} ops)", ms(k.ms_per_page), num(k.operations_per_page)),
    )
}

fn label(sp: &SpoutResult) -> String {
    sp.label.clone().unwrap_or_else(|| sp.spout.clone())
}

fn ms(x: f64) -> String {
    format!("{x:.3}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use squall_bench_schema::Spread;
    use squall_bench_schema::end_to_end::KindWork;
    use squall_bench_schema::spouts::StageTime;

    #[test]
    fn stages_and_engine_work_per_url_beside_the_ceiling() {
        let mut engine = EngineWork {
            cpu_ms_per_page: Some(0.25),
            ..EngineWork::default()
        };
        engine.kinds.insert(
            "search".into(),
            KindWork {
                ms_per_page: 0.125,
                operations_per_page: 8.0,
                ..KindWork::default()
            },
        );
        let queue = SpoutResult {
            spout: "queue".into(),
            urls_per_second: Some(Spread::of(&[2_000.0])),
            stages: vec![StageTime {
                stage: "reading".into(),
                ms_per_url: Some(0.2),
                ..StageTime::default()
            }],
            engine: Some(engine),
            ..SpoutResult::default()
        };
        let size = SpoutSize {
            urls: 10,
            raw_bulk_docs_per_second: Some(Spread::of(&[20_000.0])),
            spouts: vec![queue],
            ..SpoutSize::default()
        };
        let text = tables(&size);
        assert!(text.contains("20,000 docs/s"), "{text}");
        assert!(text.contains("| queue | 2,000 | 0.100 |"), "{text}");
        assert!(text.contains("0.200"), "{text}");
        assert!(
            text.contains("| queue | 0.250 | 0.125 (8.00 ops) |"),
            "{text}"
        );
        assert!(tables(&SpoutSize::default()).is_empty());
    }
}
