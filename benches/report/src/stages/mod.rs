//! The "other stages": each squall stage against its baseline, shared by the
//! table and the ratio plot so both show the same figures.

mod input;

use std::path::Path;

use anyhow::Result;

pub use input::{Fetcher, Migration, Parser, Politeness, Writer};

use crate::format::{NONE, divide, num, opt_spread, ratio, setting};
use crate::input::{Spread, read_optional};
pub use crate::table::NOT_RUN;
use crate::table::table;

/// The stage benchmarks' files found in a results directory; `None` where one does not exist.
#[derive(Debug, Clone, Default)]
pub struct StageFiles {
    /// `writer.json`.
    pub writer: Option<Writer>,
    /// `fetcher.json`.
    pub fetcher: Option<Fetcher>,
    /// `parser.json`.
    pub parser: Option<Parser>,
    /// `politeness.json`.
    pub politeness: Option<Politeness>,
    /// `migration.json`.
    pub migration: Option<Migration>,
}

impl StageFiles {
    /// Reads each stage's file that exists in `dir`.
    pub fn read_dir(dir: &Path) -> Result<Self> {
        Ok(Self {
            writer: read_optional(dir, "writer.json")?,
            fetcher: read_optional(dir, "fetcher.json")?,
            parser: read_optional(dir, "parser.json")?,
            politeness: read_optional(dir, "politeness.json")?,
            migration: read_optional(dir, "migration.json")?,
        })
    }
}

/// One stage compared with its baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// Short name, e.g. "status writer".
    pub name: &'static str,
    /// The stage column: name and unit.
    pub label: String,
    /// Whether the stage's result file exists.
    pub ran: bool,
    /// squall's figure, formatted.
    pub squall: String,
    /// The baseline's figure, formatted.
    pub baseline: String,
    /// squall divided by the baseline.
    pub ratio: Option<f64>,
    /// The ratio aimed for, if any.
    pub aim: Option<f64>,
    /// The aim as shown in the table.
    pub aim_text: String,
    /// Appended to the ratio cell when the aim is missed, e.g. " (below aim)".
    pub miss: Option<String>,
}

impl Stage {
    /// The ratio cell: the ratio, and the miss note if any.
    pub fn ratio_cell(&self) -> String {
        format!(
            "{}{}",
            ratio(self.ratio),
            self.miss.as_deref().unwrap_or("")
        )
    }
}

/// All five stages, in table order; stages that did not run say so.
pub fn stages(files: &StageFiles) -> Vec<Stage> {
    vec![
        writer(files.writer.as_ref()),
        fetcher(files.fetcher.as_ref()),
        parser(files.parser.as_ref()),
        migration(files.migration.as_ref()),
        politeness(files.politeness.as_ref()),
    ]
}

/// A stage with no result file.
fn not_run(name: &'static str, label: String, aim: Option<f64>, aim_text: String) -> Stage {
    Stage {
        name,
        label,
        ran: false,
        squall: NOT_RUN.to_string(),
        baseline: NONE.to_string(),
        ratio: None,
        aim,
        aim_text,
        miss: None,
    }
}

/// Text for an aim of "at least".
fn at_least(aim: f64) -> String {
    format!("≥ {}", setting(aim))
}

/// " (below aim)" when the ratio is below the aim.
fn below(ratio: Option<f64>, aim: f64) -> Option<String> {
    ratio
        .filter(|r| *r < aim)
        .map(|_| " (below aim)".to_string())
}

/// A spread with a unit, or `–`.
fn with_unit(s: Option<&Spread>, unit: &str) -> String {
    match s {
        Some(_) => format!("{} {unit}", opt_spread(s)),
        None => NONE.to_string(),
    }
}

/// A plain value with a unit, or `–`.
fn value_with_unit(x: Option<f64>, unit: &str) -> String {
    x.map_or_else(|| NONE.to_string(), |x| format!("{} {unit}", num(x)))
}

/// A stage measured as two spreads.
struct SpreadStage<'a> {
    name: &'static str,
    label: String,
    squall: Option<&'a Spread>,
    baseline_name: &'static str,
    baseline: Option<&'a Spread>,
    unit: &'static str,
    ratio: Option<f64>,
    aim: f64,
}

impl SpreadStage<'_> {
    /// Builds the row; the ratio falls back to the medians' quotient.
    fn build(self) -> Stage {
        let ratio = self.ratio.or_else(|| {
            divide(
                self.squall.map(|s| s.median),
                self.baseline.map(|s| s.median),
            )
        });
        Stage {
            name: self.name,
            label: self.label,
            ran: true,
            squall: with_unit(self.squall, self.unit),
            baseline: format!(
                "{}: {}",
                self.baseline_name,
                with_unit(self.baseline, self.unit)
            ),
            ratio,
            aim: Some(self.aim),
            aim_text: at_least(self.aim),
            miss: below(ratio, self.aim),
        }
    }
}

