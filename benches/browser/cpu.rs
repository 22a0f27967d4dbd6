//! Where the machine's CPU went during a window: this process (the driver and the protocol's
//! client side; the site's and the memory sampler's threads apart), the browser's process tree,
//! and the machine as a whole.

use crate::common::process::{cpu_seconds, machine_jiffies, thread_cpu_seconds, tree_cpu_seconds};
use crate::memory::SAMPLER_THREAD;
use crate::site::SITE_THREADS;

/// CPU counters read at one moment.
#[derive(Debug, Clone, Copy)]
pub struct CpuReading {
    process: f64,
    site: f64,
    sampler: f64,
    browser: f64,
    machine: (f64, f64),
}

impl CpuReading {
    /// Reads the counters now; `browser` is the browser's process id, if there is one.
    pub fn now(browser: Option<u32>) -> CpuReading {
        CpuReading {
            process: cpu_seconds(std::process::id()),
            site: thread_cpu_seconds(SITE_THREADS),
            sampler: thread_cpu_seconds(SAMPLER_THREAD),
            browser: browser.map_or(0.0, tree_cpu_seconds),
            machine: machine_jiffies(),
        }
    }

    /// The CPU used from `earlier` to this reading, `seconds` apart.
    pub fn since(&self, earlier: &CpuReading, seconds: f64) -> CpuUse {
        let cores = std::thread::available_parallelism().map_or(1, usize::from) as f64;
        let busy =
            (self.machine.0 - earlier.machine.0) / (self.machine.1 - earlier.machine.1).max(1.0);
        let per_second = |now: f64, then: f64| (now - then).max(0.0) / seconds.max(1e-9);
        let site = per_second(self.site, earlier.site);
        let sampler = per_second(self.sampler, earlier.sampler);
        let driver = (per_second(self.process, earlier.process) - site - sampler).max(0.0);
        let browser = per_second(self.browser, earlier.browser);
        CpuUse {
            driver_cores: driver,
            site_cores: site,
            sampler_cores: sampler,
            browser_cores: browser,
            machine_busy: busy,
            other_cores: (busy * cores - driver - site - sampler - browser).max(0.0),
        }
    }
}

/// CPU used during a window, in cores (CPU seconds per second).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuUse {
    /// This process without the site's threads: the driver and the protocol's client side (for
    /// the browser: the DevTools connection; for HTTP: the whole client).
    pub driver_cores: f64,
    /// The site's threads.
    pub site_cores: f64,
    /// The memory sampler's thread (0 for HTTP).
    pub sampler_cores: f64,
    /// The browser's processes, and those of them that exited and were reaped by another (0 for
    /// HTTP).
    pub browser_cores: f64,
    /// The share of all the machine's cores that was busy (0–1).
    pub machine_busy: f64,
    /// Busy cores not accounted for above: other programs on the machine.
    pub other_cores: f64,
}
