//! PutURLs: what clients found and fetched, written in batches, one ack per URL once durable.

use futures::StreamExt;
use squall::frontier::{QueueReport, StatusWrite};
use squall::model::{CrawlUrl, PartitionMode, Status as UrlStatus, partition_key};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;
use tracing::{debug, warn};

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
        let (acks, answers) = mpsc::channel(BATCH * 2);
        let service = self.clone();
        tokio::spawn(async move {
            let mut chunks = inbound.ready_chunks(BATCH);
            while let Some(chunk) = chunks.next().await {
                let (items, broken) = until_error(chunk);
                for ack in service.put_batch(items).await {
                    if acks.send(Ok(ack)).await.is_err() {
                        return; // the client is gone; its writes are done, only acks are lost
                    }
                }
                if let Some(status) = broken {
                    // The stream cannot go on (an item over the size limit, a reset, a client
                    // gone): the call ends with what was wrong; the items before it were acked.
                    debug!(%status, "PutURLs stream ended by an error");
                    let ended = tonic::Status::new(
                        status.code(),
                        format!("PutURLs ended: {}", status.message()),
                    );
                    let _ = acks.send(Err(ended)).await;
                    return;
                }
            }
        });
        Box::pin(ReceiverStream::new(answers))
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

/// The items of `chunk` before its first error, and that error.
pub(super) fn until_error<T>(
    chunk: Vec<Result<T, tonic::Status>>,
) -> (Vec<T>, Option<tonic::Status>) {
    let mut items = Vec::with_capacity(chunk.len());
    for item in chunk {
        match item {
            Ok(item) => items.push(item),
            Err(status) => return (items, Some(status)),
        }
    }
    (items, None)
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
