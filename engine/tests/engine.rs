//! squall-engine's integration tests as one test binary: one link, and the tests of every file
//! run side by side in one process (so no two may share a fixed name, an index or a port).
//! Each file below is a module; run one with
//! `cargo test -p squall-engine --test engine <module>::`.

mod support;

mod access;
mod catalog;
mod cluster_client;
mod conformance;
mod crawl;
mod engine_restart;
mod foreign_index;
mod index_behaviour;
mod migration;
mod queue_frontier;
mod queue_interleavings;
mod queue_pace;
mod queue_races;
mod queue_updates;
mod unread_replacements;
mod unrouted_index;
