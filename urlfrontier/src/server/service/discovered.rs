//! PutDiscovered (API 2.6): batches of discovered URLs, typically a page's outlinks, each acked as
//! a whole with one status per URL in the batch's order. A URL is created unless it is known (then
//! SKIPPED, as is a second copy within a batch or a URL that cannot be read); a write that failed
//! is FAIL, for the client to send again.
//!
//! The batches waiting on a stream are written together (as PutURLs merges its items), and each is
//! acked once its writes are durable. An empty batch is acked at once with no status: clients send
//! one to learn whether the server takes PutDiscovered.

use tonic::Streaming;

use super::chunks::answer_in_chunks;
use super::{Answers, FrontierService};
use crate::proto::ack_message::Status as AckStatus;
use crate::proto::url_item::Item;
use crate::proto::{BatchAck, DiscoveredBatch, DiscoveredUrlItem, UrlItem};

/// Batches read from a stream at once, written together.
const BATCHES: usize = 16;

impl FrontierService {
    pub(super) fn put_discovered_now(
        &self,
        inbound: Streaming<DiscoveredBatch>,
    ) -> Answers<BatchAck> {
        let service = self.clone();
        answer_in_chunks("PutDiscovered", inbound, BATCHES, move |batches| {
            let service = service.clone();
            async move { service.put_batches(batches).await }
        })
    }

    /// Writes the URLs of `batches` as one put, then acks each batch in its own order.
    async fn put_batches(&self, batches: Vec<DiscoveredBatch>) -> Vec<BatchAck> {
        let mut items = Vec::new();
        let mut acks = Vec::with_capacity(batches.len());
        for (batch_index, batch) in batches.into_iter().enumerate() {
            let count = batch.items.len();
            for (position, info) in batch.items.into_iter().enumerate() {
                items.push(UrlItem {
                    item: Some(Item::Discovered(DiscoveredUrlItem { info: Some(info) })),
                    id: item_id(batch_index, position),
                    creation_date: 0,
                });
            }
            acks.push(BatchAck {
                id: batch.id,
                statuses: vec![AckStatus::Fail as i32; count],
            });
        }
        let mut seen = std::collections::HashSet::new();
        let (items, repeated): (Vec<UrlItem>, Vec<UrlItem>) = items
            .into_iter()
            .partition(|item| seen.insert(discovered_url(item)));
        let skipped = repeated
            .into_iter()
            .map(|item| (item.id, AckStatus::Skipped as i32));
        let written = self
            .put_batch(items)
            .await
            .into_iter()
            .map(|ack| (ack.id, ack.status));
        for (id, status) in written.chain(skipped) {
            if let Some((batch_index, position)) = parse_item_id(&id)
                && let Some(slot) = acks
                    .get_mut(batch_index)
                    .and_then(|ack| ack.statuses.get_mut(position))
            {
                *slot = status;
            }
        }
        acks
    }
}

/// The ID an item of a batch is put under: its batch's place among those written together, and
/// its own place in the batch.
fn item_id(batch_index: usize, position: usize) -> String {
    format!("{batch_index}:{position}")
}

fn parse_item_id(id: &str) -> Option<(usize, usize)> {
    let (batch, position) = id.split_once(':')?;
    Some((batch.parse().ok()?, position.parse().ok()?))
}

/// What makes two discovered items the same URL for one write: its crawl, key and text (the
/// reference skips a second copy within a batch).
fn discovered_url(item: &UrlItem) -> (String, String, String) {
    match &item.item {
        Some(Item::Discovered(DiscoveredUrlItem { info: Some(info) })) => {
            (info.crawl_id.clone(), info.key.clone(), info.url.clone())
        }
        _ => (String::new(), String::new(), item.id.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_ids_give_back_their_batch_and_place() {
        assert_eq!(parse_item_id(&item_id(3, 41)), Some((3, 41)));
        assert_eq!(parse_item_id("http://a.test/"), None);
        assert_eq!(parse_item_id("1:x"), None);
    }
}
