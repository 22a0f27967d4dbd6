//! The spouts over a status index: [`AggregationSpout`], [`CollapsingSpout`] and [`HybridSpout`],
//! listed once in [`STATUS_INDEX_SPOUTS`]: the name `es.status.spout` gives each, StormCrawler's
//! class for it, and how one is made. A new spout over the status index is its module and a line
//! there (and its line in `examples/opensearch-conf.yaml`).

mod aggregation;
mod collapsing;
mod common;
mod hybrid;

use squall::frontier::Spout;

use super::DocumentRoutes;
use crate::client::EsClient;

pub use aggregation::AggregationSpout;
pub use collapsing::CollapsingSpout;
pub use common::{QueryDate, StatusSpoutConfig};
pub use hybrid::HybridSpout;

/// A spout over the status index, as configuration and Flux name it.
#[derive(Debug)]
pub struct StatusIndexSpout {
    /// Its name in `es.status.spout`.
    pub name: &'static str,
    /// StormCrawler's class for it, within either engine module (`persistence.AggregationSpout`
    /// stands for `org.apache.stormcrawler.opensearch.persistence.AggregationSpout`, ...).
    pub flux_class: &'static str,
    /// Makes one over a share of the status index, routing its reads as the index routes.
    pub make: fn(EsClient, StatusSpoutConfig, DocumentRoutes) -> Box<dyn Spout>,
}

/// Every spout over the status index, the default (`aggregation`) first.
pub const STATUS_INDEX_SPOUTS: &[StatusIndexSpout] = &[
    StatusIndexSpout {
        name: "aggregation",
        flux_class: "persistence.AggregationSpout",
        make: |client, config, routes| {
            Box::new(AggregationSpout::new(client, config).with_routes(routes))
        },
    },
    StatusIndexSpout {
        name: "collapsing",
        flux_class: "persistence.CollapsingSpout",
        make: |client, config, routes| {
            Box::new(CollapsingSpout::new(client, config).with_routes(routes))
        },
    },
    StatusIndexSpout {
        name: "hybrid",
        flux_class: "persistence.HybridSpout",
        make: |client, config, routes| {
            Box::new(HybridSpout::new(client, config).with_routes(routes))
        },
    },
];

/// The spout over the status index that `es.status.spout` names `name`, if there is one.
pub fn status_index_spout(name: &str) -> Option<&'static StatusIndexSpout> {
    STATUS_INDEX_SPOUTS.iter().find(|spout| spout.name == name)
}
