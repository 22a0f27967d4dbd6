//! The document a status page shows, and its JSON endpoint serves as it is: headline figures,
//! charts over the last minutes and tables, each with a stable `id` that scripts can rely on.
//!
//! The page ([`PAGE`](super::PAGE)) knows nothing of crawls: it draws any [`StatusDocument`], which
//! lets the crawler and `squall-frontier` share it.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value};

/// What a status page shows at one moment.
#[derive(Debug, Clone, Serialize)]
pub struct StatusDocument {
    /// The page's title (e.g. "squall crawl").
    pub title: String,
    /// A line under the title: what runs and where (the frontier, the engine).
    pub subtitle: String,
    /// Counts the documents made: the same number means the same document.
    pub sequence: u64,
    /// When it was made.
    pub generated_at: DateTime<Utc>,
    /// Seconds since the process started watching.
    pub uptime_seconds: f64,
    /// What the process is doing, or what it waits on when it is idle.
    pub activity: String,
    /// Headline numbers.
    pub figures: Vec<Figure>,
    /// Rates over the last minutes.
    pub charts: Vec<Chart>,
    /// Tables.
    pub tables: Vec<Table>,
}

/// One headline number.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// Stable name for scripts (`pages`, `bytes`, ...).
    pub id: String,
    /// What a person reads.
    pub label: String,
    /// The value.
    pub value: f64,
    /// How to show it.
    pub unit: Unit,
}

/// How a number is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// A whole number.
    Count,
    /// A size in bytes.
    Bytes,
    /// Bytes per second.
    ByteRate,
    /// A number per second.
    Rate,
    /// A duration in seconds.
    Seconds,
    /// A duration in milliseconds.
    Milliseconds,
}

/// Lines over time: one value per step, oldest first, the newest last.
#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    /// Stable name for scripts.
    pub id: String,
    /// What a person reads.
    pub title: String,
    /// Every series' unit.
    pub unit: Unit,
    /// Seconds between two values.
    pub step_seconds: f64,
    /// The lines.
    pub series: Vec<Series>,
}

/// One line of a chart.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// Stable name for scripts.
    pub id: String,
    /// What a person reads.
    pub label: String,
    /// The values, oldest first.
    pub values: Vec<f64>,
}

/// A table: rows of values by column id.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    /// Stable name for scripts.
    pub id: String,
    /// What a person reads.
    pub title: String,
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// The rows: each maps column ids to values (text, numbers or null).
    pub rows: Vec<Map<String, Value>>,
    /// Shown when there is no row (e.g. "no error so far").
    pub empty: String,
}

/// One column of a table.
#[derive(Debug, Clone, Serialize)]
pub struct Column {
    /// Stable name for scripts, the key of the rows' values.
    pub id: String,
    /// What a person reads.
    pub label: String,
    /// How numbers in it are shown.
    pub unit: Unit,
}

impl Figure {
    /// A figure.
    pub fn new(id: &str, label: &str, value: f64, unit: Unit) -> Self {
        Figure {
            id: id.to_string(),
            label: label.to_string(),
            value,
            unit,
        }
    }
}

impl Series {
    /// A series.
    pub fn new(id: &str, label: &str, values: Vec<f64>) -> Self {
        Series {
            id: id.to_string(),
            label: label.to_string(),
            values,
        }
    }
}

impl Column {
    /// A column.
    pub fn new(id: &str, label: &str, unit: Unit) -> Self {
        Column {
            id: id.to_string(),
            label: label.to_string(),
            unit,
        }
    }
}

impl Table {
    /// A table with no row yet.
    pub fn new(id: &str, title: &str, columns: Vec<Column>, empty: &str) -> Self {
        Table {
            id: id.to_string(),
            title: title.to_string(),
            columns,
            rows: Vec::new(),
            empty: empty.to_string(),
        }
    }

    /// Adds a row of `(column id, value)` pairs.
    pub fn row<const N: usize>(&mut self, cells: [(&str, Value); N]) {
        let row = cells
            .into_iter()
            .map(|(column, value)| (column.to_string(), value))
            .collect();
        self.rows.push(row);
    }
}
