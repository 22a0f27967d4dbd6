//! The crawl binary as an example of this crate: `squall_crawler::main`, the program of the
//! `squall-crawler` crate (`crawler/`, where its arguments, the frontier it opens, what watches it
//! and the run live), so that the README's first command stays one command on a fresh machine:
//!
//! ```text
//! cargo run --release --example crawl -- --demo-site --until-idle
//! ```
//!
//! `cargo test` builds it, for the tests that run the crawler as a process (`tests/support/binary.rs`).

fn main() {
    squall_crawler::main();
}
