//! squall's server in the test process, on a free loopback port, and a client of it.

use std::path::Path;

use squall::config::{ConfigBuilder, CrawlConfig};
use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::server::RunningServer;
use tonic::transport::Channel;

/// A server configuration on an embedded frontier in `dir`.
pub fn embedded_config(dir: &Path) -> CrawlConfig {
    ConfigBuilder::new()
        .set("http.agent.name=squall-frontier")
        .and_then(|b| b.set_text("frontier.path", &dir.display().to_string()))
        .and_then(ConfigBuilder::build)
        .expect("config")
}

/// squall's server on `config`, listening on a free loopback port.
pub async fn serve(config: CrawlConfig) -> RunningServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("listen");
    squall_urlfrontier::server::start(config, listener)
        .await
        .expect("the server starts")
}

/// A URLFrontier client connected to `server`.
pub async fn connect(server: &RunningServer) -> UrlFrontierClient<Channel> {
    UrlFrontierClient::connect(format!("http://{}", server.addr()))
        .await
        .expect("connect")
}