/// The status writer against raw `_bulk`.
fn writer(w: Option<&Writer>) -> Stage {
    const AIM: f64 = 0.9;
    let name = "status writer";
    let Some(w) = w else {
        return not_run(name, name.to_string(), Some(AIM), at_least(AIM));
    };
    let mut label = name.to_string();
    if let (Some(d), Some(b)) = (w.documents, w.batch) {
        label = format!(
            "{name} ({} docs, batches of {})",
            crate::format::thousands(d),
            crate::format::thousands(b)
        );
    }
    SpreadStage {
        name,
        label,
        squall: w.writer_docs_per_second.as_ref(),
        baseline_name: "raw `_bulk`",
        baseline: w.bulk_docs_per_second.as_ref(),
        unit: "docs/s",
        ratio: w.ratio_writer_to_bulk,
        aim: AIM,
    }
    .build()
}

/// `name`, followed by `details` in parentheses when there are any.
fn labelled(name: &str, details: &[String]) -> String {
    if details.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({})", details.join(", "))
    }
}

/// "N runs of W s" and "ratio spread S" for a stage measured in windows of time.
fn run_details(
    details: &mut Vec<String>,
    runs: Option<u64>,
    window: Option<f64>,
    ratio_spread: Option<f64>,
) {
    if let (Some(runs), Some(window)) = (runs, window) {
        details.push(format!("{runs} runs of {} s", num(window)));
    }
    if let Some(spread) = ratio_spread {
        details.push(format!("ratio spread {spread:.2}"));
    }
}

/// The fetcher against a plain load generator.
fn fetcher(f: Option<&Fetcher>) -> Stage {
    const AIM: f64 = 0.8;
    let name = "fetcher";
    let Some(f) = f else {
        return not_run(name, name.to_string(), Some(AIM), at_least(AIM));
    };
    let mut details: Vec<String> = f
        .concurrency
        .map(|c| format!("{c} concurrent"))
        .into_iter()
        .collect();
    run_details(&mut details, f.runs, f.window_seconds, None);
    if let Some(spread) = f.spread_fetcher {
        details.push(format!("spread {spread:.2}"));
    }
    run_details(&mut details, None, None, f.ratio_spread);
    let label = labelled(name, &details);
    SpreadStage {
        name,
        label,
        squall: f.fetcher_pages_per_second.as_ref(),
        baseline_name: "load generator",
        baseline: f.load_generator_pages_per_second.as_ref(),
        unit: "pages/s",
        ratio: f.ratio_fetcher_to_load_generator,
        aim: AIM,
    }
    .build()
}

/// The parser against the bare tokenizer.
fn parser(p: Option<&Parser>) -> Stage {
    const AIM: f64 = 0.8;
    let name = "parser";
    let Some(p) = p else {
        return not_run(name, name.to_string(), Some(AIM), at_least(AIM));
    };
    let mut details = Vec::new();
    if let (Some(pages), Some(mib)) = (p.pages, p.mib) {
        details.push(format!("{pages} pages, {} MiB", num(mib)));
    }
    run_details(&mut details, p.runs, p.window_seconds, p.ratio_spread);
    let label = labelled(name, &details);
    SpreadStage {
        name,
        label,
        squall: p.parser_mib_per_second.as_ref(),
        baseline_name: "bare tokenizer",
        baseline: p.tokenizer_mib_per_second.as_ref(),
        unit: "MiB/s",
        ratio: p.ratio_parser_to_tokenizer,
        aim: AIM,
    }
    .build()
}

/// The status index migration against `_reindex`; no aim.
fn migration(m: Option<&Migration>) -> Stage {
    let name = "migration";
    let Some(m) = m else {
        return not_run(name, name.to_string(), None, NONE.to_string());
    };
    let label = match m.documents {
        Some(d) => format!("{name} ({} docs)", crate::format::thousands(d)),
        None => name.to_string(),
    };
    let mut squall = value_with_unit(m.migration_docs_per_second, "docs/s");
    let verified = [m.full_run_verified, m.resumed_run_verified];
    if verified.contains(&Some(false)) {
        squall.push_str("; result NOT verified");
    } else if verified.contains(&Some(true)) {
        squall.push_str("; verified");
    }
    let ratio = m
        .ratio_migration_to_reindex
        .or_else(|| divide(m.migration_docs_per_second, m.reindex_docs_per_second));
    Stage {
        name,
        label,
        ran: true,
        squall,
        baseline: format!(
            "`_reindex`: {}",
            value_with_unit(m.reindex_docs_per_second, "docs/s")
        ),
        ratio,
        aim: None,
        aim_text: NONE.to_string(),
        miss: None,
    }
}

