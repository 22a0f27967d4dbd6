use squall::config::ConfigBuilder;
use squall::fetch::Protocol;
use squall::message::FetchOutcome;
use squall_browser::{BrowserProtocol, BrowserSettings};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().with_env_filter("squall_browser=debug").init();
    let config = ConfigBuilder::new()
        .set("http.agent.name=smoke")?
        .set("browser.paging.click='#more'")?
        .build()?;
    let settings = BrowserSettings::from_config(&config)?;
    let t = std::time::Instant::now();
    let browser = BrowserProtocol::start(settings).await?;
    println!("started in {:?}, pid {:?}", t.elapsed(), browser.browser_pid().await);
    for url in std::env::args().skip(1) {
        let t = std::time::Instant::now();
        let (record, outcome) = browser.fetch(&url.parse()?, &Default::default()).await;
        println!("{url}: {:?} in {:?}", record, t.elapsed());
        match outcome {
            FetchOutcome::Response(r) => println!("{} {:?} {:?} final={:?}\n{}", r.status_code, r.content_type, r.location, r.final_url, String::from_utf8_lossy(&r.body)),
            other => println!("{other:?}"),
        }
    }
    println!("rss {:?}", browser.rss_bytes().await);
    Ok(())
}
