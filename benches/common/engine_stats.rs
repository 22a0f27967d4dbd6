//! What the engine spent on a benchmark's window, from its own statistics (`_nodes/stats`): the
//! CPU time of its processes, and the operations of each kind (search, refresh, indexing, realtime
//! get, merge) with the time they took, read before and after the window and shown per unit of
//! work (a crawled page end to end, a URL emitted and written back in the spouts benchmark).

use std::collections::BTreeMap;

use serde_json::Value;
use squall_bench_schema::end_to_end::{EngineWork, KindWork};
use squall_engine::client::Method;

use super::engine_client_at;

/// The kinds of work counted, each with its count and time fields in a node's `indices` stats.
const KINDS: &[(&str, &[(&str, &str)])] = &[
    (
        "search",
        &[
            ("search.query_total", "search.query_time_in_millis"),
            ("search.fetch_total", "search.fetch_time_in_millis"),
        ],
    ),
    (
        "refresh",
        &[("refresh.total", "refresh.total_time_in_millis")],
    ),
    (
        "indexing",
        &[("indexing.index_total", "indexing.index_time_in_millis")],
    ),
    ("get", &[("get.total", "get.time_in_millis")]),
    ("merge", &[("merges.total", "merges.total_time_in_millis")]),
];

/// One reading of every node's statistics, summed over the nodes.
#[derive(Debug, Clone, Default)]
pub struct EngineStats {
    /// The nodes' processes' CPU time, milliseconds.
    cpu_ms: f64,
    /// Per kind: operations and milliseconds.
    kinds: Vec<(f64, f64)>,
}

impl EngineStats {
    /// Reads the statistics of every node of the engine at `engine`; `None` when it does not
    /// answer.
    pub async fn read(engine: &str) -> Option<EngineStats> {
        let answer = engine_client_at(engine)
            .request(
                Method::Get,
                "/_nodes/stats/indices,process",
                &[("filter_path", "nodes.*.process.cpu,nodes.*.indices")],
                None,
            )
            .await
            .ok()?;
        let nodes = answer["nodes"].as_object()?;
        let mut stats = EngineStats {
            cpu_ms: 0.0,
            kinds: vec![(0.0, 0.0); KINDS.len()],
        };
        for node in nodes.values() {
            stats.cpu_ms += number(&node["process"]["cpu"]["total_in_millis"]);
            for (i, (_, fields)) in KINDS.iter().enumerate() {
                for (count, time) in *fields {
                    stats.kinds[i].0 += number(path(&node["indices"], count));
                    stats.kinds[i].1 += number(path(&node["indices"], time));
                }
            }
        }
        Some(stats)
    }

    /// What the engine did from `earlier` to this reading, per crawled page of `pages`: its CPU
    /// milliseconds, and per kind the operations and their milliseconds.
    pub fn per_page(&self, earlier: &EngineStats, pages: f64) -> EngineWork {
        let pages = pages.max(1.0);
        let mut kinds = BTreeMap::new();
        for (i, (name, _)) in KINDS.iter().enumerate() {
            let (count, time) = (
                self.kinds[i].0 - earlier.kinds[i].0,
                self.kinds[i].1 - earlier.kinds[i].1,
            );
            kinds.insert(
                name.to_string(),
                KindWork {
                    operations: count,
                    milliseconds: time,
                    operations_per_page: count / pages,
                    ms_per_page: time / pages,
                },
            );
        }
        EngineWork {
            cpu_ms: self.cpu_ms - earlier.cpu_ms,
            cpu_ms_per_page: Some((self.cpu_ms - earlier.cpu_ms) / pages),
            kinds,
        }
    }
}

/// The value at a dotted `path` under `value`.
fn path<'a>(value: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(value, |v, part| &v[part])
}

fn number(value: &Value) -> f64 {
    value.as_f64().unwrap_or(0.0)
}
