//! The files of the stage benchmarks: `writer.json`, `fetcher.json`, `parser.json`,
//! `politeness.json` and `migration.json`, typed in `squall-bench-schema` for the benchmarks that
//! write them and for this report.

pub use squall_bench_schema::stages::{Fetcher, Migration, Parser, Politeness, Writer};
