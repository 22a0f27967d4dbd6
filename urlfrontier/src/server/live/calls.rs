//! The calls a server answers, counted by kind (the gRPC method) and by peer (the client's
//! connection), for the status page. A tower layer on the server records each call before it is
//! routed: a lock held for a few instructions, and a bounded table of peers (those silent for
//! ten minutes are forgotten), so memory stays the same however many clients come and go.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use moka::sync::Cache;
use tonic::codegen::http;
use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo};

/// Kinds counted apart; the rest are counted as `other`.
const MAX_KINDS: usize = 32;
/// Peers remembered at most.
const MAX_PEERS: u64 = 1_024;
/// A peer silent this long is forgotten.
const PEER_IDLE: Duration = Duration::from_secs(600);

/// One client connection's calls.
#[derive(Debug)]
pub struct PeerCalls {
    /// Calls made.
    pub calls: AtomicU64,
    /// GetURLs calls made.
    pub get_urls: AtomicU64,
    /// PutURLs calls made.
    pub put_urls: AtomicU64,
    /// When its first call came.
    pub first: Instant,
    last: Mutex<Instant>,
}

impl PeerCalls {
    fn new(now: Instant) -> Self {
        PeerCalls {
            calls: AtomicU64::new(0),
            get_urls: AtomicU64::new(0),
            put_urls: AtomicU64::new(0),
            first: now,
            last: Mutex::new(now),
        }
    }

    /// When its last call came.
    pub fn last(&self) -> Instant {
        self.last.lock().map_or(self.first, |last| *last)
    }
}

/// Calls by kind and by peer; shared by the layer and the page.
#[derive(Debug)]
pub struct CallBoard {
    kinds: Mutex<Vec<(String, u64)>>,
    peers: Cache<SocketAddr, Arc<PeerCalls>>,
}

impl Default for CallBoard {
    fn default() -> Self {
        CallBoard {
            kinds: Mutex::new(Vec::new()),
            peers: Cache::builder()
                .max_capacity(MAX_PEERS)
                .time_to_idle(PEER_IDLE)
                .build(),
        }
    }
}

impl CallBoard {
    /// Counts a call to `path` (`/urlfrontier.URLFrontier/GetURLs`) from `peer`.
    pub fn record(&self, path: &str, peer: Option<SocketAddr>) {
        let kind = path.rsplit('/').next().unwrap_or(path);
        if let Ok(mut kinds) = self.kinds.lock() {
            let known = kinds.iter().position(|(name, _)| name == kind);
            match known {
                Some(at) => kinds[at].1 += 1,
                None if kinds.len() < MAX_KINDS => kinds.push((kind.to_string(), 1)),
                None => match kinds.iter_mut().find(|(name, _)| name == "other") {
                    Some((_, count)) => *count += 1,
                    None => kinds.push(("other".to_string(), 1)),
                },
            }
        }
        let Some(peer) = peer else { return };
        let now = Instant::now();
        let calls = self.peers.get_with(peer, || Arc::new(PeerCalls::new(now)));
        calls.calls.fetch_add(1, Ordering::Relaxed);
        match kind {
            "GetURLs" => calls.get_urls.fetch_add(1, Ordering::Relaxed),
            "PutURLs" => calls.put_urls.fetch_add(1, Ordering::Relaxed),
            _ => 0,
        };
        if let Ok(mut last) = calls.last.lock() {
            *last = now;
        }
    }

    /// Calls by kind so far, in the order first seen.
    pub fn kinds(&self) -> Vec<(String, u64)> {
        self.kinds.lock().map(|k| k.clone()).unwrap_or_default()
    }

    /// The peers remembered, the most recent caller first.
    pub fn peers(&self) -> Vec<(SocketAddr, Arc<PeerCalls>)> {
        let mut peers: Vec<(SocketAddr, Arc<PeerCalls>)> = self
            .peers
            .iter()
            .map(|(addr, calls)| (*addr, calls))
            .collect();
        peers.sort_by_key(|(addr, calls)| (std::cmp::Reverse(calls.last()), *addr));
        peers
    }

    /// Records the calls of an HTTP request as the server receives it (its connection's peer
    /// is in the request's extensions, put there by tonic's listener).
    pub fn observe<B>(&self, request: &http::Request<B>) {
        let extensions = request.extensions();
        let peer = extensions
            .get::<TcpConnectInfo>()
            .and_then(TcpConnectInfo::remote_addr)
            .or_else(|| {
                extensions
                    .get::<TlsConnectInfo<TcpConnectInfo>>()
                    .and_then(|info| info.get_ref().remote_addr())
            });
        self.record(request.uri().path(), peer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_by_kind_and_by_peer() {
        let board = CallBoard::default();
        let a: SocketAddr = "127.0.0.1:5000".parse().expect("address");
        let b: SocketAddr = "127.0.0.1:5001".parse().expect("address");
        board.record("/urlfrontier.URLFrontier/GetURLs", Some(a));
        board.record("/urlfrontier.URLFrontier/GetURLs", Some(a));
        board.record("/urlfrontier.URLFrontier/PutURLs", Some(b));
        board.record("/urlfrontier.URLFrontier/GetStats", None);
        assert_eq!(
            board.kinds(),
            vec![
                ("GetURLs".to_string(), 2),
                ("PutURLs".to_string(), 1),
                ("GetStats".to_string(), 1)
            ]
        );
        let peers = board.peers();
        assert_eq!(peers.len(), 2);
        let of = |addr| {
            let (_, calls) = peers.iter().find(|(p, _)| *p == addr).expect("peer");
            (
                calls.calls.load(Ordering::Relaxed),
                calls.get_urls.load(Ordering::Relaxed),
                calls.put_urls.load(Ordering::Relaxed),
            )
        };
        assert_eq!(of(a), (2, 2, 0));
        assert_eq!(of(b), (1, 0, 1));
    }

    #[test]
    fn kinds_beyond_the_limit_are_counted_as_other() {
        let board = CallBoard::default();
        for n in 0..MAX_KINDS + 5 {
            board.record(&format!("/svc/Method{n}"), None);
        }
        let kinds = board.kinds();
        assert_eq!(kinds.len(), MAX_KINDS + 1);
        assert_eq!(kinds.last(), Some(&("other".to_string(), 5)));
    }
}
