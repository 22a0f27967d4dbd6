//! PutURLs: what clients found and fetched, written in batches, one ack per URL once durable.

use squall::frontier::{QueueReport, StatusWrite};
use squall::model::{CrawlUrl, PartitionMode, Status as UrlStatus, partition_key};
use tonic::Streaming;
use tracing::warn;

use super::chunks::answer_in_chunks;
use super::{Answers, FrontierService, crawl_id};
use crate::convert::{ItemError, date_from_secs, metadata_from_proto, parse_url, take_status};
use crate::proto::ack_message::Status as AckStatus;
use crate::proto::url_item::Item;
use crate::proto::{AckMessage, UrlInfo, UrlItem};
use crate::server::PutOutcome;

/// Items read from a stream at once, written as one batch.
const BATCH: usize = 500;

/// One item taken from a client: its ID, its crawl, the write, and whether it was processed.
struct Taken {
    id: String,
    crawl: String,
    write: StatusWrite,
    processed: bool,
}

impl FrontierService {
    pub(super) fn put_urls_now(&self, inbound: Streaming<UrlItem>) -> Answers<AckMessage> {
        let service = self.clone();
        answer_in_chunks("PutURLs", inbound, BATCH, move |items| {
            let service = service.clone();
            async move { service.put_batch(items).await }
        })
    }

    pub(super) async fn put_batch(&self, items: Vec<UrlItem>) -> Vec<AckMessage> {
        let mut acks = Vec::with_capacity(items.len());
        let mut by_crawl: std::collections::BTreeMap<String, Vec<Taken>> = Default::default();
        for item in items {
            let id = item.id.clone();
            match take(item, self.partition) {
                Ok(taken) => by_crawl.entry(taken.crawl.clone()).or_default().push(taken),
                Err(error) => {
                    warn!(id, %error, "PutURLs item skipped");
                    acks.push(ack(id, AckStatus::Skipped));
                }
            }
        }
        for (crawl_name, taken) in by_crawl {
            let crawl = match self.crawls.get_or_open(&crawl_name).await {
                Ok(crawl) => crawl,
                Err(error) => {
                    warn!(crawl = crawl_name, %error, "PutURLs items refused");
                    let status = match error {
                        crate::server::crawls::CrawlError::BadId(_) => AckStatus::Skipped,
                        crate::server::crawls::CrawlError::Open { .. } => AckStatus::Fail,
                    };
                    acks.extend(taken.into_iter().map(|t| ack(t.id, status)));
                    continue;
                }
            };
            let processed = taken.iter().map(|t| t.processed).collect();
            let (ids, writes): (Vec<String>, Vec<StatusWrite>) =
                taken.into_iter().map(|t| (t.id, t.write)).unzip();
            let count = writes.len() as u64;
            let outcomes = crawl.put(writes, processed).await;
            metrics::counter!("squall_urlfrontier_put_total").increment(count);
            for (id, outcome) in ids.into_iter().zip(outcomes) {
                let status = match outcome {
                    PutOutcome::Done => AckStatus::Ok,
                    PutOutcome::Known => AckStatus::Skipped,
                    PutOutcome::Failed(reason) => {
                        warn!(
                            id,
                            reason, "PutURLs write failed; the client may send it again"
                        );
                        AckStatus::Fail
                    }
                };
                acks.push(ack(id, status));
            }
        }
        acks
    }
}

fn ack(id: String, status: AckStatus) -> AckMessage {
    AckMessage {
        id,
        status: status as i32,
    }
}

/// An item as a status write: discovered URLs are DISCOVERED and due now (create-only, so a URL
/// already known is left as it is); known URLs take the status in `squall.status` (FETCHED when
/// absent) and are due at `refetchable_from_date` (never when 0).
fn take(item: UrlItem, partition: PartitionMode) -> Result<Taken, ItemError> {
    let (info, status, next_fetch, processed) = match item.item {
        Some(Item::Discovered(found)) => {
            let info = found.info.ok_or(ItemError::Empty)?;
            (info, None, Some(chrono::Utc::now()), false)
        }
        Some(Item::Known(known)) => {
            let info = known.info.ok_or(ItemError::Empty)?;
            let date = date_from_secs(known.refetchable_from_date);
            (info, Some(()), date, true)
        }
        None => return Err(ItemError::Empty),
    };
    let UrlInfo {
        url,
        key,
        metadata,
        crawl_id: crawl,
    } = info;
    let mut metadata = metadata_from_proto(metadata);
    let status = match status {
        None => UrlStatus::Discovered,
        Some(()) => take_status(&mut metadata)?,
    };
    let url = parse_url(&url)?;
    let key = if key.is_empty() {
        partition_key(&url, &metadata, partition)
    } else {
        key
    };
    let id = if item.id.is_empty() {
        url.to_string()
    } else {
        item.id
    };
    Ok(Taken {
        id,
        crawl: crawl_id(&crawl).to_string(),
        write: StatusWrite {
            url: CrawlUrl { url, metadata },
            key,
            status,
            next_fetch,
            queue: QueueReport::default(),
        },
        processed,
    })
}
