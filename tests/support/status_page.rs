//! Reading a status page (src/live) in a real headless Chromium: what the page drew, compared with
//! what its `/status.json` says. Used by the crawler's and squall-frontier's page tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::network::EventRequestWillBeSent;
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::{Browser, Page};
use futures::StreamExt;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// What the page drew, read from its DOM (see [`READ_PAGE`]).
pub type Drawn = Value;

/// Reads back what the page drew: its sequence, figures, chart lines and table cells.
const READ_PAGE: &str = r#"(() => {
  const figures = {};
  for (const f of document.querySelectorAll("[data-figure]")) {
    const value = f.querySelector(".value");
    figures[f.dataset.figure] = { value: value.dataset.value, text: value.textContent };
  }
  const charts = {};
  for (const c of document.querySelectorAll("[data-chart]")) {
    const series = {};
    for (const line of c.querySelectorAll("polyline[data-series]")) {
      const points = line.getAttribute("points").trim();
      series[line.dataset.series] = {
        count: Number(line.dataset.count),
        points: points ? points.split(/\s+/).length : 0,
        width: line.getBBox().width,
      };
    }
    for (const entry of c.querySelectorAll(".legend [data-series]")) {
      series[entry.dataset.series].last = entry.dataset.value;
    }
    charts[c.dataset.chart] = series;
  }
  const tables = {};
  for (const t of document.querySelectorAll("[data-table]")) {
    tables[t.dataset.table] = [...t.querySelectorAll("tbody tr")].map(tr => Object.fromEntries(
      [...tr.querySelectorAll("td")].map(td => [td.dataset.column, { value: td.dataset.value, text: td.textContent }])));
  }
  return {
    sequence: Number(document.body.dataset.sequence ?? -1),
    activity: document.getElementById("activity").textContent,
    figures, charts, tables,
  };
})()"#;

/// A headless Chromium from the machine (Debian's `chromium`), driven over DevTools; killed when
/// dropped.
pub struct Chromium {
    pub browser: Browser,
    child: Child,
    _profile: tempfile::TempDir,
}

impl Chromium {
    /// Starts `chromium` (from PATH) headless, with a fresh profile.
    pub async fn launch() -> Chromium {
        let profile = tempfile::tempdir().expect("profile directory");
        let mut child = Command::new("chromium")
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--hide-scrollbars",
                "--window-size=1400,1700",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("chromium on PATH (Debian: apt-get install chromium)");
        let stderr = child.stderr.take().expect("chromium's stderr");
        let address = devtools_address(stderr).await;
        let (browser, mut handler) = Browser::connect(address)
            .await
            .expect("DevTools connection");
        tokio::spawn(async move { while handler.next().await.is_some() {} });
        Chromium {
            browser,
            child,
            _profile: profile,
        }
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

async fn devtools_address(stderr: tokio::process::ChildStderr) -> String {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some((_, address)) = line.split_once("DevTools listening on ") {
            let address = address.trim().to_string();
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return address;
        }
    }
    panic!("chromium exited before printing its DevTools address");
}

/// A status page open in Chromium, with every URL the page asked for.
pub struct OpenPage {
    pub page: Page,
    pub base: String,
    pub requests: Arc<Mutex<Vec<String>>>,
}

impl OpenPage {
    /// Opens `base` (the page's URL, ending in `/`), recording the requests it makes.
    pub async fn open(chromium: &Chromium, base: &str) -> OpenPage {
        let page = chromium
            .browser
            .new_page("about:blank")
            .await
            .expect("new tab");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let mut events = page
            .event_listener::<EventRequestWillBeSent>()
            .await
            .expect("network events");
        let seen = Arc::clone(&requests);
        tokio::spawn(async move {
            while let Some(event) = events.next().await {
                seen.lock()
                    .expect("requests")
                    .push(event.request.url.clone());
            }
        });
        // The page asks every second here (every 5 s by default), so that the test is quick.
        page.goto(format!("{base}?refresh=1"))
            .await
            .expect("open the status page");
        OpenPage {
            page,
            base: base.to_string(),
            requests,
        }
    }

    /// What the page drew and what `/status.json` said of the same document (same sequence),
    /// read until they are of one document (the page asks every second here; the server makes a new
    /// document at most twice a second).
    pub async fn matched_reading(&self, http: &reqwest::Client) -> (Drawn, Value) {
        for _ in 0..200 {
            let drawn: Drawn = self
                .page
                .evaluate(READ_PAGE)
                .await
                .expect("read the page")
                .into_value()
                .expect("the page's reading as JSON");
            let body = http
                .get(format!("{}status.json", self.base))
                .send()
                .await
                .expect("GET /status.json")
                .bytes()
                .await
                .expect("the body of /status.json");
            let json: Value = serde_json::from_slice(&body).expect("status.json is JSON");
            if drawn["sequence"].as_f64() == json["sequence"].as_f64() {
                return (drawn, json);
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        panic!("the page never showed the document /status.json served");
    }

    /// Saves a screenshot of the whole page to `path`.
    pub async fn screenshot(&self, path: &Path) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("screenshot directory");
        }
        self.page
            .save_screenshot(ScreenshotParams::builder().full_page(true).build(), path)
            .await
            .expect("screenshot");
    }

