//! A crawl process's Prometheus metrics (`--metrics-addr`), read as sums by metric name.

use std::collections::BTreeMap;
use std::time::Duration;

/// One reading: each metric's value, summed over its labels.
#[derive(Debug, Clone, Default)]
pub struct Metrics(BTreeMap<String, f64>);

impl Metrics {
    /// The value of `name` (0 when the process has not recorded it yet).
    pub fn get(&self, name: &str) -> f64 {
        self.0.get(name).copied().unwrap_or(0.0)
    }

    /// How much `name` grew from `earlier` to this reading.
    pub fn since(&self, earlier: &Metrics, name: &str) -> f64 {
        self.get(name) - earlier.get(name)
    }

    /// Parses the Prometheus text format: `name{labels} value` lines, comments skipped.
    pub fn parse(text: &str) -> Metrics {
        let mut values = BTreeMap::new();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let Some((series, value)) = line.rsplit_once(' ') else {
                continue;
            };
            let Ok(value) = value.parse::<f64>() else {
                continue;
            };
            let name = series.split('{').next().unwrap_or(series).trim();
            *values.entry(name.to_string()).or_insert(0.0) += value;
        }
        Metrics(values)
    }
}

/// Reads the metrics served at `addr`; `None` while the process does not answer.
pub async fn scrape(client: &reqwest::Client, addr: &str) -> Option<Metrics> {
    let response = client
        .get(format!("http://{addr}/metrics"))
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .ok()?;
    let text = response.text().await.ok()?;
    Some(Metrics::parse(&text))
}
