//! The spouts over a status index: [`AggregationSpout`], [`CollapsingSpout`] and [`HybridSpout`].

mod aggregation;
mod collapsing;
mod common;
mod hybrid;

pub use aggregation::AggregationSpout;
pub use collapsing::CollapsingSpout;
pub use common::{QueryDate, StatusSpoutConfig};
pub use hybrid::HybridSpout;
