//! Seeds as they come in, from a list or a file, written to the frontier in bounded batches: a
//! file of millions of seeds is read a batch at a time, never held whole. A seed longer than
//! `urlfilter.max.length` is refused by name before it is parsed, and a file's line is read only
//! up to a bound (the rest of a longer line is skipped, counted, not kept).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::run::Crawler;
use super::seeds::SeedReport;

/// Seeds written to the frontier at once.
pub(crate) const SEED_BATCH: usize = 10_000;
/// What a seed file's line may hold beyond the URL's own bound: its tab-separated metadata.
const METADATA_ROOM: usize = 64 * 1024;
/// A seed file's longest line when URLs have no length limit (`urlfilter.max.length: -1`).
const UNBOUNDED_LINE: usize = 64 * 1024 * 1024;
/// What a refused seed is shown as, at most (in characters).
const SHOWN: usize = 200;

/// A seed file that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read seeds file {}", path.display())]
pub struct SeedFileError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

impl Crawler {
    /// Writes seed URLs to the frontier as DISCOVERED (depth 0), after normalization and
    /// filtering, a batch at a time (the seeds are taken from the iterator as they are written).
    /// Seeds already known keep their status. Malformed seeds, and seeds longer than
    /// `urlfilter.max.length`, are reported, and the rest go on.
    pub async fn inject<S: AsRef<str>>(&self, seeds: impl IntoIterator<Item = S>) -> SeedReport {
        let mut report = SeedReport::default();
        let mut batch = Vec::with_capacity(SEED_BATCH);
        for seed in seeds {
            self.take_seed(seed.as_ref(), &mut batch, &mut report);
            if batch.len() >= SEED_BATCH {
                self.write_batch(&mut batch, &mut report).await;
            }
        }
        self.write_batch(&mut batch, &mut report).await;
        report
    }

    /// [`inject`](Self::inject)s the seeds of a file, one a line (blank lines and lines starting
    /// with `#` skipped; a UTF-8 byte-order mark at its start ignored), reading it a batch at a
    /// time. A line that is not UTF-8, or longer than `urlfilter.max.length` (and room for
    /// metadata), is reported and skipped.
    pub async fn inject_file(&self, path: &Path) -> Result<SeedReport, SeedFileError> {
        let failed = |source| SeedFileError {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(failed)?;
        let max_line = match self.parts.config.filters.max_length {
            Some(max) => max.saturating_add(METADATA_ROOM),
            None => UNBOUNDED_LINE,
        };
        let mut lines = SeedLines::new(BufReader::new(file), max_line);
        let mut report = SeedReport::default();
        let mut batch = Vec::with_capacity(SEED_BATCH);
        while let Some(line) = lines.next_line().map_err(failed)? {
            match line {
                SeedLine::Text(text) => self.take_seed(&text, &mut batch, &mut report),
                SeedLine::Refused { start, reason } => report.rejected.push((start, reason)),
            }
            if batch.len() >= SEED_BATCH {
                self.write_batch(&mut batch, &mut report).await;
            }
        }
        self.write_batch(&mut batch, &mut report).await;
        Ok(report)
    }

    /// Adds `seed` to `batch`, unless its URL is over `urlfilter.max.length` (then reported).
    fn take_seed(&self, seed: &str, batch: &mut Vec<String>, report: &mut SeedReport) {
        let url = seed.trim().split('\t').next().unwrap_or_default().trim();
        match self.parts.config.filters.max_length {
            Some(max) if url.len() > max => report.rejected.push((
                shown(seed),
                format!(
                    "the URL is {} bytes long, over urlfilter.max.length ({max} bytes)",
                    url.len()
                ),
            )),
            _ => batch.push(seed.to_string()),
        }
    }

    /// Writes the seeds of `batch` (leaving it empty), adding what became of them to `report`.
    async fn write_batch(&self, batch: &mut Vec<String>, report: &mut SeedReport) {
        if batch.is_empty() {
            return;
        }
        let written = self
            .parts
            .seed_filters
            .inject(
                batch.iter().map(String::as_str),
                self.parts.scheduler.as_ref(),
                self.parts.store.as_ref(),
            )
            .await;
        batch.clear();
        report.accepted += written.accepted;
        report.rejected.extend(written.rejected);
    }
}

/// `seed` as a refusal shows it: its first characters, and its length when it is cut.
fn shown(seed: &str) -> String {
    if seed.chars().count() <= SHOWN {
        return seed.to_string();
    }
    let start: String = seed.chars().take(SHOWN).collect();
    format!("{start}… ({} bytes)", seed.len())
}

/// One line of a seed file.
#[derive(Debug, PartialEq, Eq)]
enum SeedLine {
    /// The line's text, without its line end.
    Text(String),
    /// A line that cannot be a seed: its start (as [`shown`]) and why.
    Refused { start: String, reason: String },
}

/// The lines of a seed file, each read up to `max_line` bytes.
struct SeedLines<R> {
    reader: R,
    max_line: usize,
    number: usize,
}

impl<R: BufRead> SeedLines<R> {
    fn new(reader: R, max_line: usize) -> Self {
        SeedLines {
            reader,
            max_line,
            number: 0,
        }
    }

