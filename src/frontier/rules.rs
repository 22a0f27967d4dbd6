//! The rules a program serving a frontier sets on it, kept in the frontier: a URLFrontier server's
//! `SetDelay`, `BlockQueueUntil`, `SetCrawlLimit`, `SetActive` and `SetLogLevel`. Kept there, they
//! hold for a server started again (after a crash too) and for every server over the same frontier
//! ([`Catalog::rules`](super::Catalog::rules), [`Catalog::keep_rule`](super::Catalog::keep_rule)).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Every rule kept for a crawl's frontier.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServedRules {
    /// The crawl's own: the default delay, the active flag, the log levels.
    #[serde(flatten)]
    pub crawl: CrawlRules,
    /// Each queue's, by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub queues: BTreeMap<String, QueueRules>,
}

/// The rules of a crawl as a whole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrawlRules {
    /// `SetDelay` without a key: the gap between two holders of a queue without its own, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_delay_secs: Option<u64>,
    /// `SetActive`: whether URLs are handed out at all (`None`: never set, active).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<bool>,
    /// `SetLogLevel`: the level of each log target (`squall_urlfrontier` → `DEBUG`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub log_levels: BTreeMap<String, String>,
}

/// The rules of one queue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueRules {
    /// `SetDelay`: the gap between two holders of the queue, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_secs: Option<u64>,
    /// `BlockQueueUntil`: nothing handed out before this, seconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_until_secs: Option<u64>,
    /// `SetCrawlLimit`: nothing handed out once this many of its URLs are done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}

impl QueueRules {
    /// Whether no rule is set (such a queue needs no record).
    pub fn is_empty(&self) -> bool {
        *self == QueueRules::default()
    }
}

/// One rule set, to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleChange {
    /// The crawl's rules, all of them, as they now are.
    Crawl(CrawlRules),
    /// Queue `0`'s rules, all of them, as they now are (none: the record goes).
    Queue(String, QueueRules),
}

impl ServedRules {
    /// The rules with `change` made.
    pub fn apply(&mut self, change: RuleChange) {
        match change {
            RuleChange::Crawl(crawl) => self.crawl = crawl,
            RuleChange::Queue(key, rules) if rules.is_empty() => {
                self.queues.remove(&key);
            }
            RuleChange::Queue(key, rules) => {
                self.queues.insert(key, rules);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_replace_a_queues_rules_and_empty_ones_go() {
        let mut rules = ServedRules::default();
        let limit = QueueRules {
            limit: Some(5),
            ..QueueRules::default()
        };
        rules.apply(RuleChange::Queue("a.test".into(), limit.clone()));
        assert_eq!(rules.queues["a.test"], limit);
        rules.apply(RuleChange::Queue("a.test".into(), QueueRules::default()));
        assert!(rules.queues.is_empty());
        let crawl = CrawlRules {
            active: Some(false),
            ..CrawlRules::default()
        };
        rules.apply(RuleChange::Crawl(crawl.clone()));
        assert_eq!(rules.crawl, crawl);
        let json = serde_json::to_string(&rules).expect("json");
        assert_eq!(json, r#"{"active":false}"#);
    }
}
