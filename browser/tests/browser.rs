//! squall-browser's integration tests, one test binary (one link, one process: tests of every file run side by
//! side). Each file below is a module; run one with `cargo test -p squall-browser --test browser <module>::`.

mod support;

mod app_crawl;
mod protocol;