    /// The next line, `None` at the end of the file.
    fn next_line(&mut self) -> std::io::Result<Option<SeedLine>> {
        let mut kept = Vec::new();
        let mut length = 0usize;
        let mut ended = false;
        while !ended {
            let buffer = self.reader.fill_buf()?;
            if buffer.is_empty() {
                break;
            }
            let (part, used) = match buffer.iter().position(|&b| b == b'\n') {
                Some(end) => {
                    ended = true;
                    (&buffer[..end], end + 1)
                }
                None => (buffer, buffer.len()),
            };
            let room = self.max_line.saturating_sub(kept.len());
            kept.extend_from_slice(&part[..part.len().min(room)]);
            length += part.len();
            self.reader.consume(used);
        }
        if !ended && length == 0 {
            return Ok(None);
        }
        self.number += 1;
        Ok(Some(self.line(kept, length)))
    }

    /// What the line's bytes `kept` (of `length` in all) make.
    fn line(&self, mut kept: Vec<u8>, length: usize) -> SeedLine {
        if self.number == 1 && kept.starts_with("\u{feff}".as_bytes()) {
            kept.drain(..3);
        }
        if kept.last() == Some(&b'\r') && length <= self.max_line {
            kept.pop();
        }
        if length > self.max_line {
            return SeedLine::Refused {
                start: shown(&String::from_utf8_lossy(&kept)),
                reason: format!(
                    "line {} is {length} bytes long, over urlfilter.max.length and room for \
                     metadata ({} bytes)",
                    self.number, self.max_line
                ),
            };
        }
        match String::from_utf8(kept) {
            Ok(text) => SeedLine::Text(text),
            Err(error) => SeedLine::Refused {
                start: shown(&String::from_utf8_lossy(error.as_bytes())),
                reason: format!("line {} is not UTF-8", self.number),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(bytes: &[u8], max_line: usize) -> Vec<SeedLine> {
        let mut reader = SeedLines::new(std::io::BufReader::with_capacity(7, bytes), max_line);
        std::iter::from_fn(|| reader.next_line().expect("read")).collect()
    }

    fn text(line: &str) -> SeedLine {
        SeedLine::Text(line.to_string())
    }

    #[test]
    fn a_byte_order_mark_is_dropped_and_line_ends_removed() {
        let read = lines(
            "\u{feff}http://a.test/\r\nhttp://b.test/\n\nlast".as_bytes(),
            100,
        );
        assert_eq!(
            read,
            [
                text("http://a.test/"),
                text("http://b.test/"),
                text(""),
                text("last")
            ]
        );
        // Only at the start of the file.
        let read = lines("a\n\u{feff}b\n".as_bytes(), 100);
        assert_eq!(read, [text("a"), text("\u{feff}b")]);
    }

    #[test]
    fn a_long_line_is_refused_with_its_length_and_the_next_read_whole() {
        let mut file = "x".repeat(5000).into_bytes();
        file.extend_from_slice(b"\nhttp://a.test/\n\xff\xfe\n");
        let read = lines(&file, 30);
        assert_eq!(read.len(), 3, "{read:?}");
        let SeedLine::Refused { start, reason } = &read[0] else {
            panic!("{read:?}");
        };
        assert!(start.len() <= 30, "{start}");
        assert!(reason.contains("line 1 is 5000 bytes long"), "{reason}");
        assert_eq!(read[1], text("http://a.test/"));
        assert!(
            matches!(&read[2], SeedLine::Refused { reason, .. } if reason == "line 3 is not UTF-8"),
            "{read:?}"
        );
    }
}
