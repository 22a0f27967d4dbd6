//! The dashboards shipped in `dashboards/` chart what squall writes: a crawl of the demo site on the
//! test engine, with the metrics index on and Prometheus metrics served, then every field and
//! metric name the OpenSearch Dashboards saved objects chart is looked for in the indices the crawl
//! wrote, and every series the Grafana dashboard queries in what the crawl served.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use elasticsearch::Elasticsearch;
use elasticsearch::SearchParts;
use elasticsearch::indices::{IndicesGetMappingParts, IndicesRefreshParts};
use serde_json::{Value, json};

use crate::support;
use support::crawl_process::CrawlProcess;
use support::opensearch;

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

/// The saved objects of an ndjson export, one per line.
fn saved_objects(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{path}: {e}")))
        .collect()
}

/// A JSON document held as a string in a saved object (`visState`, `searchSourceJSON`).
fn inner_json(object: &Value, pointer: &str) -> Value {
    let text = object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{pointer} of {}", object["id"]));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{pointer} of {}: {e}", object["id"]))
}

/// The fields a visualization's aggregations use.
fn charted_fields(visualization: &Value) -> Vec<String> {
    let state = inner_json(visualization, "/attributes/visState");
    state["aggs"]
        .as_array()
        .expect("aggs")
        .iter()
        .filter_map(|agg| agg["params"]["field"].as_str().map(str::to_string))
        .collect()
}

/// The metric names a visualization's query picks: `name:"x"` exactly, `name:x.*` by prefix.
fn charted_names(visualization: &Value) -> Vec<String> {
    let search = inner_json(
        visualization,
        "/attributes/kibanaSavedObjectMeta/searchSourceJSON",
    );
    let query = search["query"]["query"].as_str().unwrap_or_default();
    query
        .split(" or ")
        .filter_map(|term| term.trim().strip_prefix("name:"))
        .map(|name| name.trim_matches('"').to_string())
        .collect()
}

/// Whether `field` (dotted) is mapped in `mapping`'s properties.
fn mapped(mapping: &Value, field: &str) -> bool {
    let mut node = mapping;
    for part in field.split('.') {
        node = &node["properties"][part];
    }
    !node.is_null()
}

async fn mapping_of(client: &Elasticsearch, index: &str) -> Value {
    let answer: Value = client
        .indices()
        .get_mapping(IndicesGetMappingParts::Index(&[index]))
        .send()
        .await
        .expect("GET _mapping")
        .json()
        .await
        .expect("mapping JSON");
    answer[index]["mappings"].clone()
}

async fn names_written(client: &Elasticsearch, index: &str) -> BTreeSet<String> {
    client
        .indices()
        .refresh(IndicesRefreshParts::Index(&[index]))
        .send()
        .await
        .expect("refresh");
    let answer: Value = client
        .search(SearchParts::Index(&[index]))
        .body(json!({ "size": 0, "aggs": { "names": { "terms": { "field": "name", "size": 500 } } } }))
        .send()
        .await
        .expect("search")
        .json()
        .await
        .expect("JSON");
    answer["aggregations"]["names"]["buckets"]
        .as_array()
        .expect("buckets")
        .iter()
        .filter_map(|b| b["key"].as_str().map(str::to_string))
        .collect()
}

