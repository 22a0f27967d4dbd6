//! Opening the frontier the configuration describes.

use std::sync::Arc;
use std::time::Duration;

use squall::config::{ConfigError, CrawlConfig, FrontierOpenError};
use squall::fetch::{FetcherSettings, PaceKind};
use squall::frontier::{Frontier, FrontierError, Spout};
use squall::spout::SpoutInstances;
use tracing::{info, warn};

use super::keys::{IndexFrontierConfig, SpoutKind};
use super::mapping::{
    ForeignMapping, MappingCheckError, add_pace_fields, check_mapping, queue_fields, status_fields,
};
use crate::catalog::EsCatalog;
use crate::client::indices::{IndexState, ensure_index, refresh_interval};
use crate::client::{EsClient, EsError};
use crate::queue::schema::queues_index_body;
use crate::queue::{PaceBounds, QueueSpout, QueueSpoutConfig};
use crate::status_index::DocumentRoutes;
use crate::status_index::index::{
    RoutingMismatch, StatusIndexConfig, ensure_status_index, ensure_urls_index, routing_for,
    sample_routing,
};
use crate::status_index::schema::KeyField;
use crate::status_index::spouts::{STATUS_INDEX_SPOUTS, StatusSpoutConfig};
use crate::{EsStatusStore, WriterConfig};

/// The refresh interval of the indices this crawler creates: writes show in queries within it.
const REFRESH: &str = "1s";

