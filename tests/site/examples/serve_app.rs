//! Serves the JavaScript app site (default spec) on loopback until Ctrl-C,
//! for looking at it with a real browser.
//!
//! ```text
//! cargo run -p squall-testsite --example serve_app [PORT]
//! ```
//!
//! Prints the port, then the seeds. Resolve `*.test` to 127.0.0.1, e.g.
//! `chromium --host-resolver-rules="MAP *.test 127.0.0.1, MAP * ~NOTFOUND" http://app-00.test:PORT/`.

use std::net::SocketAddr;

use squall_testsite::{AppSite, AppSpec};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port = match std::env::args().nth(1) {
        Some(arg) => arg.parse::<u16>().map_err(|e| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("port {arg}: {e}"))
        })?,
        None => 0,
    };
    let site =
        AppSite::start_on(AppSpec::default(), SocketAddr::from(([127, 0, 0, 1], port))).await?;
    println!("port {}", site.port());
    for seed in site.seeds() {
        println!("{seed}");
    }
    tokio::signal::ctrl_c().await?;
    let requests = site.requests().len();
    site.shutdown().await;
    println!("served {requests} requests");
    Ok(())
}
