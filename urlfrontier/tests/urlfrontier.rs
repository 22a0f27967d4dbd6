//! squall-urlfrontier's integration tests as one test binary: one link, and the tests of every file
//! run side by side in one process (so no two may share a fixed name, an index or a port).
//! Each file below is a module; run one with
//! `cargo test -p squall-urlfrontier --test urlfrontier <module>::`.

mod support;

mod api_2_6;
mod client;
mod cut_messages;
mod delete_crawl;
mod hand_out;
mod hostile_clients;
mod java_interop;
mod kept_rules;
mod link_checker;
mod link_checker_reference;
mod reference_cli;
mod secured_server;
mod server_process;
