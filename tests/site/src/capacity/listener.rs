//! The capacity site's listener, bounded like every listener squall opens: a cap on the
//! connections held at once (one more is accepted and closed at once), and connections that end
//! when their peer stays silent too long.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// How many connections the capacity site holds and how long a quiet one may stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenBounds {
    /// Connections held at once; one more is accepted and closed at once.
    pub max_connections: usize,
    /// How long a new connection may stay before its peer's first bytes.
    pub handshake_timeout: Duration,
    /// How long a connection may stay with nothing read or written, once its peer has spoken.
    pub idle_timeout: Duration,
}

impl Default for ListenBounds {
    /// 1024 connections (a crawl of 200 hosts holds one or two each), 10 s to speak, 60 s of
    /// silence.
    fn default() -> Self {
        ListenBounds {
            max_connections: 1024,
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
        }
    }
}

/// A TCP listener holding at most [`ListenBounds::max_connections`] connections.
pub(super) struct BoundedListener {
    listener: TcpListener,
    bounds: ListenBounds,
    places: Arc<Semaphore>,
}

impl BoundedListener {
    /// Bounds `listener` by `bounds`.
    pub(super) fn new(listener: TcpListener, bounds: ListenBounds) -> BoundedListener {
        let places = Arc::new(Semaphore::new(bounds.max_connections.max(1)));
        BoundedListener {
            listener,
            bounds,
            places,
        }
    }
}

impl axum::serve::Listener for BoundedListener {
    type Io = Bounded;
    type Addr = SocketAddr;

    /// The next connection with a place free; one beyond the cap is dropped (closed) at once,
    /// an error accepting (out of descriptors) waited out.
    async fn accept(&mut self) -> (Bounded, SocketAddr) {
        loop {
            let Ok((stream, peer)) = self.listener.accept().await else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let Ok(place) = Arc::clone(&self.places).try_acquire_owned() else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            return (Bounded::new(stream, self.bounds, place), peer);
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

/// A connection holding one of the listener's places until dropped; a read fails with
/// [`io::ErrorKind::TimedOut`] once its peer was silent too long.
pub(super) struct Bounded {
    inner: TcpStream,
    deadline: Pin<Box<Sleep>>,
    idle: Duration,
    _place: OwnedSemaphorePermit,
}

impl Bounded {
    fn new(inner: TcpStream, bounds: ListenBounds, place: OwnedSemaphorePermit) -> Bounded {
        Bounded {
            inner,
            deadline: Box::pin(tokio::time::sleep(bounds.handshake_timeout)),
            idle: bounds.idle_timeout,
            _place: place,
        }
    }

    fn active(&mut self) {
        self.deadline.as_mut().reset(Instant::now() + self.idle);
    }

    fn expired(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "connection closed: silent for too long",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for Bounded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.active();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => self.expired(cx),
        }
    }
}

impl AsyncWrite for Bounded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = written
            && n > 0
        {
            self.active();
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
