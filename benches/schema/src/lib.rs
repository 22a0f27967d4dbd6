//! The JSON squall's benchmarks write (`benches/*.rs`) and their report reads (`benches/report`),
//! typed once for both: what is written and what is read cannot drift apart.
//!
//! One module per result file (`stages`: the five stage benchmarks'; `machine`: the one
//! `scripts/bench` writes itself), each with its file's type and the types inside it. Every type
//! reads leniently (`#[serde(default)]`): a field an older file lacks is `None` or empty, so the
//! report still reads the results kept from earlier runs. Which run a file comes from is
//! [`Run`], flattened into it.
//!
//! ```
//! use squall_bench_schema::Spread;
//!
//! let runs = Spread::of(&[3.0, 1.0, 2.0]);
//! assert_eq!((runs.median, runs.min, runs.max), (2.0, 1.0, 3.0));
//! let text = serde_json::to_string(&runs).unwrap_or_default();
//! assert_eq!(serde_json::from_str::<Spread>(&text).ok(), Some(runs));
//! ```

pub mod as_given;
pub mod browser;
pub mod end_to_end;
pub mod live_view;
pub mod machine;
pub mod one_host;
pub mod pace;
mod run;
pub mod scale_out;
pub mod shared_crawl;
pub mod spouts;
mod spread;
pub mod stages;
pub mod urlfrontier;

pub use run::Run;
pub use spread::Spread;
