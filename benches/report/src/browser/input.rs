//! `browser.json`: rendered pages per second and the browser's peak memory for 1, 2, 4 and 8 tabs,
//! against squall's HTTP client fetching the same pages.

pub use squall_bench_schema::browser::{Browser, Candidate};

/// Pages/s with [`AIM_TABS`] tabs must reach this many times pages/s with one.
pub const AIM: f64 = 3.0;

/// The tab count the aim is for.
pub const AIM_TABS: u64 = 4;
