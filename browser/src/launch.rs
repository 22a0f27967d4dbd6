//! Starting Chromium (or finding a running one) and connecting to it over the DevTools protocol.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use chromiumoxide::{Browser, Handler};
use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tracing::{debug, trace};

use crate::error::BrowserError;
use crate::settings::{BrowserConfig, BrowserSource};

/// Names tried on `PATH` when `browser.executable` is not set.
const CANDIDATES: &[&str] = &["chromium", "chromium-browser", "google-chrome", "chrome"];

/// Flags for a crawler's browser: headless, nothing fetched but what pages ask for (no updates,
/// sync, crash reports or QUIC probes), small `/dev/shm` tolerated.
const FLAGS: &[&str] = &[
    "--headless=new",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-breakpad",
    "--disable-quic",
    "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
    "--mute-audio",
    "--hide-scrollbars",
    "--password-store=basic",
    "--use-mock-keychain",
    "--window-size=1280,800",
    "--remote-debugging-port=0",
];

/// A browser connected over the DevTools protocol.
pub struct Connected {
    /// The DevTools client.
    pub browser: Browser,
    /// Its event loop, to be polled on a task of its own.
    pub handler: Handler,
    /// The process, when squall launched it (killed when dropped).
    pub child: Option<Child>,
    /// Its profile directory, removed when dropped.
    pub profile: Option<tempfile::TempDir>,
}

/// Launches or attaches to the browser that `settings` name.
pub async fn connect(settings: &BrowserConfig) -> Result<Connected, BrowserError> {
    match &settings.source {
        BrowserSource::Attach(address) => attach(address).await,
        BrowserSource::Launch(executable) => {
            let executable = match executable {
                Some(path) => path.clone(),
                None => find_on_path().ok_or(BrowserError::NotFound)?,
            };
            launch(&executable, settings).await
        }
    }
}

async fn attach(address: &str) -> Result<Connected, BrowserError> {
    let failed = |reason: String| BrowserError::Connect {
        address: address.to_string(),
        reason,
    };
    let (browser, handler) = Browser::connect(address.to_string())
        .await
        .map_err(|error| failed(error.to_string()))?;
    Ok(Connected {
        browser,
        handler,
        child: None,
        profile: None,
    })
}

async fn launch(executable: &Path, settings: &BrowserConfig) -> Result<Connected, BrowserError> {
    let failed = |reason: String| BrowserError::Launch {
        executable: executable.to_path_buf(),
        reason,
    };
    let profile = tempfile::Builder::new()
        .prefix("squall-browser-")
        .tempdir()
        .map_err(|error| failed(format!("cannot create a profile directory: {error}")))?;
    let mut command = Command::new(executable);
    command.args(FLAGS);
    command.arg(format!("--user-data-dir={}", profile.path().display()));
    if running_as_root() {
        command.arg("--no-sandbox");
    }
    if !settings.host_rules.is_empty() {
        command.arg(format!("--host-resolver-rules={}", settings.host_rules));
    }
    command.args(&settings.args).arg("about:blank");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|error| failed(error.to_string()))?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| failed("no stderr".to_string()))?;
    let address = tokio::time::timeout(settings.launch_timeout, devtools_address(stderr))
        .await
        .map_err(|_| {
            failed(format!(
                "no DevTools address within {:?}",
                settings.launch_timeout
            ))
        })?
        .map_err(failed)?;
    debug!(pid = child.id(), %address, "browser started");
    let (browser, handler) = Browser::connect(address.clone())
        .await
        .map_err(|error| failed(format!("cannot connect to {address}: {error}")))?;
    Ok(Connected {
        browser,
        handler,
        child: Some(child),
        profile: Some(profile),
    })
}

/// Reads the browser's stderr until it prints its DevTools address, then keeps draining it (to
/// `trace` logs) on a task of its own so the browser never blocks on a full pipe.
async fn devtools_address(stderr: tokio::process::ChildStderr) -> Result<String, String> {
    let mut lines = BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    loop {
        let line = match lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => {
                return Err(format!(
                    "the browser exited before listening: {}",
                    seen.join(" | ")
                ));
            }
            Err(error) => return Err(error.to_string()),
        };
        if let Some((_, address)) = line.split_once("DevTools listening on ") {
            let address = address.trim().to_string();
            tokio::spawn(async move {
                while let Ok(Some(line)) = lines.next_line().await {
                    trace!(target: "squall_browser::chromium", "{line}");
                }
            });
            return Ok(address);
        }
        if seen.len() < 20 {
            seen.push(line);
        }
    }
}

/// The first browser on `PATH` of `chromium`, `chromium-browser`, `google-chrome` and `chrome`.
pub fn find_on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| CANDIDATES.iter().map(move |name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Chromium refuses its sandbox as root; containers often run crawlers as root.
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find(|line| line.starts_with("Uid:"))
            .and_then(|line| line.split_whitespace().nth(1))
            == Some("0")
    })
}

/// Polls the browser's event loop until the connection ends; then `on_end` runs.
pub fn drive(mut handler: Handler, on_end: impl FnOnce() + Send + 'static) {
    tokio::spawn(async move {
        while let Some(event) = handler.next().await {
            if let Err(error) = event {
                debug!(%error, "browser connection event error");
                if matches!(
                    error,
                    chromiumoxide::error::CdpError::Ws(_) | chromiumoxide::error::CdpError::Io(_)
                ) {
                    break;
                }
            }
        }
        on_end();
    });
}
