//! The nodes a client talks to: one connection per address, requests round-robin over the nodes
//! thought alive, and a node that failed (connection refused or reset, request timed out) left out
//! for a cool-off that doubles while it keeps failing.
//!
//! A node left out is asked again by one trial request once its cool-off ends. Before that trial,
//! the client checks that the node's own cluster state is at least as new as a live node's
//! ([`EsClient`](super::EsClient) does it): a node that was paused or cut off and then came back
//! serves searches from its stale shard copies until it learns it was dropped, and the queue
//! frontier must not decide anything on such a read.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use elasticsearch::Elasticsearch;

/// One node: its address (for messages), its connection, and what the client knows of its health.
struct Node {
    address: String,
    client: Elasticsearch,
    health: Mutex<Health>,
}

/// A node's health as this client saw it.
#[derive(Debug, Default, Clone, Copy)]
struct Health {
    /// Failures in a row (0: alive).
    failures: u32,
    /// Left out of the rotation until then.
    left_out_until: Option<Instant>,
}

/// What [`NodePool::pick`] chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pick {
    /// The node's position in the pool.
    pub node: usize,
    /// The node had failed and this request is its trial after the cool-off.
    pub trial: bool,
}

/// What became of a node after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Failure {
    /// It was alive until this failure: it is lost now.
    pub newly_lost: bool,
    /// The failure counted (false: the node was already left out when this request failed).
    pub counted: bool,
    /// How long it stays out of the rotation.
    pub cooloff: Duration,
}

/// The nodes of one cluster, with their health.
pub(crate) struct NodePool {
    nodes: Vec<Node>,
    next: AtomicUsize,
    cooloff: Duration,
    max_cooloff: Duration,
}

impl NodePool {
    /// A pool over `nodes` (address, connection); a failed node stays out `cooloff` at first, twice
    /// as long after each further failure, up to `max_cooloff`.
    pub fn new(
        nodes: Vec<(String, Elasticsearch)>,
        cooloff: Duration,
        max_cooloff: Duration,
    ) -> NodePool {
        NodePool {
            nodes: nodes
                .into_iter()
                .map(|(address, client)| Node {
                    address,
                    client,
                    health: Mutex::new(Health::default()),
                })
                .collect(),
            next: AtomicUsize::new(0),
            cooloff,
            max_cooloff,
        }
    }

    /// How many nodes the pool has.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The connection to node `node`.
    pub fn client(&self, node: usize) -> &Elasticsearch {
        &self.nodes[node].client
    }

    /// The address of node `node`, for messages.
    pub fn address(&self, node: usize) -> &str {
        &self.nodes[node].address
    }

    /// The node for the next request: the next alive one in the rotation, or a failed one whose
    /// cool-off has ended (as its one trial: others keep leaving it out meanwhile). When every node
    /// is out, the one whose cool-off ends first: a request must go somewhere.
    pub fn pick(&self, now: Instant) -> Pick {
        let count = self.nodes.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        for offset in 0..count {
            let node = (start + offset) % count;
            let mut health = self.health(node);
            match health.left_out_until {
                None => return Pick { node, trial: false },
                Some(until) if until <= now => {
                    // Out again for the trial's duration, so that one request only tries it.
                    health.left_out_until = Some(now + self.cooloff_after(health.failures));
                    return Pick { node, trial: true };
                }
                Some(_) => {}
            }
        }
        let node = (0..count)
            .min_by_key(|&n| self.health(n).left_out_until)
            .unwrap_or(0);
        Pick { node, trial: false }
    }

    /// Records that a request to `node` failed at the connection level. A request that was sent
    /// before another one's failure left the node out, and was not its trial, adds nothing: the
    /// requests in flight when a node dies fail together, and count as one failure.
    pub fn failed(&self, pick: Pick, now: Instant) -> Failure {
        let node = pick.node;
        let mut health = self.health(node);
        if let Some(until) = health.left_out_until.filter(|u| *u > now && !pick.trial) {
            return Failure {
                newly_lost: false,
                counted: false,
                cooloff: until - now,
            };
        }
        let newly_lost = health.failures == 0;
        health.failures = health.failures.saturating_add(1);
        let cooloff = self.cooloff_after(health.failures);
        health.left_out_until = Some(now + cooloff);
        Failure {
            newly_lost,
            counted: true,
            cooloff,
        }
    }

