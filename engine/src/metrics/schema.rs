//! The metrics index as StormCrawler's archetype creates it (its `metrics.mapping`), and the
//! documents its `MetricsConsumer` writes.

use serde_json::{Value, json};

/// The metrics index's settings and mapping: StormCrawler's `metrics.mapping` without its
/// `index_patterns` (squall creates each index it writes rather than a template).
pub fn metrics_index_body() -> Value {
    json!({
        "settings": {
            "index": { "number_of_shards": 1, "refresh_interval": "30s" },
            "number_of_replicas": 0
        },
        "mappings": {
            "_source": { "enabled": true },
            "properties": {
                "name": { "type": "keyword" },
                "stormId": { "type": "keyword" },
                "srcComponentId": { "type": "keyword" },
                "srcTaskId": { "type": "short" },
                "srcWorkerHost": { "type": "keyword" },
                "srcWorkerPort": { "type": "integer" },
                "timestamp": { "type": "date", "format": "date_optional_time" },
                "value": { "type": "double" }
            }
        }
    })
}

/// Where a data point comes from, in StormCrawler's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsSource {
    /// The topology (`stormId`).
    pub topology: String,
    /// The worker's host name (`srcWorkerHost`).
    pub host: String,
    /// The worker's number (`srcWorkerPort`): squall writes its process ID.
    pub port: u32,
}

/// One data point as StormCrawler's `MetricsConsumer` indexes it.
pub fn metric_document(
    source: &MetricsSource,
    component: &str,
    name: &str,
    value: f64,
    timestamp: &chrono::DateTime<chrono::Utc>,
) -> Value {
    json!({
        "stormId": source.topology,
        "srcComponentId": component,
        "srcTaskId": 1,
        "srcWorkerHost": source.host,
        "srcWorkerPort": source.port,
        "name": name,
        "value": value,
        "timestamp": timestamp.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metrics_index_is_stormcrawlers_to_the_letter() {
        let mut published: Value = serde_json::from_str(include_str!(
            "../../../tests/fixtures/stormcrawler/archetype/src/main/resources/metrics.mapping"
        ))
        .expect("StormCrawler's metrics.mapping is JSON");
        published
            .as_object_mut()
            .map(|template| template.remove("index_patterns"));
        assert_eq!(metrics_index_body(), published);
    }

    #[test]
    fn a_document_has_every_field_of_the_mapping_and_no_other() {
        let source = MetricsSource {
            topology: "crawl".into(),
            host: "h".into(),
            port: 7,
        };
        let document = metric_document(&source, "fetch", "num_queues", 3.0, &chrono::Utc::now());
        let mut fields: Vec<&String> = document.as_object().expect("object").keys().collect();
        fields.sort();
        let body = metrics_index_body();
        let mut mapped: Vec<&String> = body["mappings"]["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .collect();
        mapped.sort();
        assert_eq!(fields, mapped);
    }
}
