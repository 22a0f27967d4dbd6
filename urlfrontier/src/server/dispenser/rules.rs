//! The dispenser's rules as the frontier keeps them ([`QueueRules`], [`CrawlRules`]): read out to
//! be changed and kept, and put back in force once kept or when read from the frontier.

use std::time::{Duration, SystemTime};

use squall::frontier::{CrawlRules, QueueRules, ServedRules};

use super::Dispenser;

/// The latest end of a block, in seconds since the epoch (9999-12-31T23:59:59Z): a later one is
/// taken as this, so that a time on the wall clock can always hold it.
pub const LATEST_BLOCK_SECS: u64 = 253_402_300_799;

/// `time` in whole seconds since the epoch (0 before it).
fn epoch_secs(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

impl Dispenser {
    /// Queue `key`'s rules as they are in force.
    pub fn queue_rules(&self, key: &str) -> QueueRules {
        let Some(queue) = self.queues.get(key) else {
            return QueueRules::default();
        };
        QueueRules {
            delay_secs: queue.delay.map(|delay| delay.as_secs()),
            blocked_until_secs: queue.blocked_until.map(epoch_secs),
            limit: queue.limit,
        }
    }

    /// Puts queue `key`'s `rules` in force (a rule not set is lifted).
    pub fn apply_queue_rules(&mut self, key: &str, rules: &QueueRules) {
        if rules.is_empty() && !self.queues.contains_key(key) {
            return;
        }
        let queue = self.queue(key);
        queue.delay = rules.delay_secs.map(Duration::from_secs);
        queue.blocked_until = rules
            .blocked_until_secs
            .map(|secs| SystemTime::UNIX_EPOCH + Duration::from_secs(secs.min(LATEST_BLOCK_SECS)));
        queue.limit = rules.limit;
    }

    /// Puts the crawl's `rules` in force; `default_gap` is the gap when no `SetDelay` set one.
    pub fn apply_crawl_rules(&mut self, rules: &CrawlRules, default_gap: Duration) {
        self.default_gap = rules
            .default_delay_secs
            .map_or(default_gap, Duration::from_secs);
        self.active = rules.active.unwrap_or(true);
    }

    /// Puts every rule of `rules` in force, lifting those of queues it does not name.
    pub fn apply_rules(&mut self, rules: &ServedRules, default_gap: Duration) {
        self.apply_crawl_rules(&rules.crawl, default_gap);
        let ruled: Vec<String> = self
            .queues
            .iter()
            .filter(|(_, queue)| {
                queue.delay.is_some() || queue.blocked_until.is_some() || queue.limit.is_some()
            })
            .map(|(key, _)| key.clone())
            .collect();
        for key in ruled {
            if !rules.queues.contains_key(&key) {
                self.apply_queue_rules(&key, &QueueRules::default());
            }
        }
        for (key, queue) in &rules.queues {
            self.apply_queue_rules(key, queue);
        }
    }

    /// Takes `completed` as the count of queue `key`'s URLs already done (read from the frontier
    /// when its limit is first put in force), unless more were counted since.
    pub fn count_completed(&mut self, key: &str, completed: u64) {
        let queue = self.queue(key);
        queue.completed = queue.completed.max(completed);
    }
}
