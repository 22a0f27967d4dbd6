//! The embedded frontier passes the frontier conformance suite.

use squall::frontier::conformance::{FrontierPair, check_catalog, check_frontier};
use squall::frontier::{EmbeddedFrontier, QueryLimits};

#[tokio::test]
async fn embedded_frontier_is_conformant() {
    let root = tempfile::tempdir().expect("temp dir");
    let counter = std::sync::atomic::AtomicUsize::new(0);
    let result = check_frontier(|| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = root.path().join(format!("frontier-{n}"));
        async move {
            let frontier = EmbeddedFrontier::open(&dir).expect("open frontier");
            FrontierPair::new(frontier.spout(QueryLimits::default()), frontier)
        }
    })
    .await;
    assert_eq!(result, Ok(()));
    assert_eq!(counter.load(std::sync::atomic::Ordering::Relaxed), 7);
}

#[tokio::test]
async fn embedded_frontier_is_a_conformant_catalog() {
    let root = tempfile::tempdir().expect("temp dir");
    let frontier = EmbeddedFrontier::open(root.path()).expect("open frontier");
    let pair = FrontierPair::new(frontier.spout(QueryLimits::default()), frontier.clone());
    assert_eq!(check_catalog(pair, &frontier).await, Ok(()));
}

#[tokio::test]
async fn embedded_frontier_survives_reopening() {
    use chrono::Utc;
    use squall::frontier::{StatusStore, StatusWrite};
    use squall::model::{CrawlUrl, Status};

    let root = tempfile::tempdir().expect("temp dir");
    let url = url::Url::parse("http://a.test/kept").expect("url");
    {
        let frontier = EmbeddedFrontier::open(root.path()).expect("open");
        let outcomes = frontier
            .store(vec![StatusWrite {
                url: CrawlUrl::new(url.clone()),
                key: "a.test".into(),
                status: Status::Fetched,
                next_fetch: Some(Utc::now() + chrono::TimeDelta::days(1)),
                queue: Default::default(),
            }])
            .await;
        assert_eq!(outcomes, [Ok(())]);
    }
    let reopened = EmbeddedFrontier::open(root.path()).expect("reopen");
    let stored = reopened
        .lookup(url.as_str())
        .expect("lookup")
        .expect("present");
    assert_eq!(stored.status, Status::Fetched);
}

#[test]
fn an_unusable_frontier_path_is_named() {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    let error = EmbeddedFrontier::open(file.path()).expect_err("a file is not a directory");
    let message = error.to_string();
    assert!(
        message.contains(&file.path().display().to_string()),
        "{message}"
    );
    assert!(message.contains("not a directory"), "{message}");
}
