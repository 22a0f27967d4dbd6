//! A queue's learned pace in the queues index: the five `pace*` fields a writer sets from the
//! fetcher's [`LearnedPace`], how a queue edit carries them, and how a claim reads them back, so
//! that whoever holds the queue next (another process, or this crawl after a restart) starts from
//! the pace the last holder learned.
//!
//! The pace is kept apart from the queue's other state: a report learned earlier than the stored
//! one never overwrites it (`paceUpdated` decides), and writing it is not a change of the queue's
//! URLs (`lastUpdated`, which claims read, stays as it was).

use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use squall::frontier::{LearnedPace, PaceCause};

use super::fields::{PACE_CAUSE, PACE_LIMIT_SECONDS, PACE_SECONDS, PACE_STRIKES, PACE_UPDATED};
use crate::status_index::schema::format_date;

/// The five fields of a learned pace, as a queue edit writes them.
#[derive(Debug, Clone, PartialEq)]
pub struct PaceParams {
    /// `paceSeconds`.
    pub seconds: f64,
    /// `paceCause`.
    pub cause: String,
    /// `paceStrikes`.
    pub strikes: u32,
    /// `paceLimitSeconds`.
    pub limit_seconds: Option<f64>,
    /// `paceUpdated`, in [`format_date`]'s form.
    pub updated: String,
}

impl PaceParams {
    /// The fields of `pace`.
    pub fn of(pace: &LearnedPace) -> PaceParams {
        PaceParams {
            seconds: pace.delay.as_secs_f64(),
            cause: pace.cause.to_string(),
            strikes: pace.strikes,
            limit_seconds: pace.limit.map(|limit| limit.as_secs_f64()),
            updated: format_date(pace.at),
        }
    }

    /// The parameter object of the Painless script (`params.pace`).
    pub fn script_params(&self) -> Value {
        json!({
            "seconds": self.seconds,
            "cause": self.cause,
            "strikes": self.strikes,
            "limitSeconds": self.limit_seconds,
            "updated": self.updated,
        })
    }

    /// Writes the five fields into a queue document's source.
    pub fn write_to(&self, source: &mut Map<String, Value>) {
        source.insert(PACE_SECONDS.into(), json!(self.seconds));
        source.insert(PACE_CAUSE.into(), json!(self.cause));
        source.insert(PACE_STRIKES.into(), json!(self.strikes));
        source.insert(PACE_LIMIT_SECONDS.into(), json!(self.limit_seconds));
        source.insert(PACE_UPDATED.into(), json!(self.updated));
    }

    /// Whether these fields replace those `source` holds at `now`: it holds none (or no date
    /// written as squall writes dates), or one learned earlier, or one dated after `now` (a clock
    /// ahead, or a document edited by hand, does not keep its pace for ever). Dates compare as
    /// strings, all written in one fixed-width form.
    pub fn replace(&self, source: &Map<String, Value>, now: &str) -> bool {
        source
            .get(PACE_UPDATED)
            .and_then(Value::as_str)
            .is_none_or(|stored| stored < self.updated.as_str() || stored > now)
    }
}

/// The Painless statements that write `params.pace` where [`PaceParams::replace`] says so, and
/// set `paced` when they do.
pub(crate) fn painless_pace_rule() -> String {
    format!(
        "boolean paced = false; def stored = ctx._source.{PACE_UPDATED}; \
        if (params.pace != null && (!(stored instanceof String) || stored.compareTo(params.pace.updated) < 0 || stored.compareTo(params.now) > 0)) {{ \
          ctx._source.{PACE_SECONDS} = params.pace.seconds; ctx._source.{PACE_CAUSE} = params.pace.cause; \
          ctx._source.{PACE_STRIKES} = params.pace.strikes; ctx._source.{PACE_LIMIT_SECONDS} = params.pace.limitSeconds; \
          ctx._source.{PACE_UPDATED} = params.pace.updated; paced = true }}"
    )
}

