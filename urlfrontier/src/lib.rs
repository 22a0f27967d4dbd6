//! squall's frontiers over the URLFrontier gRPC API: [`server`] serves a squall frontier to any
//! URLFrontier client, and [`client`] crawls from any URLFrontier server.

/// The URLFrontier v2 messages and service, generated from the official API's descriptor.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod proto {
    tonic::include_proto!("urlfrontier");
}

pub mod client;
pub mod convert;
pub mod server;

pub use client::{UrlFrontierSpout, UrlFrontierStore};