/// Crawls the demo site on the test engine with the metrics index on; returns the Prometheus
/// text it served while it ran.
async fn crawl(dir: &std::path::Path, status: &str, metrics: &str) -> String {
    let metrics_port = free_port();
    let args: Vec<String> = [
        "--demo-site",
        "--demo-port",
        &free_port().to_string(),
        "--frontier",
        "opensearch",
        "--es-url",
        &opensearch::base_url(),
        "--es-index",
        status,
        "--metrics-addr",
        &format!("127.0.0.1:{metrics_port}"),
        "--max-duration",
        "12",
        "--set",
        "es.metrics.enabled=true",
        "--set",
        "es.metrics.interval=1",
        "--set",
        &format!("es.metrics.index.name={metrics}"),
    ]
    .map(str::to_string)
    .to_vec();
    let mut process = CrawlProcess::start(0, dir, &args, &[]);
    tokio::time::sleep(Duration::from_secs(8)).await;
    let answer = reqwest::get(format!("http://127.0.0.1:{metrics_port}/metrics")).await;
    let served = match answer {
        Ok(answer) => answer.text().await.expect("the metrics text"),
        Err(e) => panic!("Prometheus metrics: {e}\n{}", process.tail()),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while process.running() {
        assert!(
            Instant::now() < deadline,
            "the crawl did not end:\n{}",
            process.tail()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        process.child.wait().is_ok_and(|s| s.success()),
        "{}",
        process.tail()
    );
    served
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_dashboards_chart_what_a_crawl_writes() {
    let client = opensearch::client().await;
    let status = opensearch::unique_index("dash-status");
    let metrics = opensearch::unique_index("dash-metrics");
    let dir = tempfile::tempdir().expect("temp dir");
    let served = crawl(dir.path(), &status, &metrics).await;

    let names = names_written(&client, &metrics).await;
    let metrics_mapping = mapping_of(&client, &metrics).await;
    let status_mapping = mapping_of(&client, &status).await;
    for (file, mapping, checks_names) in [
        (
            "dashboards/opensearch-dashboards/metrics.ndjson",
            &metrics_mapping,
            true,
        ),
        (
            "dashboards/opensearch-dashboards/status.ndjson",
            &status_mapping,
            false,
        ),
    ] {
        let objects = saved_objects(file);
        let ids: BTreeSet<&str> = objects.iter().filter_map(|o| o["id"].as_str()).collect();
        for object in &objects {
            for reference in object["references"].as_array().expect("references") {
                let id = reference["id"].as_str().expect("reference id");
                assert!(
                    ids.contains(id),
                    "{file}: {} refers to a missing {id}",
                    object["id"]
                );
            }
            if object["type"] != "visualization" {
                continue;
            }
            for field in charted_fields(object) {
                assert!(
                    mapped(mapping, &field),
                    "{file}: {} charts {field}, not in {mapping}",
                    object["id"]
                );
            }
            if !checks_names {
                continue;
            }
            let charted = charted_names(object);
            assert!(
                !charted.is_empty(),
                "{file}: {} picks no metric",
                object["id"]
            );
            for name in charted {
                let found = match name.strip_suffix('*') {
                    Some(prefix) => names.iter().any(|n| n.starts_with(prefix)),
                    None => names.contains(&name),
                };
                assert!(
                    found,
                    "{file}: {} charts {name}, which the crawl did not write: {names:?}",
                    object["id"]
                );
            }
        }
    }

    let grafana: Value = serde_json::from_str(
        &std::fs::read_to_string("dashboards/grafana/squall-prometheus.json")
            .expect("grafana file"),
    )
    .expect("grafana JSON");
    let series =
        regex::Regex::new(r#"(squall_[a-z_]+)(\{quantile="([0-9.]+)"\})?"#).expect("regex");
    for panel in grafana["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"].as_str().expect("expr");
            for found in series.captures_iter(expr) {
                let name = &found[1];
                let present = match found.get(3) {
                    Some(q) => {
                        let wanted = format!("{name}{{quantile=\"{}\"}}", q.as_str());
                        served.lines().any(|line| line.starts_with(&wanted))
                    }
                    None => served.lines().any(|line| {
                        line.strip_prefix(name)
                            .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with('{'))
                    }),
                };
                let wanted = found[0].to_string();
                assert!(
                    present,
                    "grafana: {} queries {wanted:?}, which the crawl did not serve:\n{served}",
                    panel["title"]
                );
            }
        }
    }
    opensearch::delete_index(&client, &status).await;
    opensearch::delete_index(&client, &metrics).await;
}
