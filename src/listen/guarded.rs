//! A connection that ends when its peer stays silent too long.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{Instant, Sleep};

/// A connection accepted by a [`GuardedListener`](super::GuardedListener): it holds one of the
/// listener's places until dropped, and a read fails with [`io::ErrorKind::TimedOut`] when the
/// peer has sent nothing within the handshake timeout of connecting, or when nothing was read or
/// written for the idle timeout since.
#[derive(Debug)]
pub struct Guarded<S> {
    inner: S,
    deadline: Pin<Box<Sleep>>,
    idle: Duration,
    spoken: bool,
    _place: Option<OwnedSemaphorePermit>,
}

impl<S> Guarded<S> {
    /// Wraps `inner`, which holds `place` (if any) until dropped.
    pub fn new(
        inner: S,
        handshake: Duration,
        idle: Duration,
        place: Option<OwnedSemaphorePermit>,
    ) -> Self {
        Guarded {
            inner,
            deadline: Box::pin(tokio::time::sleep(handshake)),
            idle,
            spoken: false,
            _place: place,
        }
    }

    /// The connection inside.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    fn active(&mut self) {
        self.deadline.as_mut().reset(Instant::now() + self.idle);
    }

    /// A write's outcome, passed on; bytes written to a peer that has spoken count as activity.
    fn wrote(&mut self, written: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        if let Poll::Ready(Ok(count)) = written
            && count > 0
            && self.spoken
        {
            self.active();
        }
        written
    }

    fn expired(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => {
                let what = if self.spoken {
                    "idle"
                } else {
                    "silent since it connected"
                };
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("connection closed: {what} for too long"),
                )))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.spoken = true;
                    self.active();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => self.expired(cx),
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Guarded<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(written)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(written)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
