//! `status.updater.cache.spec`: the bounds of the status updater's outlink cache, written as a
//! Caffeine spec the way StormCrawler's files write it.

use std::time::Duration;

/// How the cache is bounded, from a Caffeine-style spec such as StormCrawler's default
/// `maximumSize=10000,expireAfterAccess=1h`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheSpec {
    /// URLs kept at most (`maximumSize`); the least recently used go first.
    pub maximum_size: u64,
    /// A URL not seen for this long leaves the cache (`expireAfterAccess`).
    pub expire_after_access: Option<Duration>,
    /// A URL leaves the cache this long after it entered (`expireAfterWrite`).
    pub expire_after_write: Option<Duration>,
}

impl Default for CacheSpec {
    /// StormCrawler's default: `maximumSize=10000,expireAfterAccess=1h`.
    fn default() -> Self {
        CacheSpec {
            maximum_size: 10_000,
            expire_after_access: Some(Duration::from_secs(3600)),
            expire_after_write: None,
        }
    }
}

/// Why a cache spec cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cache spec `{spec}`: {problem}")]
pub struct CacheSpecError {
    /// The spec as given.
    pub spec: String,
    /// What is wrong with it.
    pub problem: String,
}

impl CacheSpec {
    /// Parses a Caffeine spec: comma-separated `maximumSize=N`, `expireAfterAccess=D`,
    /// `expireAfterWrite=D` (D a whole number followed by `d`, `h`, `m` or `s`), and
    /// `initialCapacity=N` and `recordStats`, accepted and without effect (the cache always counts
    /// its hits). Without `maximumSize`, 10,000: the cache is always bounded.
    pub fn parse(spec: &str) -> Result<CacheSpec, CacheSpecError> {
        let fail = |problem: String| CacheSpecError {
            spec: spec.to_string(),
            problem,
        };
        let mut parsed = CacheSpec {
            expire_after_access: None,
            ..CacheSpec::default()
        };
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = match part.split_once('=') {
                Some((name, value)) => (name.trim(), Some(value.trim())),
                None => (part, None),
            };
            match (name, value) {
                ("maximumSize", Some(value)) => {
                    parsed.maximum_size = value
                        .parse()
                        .map_err(|_| fail(format!("maximumSize `{value}` is not a whole number")))?
                }
                ("expireAfterAccess", Some(value)) => {
                    parsed.expire_after_access = Some(duration(value).map_err(fail)?)
                }
                ("expireAfterWrite", Some(value)) => {
                    parsed.expire_after_write = Some(duration(value).map_err(fail)?)
                }
                ("initialCapacity", Some(value)) if value.parse::<u64>().is_ok() => {}
                ("recordStats", None) => {}
                _ => {
                    return Err(fail(format!(
                        "`{part}` is not one of maximumSize=N, expireAfterAccess=D, \
                         expireAfterWrite=D, initialCapacity=N, recordStats"
                    )));
                }
            }
        }
        Ok(parsed)
    }
}

impl std::str::FromStr for CacheSpec {
    type Err = CacheSpecError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        CacheSpec::parse(spec)
    }
}

/// The spec written back the way it reads, each duration in its largest whole unit, as
/// StormCrawler writes its default (`maximumSize=10000,expireAfterAccess=1h`).
impl std::fmt::Display for CacheSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "maximumSize={}", self.maximum_size)?;
        let bounds = [
            ("expireAfterAccess", self.expire_after_access),
            ("expireAfterWrite", self.expire_after_write),
        ];
        for (name, bound) in bounds {
            if let Some(bound) = bound {
                let seconds = bound.as_secs();
                let (size, unit) = UNITS
                    .into_iter()
                    .find(|(size, _)| seconds >= *size && seconds % size == 0)
                    .unwrap_or((1, 's'));
                write!(f, ",{name}={}{unit}", seconds / size)?;
            }
        }
        Ok(())
    }
}

/// A Caffeine duration's units, largest first: seconds in one, and its letter.
const UNITS: [(u64, char); 4] = [(86_400, 'd'), (3_600, 'h'), (60, 'm'), (1, 's')];

/// A Caffeine duration: a whole number and its unit (`d`, `h`, `m`, `s`).
fn duration(value: &str) -> Result<Duration, String> {
    let split = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{value}` is not a duration such as 30s, 10m, 1h or 1d"))?;
    let Some((seconds, _)) = UNITS
        .into_iter()
        .find(|(_, letter)| unit.len() == 1 && unit.starts_with(*letter))
    else {
        return Err(format!("`{value}` has no unit d, h, m or s"));
    };
    Ok(Duration::from_secs(number.saturating_mul(seconds)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stormcrawlers_default_spec_reads_as_the_default() {
        let spec = CacheSpec::parse("maximumSize=10000,expireAfterAccess=1h").expect("spec");
        assert_eq!(spec, CacheSpec::default());
    }

    #[test]
    fn every_part_of_a_spec_is_read_and_unknown_ones_are_named() {
        let spec =
            CacheSpec::parse(" maximumSize=5 , expireAfterWrite=2m,initialCapacity=9,recordStats")
                .expect("spec");
        assert_eq!(spec.maximum_size, 5);
        assert_eq!(spec.expire_after_write, Some(Duration::from_secs(120)));
        assert_eq!(spec.expire_after_access, None);
        for bad in [
            "maximumWeight=10",
            "maximumSize=ten",
            "expireAfterAccess=5",
            "expireAfterAccess=5w",
            "weakKeys",
        ] {
            let error = CacheSpec::parse(bad).expect_err(bad);
            assert!(
                error
                    .to_string()
                    .contains(bad.split('=').next().unwrap_or(bad)),
                "{error}"
            );
        }
    }

    #[test]
    fn a_spec_written_back_reads_the_same() {
        for text in [
            "maximumSize=10000,expireAfterAccess=1h",
            "maximumSize=3,expireAfterWrite=2m",
        ] {
            let spec = CacheSpec::parse(text).expect("spec");
            assert_eq!(
                spec.to_string().parse::<CacheSpec>(),
                Ok(spec.clone()),
                "{spec}"
            );
        }
    }

    #[test]
    fn durations_are_written_in_their_largest_whole_unit() {
        let spec = |access, write| CacheSpec {
            maximum_size: 7,
            expire_after_access: access,
            expire_after_write: write,
        };
        let secs = |n| Some(Duration::from_secs(n));
        assert_eq!(
            CacheSpec::default().to_string(),
            "maximumSize=10000,expireAfterAccess=1h"
        );
        assert_eq!(
            spec(secs(0), secs(90)).to_string(),
            "maximumSize=7,expireAfterAccess=0s,expireAfterWrite=90s"
        );
        assert_eq!(
            spec(None, secs(2 * 86_400)).to_string(),
            "maximumSize=7,expireAfterWrite=2d"
        );
        assert_eq!(
            spec(secs(120), None).to_string(),
            "maximumSize=7,expireAfterAccess=2m"
        );
    }
}