/// The pace a queue document holds, when all its fields are there and make sense (a document
/// written by another version, or by hand, with a field missing or unreadable holds none), dated
/// `now` at the latest.
pub fn stored_pace(source: &Value, now: DateTime<Utc>) -> Option<LearnedPace> {
    let seconds = |field: &str| {
        source
            .get(field)
            .and_then(Value::as_f64)
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
    };
    let cause = source.get(PACE_CAUSE)?.as_str()?;
    let at = source.get(PACE_UPDATED)?.as_str()?;
    Some(LearnedPace {
        delay: seconds(PACE_SECONDS)?,
        cause: PaceCause::from_str(cause).ok()?,
        strikes: u32::try_from(source.get(PACE_STRIKES)?.as_u64()?).ok()?,
        limit: seconds(PACE_LIMIT_SECONDS),
        at: DateTime::parse_from_rfc3339(at)
            .ok()?
            .with_timezone(&Utc)
            .min(now),
    })
}

/// The mapping of the five fields: part of a new queues index, and added to an existing one
/// (an additive change, which an index mapped `"dynamic": "strict"` takes).
pub fn pace_properties() -> Value {
    json!({
        PACE_SECONDS: { "type": "float" },
        PACE_CAUSE: { "type": "keyword" },
        PACE_STRIKES: { "type": "integer" },
        PACE_LIMIT_SECONDS: { "type": "float" },
        PACE_UPDATED: { "type": "date", "format": "date_optional_time" },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::utc;

    const NOW: DateTime<Utc> = DateTime::<Utc>::MAX_UTC;

    fn pace() -> LearnedPace {
        LearnedPace {
            delay: Duration::from_millis(2500),
            cause: PaceCause::Http(429),
            strikes: 2,
            limit: Some(Duration::from_millis(1250)),
            at: utc(2026, 12, 6, 14, 0, 0),
        }
    }

    #[test]
    fn a_pace_written_reads_back_as_it_was() {
        let mut source = Map::new();
        PaceParams::of(&pace()).write_to(&mut source);
        assert_eq!(source["paceCause"], "http_429", "the wire names");
        assert_eq!(source["paceUpdated"], "2026-12-06T14:00:00.000Z");
        let now = utc(2026, 12, 7, 0, 0, 0);
        assert_eq!(
            stored_pace(&Value::Object(source.clone()), now),
            Some(pace())
        );
        let earlier = utc(2026, 12, 6, 13, 0, 0);
        let read = stored_pace(&Value::Object(source), earlier).map(|p| p.at);
        assert_eq!(read, Some(earlier), "a date ahead of now reads as now");
    }

    #[test]
    fn a_document_with_a_pace_field_missing_or_unreadable_holds_none() {
        let mut whole = Map::new();
        PaceParams::of(&pace()).write_to(&mut whole);
        for (field, bad) in [
            ("paceSeconds", Value::Null),
            ("paceSeconds", json!(-1.0)),
            ("paceCause", json!("fast_please")),
            ("paceStrikes", json!(-3)),
            ("paceUpdated", json!("yesterday")),
        ] {
            let mut source = whole.clone();
            source.insert(field.into(), bad.clone());
            assert_eq!(
                stored_pace(&Value::Object(source), NOW),
                None,
                "{field}: {bad}"
            );
            let mut source = whole.clone();
            source.remove(field);
            assert_eq!(
                stored_pace(&Value::Object(source), NOW),
                None,
                "{field} missing"
            );
        }
        let mut source = whole.clone();
        source.insert("paceLimitSeconds".into(), Value::Null);
        let read = stored_pace(&Value::Object(source), NOW).map(|p| p.limit);
        assert_eq!(read, Some(None), "no limit remembered is a pace");
    }

    #[test]
    fn a_pace_replaces_none_an_earlier_one_or_one_dated_ahead_of_now() {
        let now = "2026-12-06T15:00:00.000Z";
        let mut source = Map::new();
        let stored = PaceParams::of(&pace());
        assert!(stored.replace(&source, now), "none stored");
        source.insert("paceUpdated".into(), json!(1_700_000_000_000u64));
        assert!(stored.replace(&source, now), "a date squall does not write");
        stored.write_to(&mut source);
        assert!(!stored.replace(&source, now), "the same one");
        let later = PaceParams::of(&LearnedPace {
            at: utc(2026, 12, 6, 14, 0, 1),
            ..pace()
        });
        assert!(later.replace(&source, now));
        source.insert("paceUpdated".into(), json!("9999-01-01T00:00:00.000Z"));
        assert!(stored.replace(&source, now), "one dated ahead of now");
    }
}
