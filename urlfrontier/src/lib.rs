//! squall's frontiers over the URLFrontier gRPC API.

pub mod client;

pub use client::{UrlFrontierSpout, UrlFrontierStore};

/// The URLFrontier v2 messages and service, generated from the official API's descriptor.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod proto {
    tonic::include_proto!("urlfrontier");
}

pub mod convert;
pub mod server;
