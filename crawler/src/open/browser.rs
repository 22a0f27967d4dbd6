//! The headless-browser protocol, when the configuration sends a scheme to it.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use squall::config::CrawlConfig;
use squall_browser::{BrowserConfig, BrowserProtocol, PROTOCOL_NAME};

/// The headless-browser protocol, started when `protocol.schemes` names it (`browser.*` keys,
/// examples/browser-conf.yaml). Without `browser.host.rules`, the browser resolves the `--resolve`
/// names (and the demo site's) as the HTTP client does.
pub(crate) async fn start_browser(
    config: &CrawlConfig,
    resolve: &[(String, SocketAddr)],
) -> anyhow::Result<Option<Arc<BrowserProtocol>>> {
    if !config
        .protocols
        .schemes
        .values()
        .any(|protocol| protocol == PROTOCOL_NAME)
    {
        return Ok(None);
    }
    let mut settings = BrowserConfig::from_config(config)?;
    if settings.host_rules.is_empty() {
        let rules: Vec<String> = resolve
            .iter()
            .map(|(host, addr)| format!("MAP {host} {}", addr.ip()))
            .collect();
        settings.host_rules = rules.join(", ");
    }
    let browser = BrowserProtocol::start(settings)
        .await
        .context("cannot start the browser protocol (protocol.schemes names it)")?;
    eprintln!("browser: {} tabs", browser.settings().tabs);
    Ok(Some(Arc::new(browser)))
}
