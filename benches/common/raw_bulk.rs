//! The engine's own write limit on a frontier: documents per second of a raw `_bulk` of generated
//! URL documents, request bodies serialized before the clock starts, sent over a bare HTTP client
//! with a few requests in flight, checking only each answer's `errors` flag.

use std::time::Instant;

use futures::StreamExt;
use serde_json::json;
use squall_engine::status_index::schema::{KeyField, document_id, status_document};

use super::engine_url;
use super::frontier_data::Generator;

/// Writes the documents of URLs `numbers` as `generator` makes them into `index` (no routing),
/// `batch` to a request and `in_flight` requests at once; documents per second.
pub async fn raw_bulk_rate(
    generator: &Generator,
    index: &str,
    numbers: &[u64],
    batch: usize,
    in_flight: usize,
) -> f64 {
    let bodies: Vec<String> = numbers
        .chunks(batch.max(1))
        .map(|chunk| {
            let mut body = String::new();
            for &n in chunk {
                let write = generator.write(n);
                let action = json!({ "index": { "_id": document_id(write.url.url.as_str()) } });
                body.push_str(&action.to_string());
                body.push('\n');
                body.push_str(&status_document(&write, &KeyField::default()).to_string());
                body.push('\n');
            }
            body
        })
        .collect();
    send_bodies(index, bodies, numbers.len(), in_flight).await
}

/// Sends `_bulk` request bodies already serialized into `index` over a bare HTTP client,
/// `in_flight` at once, checking only each answer's `errors` flag; `documents` (what the bodies
/// hold) per second.
pub async fn send_bodies(
    index: &str,
    bodies: Vec<String>,
    documents: usize,
    in_flight: usize,
) -> f64 {
    let http = reqwest::Client::new();
    let url = format!("{}/{index}/_bulk", engine_url().trim_end_matches('/'));
    let started = Instant::now();
    let mut answers = futures::stream::iter(bodies)
        .map(|body| {
            let request = http
                .post(&url)
                .header("content-type", "application/x-ndjson")
                .body(body);
            async move {
                match request.send().await {
                    Ok(answer) => answer.text().await.unwrap_or_default(),
                    Err(e) => panic!("raw bulk into {index}: {e}"),
                }
            }
        })
        .buffer_unordered(in_flight.max(1));
    while let Some(text) = answers.next().await {
        if !text.contains("\"errors\":false") {
            panic!(
                "raw bulk into {index} failed: {}",
                &text[..text.len().min(500)]
            );
        }
    }
    documents as f64 / started.elapsed().as_secs_f64()
}
