//! A real cluster of OpenSearch nodes started by `scripts/opensearch` in cluster mode, on its own
//! ports and home, so that it runs beside the test node. Stopped when dropped, also when a test
//! fails. Shared by the root tests and (through `#[path]`) the spouts crate's tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A cluster of [`Cluster::NODES`] nodes; node I (1-based) serves HTTP on `port + I - 1` and its
/// transport on `port + 100 + I - 1`.
pub struct Cluster {
    home: PathBuf,
    port: u16,
}

impl Cluster {
    /// Nodes in a test cluster.
    pub const NODES: usize = 3;

    /// Starts a fresh cluster (data wiped) under `target/<name>` of the workspace, after stopping
    /// whatever an interrupted earlier run left there (a paused node included).
    pub fn start(workspace: &Path, name: &str, port: u16) -> Cluster {
        let cluster = Cluster {
            home: workspace.join("target").join(name),
            port,
        };
        cluster.script(&["stop"]);
        cluster.script(&["start"]);
        cluster
    }

    /// `scripts/opensearch` for this cluster, whatever the caller's environment says.
    fn command(&self, args: &[&str]) -> Command {
        let script = self
            .home
            .parent()
            .and_then(Path::parent)
            .map(|w| w.join("scripts/opensearch"))
            .unwrap_or_else(|| PathBuf::from("scripts/opensearch"));
        let mut command = Command::new(script);
        command
            .args(args)
            .env("OPENSEARCH_NODES", Self::NODES.to_string())
            .env("OPENSEARCH_PORT", self.port.to_string())
            .env("OPENSEARCH_TRANSPORT_PORT", (self.port + 100).to_string())
            .env("OPENSEARCH_HEAP", "512m")
            .env("OPENSEARCH_HOME", &self.home)
            .env("OPENSEARCH_START_TIMEOUT", "180")
            .env_remove("OPENSEARCH_REPLICAS")
            .env_remove("OPENSEARCH_CLEAN");
        command
    }

    /// Runs `scripts/opensearch ARGS`; panics with its error output when it fails.
    pub fn script(&self, args: &[&str]) -> std::process::Output {
        let mut command = self.command(args);
        // Only a fresh start wipes the data; a node started again keeps what it had.
        if args == ["start"] {
            command.env("OPENSEARCH_CLEAN", "1");
        }
        let output = command.output().expect("scripts/opensearch runs");
        assert!(
            output.status.success(),
            "scripts/opensearch {args:?} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// `scripts/opensearch node NUMBER ACTION` (stop, kill, pause, resume, start, restart, wait).
    pub fn node(&self, number: usize, action: &str) {
        self.script(&["node", &number.to_string(), action]);
    }

    /// The HTTP address of node `number` (1-based).
    pub fn url(&self, number: usize) -> String {
        format!("http://127.0.0.1:{}", self.port as usize + number - 1)
    }

    /// Every node's address, comma-separated (the form `--es-url` takes).
    pub fn urls(&self) -> String {
        (1..=Self::NODES)
            .map(|n| self.url(n))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The node (1-based) holding most primaries of the indices matching `pattern`, from
    /// `_cat/shards` asked of node `ask` (nodes are named `squall-node-I`).
    pub fn node_with_most_primaries(&self, ask: usize, pattern: &str) -> usize {
        let text = self
            .get(ask, &format!("/_cat/shards/{pattern}?h=prirep,node"), 30)
            .unwrap_or_else(|e| panic!("_cat/shards/{pattern} failed: {e}"));
        let mut counts = [0usize; Self::NODES];
        for line in text.lines() {
            let mut fields = line.split_whitespace();
            if fields.next() != Some("p") {
                continue;
            }
            if let Some(n) = fields
                .next()
                .and_then(|n| n.strip_prefix("squall-node-"))
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| (1..=Self::NODES).contains(n))
            {
                counts[n - 1] += 1;
            }
        }
        (1..=Self::NODES).max_by_key(|n| counts[n - 1]).unwrap_or(1)
    }

    /// The elected cluster manager (1-based), from `_cat/cluster_manager` asked of node `ask`.
    pub fn cluster_manager(&self, ask: usize) -> Option<usize> {
        self.get(ask, "/_cat/cluster_manager?h=node", 30)
            .ok()?
            .trim()
            .strip_prefix("squall-node-")?
            .parse()
            .ok()
    }

    /// Whether node `node` (1-based) is in the cluster as node `ask` last learned it, from `ask`'s
    /// own cluster state (`local=true`: asking neither the cluster manager nor the other nodes, so
    /// that it answers while the manager is away); `None` when `ask` does not answer.
    pub fn sees_node(&self, ask: usize, node: usize) -> Option<bool> {
        let path = "/_cluster/state/nodes?local=true&filter_path=nodes.*.name";
        let state = self.get(ask, path, 10).ok()?;
        Some(state.contains(&format!("\"squall-node-{node}\"")))
    }

    /// `GET path` of node `ask` with curl, waiting `max_time` seconds at most: the body, or what
    /// went wrong.
    fn get(&self, ask: usize, path: &str, max_time: u32) -> Result<String, String> {
        let output = Command::new("curl")
            .args(["-fsS", "--max-time", &max_time.to_string()])
            .arg(format!("{}{path}", self.url(ask)))
            .output()
            .map_err(|e| format!("curl did not run: {e}"))?;
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).into_owned());
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.command(&["stop"]).output();
    }
}
