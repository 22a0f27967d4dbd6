//! The browser's memory, sampled while it renders: the proportional set size (PSS, from
//! `/proc/PID/smaps_rollup`, so pages shared by its processes count once) of the browser's whole
//! process tree, as `squall_browser::tree_rss_bytes` reads it, summed over every browser the
//! protocol has started since sampling began and that is still alive.
//!
//! The sampler runs on a thread of its own named [`SAMPLER_THREAD`], so that the CPU its reading
//! of `/proc` takes is not counted as the crawler's.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use squall_browser::{BrowserProtocol, tree_rss_bytes};

/// How often the memory is read.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(200);

/// The name of the sampler's thread.
pub const SAMPLER_THREAD: &str = "bench-sampler";

/// What the sampler saw.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    /// The largest sum seen, bytes.
    pub peak_bytes: u64,
    /// Samples taken.
    pub samples: usize,
    /// The browsers' process ids, in the order they appeared.
    pub browsers: Vec<u32>,
}

impl Memory {
    /// Browser restarts seen: browsers beyond the first.
    pub fn restarts(&self) -> usize {
        self.browsers.len().saturating_sub(1)
    }

    /// Reads the memory of every browser seen once.
    fn sample(&mut self, current: Option<u32>) {
        if let Some(pid) = current
            && !self.browsers.contains(&pid)
        {
            self.browsers.push(pid);
        }
        let total: u64 = self
            .browsers
            .iter()
            .filter_map(|p| tree_rss_bytes(*p))
            .sum();
        self.peak_bytes = self.peak_bytes.max(total);
        self.samples += 1;
    }
}

/// A sampler running on its thread.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Memory>,
}

impl Sampler {
    /// Starts sampling `browser` every [`SAMPLE_EVERY`] (on the current tokio runtime's handle for
    /// the browser's process id).
    pub fn start(browser: Arc<BrowserProtocol>) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let runtime = tokio::runtime::Handle::current();
        let thread = std::thread::Builder::new()
            .name(SAMPLER_THREAD.to_string())
            .spawn(move || {
                let mut memory = Memory::default();
                while !stopped.load(Ordering::SeqCst) {
                    memory.sample(runtime.block_on(browser.browser_pid()));
                    std::thread::sleep(SAMPLE_EVERY);
                }
                memory
            });
        match thread {
            Ok(thread) => Sampler { stop, thread },
            Err(e) => panic!("the memory sampler's thread: {e}"),
        }
    }

    /// Stops sampling and returns what it saw.
    pub async fn finish(self) -> Memory {
        self.stop.store(true, Ordering::SeqCst);
        let thread = self.thread;
        match tokio::task::spawn_blocking(move || thread.join()).await {
            Ok(Ok(memory)) => memory,
            _ => panic!("the memory sampler failed"),
        }
    }
}
