//! What can go wrong in the browser protocol.

use std::path::PathBuf;

/// A browser could not be started or reached, or stopped answering.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// No `browser.executable` was set and none of the usual names is on `PATH`.
    #[error(
        "no Chromium found: set browser.executable, or install chromium (Debian: apt-get install chromium)"
    )]
    NotFound,
    /// The executable could not be started, or did not print its DevTools address.
    #[error("cannot launch the browser {executable}: {reason}")]
    Launch {
        /// The executable.
        executable: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// A running browser (`browser.devtools.url`) could not be reached.
    #[error("cannot connect to the browser at {address}: {reason}")]
    Connect {
        /// The DevTools address.
        address: String,
        /// What went wrong.
        reason: String,
    },
    /// The browser's connection closed, or it stopped answering (crashed, killed, restarted).
    #[error("the browser is gone: {0}")]
    Gone(String),
    /// A DevTools command failed while the browser lives (the tab is then replaced).
    #[error("DevTools command failed: {0}")]
    Command(String),
}

impl BrowserError {
    /// Sorts a DevTools client error: a closed connection means the browser is gone.
    pub fn from_cdp(error: chromiumoxide::error::CdpError) -> Self {
        use chromiumoxide::error::CdpError;
        match error {
            CdpError::Ws(_) | CdpError::Io(_) | CdpError::ChannelSendError(_) => {
                BrowserError::Gone(error.to_string())
            }
            other => BrowserError::Command(other.to_string()),
        }
    }
}
