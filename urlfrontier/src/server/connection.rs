//! The server's connections: squall's guarded listener, in the form tonic serves.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use squall::listen::{Guarded, GuardedListener, ListenLimits};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tonic::transport::server::{Connected, TcpConnectInfo};

/// The server's bounds by default: 256 connections (workers keep one each), 10 s to speak (and to
/// finish a TLS handshake), 120 s of silence; the server pings every quarter of that, so a live
/// client's connection is never silent that long.
pub const SERVER_LIMITS: ListenLimits = ListenLimits {
    max_connections: 256,
    handshake_timeout: Duration::from_secs(10),
    idle_timeout: Duration::from_secs(120),
};

/// One accepted connection.
#[derive(Debug)]
pub(super) struct Connection(Guarded<TcpStream>);

/// The connections `listener` accepts, as tonic takes them.
pub(super) fn incoming(
    listener: GuardedListener,
) -> impl Stream<Item = Result<Connection, io::Error>> {
    futures::stream::unfold(listener, |mut listener| async move {
        let (connection, _) = listener.accept().await;
        Some((Ok(Connection(connection)), listener))
    })
}

impl Connected for Connection {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.0.get_ref().connect_info()
    }
}

impl AsyncRead for Connection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Connection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }
}
