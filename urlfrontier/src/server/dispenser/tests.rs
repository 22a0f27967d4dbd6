//! Seeded random interleavings of reads, hand-outs to several clients, puts and lapses, checked
//! against the dispenser's invariants.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant, SystemTime};

use squall::frontier::QueueHints;
use squall::message::{AckHandle, AckMessage, Tuple};
use squall::model::CrawlUrl;
use squall_testsite::SplitMix;
use tokio::sync::mpsc;

use super::{Ask, Dispenser};

fn tuple(url: &str, key: &str, acks: &mpsc::UnboundedSender<AckMessage>) -> Tuple {
    let url = CrawlUrl::new(url::Url::parse(url).expect("test URL"));
    Tuple {
        ack: AckHandle::new(url.clone(), acks.clone()),
        url,
        key: key.to_string(),
        hints: QueueHints::default(),
    }
}

/// What one client holds: URL → (queue, when its hold ends).
type Holdings = HashMap<String, (String, Instant)>;

struct World {
    dispenser: Dispenser,
    clients: Vec<Holdings>,
    /// When each queue's last holder let go of it, and the gap it owes.
    released: HashMap<String, Instant>,
    done: HashSet<String>,
    now: Instant,
    gap: Duration,
}

impl World {
    fn check_hand_out(&mut self, client: usize, ask: &Ask) {
        let wall = SystemTime::now();
        // Expire what the dispenser will expire, so that the model agrees.
        for holdings in &mut self.clients {
            holdings.retain(|_, (_, until)| *until > self.now);
        }
        let out = self.dispenser.hand_out(ask, self.now, wall);
        let mut queues = HashSet::new();
        for handed in out {
            let url = handed.url.url.to_string();
            assert!(
                !self.done.contains(&url),
                "{url} handed out after it was put back"
            );
            for (other, holdings) in self.clients.iter().enumerate() {
                assert!(
                    !holdings.contains_key(&url),
                    "{url} handed out while client {other} holds it"
                );
                if other != client {
                    assert!(
                        !holdings.values().any(|(key, _)| *key == handed.key),
                        "queue {} handed to client {client} while client {other} holds it",
                        handed.key
                    );
                }
            }
            if let Some(at) = self.released.get(&handed.key) {
                assert!(
                    self.now >= *at + self.gap,
                    "queue {} handed out within its gap",
                    handed.key
                );
            }
            queues.insert(handed.key.clone());
            self.clients[client].insert(url, (handed.key, self.now + ask.hold));
        }
        if ask.max_queues > 0 {
            assert!(queues.len() <= ask.max_queues, "more queues than asked");
        }
    }

    fn put_back(&mut self, client: usize, pick: u64) {
        let urls: Vec<String> = self.clients[client].keys().cloned().collect();
        if urls.is_empty() {
            return;
        }
        let mut urls = urls;
        urls.sort();
        let url = urls[(pick as usize) % urls.len()].clone();
        let Some((key, until)) = self.clients[client].remove(&url) else {
            return;
        };
        if until <= self.now {
            return; // lapsed: the dispenser took it back; a late put is the next test's business
        }
        let handle = self
            .dispenser
            .complete(&url, self.now)
            .expect("a held URL completes");
        handle.ack();
        self.done.insert(url);
        if !self
            .clients
            .iter()
            .any(|h| h.values().any(|(k, _)| *k == key))
        {
            self.released.insert(key, self.now);
        }
    }
}

fn run(seed: u64) {
    // Seeded, so that a failing seed replays exactly.
    let mut rng = SplitMix::new(seed);
    let (acks, mut heard) = mpsc::unbounded_channel();
    let gap = Duration::from_millis(500);
    let mut world = World {
        dispenser: Dispenser::new(gap),
        clients: vec![Holdings::new(); 3],
        released: HashMap::new(),
        done: HashSet::new(),
        now: Instant::now(),
        gap,
    };
    let mut added = 0;
    for _ in 0..3000 {
        match rng.below(10) {
            0..=2 if added < 200 => {
                let url = format!("http://q{}.test/{}", rng.below(6), added);
                let key = url::Url::parse(&url)
                    .expect("URL")
                    .host_str()
                    .unwrap_or("")
                    .to_string();
                world.dispenser.add(tuple(&url, &key, &acks));
                added += 1;
            }
            3..=5 => {
                let ask = Ask {
                    max_queues: rng.below(4),
                    max_urls_per_queue: rng.below(4),
                    key: None,
                    hold: Duration::from_millis(200 + rng.below(3000) as u64),
                };
                let client = rng.below(3);
                world.check_hand_out(client, &ask);
            }
            6..=8 => {
                let client = rng.below(3);
                let pick = rng.next_u64();
                world.put_back(client, pick);
            }
            _ => world.now += Duration::from_millis(rng.below(800) as u64),
        }
    }
    // Drain: every URL is eventually put back, one client at a time.
    for _ in 0..10_000 {
        if world.done.len() == added {
            break;
        }
        world.now += Duration::from_millis(600);
        let ask = Ask {
            max_queues: 0,
            max_urls_per_queue: 0,
            key: None,
            hold: Duration::from_secs(60),
        };
        world.check_hand_out(0, &ask);
        while !world.clients[0].is_empty() {
            world.put_back(0, 0);
        }
    }
    assert_eq!(
        world.done.len(),
        added,
        "seed {seed}: every URL put back once"
    );
    drop(world);
    drop(acks);
    let mut acked = HashSet::new();
    while let Ok(message) = heard.try_recv() {
        if let AckMessage::Acked(url) = message {
            assert!(
                acked.insert(url.url.to_string()),
                "seed {seed}: acked twice"
            );
        }
    }
    assert_eq!(
        acked.len(),
        added,
        "seed {seed}: every URL acked exactly once"
    );
}

#[test]
fn random_interleavings_keep_the_invariants() {
    for seed in squall_testsite::seeds(17, 200) {
        run(seed);
    }
}

#[test]
fn a_lapsed_url_is_handed_out_again_as_soon_as_its_hold_ends() {
    let (acks, _heard) = mpsc::unbounded_channel();
    let mut dispenser = Dispenser::new(Duration::from_secs(1));
    dispenser.add(tuple("http://a.test/1", "a.test", &acks));
    let ask = Ask {
        max_queues: 0,
        max_urls_per_queue: 1,
        key: None,
        hold: Duration::from_secs(4),
    };
    let (start, wall) = (Instant::now(), SystemTime::now());
    assert_eq!(dispenser.hand_out(&ask, start, wall).len(), 1);
    let before = start + Duration::from_millis(3999);
    assert!(dispenser.hand_out(&ask, before, wall).is_empty(), "held");
    let lapsed = start + Duration::from_secs(4);
    let again = dispenser.hand_out(&ask, lapsed, wall);
    assert_eq!(again.len(), 1, "handed out again at the lapse, no gap");
    assert_eq!(again[0].url.url.as_str(), "http://a.test/1");
}