    /// Records that `node` answered; true when it had been lost (it is back now).
    pub fn answered(&self, node: usize) -> bool {
        let mut health = self.health(node);
        let was_lost = health.failures > 0;
        *health = Health::default();
        was_lost
    }

    /// Nodes that have not failed since they last answered, other than `except`.
    pub fn alive_except(&self, except: usize) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&n| n != except)
            .filter(|&n| self.health(n).failures == 0)
            .collect()
    }

    fn cooloff_after(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(16);
        self.cooloff
            .saturating_mul(1 << doublings)
            .min(self.max_cooloff)
    }

    fn health(&self, node: usize) -> std::sync::MutexGuard<'_, Health> {
        // A poisoned lock only means another request panicked while holding it; the health data
        // (two plain fields) is still consistent.
        self.nodes[node]
            .health
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elasticsearch::http::transport::Transport;

    fn pool(n: usize) -> NodePool {
        let nodes = (0..n)
            .map(|i| {
                let address = format!("http://127.0.0.1:{}", 9200 + i);
                let transport = Transport::single_node(&address).expect("transport");
                (address, Elasticsearch::new(transport))
            })
            .collect();
        NodePool::new(nodes, Duration::from_secs(10), Duration::from_secs(60))
    }

    #[test]
    fn requests_go_round_robin_and_skip_a_failed_node_until_its_trial() {
        let pool = pool(3);
        let t0 = Instant::now();
        let picks: Vec<usize> = (0..6).map(|_| pool.pick(t0).node).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2]);

        let failure = pool.failed(
            Pick {
                node: 1,
                trial: false,
            },
            t0,
        );
        assert_eq!(
            failure,
            Failure {
                newly_lost: true,
                counted: true,
                cooloff: Duration::from_secs(10)
            }
        );
        // Another request in flight when it died fails too: not a second failure.
        let again = pool.failed(
            Pick {
                node: 1,
                trial: false,
            },
            t0 + Duration::from_secs(1),
        );
        assert!(!again.newly_lost && !again.counted);
        assert_eq!(again.cooloff, Duration::from_secs(9));
        let picks: Vec<usize> = (0..6).map(|_| pool.pick(t0).node).collect();
        assert!(!picks.contains(&1), "{picks:?}");
        assert_eq!(pool.alive_except(0), [2]);

        // After the cool-off, one request tries it; the others still leave it out.
        let later = t0 + Duration::from_secs(11);
        let picks: Vec<Pick> = (0..6).map(|_| pool.pick(later)).collect();
        let trials: Vec<&Pick> = picks.iter().filter(|p| p.trial).collect();
        assert_eq!(
            trials,
            [&Pick {
                node: 1,
                trial: true
            }]
        );

        // It fails again: out twice as long, and not newly lost.
        let failure = pool.failed(*trials[0], later);
        assert!(!failure.newly_lost && failure.counted);
        assert_eq!(failure.cooloff, Duration::from_secs(20));
        assert!(pool.answered(1), "it was lost and is back");
        assert!(!pool.answered(1));
        assert!(pool.alive_except(0).contains(&1));
    }

    #[test]
    fn with_every_node_out_the_one_back_soonest_is_asked() {
        let pool = pool(2);
        let t0 = Instant::now();
        let trial = |node| Pick { node, trial: true };
        pool.failed(trial(0), t0);
        pool.failed(trial(1), t0);
        pool.failed(trial(1), t0);
        assert_eq!(
            pool.pick(t0),
            Pick {
                node: 0,
                trial: false
            }
        );
        for _ in 0..10 {
            pool.failed(trial(0), t0);
        }
        assert_eq!(pool.cooloff_after(11), Duration::from_secs(60), "capped");
    }
}
