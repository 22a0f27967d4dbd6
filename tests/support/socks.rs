//! A SOCKS5 proxy on loopback for the tests (RFC 1928, with the user/password method of RFC 1929
//! when it asks for one): it takes `CONNECT` to a host name, looks the name up in its own table
//! (it never resolves a name), records the tunnel, and relays bytes both ways.
#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A tunnel the proxy opened (or refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tunnel {
    /// `host:port` as the client asked for it.
    pub target: String,
    /// The user the client authenticated as, if any.
    pub user: Option<String>,
}

/// A running SOCKS5 proxy.
pub struct SocksProxy {
    /// Where it listens.
    pub addr: SocketAddr,
    tunnels: Arc<Mutex<Vec<Tunnel>>>,
}

type Shared = (
    HashMap<String, SocketAddr>,
    Option<(String, String)>,
    Arc<Mutex<Vec<Tunnel>>>,
);

impl SocksProxy {
    /// Starts a proxy that sends each host of `routes` to its address and, with `credentials`,
    /// accepts only clients that give them.
    pub async fn start(
        routes: HashMap<String, SocketAddr>,
        credentials: Option<(String, String)>,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let tunnels: Arc<Mutex<Vec<Tunnel>>> = Arc::default();
        let shared: Arc<Shared> = Arc::new((routes, credentials, Arc::clone(&tunnels)));
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let shared = Arc::clone(&shared);
                tokio::spawn(async move {
                    let _ = serve(client, &shared).await;
                });
            }
        });
        SocksProxy { addr, tunnels }
    }

    /// Every tunnel opened so far.
    pub fn tunnels(&self) -> Vec<Tunnel> {
        self.tunnels.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

async fn read_string(client: &mut TcpStream) -> std::io::Result<String> {
    let len = client.read_u8().await?;
    let mut bytes = vec![0; usize::from(len)];
    client.read_exact(&mut bytes).await?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

async fn serve(
    mut client: TcpStream,
    (routes, credentials, tunnels): &Shared,
) -> std::io::Result<()> {
    let version = client.read_u8().await?;
    let methods = read_string(&mut client).await?.into_bytes();
    let wanted: u8 = if credentials.is_some() { 2 } else { 0 };
    if version != 5 || !methods.contains(&wanted) {
        return client.write_all(&[5, 0xff]).await;
    }
    client.write_all(&[5, wanted]).await?;
    let mut user = None;
    if let Some((expected_user, expected_password)) = credentials {
        let _sub_version = client.read_u8().await?;
        let given_user = read_string(&mut client).await?;
        let given_password = read_string(&mut client).await?;
        if (&given_user, &given_password) != (expected_user, expected_password) {
            return client.write_all(&[1, 1]).await;
        }
        client.write_all(&[1, 0]).await?;
        user = Some(given_user);
    }
    let mut head = [0u8; 4];
    client.read_exact(&mut head).await?;
    let host = match head[3] {
        3 => read_string(&mut client).await?,
        _ => String::new(), // an address: this proxy serves names only
    };
    let port = client.read_u16().await?;
    if let Ok(mut tunnels) = tunnels.lock() {
        tunnels.push(Tunnel {
            target: format!("{host}:{port}"),
            user,
        });
    }
    let Some(addr) = routes.get(&host) else {
        return client.write_all(&[5, 4, 0, 1, 0, 0, 0, 0, 0, 0]).await;
    };
    let mut upstream = TcpStream::connect(addr).await?;
    client.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}
