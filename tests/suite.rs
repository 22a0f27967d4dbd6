//! squall's integration tests as one test binary: one link, and the tests of every file
//! run side by side in one process (tests sharing something fixed, such as an index name,
//! take turns through a lock in `support`). Each file below is a module; run one with
//! `cargo test -p squall --test suite <module>::`.

mod support;

mod binary_output;
mod cluster_crawl;
mod content_file;
mod content_index;
mod crawl_binary;
mod crawl_site;
mod dashboards;
mod engine_capabilities;
mod frontier_conformance;
#[cfg(unix)]
mod frontier_path;
mod frontier_registry;
mod fuzz_regressions;
mod hostile_config;
mod hostile_site;
mod http_features;
mod http_protocol;
mod listeners;
mod pace;
mod parser_panic;
mod politeness;
mod private_addresses;
mod queue_processes;
mod robots_txt;
mod scope_without_seeds;
mod secrets;
mod seed_input;
mod sitemap_cut;
mod status_page;
mod stormcrawler_archetype;
mod stormcrawler_filter_files;
mod stormcrawler_flux;
mod urlfrontier_crawl;
mod urlfrontier_reference_worker;
mod warc_output;