/// Why the frontier could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// A frontier key is missing, unknown or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The embedded frontier's directory could not be opened.
    #[error(transparent)]
    Embedded(#[from] FrontierError),
    /// The engine could not be reached, or refused to create or describe an index.
    #[error(transparent)]
    Engine(#[from] EsError),
    /// `es.status.routing` contradicts how the existing status index is routed.
    #[error(transparent)]
    Routing(#[from] RoutingMismatch),
    /// An existing index's mapping is not one squall can use.
    #[error(transparent)]
    ForeignMapping(#[from] ForeignMapping),
    /// `frontier.kind` names a kind this crate does not open, or another kind failed.
    #[error(transparent)]
    Kind(FrontierOpenError),
}

impl From<FrontierOpenError> for OpenError {
    /// The error of a kind, as this crate's when it is one of this crate's.
    fn from(error: FrontierOpenError) -> Self {
        let FrontierOpenError::Kind(failure) = error else {
            return OpenError::Kind(error);
        };
        let failure = match failure.downcast::<OpenError>() {
            Ok(own) => return *own,
            Err(other) => other,
        };
        let failure = match failure.downcast::<ConfigError>() {
            Ok(config) => return OpenError::Config(*config),
            Err(other) => other,
        };
        match failure.downcast::<FrontierError>() {
            Ok(embedded) => OpenError::Embedded(*embedded),
            Err(other) => OpenError::Kind(FrontierOpenError::Kind(other)),
        }
    }
}

impl From<MappingCheckError> for OpenError {
    fn from(error: MappingCheckError) -> Self {
        match error {
            MappingCheckError::Engine(error) => OpenError::Engine(error),
            MappingCheckError::Foreign(foreign) => OpenError::ForeignMapping(foreign),
        }
    }
}

/// Opens the Elasticsearch/OpenSearch frontier: connects, creates missing indices, and builds the
/// spout `index.spout` names with its status store.
pub async fn open_index_frontier(
    config: &CrawlConfig,
    index: &IndexFrontierConfig,
) -> Result<Frontier, OpenError> {
    let client = EsClient::new(index.connection.clone())?;
    let engine = client.engine().await?;
    let settings = StatusIndexConfig {
        name: index.index.clone(),
        shards: index.shards,
        replicas: index.replicas,
        refresh_interval: REFRESH.to_string(),
    };
    // The queue frontier's urls index is sorted by due date, so that reads stop at their page.
    let state = if index.spout == SpoutKind::Queue {
        ensure_urls_index(&client, &settings).await?
    } else {
        ensure_status_index(&client, &settings).await?
    };
    if state == IndexState::Existing {
        let role = if index.spout == SpoutKind::Queue {
            "the urls index"
        } else {
            "the status index"
        };
        check_mapping(
            &client,
            &index.index,
            role,
            &status_fields(&index.bucket_field),
        )
        .await?;
    }
    info!(index = %index.index, ?engine, ?state, "status index ready");
    let found = format!("{engine:?}, index `{}` ({state:?})", index.index);
    // Writes show in queries after a refresh; with refresh off, allow a long margin.
    let visibility = refresh_interval(&client, &index.index)
        .await?
        .unwrap_or(Duration::from_secs(30));
    let mut frontier = if index.spout == SpoutKind::Queue {
        queue_frontier(client, config, index, visibility).await?
    } else {
        status_index_frontier(client, config, index, visibility).await?
    };
    frontier.description = format!("{found}, {}", frontier.description);
    Ok(frontier)
}

/// How the queue spout honours a learned pace between holders: not at all under the `fixed`
/// policy; otherwise down to `fetcher.pace.floor` when the user set one (never below the
/// politeness delay else), up to `fetcher.pace.backoff.max`, aged by
/// `urlfrontier.backoff.decay.secs`.
fn pace_bounds(fetcher: &FetcherSettings) -> Option<PaceBounds> {
    let server = fetcher.server_delay;
    (fetcher.pace.policy != PaceKind::Fixed).then(|| PaceBounds {
        floor: fetcher.pace.floor.map_or(server, |floor| floor.min(server)),
        max: fetcher.pace.backoff_max.max(server),
        decay: fetcher.pace.backoff_decay,
    })
}

/// The queue spout over a urls index and a queues index.
async fn queue_frontier(
    client: EsClient,
    config: &CrawlConfig,
    index: &IndexFrontierConfig,
    visibility: Duration,
) -> Result<Frontier, OpenError> {
    let body = queues_index_body(1, index.replicas, REFRESH);
    let state = ensure_index(&client, &index.queues_index, body).await?;
    if state == IndexState::Existing {
        let mapping = check_mapping(
            &client,
            &index.queues_index,
            "the queues index",
            &queue_fields(),
        )
        .await?;
        // Made by a squall before the learned pace: its fields join the mapping.
        add_pace_fields(&client, &index.queues_index, &mapping).await?;
    }
    info!(index = %index.queues_index, ?state, "queues index ready");
    let key_field = KeyField::parse(&index.bucket_field);
    let mut settings = QueueSpoutConfig::new(&index.index, &index.queues_index);
    settings.key_field = key_field.clone();
    settings.lease_ttl = index.lease_ttl;
    settings.max_hold = index.max_hold;
    // The instances of a flux's spout `parallelism` claim together: their budgets add up.
    settings.max_queues = index
        .query
        .max_buckets
        .unwrap_or(config.frontier.max_buckets)
        .saturating_mul(config.spout.parallelism.max(1));
    settings.max_urls_per_queue = index
        .query
        .max_urls_per_bucket
        .unwrap_or(config.frontier.max_urls_per_bucket);
    settings.refresh_interval = visibility;
    settings.politeness_delay = config.fetcher.server_delay;
    settings.pace_bounds = pace_bounds(&config.fetcher);
    if let Some(owner) = &index.owner {
        settings.owner = owner.clone();
    }
    // A faster pace the user opted in to needs more URLs per read.
    let fastest = settings
        .pace_bounds
        .map_or(config.fetcher.server_delay, |bounds| bounds.floor);
    let settings = settings.reads_for_delay(fastest);
    info!(owner = %settings.owner, "queue spout instance {}", settings.owner);
    let description = format!(
        "queues index `{}` ({state:?}), queue spout instance {}",
        index.queues_index, settings.owner
    );
    let spout = QueueSpout::new(client.clone(), settings);
    let store = spout.status_store();
    let leases = spout.leases();
    let catalog =
        EsCatalog::queue_frontier(client.clone(), &index.index, &index.queues_index, key_field);
    Ok(Frontier {
        spout: Box::new(spout),
        store: Arc::new(store),
        catalog: Some(Arc::new(catalog)),
        description,
        leases: Some(Arc::new(leases)),
    })
}

/// The aggregation, collapsing or hybrid spout over a StormCrawler status index, with its writer.
async fn status_index_frontier(
    client: EsClient,
    config: &CrawlConfig,
    index: &IndexFrontierConfig,
    visibility: Duration,
) -> Result<Frontier, OpenError> {
    // New documents are routed as the index's existing ones were, so that a URL's writes find its
    // document; updates of the URLs the spouts read follow their documents (store.routes()).
    let sample = sample_routing(&client, &index.index, 100).await?;
    let routing = routing_for(&index.index, index.routing, sample)?;
    if sample.is_mixed() {
        warn!(
            index = %index.index,
            routed = sample.routed,
            unrouted = sample.unrouted,
            sampled = sample.sampled(),
            "the status index holds routed and unrouted documents; new documents are routed: {routing}"
        );
    }
    info!(index = %index.index, "es.status.routing {routing}");
    let key_field = KeyField::parse(&index.bucket_field);
    let store = EsStatusStore::new(
        client.clone(),
        WriterConfig {
            index: index.index.clone(),
            key_field: key_field.clone(),
            routing,
        },
    );
    let routes = store.routes();
    let catalog = EsCatalog::status_index(client.clone(), &index.index, key_field.clone());
    let mut settings = StatusSpoutConfig {
        index: index.index.clone(),
        key_field,
        max_buckets: config.frontier.max_buckets,
        max_urls_per_bucket: config.frontier.max_urls_per_bucket,
        max_urls_per_reload: config.frontier.max_urls_per_bucket,
        shard_split: index.instance,
        partition_mode: config.fetcher.partition,
        refresh_interval: visibility,
        reset_fetch_date_after: config.spout.reset_fetch_date_after,
        ..StatusSpoutConfig::default()
    };
    index.query.apply(&mut settings);
    // (The queue spout has its own indices: open_index_frontier never sends it here.)
    let instances = config.spout.parallelism.max(1);
    let spouts: Vec<Box<dyn Spout>> = (0..instances)
        .map(|k| {
            let mut settings = settings.clone();
            settings.shard_split = instance_share(index.instance, k, instances);
            status_index_spout(index.spout, client.clone(), settings, routes.clone())
        })
        .collect();
    let spout: Box<dyn Spout> = match SpoutInstances::new(spouts) {
        Some(group) if group.len() > 1 => Box::new(group),
        Some(_) | None => status_index_spout(index.spout, client, settings, routes),
    };
    Ok(Frontier {
        spout,
        store: Arc::new(store),
        catalog: Some(Arc::new(catalog)),
        description: format!(
            "es.status.routing {routing}, {:?} spout × {instances}",
            index.spout
        ),
        leases: None,
    })
}

/// The share of the status index that spout instance `k` of this process's `instances` reads,
/// when the process reads share `process` (`I/N`, `es.status.instance`): instance `I × instances
/// + k` of `N × instances`.
fn instance_share(process: (u32, u32), k: usize, instances: usize) -> (u32, u32) {
    let (i, n) = process;
    let instances = u32::try_from(instances).unwrap_or(u32::MAX);
    let k = u32::try_from(k).unwrap_or(0);
    (
        i.saturating_mul(instances).saturating_add(k),
        n.saturating_mul(instances),
    )
}

/// One spout over `settings`' share of the status index: the one `kind` names (the default for
/// `queue`, which never reads a status index).
fn status_index_spout(
    kind: SpoutKind,
    client: EsClient,
    settings: StatusSpoutConfig,
    routes: DocumentRoutes,
) -> Box<dyn Spout> {
    let spout = kind.status_index_spout().unwrap_or(&STATUS_INDEX_SPOUTS[0]);
    (spout.make)(client, settings, routes)
}
