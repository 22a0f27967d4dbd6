//! One running browser: its connection, process, idle tabs, and what it has rendered.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::process::Child;
use tokio::sync::Notify;
use tracing::debug;

use crate::error::BrowserError;
use crate::launch::{self, Connected};
use crate::settings::BrowserConfig;
use crate::tab::Tab;

/// A browser and its tabs. Dropping the last handle kills a launched browser and removes its
/// profile.
pub struct Session {
    browser: chromiumoxide::Browser,
    child: Mutex<Option<Child>>,
    pid: Option<u32>,
    _profile: Option<tempfile::TempDir>,
    gone: Arc<AtomicBool>,
    retired: AtomicBool,
    idle_tabs: Mutex<Vec<Tab>>,
    rendered: AtomicU64,
    active: AtomicUsize,
    finished: Notify,
}

/// A render in progress on a session; counted until dropped.
pub struct ActiveRender<'a>(&'a Session);

impl Drop for ActiveRender<'_> {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
        self.0.finished.notify_waiters();
    }
}

impl Session {
    /// Launches or attaches to the browser of `settings`.
    pub async fn start(settings: &BrowserConfig) -> Result<Session, BrowserError> {
        let Connected {
            browser,
            handler,
            child,
            profile,
        } = launch::connect(settings).await?;
        let gone = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&gone);
        launch::drive(handler, move || flag.store(true, Ordering::SeqCst));
        Ok(Session {
            browser,
            pid: child.as_ref().and_then(Child::id),
            child: Mutex::new(child),
            _profile: profile,
            gone,
            retired: AtomicBool::new(false),
            idle_tabs: Mutex::new(Vec::new()),
            rendered: AtomicU64::new(0),
            active: AtomicUsize::new(0),
            finished: Notify::new(),
        })
    }

    /// The browser's process id, when squall launched it.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Whether new renders may use this browser.
    pub fn usable(&self) -> bool {
        !self.is_gone() && !self.retired.load(Ordering::SeqCst)
    }

    /// Whether the connection to the browser ended (or its process exited).
    pub fn is_gone(&self) -> bool {
        if self.gone.load(Ordering::SeqCst) {
            return true;
        }
        let exited = self
            .child
            .lock()
            .ok()
            .and_then(|mut child| child.as_mut().map(|child| child.try_wait()))
            .is_some_and(|status| !matches!(status, Ok(None)));
        if exited {
            self.gone.store(true, Ordering::SeqCst);
        }
        exited
    }

    /// Whether the browser answers a DevTools command within `patience` (a paused or hung
    /// browser does not).
    pub async fn responds(&self, patience: Duration) -> bool {
        matches!(
            tokio::time::timeout(patience, self.browser.version()).await,
            Ok(Ok(_))
        )
    }

    /// Kills a launched browser now (renders in flight on it end as the browser is gone).
    pub fn kill(&self) {
        if let Ok(mut child) = self.child.lock()
            && let Some(child) = child.as_mut()
        {
            let _ = child.start_kill();
        }
    }

    /// No new render uses this browser; it closes once the renders in flight are done.
    pub fn retire(&self, reason: &str) {
        if !self.retired.swap(true, Ordering::SeqCst) {
            debug!(pid = self.pid, reason, "browser retired");
            metrics::counter!("squall_browser_restarts_total", "reason" => reason.to_string())
                .increment(1);
        }
    }

    /// Counts a render on this browser until the returned guard is dropped.
    pub fn begin_render(&self) -> ActiveRender<'_> {
        self.active.fetch_add(1, Ordering::SeqCst);
        ActiveRender(self)
    }

    /// Waits until no render is in progress on this browser, for at most `patience`.
    pub async fn drained(&self, patience: Duration) {
        let wait = async {
            loop {
                let finished = self.finished.notified();
                if self.active.load(Ordering::SeqCst) == 0 {
                    return;
                }
                finished.await;
            }
        };
        let _ = tokio::time::timeout(patience, wait).await;
    }

    /// An idle tab, or a new one.
    pub async fn take_tab(&self, settings: &BrowserConfig) -> Result<Tab, BrowserError> {
        let idle = self.idle_tabs.lock().ok().and_then(|mut tabs| tabs.pop());
        match idle {
            Some(tab) => Ok(tab),
            None => {
                let gone = Arc::clone(&self.gone);
                Tab::open(&self.browser, &settings.user_agent, &settings.block, gone).await
            }
        }
    }

    /// A tab back after a render that left it usable; counts the page.
    pub fn put_tab(&self, tab: Tab) -> u64 {
        if let Ok(mut tabs) = self.idle_tabs.lock() {
            tabs.push(tab);
        }
        self.rendered.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Counts a page rendered on a tab that is not kept.
    pub fn count_page(&self) -> u64 {
        self.rendered.fetch_add(1, Ordering::SeqCst) + 1
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.kill();
    }
}
