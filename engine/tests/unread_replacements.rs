//! Replacements of status documents no spout read (a status written for a URL this writer did not
//! hand out) keep the creation date the document has and replace everything else, each way the
//! engine serves updates: one scripted update (Painless), or a read and a write conditional on the
//! version read (every engine; the only way on an Elasticsearch node without Painless). A missing
//! document is created, dated. Many writers replacing the same documents at once all succeed, and
//! each document keeps the date it was created with.
//!
//! Every writer here is new ([`support::store`]: routed by key), so it has read nothing and each
//! replacement it writes is of an unread document.

use crate::support;

use futures::future::join_all;
use serde_json::Value;
use squall::frontier::{QueueReport, StatusWrite, Written};
use squall::model::{CrawlUrl, Status};
use squall_engine::client::{EsClient, Method};
use squall_engine::status_index::schema::{CREATION_DATE, document_id};

fn status_write(url: &str, status: Status, note: Option<&str>) -> StatusWrite {
    let mut url = CrawlUrl::new(url::Url::parse(url).expect("url"));
    if let Some(note) = note {
        url.metadata.set("note", note);
    }
    StatusWrite {
        url,
        key: "a.test".into(),
        status,
        next_fetch: None,
        queue: QueueReport::default(),
    }
}

/// The document's source, read as of now (routed by its key, as the test writers route, so that
/// the reads before conditional writes are routed too).
async fn source(client: &EsClient, index: &str, url: &str) -> Value {
    let path = format!("/{index}/_doc/{}", document_id(url));
    let doc = client
        .request(Method::Get, &path, &[("routing", "a.test")], None)
        .await
        .expect("the document");
    doc["_source"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replacement_of_an_unread_document_keeps_its_date_and_nothing_else() {
    for mode in support::update_modes().await {
        let client = support::client_updating(mode).await;
        let index = support::status_index(&client, "unread", 2).await;
        let (known, new) = ("http://a.test/known", "http://a.test/new");

        let first = support::store(&client, &index);
        let created = first
            .write(&[status_write(known, Status::Discovered, Some("seed"))])
            .await;
        assert_eq!(created, vec![Ok(Written::Created)], "{mode:?}");
        let before = source(&client, &index, known).await;
        let date = before[CREATION_DATE].clone();
        assert!(date.is_string(), "{mode:?}: created dated: {before}");
        // A later second, so that a date set anew would differ.
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;

        let second = support::store(&client, &index);
        let replaced = second
            .write(&[
                status_write(known, Status::Fetched, None),
                status_write(new, Status::FetchError, Some("late")),
            ])
            .await;
        assert_eq!(
            replaced,
            vec![Ok(Written::Replaced), Ok(Written::Replaced)],
            "{mode:?}"
        );
        let after = source(&client, &index, known).await;
        assert_eq!(
            after[CREATION_DATE], date,
            "{mode:?}: the date kept: {after}"
        );
        assert_eq!(after["status"], "FETCHED", "{mode:?}");
        assert!(
            after["metadata"].get("note").is_none(),
            "{mode:?}: the old metadata replaced, not merged: {after}"
        );
        let created_late = source(&client, &index, new).await;
        assert_eq!(created_late["status"], "FETCH_ERROR", "{mode:?}");
        assert!(
            created_late[CREATION_DATE].is_string() && created_late[CREATION_DATE] != date,
            "{mode:?}: a missing document is created, dated now: {created_late}"
        );
        support::delete_index(&client, &index).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writers_replacing_the_same_unread_documents_at_once_all_succeed_and_keep_the_date() {
    const WRITERS: usize = 4;
    const URLS: usize = 25;
    for mode in support::update_modes().await {
        let client = support::client_updating(mode).await;
        let index = support::status_index(&client, "unread-race", 2).await;
        let urls: Vec<String> = (0..URLS).map(|i| format!("http://a.test/{i}")).collect();
        // Half exist (dated) before the writers start; the other half they create among them.
        let seeds: Vec<StatusWrite> = urls[..URLS / 2]
            .iter()
            .map(|url| status_write(url, Status::Discovered, None))
            .collect();
        let seeded = support::store(&client, &index).write(&seeds).await;
        assert!(
            seeded.iter().all(|r| r == &Ok(Written::Created)),
            "{seeded:?}"
        );
        let mut dates = Vec::new();
        for url in &urls[..URLS / 2] {
            dates.push(source(&client, &index, url).await[CREATION_DATE].clone());
        }

        let rounds = (0..WRITERS).map(|writer| {
            let (client, index, urls) = (client.clone(), index.clone(), urls.clone());
            async move {
                let batch: Vec<StatusWrite> = urls
                    .iter()
                    .map(|url| status_write(url, Status::Fetched, Some(&format!("w{writer}"))))
                    .collect();
                support::store(&client, &index).write(&batch).await
            }
        });
        for (writer, outcomes) in join_all(rounds).await.into_iter().enumerate() {
            let failed: Vec<_> = outcomes.iter().filter(|r| r.is_err()).collect();
            assert!(failed.is_empty(), "{mode:?}: writer {writer}: {failed:?}");
        }
        for (url, date) in urls.iter().zip(&dates) {
            let doc = source(&client, &index, url).await;
            assert_eq!(&doc[CREATION_DATE], date, "{mode:?}: {url}: {doc}");
        }
        for url in &urls[URLS / 2..] {
            let doc = source(&client, &index, url).await;
            assert!(doc[CREATION_DATE].is_string(), "{mode:?}: {url}: {doc}");
            assert_eq!(doc["status"], "FETCHED", "{mode:?}: {url}");
        }
        support::delete_index(&client, &index).await;
    }
}
