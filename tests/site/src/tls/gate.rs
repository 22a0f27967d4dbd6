//! A TLS-terminating, credential-checking reverse proxy in front of an HTTP test node.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rustls::ServerConfig;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::ClientCertVerifier;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::Identity;
use super::forward::{Counters, Forwarder};

/// What a [`TlsGate`] fronts, and what it asks of its clients.
#[derive(Debug, Clone)]
pub struct GateOptions {
    /// Base URL of the plain-HTTP upstream, e.g. `http://127.0.0.1:9200`.
    pub upstream: String,
    /// The certificate and key the gate serves TLS with.
    pub server: Identity,
    /// When set, `(id, key)` of the only API key accepted: every request must carry
    /// `Authorization: ApiKey <base64(id:key)>`, else it is answered 401 the way Elasticsearch
    /// answers it, and not forwarded.
    pub api_key: Option<(String, String)>,
    /// When set, the PEM of a CA every client must present a certificate chaining to: a client
    /// without one fails the TLS handshake.
    pub client_ca_pem: Option<String>,
}

/// A reverse proxy on `127.0.0.1` that terminates TLS and checks credentials the way an
/// Elasticsearch/OpenSearch node with security enabled would, then forwards to a plain-HTTP node.
///
/// Accepted requests go to the upstream with their method, path, query, end-to-end headers
/// (not `host` nor `authorization`) and body; its status, end-to-end headers and (decoded) body
/// come back. HTTP/1.1 only. It serves until dropped. Its counters tell what it did.
#[derive(Debug)]
pub struct TlsGate {
    addr: SocketAddr,
    counters: Arc<Counters>,
    _stop: DropGuard,
}

impl TlsGate {
    /// Binds `127.0.0.1:0` and serves on the current tokio runtime until the gate is dropped.
    pub async fn start(options: GateOptions) -> TlsGate {
        let config = server_config(&options.server, options.client_ca_pem.as_deref());
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .expect("bind the TLS gate on 127.0.0.1");
        let addr = listener.local_addr().expect("the TLS gate's address");
        let counters = Arc::new(Counters::default());
        let forwarder = Forwarder::new(
            &options.upstream,
            options.api_key.as_ref(),
            Arc::clone(&counters),
        );
        let stop = CancellationToken::new();
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let gate = Gate {
            acceptor,
            forwarder: Arc::new(forwarder),
            counters: Arc::clone(&counters),
        };
        tokio::spawn(gate.accept_loop(listener, stop.clone()));
        TlsGate {
            addr,
            counters,
            _stop: stop.drop_guard(),
        }
    }

    /// `https://127.0.0.1:<port>`, the gate's base URL.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The address the gate listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many requests were answered 401 for missing or wrong credentials.
    pub fn refused(&self) -> u64 {
        self.counters.refused.load(Ordering::SeqCst)
    }

    /// How many requests were passed on to the upstream (whether it answered or not).
    pub fn forwarded(&self) -> u64 {
        self.counters.forwarded.load(Ordering::SeqCst)
    }

    /// How many forwarded requests may have written: any method but GET and HEAD, or a path
    /// containing `_bulk`, `_doc`, `_update` or `_create`.
    pub fn forwarded_writes(&self) -> u64 {
        self.counters.forwarded_writes.load(Ordering::SeqCst)
    }

    /// How many TLS handshakes failed: the client rejected the gate's certificate, or presented
    /// no acceptable certificate of its own.
    pub fn handshakes_failed(&self) -> u64 {
        self.counters.handshakes_failed.load(Ordering::SeqCst)
    }
}

/// The serving side of a gate, shared by its connections.
#[derive(Clone)]
struct Gate {
    acceptor: TlsAcceptor,
    forwarder: Arc<Forwarder>,
    counters: Arc<Counters>,
}

impl Gate {
    /// Accepts connections until `stop` is cancelled, serving each on its own task until then.
    async fn accept_loop(self, listener: TcpListener, stop: CancellationToken) {
        while let Some(accepted) = stop.run_until_cancelled(listener.accept()).await {
            match accepted {
                Ok((stream, _)) => {
                    let connection = self.clone().serve(stream);
                    tokio::spawn(stop.clone().run_until_cancelled_owned(connection));
                }
                // Out of file descriptors or the like: wait a little rather than spin.
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
            }
        }
    }

    /// Runs the TLS handshake on `stream`, counting a failure, then serves HTTP/1.1 on it.
    async fn serve(self, stream: TcpStream) {
        let Ok(tls) = self.acceptor.accept(stream).await else {
            self.counters
                .handshakes_failed
                .fetch_add(1, Ordering::SeqCst);
            return;
        };
        let forwarder = self.forwarder;
        let service = service_fn(move |request| {
            let forwarder = Arc::clone(&forwarder);
            async move { forwarder.handle(request).await }
        });
        // A connection that breaks off mid-request ends only that connection.
        let _ = http1::Builder::new()
            .serve_connection(TokioIo::new(tls), service)
            .await;
    }
}

/// The rustls provider the gate uses, named explicitly: the workspace compiles in more than one,
/// so the process default is not to be relied on.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The gate's TLS configuration: `server`'s certificate, and client certificates required when
/// `client_ca_pem` is given. HTTP/1.1 only.
fn server_config(server: &Identity, client_ca_pem: Option<&str>) -> ServerConfig {
    let certs = CertificateDer::pem_slice_iter(server.cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .expect("parse the gate's certificate PEM");
    let key =
        PrivateKeyDer::from_pem_slice(server.key_pem.as_bytes()).expect("parse the gate's key PEM");
    let builder = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("the ring provider supports the default TLS versions");
    let builder = match client_ca_pem {
        Some(ca_pem) => builder.with_client_cert_verifier(client_verifier(ca_pem)),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .expect("the gate's certificate and key match");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

/// A verifier that requires a client certificate chaining to the CA in `ca_pem`.
fn client_verifier(ca_pem: &str) -> Arc<dyn ClientCertVerifier> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        let cert = cert.expect("parse the client CA PEM");
        roots.add(cert).expect("add the client CA to the roots");
    }
    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
        .build()
        .expect("build the client certificate verifier")
}