    /// Requests the page made outside its own server.
    pub fn foreign_requests(&self) -> Vec<String> {
        let base = self.base.trim_end_matches('/');
        self.requests
            .lock()
            .expect("requests")
            .iter()
            .filter(|url| !url.starts_with(base) && *url != "about:blank")
            .cloned()
            .collect()
    }
}

/// Where a test's screenshot goes: `target/test-output/NAME`.
pub fn screenshot_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target directory")
        .join("test-output")
        .join(name)
}

/// Asserts that the page drew `json` exactly: every figure, chart line and table cell.
pub fn assert_drawn(drawn: &Drawn, json: &Value) {
    assert_eq!(drawn["activity"], json["activity"], "activity line");
    for figure in json["figures"].as_array().expect("figures") {
        let id = figure["id"].as_str().expect("figure id");
        let shown = &drawn["figures"][id];
        assert_number(&shown["value"], &figure["value"], &format!("figure {id}"));
        let text = shown["text"].as_str().expect("figure text");
        if figure["unit"] == "count" {
            let digits: String = text.chars().filter(|c| *c != ',').collect();
            assert_eq!(
                digits.parse::<f64>().ok(),
                figure["value"].as_f64(),
                "figure {id}: {text:?}"
            );
        }
    }
    for chart in json["charts"].as_array().expect("charts") {
        let id = chart["id"].as_str().expect("chart id");
        for series in chart["series"].as_array().expect("series") {
            assert_series(&drawn["charts"][id], series, id);
        }
    }
    for table in json["tables"].as_array().expect("tables") {
        assert_table(drawn, table);
    }
}

fn assert_series(drawn_chart: &Value, series: &Value, chart: &str) {
    let sid = series["id"].as_str().expect("series id");
    let shown = &drawn_chart[sid];
    let values = series["values"].as_array().expect("values");
    let what = format!("chart {chart}, series {sid}");
    assert_eq!(
        shown["count"].as_u64(),
        Some(values.len() as u64),
        "{what}: count"
    );
    assert_eq!(
        shown["points"].as_u64(),
        Some(values.len() as u64),
        "{what}: points drawn"
    );
    match values.last() {
        Some(last) => assert_number(&shown["last"], last, &what),
        None => assert_eq!(shown["last"], "", "{what}: no value"),
    }
    if values.len() >= 2 {
        assert!(
            shown["width"].as_f64().unwrap_or(0.0) > 0.0,
            "{what}: a line is drawn"
        );
    }
}

fn assert_table(drawn: &Drawn, table: &Value) {
    let id = table["id"].as_str().expect("table id");
    let rows = table["rows"].as_array().expect("rows");
    let shown = drawn["tables"][id].as_array().expect("table drawn");
    assert_eq!(shown.len(), rows.len(), "table {id}: rows");
    for (n, (row, shown_row)) in rows.iter().zip(shown).enumerate() {
        for column in table["columns"].as_array().expect("columns") {
            let cid = column["id"].as_str().expect("column id");
            let cell = &shown_row[cid];
            let what = format!("table {id}, row {n}, column {cid}");
            match &row[cid] {
                Value::Null => assert_eq!(cell["text"], "—", "{what}"),
                Value::String(text) => {
                    assert_eq!(cell["value"].as_str(), Some(text.as_str()), "{what}");
                    assert_eq!(cell["text"].as_str(), Some(text.as_str()), "{what}");
                }
                number => assert_number(&cell["value"], number, &what),
            }
        }
    }
}

/// A number the page wrote into an attribute (text) against the JSON's.
fn assert_number(shown: &Value, expected: &Value, what: &str) {
    let shown = shown.as_str().and_then(|text| text.parse::<f64>().ok());
    let expected = expected.as_f64();
    assert!(
        shown.is_some() && shown == expected,
        "{what}: the page shows {shown:?}, the JSON says {expected:?}"
    );
}

/// The rows of table `id` in a status document (none when it has no such table).
pub fn table_rows(json: &Value, id: &str) -> Vec<Value> {
    json["tables"]
        .as_array()
        .and_then(|tables| tables.iter().find(|t| t["id"] == id))
        .and_then(|t| t["rows"].as_array().cloned())
        .unwrap_or_default()
}

/// A figure's value in a status document.
pub fn figure(json: &Value, id: &str) -> f64 {
    json["figures"]
        .as_array()
        .and_then(|figures| figures.iter().find(|f| f["id"] == id))
        .and_then(|f| f["value"].as_f64())
        .unwrap_or_else(|| panic!("no figure {id}"))
}
