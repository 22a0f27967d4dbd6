//! An existing index that is not a status, urls or queues index (a foreign mapping) is refused
//! when the frontier opens, naming the index and the field, and nothing is written to it.

use crate::support;
use serde_json::{Value, json};
use squall::config::ConfigBuilder;
use squall_engine::client::{EsClient, Method, RequestBody};

/// A product catalogue: an index with a mapping of its own and one document.
async fn catalogue(client: &EsClient) -> String {
    let index = support::unique_index("products");
    let body = json!({ "mappings": { "properties": {
        "name": { "type": "text" }, "price": { "type": "float" } } } });
    client
        .request(
            Method::Put,
            &format!("/{index}"),
            &[],
            Some(RequestBody::Json(body)),
        )
        .await
        .expect("create the catalogue");
    client
        .request(
            Method::Put,
            &format!("/{index}/_doc/1"),
            &[("refresh", "true")],
            Some(RequestBody::Json(
                json!({ "name": "kettle", "price": 25.0 }),
            )),
        )
        .await
        .expect("a product");
    index
}

/// The index's mapping and document count, to see that nothing changed.
async fn state(client: &EsClient, index: &str) -> (Value, u64) {
    let mapping = client
        .request(Method::Get, &format!("/{index}/_mapping"), &[], None)
        .await
        .expect("mapping");
    let count = client
        .request(Method::Get, &format!("/{index}/_count"), &[], None)
        .await
        .expect("count");
    (mapping, count["count"].as_u64().unwrap_or(u64::MAX))
}

async fn open_fails(keys: &[String]) -> String {
    let mut builder = ConfigBuilder::new()
        .set("http.agent.name=test")
        .expect("key");
    for key in keys {
        builder = builder.set(key).expect("key");
    }
    let config = builder.build().expect("config");
    match squall_engine::setup::open(&config).await {
        Ok(frontier) => panic!("opened: {}", frontier.description),
        Err(error) => error.to_string(),
    }
}

#[tokio::test]
async fn a_foreign_index_is_refused_by_name_and_left_as_it_is() {
    let client = support::client().await;
    let products = catalogue(&client).await;
    let before = state(&client, &products).await;
    for spout in ["aggregation", "queue"] {
        let queues = support::unique_index("foreign-queues");
        let error = open_fails(&[
            "frontier.kind=opensearch".to_string(),
            format!("es.status.addresses={}", support::base_url()),
            format!("es.status.index.name={products}"),
            format!("es.queues.index.name={queues}"),
            format!("es.status.spout={spout}"),
        ])
        .await;
        assert!(
            error.contains(&format!("index `{products}` is not one squall can use")),
            "{error}"
        );
        assert!(error.contains("no field `url`"), "{error}");
        assert_eq!(
            state(&client, &products).await,
            before,
            "{spout}: the index changed"
        );
    }

    // A foreign queues index beside a good urls index.
    let urls = support::unique_index("foreign-urls");
    let error = open_fails(&[
        "frontier.kind=opensearch".to_string(),
        format!("es.status.addresses={}", support::base_url()),
        format!("es.status.index.name={urls}"),
        format!("es.queues.index.name={products}"),
        "es.status.spout=queue".to_string(),
    ])
    .await;
    assert!(
        error.contains("as the queues index") && error.contains("no field `key`"),
        "{error}"
    );
    assert_eq!(state(&client, &products).await, before, "the index changed");
    support::delete_index(&client, &urls).await;
    support::delete_index(&client, &products).await;
}
