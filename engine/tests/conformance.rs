//! Each spout over the status index passes the frontier conformance suite.

use crate::support;
use squall::frontier::conformance::{FrontierPair, check_frontier};
use support::Kind;

async fn conformance(kind: Kind) {
    let client = support::client().await;
    let indices = std::sync::Mutex::new(Vec::new());
    let result = check_frontier(|| {
        let client = client.clone();
        let indices = &indices;
        async move {
            let index = support::status_index(&client, "conformance", 2).await;
            if let Ok(mut list) = indices.lock() {
                list.push(index.clone());
            }
            FrontierPair {
                spout: support::spout(kind, &client, support::spout_settings(&index)),
                store: Box::new(support::store(&client, &index)),
            }
        }
    })
    .await;
    let created = indices.lock().map(|l| l.clone()).unwrap_or_default();
    for index in &created {
        support::delete_index(&client, index).await;
    }
    assert_eq!(result, Ok(()), "{kind:?}");
    assert_eq!(created.len(), 7);
}

#[tokio::test]
async fn aggregation_spout_is_conformant() {
    conformance(Kind::Aggregation).await;
}

#[tokio::test]
async fn collapsing_spout_is_conformant() {
    conformance(Kind::Collapsing).await;
}

#[tokio::test]
async fn hybrid_spout_is_conformant() {
    conformance(Kind::Hybrid).await;
}
