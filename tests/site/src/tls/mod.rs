//! TLS endpoints for tests that must prove TLS and credentials against a real server.
//!
//! [`TestCa`] is a throw-away certificate authority: it issues server identities (for
//! `localhost` and `127.0.0.1`) and client identities (for mutual TLS), as PEM strings or files.
//!
//! [`TlsGate`] is a reverse proxy on `127.0.0.1` that terminates TLS with a server identity and
//! checks credentials the way an Elasticsearch/OpenSearch node with security enabled does (an
//! API key in `Authorization: ApiKey <base64(id:key)>`, and optionally a client certificate),
//! then forwards to a plain-HTTP node (a real test node, or any HTTP server). Its counters tell
//! whether a client was refused, forwarded, or failed the handshake.
//!
//! ```no_run
//! # async fn demo() {
//! use squall_testsite::tls::{GateOptions, TestCa, TlsGate};
//!
//! let ca = TestCa::new("squall test CA");
//! let gate = TlsGate::start(GateOptions {
//!     upstream: "http://127.0.0.1:9200".into(),
//!     server: ca.server_identity(&["localhost", "127.0.0.1"]),
//!     api_key: Some(("id".into(), "secret".into())),
//!     client_ca_pem: None,
//! })
//! .await;
//! // ... point a client trusting `ca.pem()` at `gate.url()` with the API key ...
//! assert_eq!(gate.refused(), 0);
//! # }
//! ```
//!
//! The gate names its rustls crypto provider (ring) instead of relying on the process default,
//! since the workspace compiles in more than one.

mod ca;
mod forward;
mod gate;
#[cfg(test)]
mod tests;

pub use ca::{Identity, TestCa};
pub use forward::api_key_credentials;
pub use gate::{GateOptions, TlsGate};
