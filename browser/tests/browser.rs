//! squall-browser's integration tests as one test binary: one link, and the tests of every file
//! run side by side in one process (so no two may share a fixed name, an index or a port).
//! Each file below is a module; run one with
//! `cargo test -p squall-browser --test browser <module>::`.

mod support;

mod app_crawl;
mod protocol;
