//! A forward HTTP proxy on loopback for the tests: it takes absolute-form requests
//! (`GET http://host:port/path HTTP/1.1`), checks `Proxy-Authorization` when it asks for one
//! (407 otherwise), records every request, and passes it on to the address its own table gives
//! the host (it never resolves a name), one request per upstream connection.
#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// A request the proxy received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proxied {
    /// The request target as sent (absolute form for a proxy).
    pub target: String,
    /// The `Proxy-Authorization` header, when there was one.
    pub authorization: Option<String>,
    /// Whether the proxy passed it on (it had the right credentials and a known host).
    pub forwarded: bool,
}

/// A running proxy.
pub struct ForwardProxy {
    /// Where it listens.
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Proxied>>>,
}

impl ForwardProxy {
    /// Starts a proxy that sends each host of `routes` to its address and, with `authorization`
    /// (a whole `Proxy-Authorization` value), answers 407 to requests without it.
    pub async fn start(routes: HashMap<String, SocketAddr>, authorization: Option<String>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let seen: Arc<Mutex<Vec<Proxied>>> = Arc::default();
        let shared = Arc::new((routes, authorization, Arc::clone(&seen)));
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let shared = Arc::clone(&shared);
                tokio::spawn(async move {
                    let (routes, authorization, seen) = &*shared;
                    let _ = serve_client(client, routes, authorization.as_deref(), seen).await;
                });
            }
        });
        ForwardProxy { addr, seen }
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Proxied> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

/// Serves the requests of one client connection, in turn.
async fn serve_client(
    client: TcpStream,
    routes: &HashMap<String, SocketAddr>,
    authorization: Option<&str>,
    seen: &Mutex<Vec<Proxied>>,
) -> std::io::Result<()> {
    let mut client = BufReader::new(client);
    loop {
        let mut request_line = String::new();
        if client.read_line(&mut request_line).await? == 0 {
            return Ok(());
        }
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            client.read_line(&mut line).await?;
            let line = line.trim_end().to_string();
            if line.is_empty() {
                break;
            }
            headers.push(line);
        }
        let header = |name: &str| {
            headers.iter().find_map(|h| {
                let (n, v) = h.split_once(':')?;
                n.trim()
                    .eq_ignore_ascii_case(name)
                    .then(|| v.trim().to_string())
            })
        };
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_string();
        let target = parts.next().unwrap_or_default().to_string();
        let given = header("proxy-authorization");
        let upstream = url::Url::parse(&target).ok().and_then(|url| {
            let addr = routes.get(url.host_str()?)?;
            Some((*addr, url))
        });
        let allowed = authorization.is_none_or(|expected| given.as_deref() == Some(expected));
        let forwarded = allowed && upstream.is_some();
        if let Ok(mut seen) = seen.lock() {
            seen.push(Proxied {
                target: target.clone(),
                authorization: given,
                forwarded,
            });
        }
        let Some((addr, url)) = upstream.filter(|_| allowed) else {
            let status = if allowed {
                "502 Bad Gateway"
            } else {
                "407 Proxy Authentication Required"
            };
            let answer = format!(
                "HTTP/1.1 {status}\r\nProxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\n\r\n"
            );
            client.get_mut().write_all(answer.as_bytes()).await?;
            continue;
        };
        let mut path = url.path().to_string();
        if let Some(query) = url.query() {
            path = format!("{path}?{query}");
        }
        let mut upstream_request = format!("{method} {path} HTTP/1.1\r\n");
        for line in &headers {
            let name = line
                .split(':')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            if !matches!(
                name.as_str(),
                "proxy-authorization" | "proxy-connection" | "connection"
            ) {
                upstream_request.push_str(line);
                upstream_request.push_str("\r\n");
            }
        }
        upstream_request.push_str("Connection: close\r\n\r\n");
        let mut server = TcpStream::connect(addr).await?;
        server.write_all(upstream_request.as_bytes()).await?;
        let mut answer = Vec::new();
        server.read_to_end(&mut answer).await?;
        // The answer says `connection: close`: the client opens a new connection for its next
        // request, and this one ends here.
        client.get_mut().write_all(&answer).await?;
        client.get_mut().shutdown().await?;
        return Ok(());
    }
}
