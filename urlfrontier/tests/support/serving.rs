//! squall's server in the test process, on a free loopback port, and a client of it.

use squall::config::CrawlConfig;
use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::server::RunningServer;
use tonic::transport::Channel;

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
