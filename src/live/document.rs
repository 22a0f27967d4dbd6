//! The document a status page shows, and its JSON endpoint serves as it is: headline figures,
//! charts over the last minutes and tables, each with a stable `id` that scripts can rely on.
//!
//! The page (`live::PAGE`, feature `live-page`) knows nothing of crawls: it draws any [`StatusDocument`], which
//! lets the crawler and `squall-frontier` share it.

use chrono::{DateTime, Utc};
use serde::ser::{SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};
use serde_json::Value;

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
///
/// In JSON each row is an object mapping the column ids to the row's values (text, numbers or
/// null); in memory a row is its values in the columns' order, which costs no key per value.
#[derive(Debug, Clone)]
pub struct Table {
    /// Stable name for scripts.
    pub id: String,
    /// What a person reads.
    pub title: String,
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// The rows: each holds one value per column, in the columns' order (add them with
    /// [`Table::row`]).
    pub rows: Vec<Vec<Value>>,
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

/// A column of a table whose rows each show one `T`, with how the row's value in it is read from
/// that `T`: a table made of fields ([`Table::of`]) names each column once, beside its value.
pub struct Field<T> {
    /// The column.
    pub column: Column,
    /// The value of a row's `T` in the column.
    pub value: fn(&T) -> Value,
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

impl<T> Field<T> {
    /// A field.
    pub fn new(id: &str, label: &str, unit: Unit, value: fn(&T) -> Value) -> Self {
        Field {
            column: Column::new(id, label, unit),
            value,
        }
    }
}

impl Table {
    /// A table with a row per item of `items`, each column's value read by its field.
    pub fn of<T>(
        id: &str,
        title: &str,
        items: impl IntoIterator<Item = T>,
        fields: &[Field<T>],
        empty: &str,
    ) -> Self {
        let columns = fields.iter().map(|field| field.column.clone()).collect();
        let mut table = Table::new(id, title, columns, empty);
        for item in items {
            table.row(fields.iter().map(|field| (field.value)(&item)));
        }
        table
    }

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

    /// Adds a row: its values in the columns' order. Columns past the last value given are null;
    /// values past the last column are left out.
    pub fn row(&mut self, values: impl IntoIterator<Item = Value>) {
        let mut row: Vec<Value> = values.into_iter().collect();
        debug_assert!(row.len() <= self.columns.len(), "more values than columns");
        row.resize(self.columns.len(), Value::Null);
        self.rows.push(row);
    }

    /// The value of `column` in row `row`, if both exist.
    pub fn cell(&self, row: usize, column: &str) -> Option<&Value> {
        let at = self.columns.iter().position(|c| c.id == column)?;
        self.rows.get(row)?.get(at)
    }
}

impl Serialize for Table {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut table = serializer.serialize_struct("Table", 5)?;
        table.serialize_field("id", &self.id)?;
        table.serialize_field("title", &self.title)?;
        table.serialize_field("columns", &self.columns)?;
        table.serialize_field("rows", &Rows(self))?;
        table.serialize_field("empty", &self.empty)?;
        table.end()
    }
}

/// A table's rows as JSON shows them: objects keyed by column id.
struct Rows<'a>(&'a Table);

/// One row as an object keyed by column id.
struct Row<'a>(&'a [Column], &'a [Value]);

impl Serialize for Rows<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut rows = serializer.serialize_seq(Some(self.0.rows.len()))?;
        for row in &self.0.rows {
            rows.serialize_element(&Row(&self.0.columns, row))?;
        }
        rows.end()
    }
}

impl Serialize for Row<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut row = serializer.serialize_map(Some(self.1.len()))?;
        for (column, value) in self.0.iter().zip(self.1) {
            row.serialize_entry(&column.id, value)?;
        }
        row.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rows_are_objects_keyed_by_column_id_in_json() {
        let hosts = [("a.test", 3), ("b.test", 0)];
        let table = Table::of(
            "t",
            "T",
            hosts,
            &[
                Field::new("host", "host", Unit::Count, |(host, _)| json!(host)),
                Field::new("fetches", "fetches", Unit::Count, |(_, n)| json!(n)),
            ],
            "none",
        );
        assert_eq!(table.cell(1, "host"), Some(&json!("b.test")));
        let written = serde_json::to_value(&table).expect("a table as JSON");
        assert_eq!(
            written["rows"],
            json!([{"host": "a.test", "fetches": 3}, {"host": "b.test", "fetches": 0}])
        );
        assert_eq!(written["columns"][1]["id"], "fetches");
        assert_eq!(written["empty"], "none");
    }

    #[test]
    fn a_row_short_of_values_is_null_in_the_last_columns() {
        let columns = ["host", "fetches", "last"].map(|id| Column::new(id, id, Unit::Count));
        let mut table = Table::new("t", "T", columns.to_vec(), "none");
        table.row([json!("a.test"), json!(3)]);
        assert_eq!(table.cell(0, "host"), Some(&json!("a.test")));
        assert_eq!(table.cell(0, "last"), Some(&Value::Null));
        assert_eq!(table.cell(0, "nope"), None);
        let written = serde_json::to_value(&table).expect("a table as JSON");
        assert_eq!(
            written["rows"],
            json!([{"host": "a.test", "fetches": 3, "last": null}])
        );
    }
}
