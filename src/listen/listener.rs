//! Accepting connections up to a cap.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tracing::warn;

use super::{Guarded, ListenLimits};

/// How often a listener says, at most, that it turned connections away.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// A TCP listener that holds at most `max_connections` connections, each [`Guarded`].
#[derive(Debug)]
pub struct GuardedListener {
    listener: TcpListener,
    name: &'static str,
    limits: ListenLimits,
    places: Arc<Semaphore>,
    refused: u64,
    warned: Option<Instant>,
}

impl GuardedListener {
    /// Guards `listener`, named `name` in logs and in the metric
    /// `squall_listener_refused_total{listener}`.
    pub fn new(listener: TcpListener, name: &'static str, limits: ListenLimits) -> Self {
        GuardedListener {
            listener,
            name,
            limits,
            places: Arc::new(Semaphore::new(limits.max_connections.max(1))),
            refused: 0,
            warned: None,
        }
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The next connection with a place free, with TCP_NODELAY set (answers go out at once). A
    /// connection beyond the cap is closed as soon as it is accepted; an error accepting (out of
    /// descriptors, say) is logged and waited out.
    pub async fn accept(&mut self) -> (Guarded<TcpStream>, SocketAddr) {
        loop {
            let (stream, peer) = match self.listener.accept().await {
                Ok(accepted) => accepted,
                Err(error) => {
                    warn!(listener = self.name, %error, "cannot accept a connection; retrying");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let Ok(place) = Arc::clone(&self.places).try_acquire_owned() else {
                self.turn_away(peer);
                continue;
            };
            if let Err(error) = stream.set_nodelay(true) {
                warn!(listener = self.name, %error, "TCP_NODELAY could not be set");
            }
            let limits = &self.limits;
            let guarded = Guarded::new(
                stream,
                limits.handshake_timeout,
                limits.idle_timeout,
                Some(place),
            );
            return (guarded, peer);
        }
    }

    /// Counts a connection closed for want of a place, and says so now and then.
    fn turn_away(&mut self, peer: SocketAddr) {
        self.refused += 1;
        metrics::counter!("squall_listener_refused_total", "listener" => self.name).increment(1);
        let now = Instant::now();
        if self.warned.is_none_or(|at| now - at >= WARN_EVERY) {
            self.warned = Some(now);
            warn!(
                listener = self.name,
                %peer,
                max_connections = self.limits.max_connections,
                refused_so_far = self.refused,
                "connection closed: the listener holds as many as it may"
            );
        }
    }
}

/// Lets `axum::serve` take connections from a guarded listener (the status page's server).
#[cfg(feature = "live-page")]
impl axum::serve::Listener for GuardedListener {
    type Io = Guarded<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        GuardedListener::accept(self).await
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        GuardedListener::local_addr(self)
    }
}
