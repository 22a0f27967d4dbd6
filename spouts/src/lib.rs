//! # squall-spouts
//!
//! The Elasticsearch/OpenSearch frontier for [`squall`]: a StormCrawler-compatible status index, the
//! writer that keeps it, and the spouts that read due URLs from it.
