//! The content index as StormCrawler's OpenSearch archetype creates it (its `indexer.mapping`).

use serde_json::{Value, json};

/// The content index's settings and mapping: StormCrawler's `indexer.mapping`, to the letter.
pub fn content_index_body() -> Value {
    json!({
        "settings": { "index": {
            "number_of_shards": 5,
            "number_of_replicas": 1,
            "refresh_interval": "60s"
        } },
        "mappings": {
            "_source": { "enabled": true },
            "properties": {
                "content": { "type": "text" },
                "description": { "type": "text" },
                "domain": { "type": "keyword" },
                "format": { "type": "keyword" },
                "keywords": { "type": "keyword" },
                "host": { "type": "keyword" },
                "title": { "type": "text" },
                "url": { "type": "keyword" }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_content_index_is_stormcrawlers_to_the_letter() {
        let published: Value = serde_json::from_str(include_str!(
            "../../../tests/fixtures/stormcrawler/archetype/src/main/resources/indexer.mapping"
        ))
        .expect("StormCrawler's indexer.mapping is JSON");
        assert_eq!(content_index_body(), published);
    }
}
