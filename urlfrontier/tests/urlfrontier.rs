//! squall-urlfrontier's integration tests, one test binary (one link, one process: tests of every file run side by
//! side). Each file below is a module; run one with `cargo test -p squall-urlfrontier --test urlfrontier <module>::`.

mod client;
mod hand_out;
mod hostile_clients;
mod java_interop;
mod link_checker;
mod link_checker_reference;
mod reference_cli;
mod secured_server;
mod server_process;
