//! The JSON squall's benchmarks write (`benches/*.rs`) and their report reads (`benches/report`),
//! typed once for both: what is written and what is read cannot drift apart.
//!
//! ```
//! use squall_bench_schema::Spread;
//!
//! let runs = Spread::of(&[3.0, 1.0, 2.0]);
//! assert_eq!((runs.median, runs.min, runs.max), (2.0, 1.0, 3.0));
//! let text = serde_json::to_string(&runs).unwrap_or_default();
//! assert_eq!(serde_json::from_str::<Spread>(&text).ok(), Some(runs));
//! ```

mod spread;

pub use spread::Spread;
