//! The two candidates on the same post pages: squall's HTTP client (the HTML shell, without the
//! post text) and the browser protocol with N tabs (the rendered page), each one measured run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use squall::protocol::{HttpClient, HttpContext, HttpSettings, Protocol};
use squall_bench_schema::browser::WindowRun;
use squall_browser::{BrowserConfig, BrowserProtocol};

use crate::common::crawler::config;
use crate::common::process::process_tree;
use crate::drive::{Budget, Window, drive};
use crate::memory::{Memory, Sampler};
use crate::site::BenchSite;

/// Chromium resolves the app's hosts to loopback and nothing else at all.
pub const HOST_RULES: &str = "MAP *.test 127.0.0.1, MAP * ~NOTFOUND";

/// The browser protocol's settings that the benchmark sets (the rest are the defaults).
#[derive(Debug, Clone, Copy)]
pub struct BrowserChoice {
    /// `browser.settle.idle`, seconds.
    pub settle_idle: f64,
    /// `browser.max.rss.mb`: the protocol restarts the browser above it.
    pub max_rss_mb: u64,
}

impl BrowserChoice {
    /// The `browser.*` keys every tab count gets.
    pub fn keys(&self) -> Vec<String> {
        vec![
            format!("browser.max.rss.mb={}", self.max_rss_mb),
            format!("browser.settle.idle={}", self.settle_idle),
            format!("browser.host.rules='{HOST_RULES}'"),
        ]
    }

    /// The protocol's settings for `tabs` tabs.
    pub fn settings(&self, tabs: usize) -> BrowserConfig {
        let mut keys = vec![
            "http.agent.name=squall-bench".to_string(),
            format!("browser.tabs={tabs}"),
        ];
        keys.extend(self.keys());
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        match BrowserConfig::from_config(&config(&keys)) {
            Ok(settings) => settings,
            Err(e) => panic!("browser settings: {e}"),
        }
    }
}

/// One run of the browser protocol.
pub struct BrowserRun {
    /// Tabs.
    pub tabs: usize,
    /// What ended in the window.
    pub window: Window,
    /// The browser's memory from its start to the window's end.
    pub memory: Memory,
    /// Its place in the benchmark's order.
    pub order: usize,
}

impl BrowserRun {
    /// Peak memory, MiB.
    pub fn peak_mib(&self) -> f64 {
        self.memory.peak_bytes as f64 / (1024.0 * 1024.0)
    }

    /// As the result file records it.
    pub fn record(&self) -> WindowRun {
        WindowRun {
            tabs: Some(self.tabs as u64),
            peak_memory_mib: Some(self.peak_mib()),
            memory_samples: Some(self.memory.samples as u64),
            restarts: Some(self.memory.restarts() as u64),
            ..self.window.record(self.order)
        }
    }
}

/// Starts a browser with `tabs` tabs, drives it for `budget`, and stops it (waiting until its
/// processes are gone, so that the next run starts on a quiet machine).
pub async fn browser(
    site: &BenchSite,
    choice: &BrowserChoice,
    tabs: usize,
    budget: Budget,
    order: usize,
) -> BrowserRun {
    site.clear_requests();
    let protocol = match BrowserProtocol::start(choice.settings(tabs)).await {
        Ok(protocol) => Arc::new(protocol),
        Err(e) => panic!("starting Chromium with {tabs} tabs: {e}"),
    };
    let sampler = Sampler::start(Arc::clone(&protocol));
    let pid_of = Arc::clone(&protocol);
    let window = drive(
        Arc::clone(&protocol) as Arc<dyn Protocol>,
        Arc::clone(&site.posts),
        tabs,
        budget,
        true,
        || {
            let protocol = Arc::clone(&pid_of);
            async move { protocol.browser_pid().await }
        },
    )
    .await;
    let memory = sampler.finish().await;
    let pids: Vec<u32> = memory
        .browsers
        .iter()
        .flat_map(|p| process_tree(*p))
        .collect();
    drop(pid_of);
    drop(protocol);
    wait_gone(&pids).await;
    BrowserRun {
        tabs,
        window,
        memory,
        order,
    }
}

/// squall's HTTP client fetching the same pages, `concurrency` at once.
pub async fn http(site: &BenchSite, concurrency: usize, budget: Budget) -> Window {
    site.clear_requests();
    let config = HttpSettings::default();
    let mut context = HttpContext::new(&config);
    context.resolve = site
        .host_names()
        .into_iter()
        .map(|host| (host, site.addr()))
        .collect();
    context.max_idle_per_host = concurrency;
    let client = match HttpClient::new(&config, &context) {
        Ok(client) => Arc::new(client),
        Err(e) => panic!("client: {e}"),
    };
    let posts = Arc::clone(&site.posts);
    drive(client, posts, concurrency, budget, false, || async { None }).await
}

/// Waits until none of `pids` runs any more (zombies count as gone), for 15 s at most.
async fn wait_gone(pids: &[u32]) {
    let alive = |pid: &u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                let (_, rest) = stat.rsplit_once(')')?;
                rest.split_whitespace().next().map(|state| state != "Z")
            })
            .unwrap_or(false)
    };
    let since = Instant::now();
    while pids.iter().any(alive) && since.elapsed() < Duration::from_secs(15) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
