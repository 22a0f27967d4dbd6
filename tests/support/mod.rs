//! Shared helpers for the integration tests.

pub mod binary;
pub mod cluster;
pub mod content_site;
pub mod crawl_process;
pub mod crawler;
pub mod engine_node;
pub mod fetch_log;
pub mod http;
pub mod opensearch;
pub mod proxy;
pub mod site_politeness;
pub mod socks;
pub mod status_page;
pub mod stormcrawler;
