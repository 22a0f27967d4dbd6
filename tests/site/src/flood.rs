//! A flood of connections that send nothing, for testing that a listener closes them and still
//! serves real clients.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::future::join_all;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// What became of a flood of silent connections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FloodOutcome {
    /// Connections opened.
    pub opened: usize,
    /// Connections the listener closed before the deadline.
    pub closed: usize,
    /// The longest a closed connection stayed open.
    pub longest: Duration,
    /// The most descriptors the listening process held while the flood lasted (0 when it was not
    /// watched, or its descriptors could not be read).
    pub peak_descriptors: usize,
}

/// [`silent_connections`] while sampling the descriptors of process `pid` (the listener's) every
/// 20 ms, the most of them kept in [`FloodOutcome::peak_descriptors`].
pub async fn silent_connections_watching(
    addr: SocketAddr,
    count: usize,
    deadline: Duration,
    pid: u32,
) -> FloodOutcome {
    let peak = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (Arc::clone(&peak), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(open_descriptors(pid).unwrap_or_default(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let mut outcome = silent_connections(addr, count, deadline).await;
    done.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    outcome.peak_descriptors = peak.load(Ordering::Relaxed);
    outcome
}

/// Opens `count` TCP connections to `addr` that send nothing, and waits up to `deadline` for the
/// listener to close each (its read gives end of file or an error). Raises this process's soft
/// descriptor limit to its hard one first, so that the flood fits.
pub async fn silent_connections(
    addr: SocketAddr,
    count: usize,
    deadline: Duration,
) -> FloodOutcome {
    raise_descriptor_limit();
    let started = Instant::now();
    let mut streams = Vec::with_capacity(count);
    for _ in 0..count {
        if let Ok(stream) = TcpStream::connect(addr).await {
            streams.push(stream);
        }
    }
    let opened = streams.len();
    let waits = streams
        .into_iter()
        .map(|stream| closed_by_peer(stream, started, deadline));
    let closes: Vec<Duration> = join_all(waits).await.into_iter().flatten().collect();
    FloodOutcome {
        opened,
        closed: closes.len(),
        longest: closes.into_iter().max().unwrap_or_default(),
        peak_descriptors: 0,
    }
}

/// When the peer closed `stream` (its reads, whatever the peer says first, end with end of file
/// or an error), if before `deadline` from `started`.
async fn closed_by_peer(
    mut stream: TcpStream,
    started: Instant,
    deadline: Duration,
) -> Option<Duration> {
    let mut buffer = [0u8; 1024];
    loop {
        let remaining = deadline.checked_sub(started.elapsed())?;
        match tokio::time::timeout(remaining, stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return Some(started.elapsed()),
            Ok(Ok(_)) => continue,
            Err(_) => return None,
        }
    }
}

/// How many descriptors process `pid` holds (Linux: its `/proc/PID/fd`), if known.
pub fn open_descriptors(pid: u32) -> Option<usize> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()
        .map(|entries| entries.count())
}

fn raise_descriptor_limit() {
    if let Ok((_, hard)) =
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
    {
        let _ =
            nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE, hard, hard);
    }
}
