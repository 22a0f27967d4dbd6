//! The topology as a whole: `topology.shutdown.timeout`, read straight from the configuration.

use std::time::Duration;

use crate::settings::{KeyedSettings, keyed_settings, units};

keyed_settings! {
    /// What the topology as a whole is configured with.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct TopologySettings {
        /// `topology.shutdown.timeout`: seconds a graceful stop may take before it is cut short;
        /// the fetches in progress have half of it.
        "topology.shutdown.timeout" with "units::seconds" => shutdown_timeout: Duration =
            Duration::from_secs(30),
    }
}

impl KeyedSettings for TopologySettings {}