/// Steady crawl rate against the ideal `hosts / delay`. The aim is 1.0 but
/// never above it: the ratio is not marked below aim, while a gap between two
/// fetches to one host shorter than the delay, or overlapping fetches, is.
fn politeness(p: Option<&Politeness>) -> Stage {
    const AIM: f64 = 1.0;
    let name = "politeness (steady)";
    let aim_text = "≈ 1.0, gap ≥ delay".to_string();
    let Some(p) = p else {
        return not_run(name, "politeness".to_string(), Some(AIM), aim_text);
    };
    let label = match p.hosts {
        Some(h) => format!("politeness ({h} hosts)"),
        None => "politeness".to_string(),
    };
    let mut squall = value_with_unit(p.steady_pages_per_second, "pages/s");
    if let Some(gap) = p.smallest_gap_seconds {
        squall.push_str(&format!("; smallest gap {} s", setting(gap)));
        if let Some(delay) = p.delay_seconds {
            squall.push_str(&format!(" (delay {} s)", setting(delay)));
        }
    }
    let mut baseline = format!(
        "ideal: {}",
        value_with_unit(p.ideal_pages_per_second, "pages/s")
    );
    if let (Some(h), Some(d)) = (p.hosts, p.delay_seconds) {
        baseline.push_str(&format!(" ({h} hosts / {} s)", setting(d)));
    }
    let mut notes = Vec::new();
    if let (Some(gap), Some(delay)) = (p.smallest_gap_seconds, p.delay_seconds)
        && gap < delay
    {
        notes.push("gap below delay");
    }
    if p.overlapping_fetches.is_some_and(|n| n > 0) {
        notes.push("overlapping fetches");
    }
    let ratio = p
        .steady_ratio_to_ideal
        .or_else(|| divide(p.steady_pages_per_second, p.ideal_pages_per_second));
    Stage {
        name,
        label,
        ran: true,
        squall,
        baseline,
        ratio,
        aim: Some(AIM),
        aim_text,
        miss: (!notes.is_empty()).then(|| format!(" ({})", notes.join(", "))),
    }
}

/// "### Other stages": each stage against its baseline.
pub fn stages_section(stages: &[Stage]) -> String {
    let mut out = String::from("### Other stages\n\n");
    let rows: Vec<Vec<String>> = stages
        .iter()
        .map(|s| {
            vec![
                s.label.clone(),
                s.squall.clone(),
                s.baseline.clone(),
                s.ratio_cell(),
                s.aim_text.clone(),
            ]
        })
        .collect();
    out.push_str(&table(
        &["stage", "squall", "baseline", "ratio", "aim"],
        &rows,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::parse;

    #[test]
    fn missing_sections_say_not_run() {
        let md = stages_section(&stages(&StageFiles::default()));
        assert!(
            md.contains("| status writer | not run in this run | – | – | ≥ 0.9 |"),
            "{md}"
        );
        assert!(
            md.contains("| migration | not run in this run | – | – | – |"),
            "{md}"
        );
    }

    #[test]
    fn stage_rows_mark_missed_aims() -> anyhow::Result<()> {
        let files = StageFiles {
            writer: Some(parse(
                r#"{"writer_docs_per_second":{"median":95000,"min":94000,"max":96000},
                    "bulk_docs_per_second":{"median":100000,"min":99000,"max":101000},
                    "ratio_writer_to_bulk":0.95}"#,
            )?),
            fetcher: Some(parse(
                r#"{"fetcher_pages_per_second":{"median":700,"min":690,"max":710},
                    "load_generator_pages_per_second":{"median":1000,"min":990,"max":1010}}"#,
            )?),
            politeness: Some(parse(
                r#"{"delay_seconds":0.5,"hosts":50,"ideal_pages_per_second":100.0,
                    "smallest_gap_seconds":0.500012,"steady_pages_per_second":99.46,
                    "steady_ratio_to_ideal":0.9946}"#,
            )?),
            migration: Some(parse(
                r#"{"migration_docs_per_second":9324.9,"reindex_docs_per_second":21245.8,
                    "ratio_migration_to_reindex":0.4389,"full_run_verified":true}"#,
            )?),
            ..StageFiles::default()
        };
        let md = stages_section(&stages(&files));
        assert!(
            md.contains("| status writer | 95,000 (94,000–96,000) docs/s | raw `_bulk`: 100,000 (99,000–101,000) docs/s | 0.95 | ≥ 0.9 |"),
            "{md}"
        );
        assert!(md.contains("| 0.70 (below aim) | ≥ 0.8 |"), "{md}");
        assert!(
            md.contains("| politeness (50 hosts) | 99.5 pages/s; smallest gap 0.500012 s (delay 0.5 s) | ideal: 100 pages/s (50 hosts / 0.5 s) | 0.99 | ≈ 1.0, gap ≥ delay |"),
            "{md}"
        );
        assert!(
            md.contains(
                "| migration | 9,325 docs/s; verified | `_reindex`: 21,246 docs/s | 0.44 | – |"
            ),
            "{md}"
        );
        assert!(md.contains("| parser | not run in this run |"), "{md}");
        Ok(())
    }
}
