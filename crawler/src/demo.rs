//! `--demo-site`: a generated multi-host web site served on loopback, crawled for a first try
//! without touching the internet.

use std::net::SocketAddr;

use anyhow::Context;
use squall::config::ConfigBuilder;
use squall_testsite::{Site, SiteSpec};

/// The demo's keys, applied before every other source: the crawl names itself `squall-demo` and
/// stays off the site's out-of-scope hosts; a config file or `--set` may still change both.
pub(crate) fn configure(builder: ConfigBuilder) -> anyhow::Result<ConfigBuilder> {
    Ok(builder
        .set("http.agent.name=squall-demo")?
        .set(&SiteSpec::exclude_outside_hosts())?)
}

/// Serves the demo site on the loopback `port`, sends its host names there (`resolve`), adds its
/// seeds to `seeds` and says so on standard error.
pub(crate) async fn start(
    port: u16,
    seeds: &mut Vec<String>,
    resolve: &mut Vec<(String, SocketAddr)>,
) -> anyhow::Result<Site> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let site = serve(addr).await.with_context(|| {
        format!("cannot serve the demo site on {addr} (choose another with --demo-port)")
    })?;
    for host in site.host_names() {
        resolve.push((host, site.addr()));
    }
    seeds.extend(site.seeds());
    eprintln!(
        "demo site: {} hosts on {} (seeds: {})",
        site.in_scope_host_names().len(),
        site.addr(),
        site.seeds().len()
    );
    Ok(site)
}

/// The demo site on `addr`, behind a guarded listener like every listener of squall's: room for
/// the crawl's own connections (a few a host) and more, none held silent.
async fn serve(addr: SocketAddr) -> std::io::Result<Site> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let limits = squall::listen::ListenLimits {
        max_connections: 256,
        ..squall::listen::ListenLimits::default()
    };
    let guarded = squall::listen::GuardedListener::new(listener, "demo site", limits);
    Site::start_with(SiteSpec::default(), guarded)
}
