//! # squall
//!
//! A library for building web crawlers as stream topologies, in the style of Apache StormCrawler:
//! a **spout** pulls due URLs from a crawl frontier, a **fetcher** downloads them politely, a
//! **parser** extracts links, and a **status updater** writes every URL's status back to the frontier
//! and schedules its next fetch.
//!
//! This crate is the topology library and knows nothing about any search engine. The frontier in
//! Elasticsearch or OpenSearch lives in the companion crate `squall-spouts`.
