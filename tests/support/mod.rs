//! Shared helpers for the integration tests.

pub mod binary;
pub mod opensearch;
