//! Sitemap parsing following the [sitemaps.org](https://www.sitemaps.org/protocol.html)
//! protocol, in the spirit of crawler-commons' `SiteMapParser`.
//!
//! Three document shapes are understood:
//!
//! * XML `<urlset>` documents listing pages (`<url><loc>` with optional
//!   `<lastmod>`, `<changefreq>` and `<priority>`),
//! * XML `<sitemapindex>` documents listing further sitemaps (`<sitemap><loc>`),
//! * plain-text sitemaps with one absolute URL per line.
//!
//! Bodies may be gzip-compressed (detected by the magic bytes, whatever the
//! headers say). The decompressed size is capped by [`SitemapLimits::max_bytes`],
//! so a gzip bomb stops at the cap instead of exhausting memory. XML is read
//! with a streaming parser; no DOM is built.
//!
//! Entries are filtered loosely after the sitemaps.org "same location" rule:
//! only absolute `http`/`https` URLs on the same host as the sitemap itself are
//! kept. Rejected entries are counted in [`Sitemap::skipped`], never reported
//! as errors. RSS and Atom feeds are not handled.

use std::borrow::Cow;
use std::io::{ErrorKind, Read};

use flate2::read::MultiGzDecoder;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesRef, Event};
use quick_xml::reader::Reader;
use url::Url;

/// Default cap on the (decompressed) size of a sitemap body: 50 MiB, as in the protocol.
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024 * 1024;

/// Default cap on the number of entries taken from one sitemap: 50 000, as in the protocol.
pub const DEFAULT_MAX_URLS: usize = 50_000;

/// How many bytes of a body [`looks_like_sitemap`] inspects (after decompression).
const SNIFF_WINDOW: usize = 8 * 1024;

/// Size of the chunks read from the gzip decoder.
const GZIP_CHUNK: usize = 32 * 1024;

/// What a sitemap document lists.
#[derive(Debug, Clone, PartialEq)]
pub struct Sitemap {
    /// The shape of the document.
    pub kind: SitemapKind,
    /// Pages listed by a `<urlset>` or a plain-text sitemap, in document order.
    pub urls: Vec<SitemapUrl>,
    /// Further sitemaps listed by a `<sitemapindex>`, in document order.
    pub sitemaps: Vec<Url>,
    /// Entries that were dropped: missing, invalid, relative or non-http(s)
    /// locations, locations on another host than the sitemap, and entries
    /// beyond [`SitemapLimits::max_urls`].
    pub skipped: usize,
}

impl Sitemap {
    fn new(kind: SitemapKind) -> Self {
        Self {
            kind,
            urls: Vec::new(),
            sitemaps: Vec::new(),
            skipped: 0,
        }
    }

    /// Number of entries kept (pages plus sub-sitemaps).
    pub fn len(&self) -> usize {
        self.urls.len() + self.sitemaps.len()
    }

    /// Whether no entry was kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The shape of a sitemap document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SitemapKind {
    /// An XML `<urlset>`: entries are pages, found in [`Sitemap::urls`].
    UrlSet,
    /// An XML `<sitemapindex>`: entries are sitemaps, found in [`Sitemap::sitemaps`].
    Index,
    /// A plain-text sitemap: one page URL per line, found in [`Sitemap::urls`].
    Text,
}

/// One page listed by a sitemap.
#[derive(Debug, Clone, PartialEq)]
pub struct SitemapUrl {
    /// The page's absolute URL.
    pub url: Url,
    /// The `<lastmod>` value as written (trimmed), if present and non-empty.
    /// It is not validated; W3C datetime is expected but not enforced.
    pub lastmod: Option<String>,
    /// The `<changefreq>` value, lower-cased, if it is one of the protocol's
    /// values (`always`, `hourly`, `daily`, `weekly`, `monthly`, `yearly`, `never`).
    pub changefreq: Option<String>,
    /// The `<priority>` value, if it is a number between 0.0 and 1.0.
    pub priority: Option<f32>,
}

impl SitemapUrl {
    fn bare(url: Url) -> Self {
        Self {
            url,
            lastmod: None,
            changefreq: None,
            priority: None,
        }
    }
}

/// Resource caps applied while parsing a sitemap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SitemapLimits {
    /// Maximum body size in bytes, measured after gzip decompression
    /// (default [`DEFAULT_MAX_BYTES`], 50 MiB).
    pub max_bytes: usize,
    /// Maximum number of entries kept; further ones are counted as skipped
    /// (default [`DEFAULT_MAX_URLS`], 50 000).
    pub max_urls: usize,
}

impl Default for SitemapLimits {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_BYTES,
            max_urls: DEFAULT_MAX_URLS,
        }
    }
}

/// Why a body could not be read as a sitemap.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SitemapError {
    /// The body starts with the gzip magic bytes but does not decompress.
    #[error("corrupt gzip data in sitemap: {0}")]
    Compressed(String),
    /// The body (after decompression) is larger than the configured limit.
    #[error("sitemap exceeds the size limit of {limit} bytes")]
    TooLarge {
        /// The limit that was exceeded, in bytes.
        limit: usize,
    },
    /// The body is not a sitemap: empty, malformed XML with no entry, an XML
    /// document whose root is neither `<urlset>` nor `<sitemapindex>`, or text
    /// without any URL.
    #[error("not a sitemap: {0}")]
    NotASitemap(String),
}

/// Parses a sitemap.
///
/// `location` is the sitemap's own URL: entries whose host differs from its
/// host are dropped (when `location` has no host, e.g. a `file:` URL, this
/// check is skipped). `content_type` is the HTTP `Content-Type` header, if any,
/// and `body` the raw response bytes, possibly gzip-compressed.
///
/// The body decides the format, because servers often mislabel sitemaps: it is
/// parsed as XML when its first non-blank character (after a byte-order mark)
/// is `<`, and as a plain-text sitemap otherwise. Relative locations are not
/// resolved against `location`; like other invalid locations they are counted
/// in [`Sitemap::skipped`].
///
/// Malformed XML keeps the entries read before the error; it is only an error
/// when nothing was found.
pub fn parse_sitemap(
    location: &Url,
    content_type: Option<&str>,
    body: &[u8],
    limits: &SitemapLimits,
) -> Result<Sitemap, SitemapError> {
    let bytes = decode_body(body, limits.max_bytes)?;
    let text = to_text(&bytes);
    let content = text.trim_start();
    if content.is_empty() {
        return Err(SitemapError::NotASitemap("empty body".to_owned()));
    }
    let filter = EntryFilter::new(location, limits.max_urls);
    if content.starts_with('<') {
        parse_xml(content, filter, content_type)
    } else {
        parse_text(content, filter)
    }
}

/// Whether a response looks like a sitemap, so a crawler can decide to parse it.
///
/// The start of the body is inspected first (decompressing a gzip prefix if
/// needed): an XML document whose root element is `<urlset>` or
/// `<sitemapindex>`, or a text whose first line is an absolute http(s) URL,
/// looks like a sitemap; any other recognisable XML root (`<html>`, `<rss>`,
/// ...) or text does not. When the body gives no answer (it is empty, or its
/// root element is not within the first 8 KiB), the decision falls back on the
/// content type (XML or gzip types) and the URL (path ending in `.xml`,
/// `.xml.gz`, or a `sitemap*.txt` / `sitemap*.txt.gz` file name). So calling it
/// with an empty body answers from the metadata alone.
pub fn looks_like_sitemap(location: &Url, content_type: Option<&str>, body: &[u8]) -> bool {
    match sniff_body(body) {
        Sniff::Yes => true,
        Sniff::No => false,
        Sniff::Unknown => {
            content_type.is_some_and(|ct| is_xml_type(ct) || is_gzip_type(ct))
                || has_sitemap_path(location)
        }
    }
}

// ---------------------------------------------------------------------------
// Body decoding
// ---------------------------------------------------------------------------

fn is_gzip(body: &[u8]) -> bool {
    body.starts_with(&[0x1f, 0x8b])
}

/// Returns the body's bytes, decompressed if gzipped, enforcing `max_bytes`.
fn decode_body(body: &[u8], max_bytes: usize) -> Result<Cow<'_, [u8]>, SitemapError> {
    if is_gzip(body) {
        gunzip_capped(body, max_bytes).map(Cow::Owned)
    } else if body.len() > max_bytes {
        Err(SitemapError::TooLarge { limit: max_bytes })
    } else {
        Ok(Cow::Borrowed(body))
    }
}

/// Decompresses `body`, failing with `TooLarge` as soon as the output would
/// exceed `limit`. The output buffer never grows beyond `limit` bytes.
///
/// A stream that is merely truncated (a common result of download size caps)
/// keeps what was decompressed; any other decoding error is `Compressed`.
fn gunzip_capped(body: &[u8], limit: usize) -> Result<Vec<u8>, SitemapError> {
    let mut decoder = MultiGzDecoder::new(body);
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; GZIP_CHUNK];
    loop {
        let n = match decoder.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == ErrorKind::UnexpectedEof && !out.is_empty() => break,
            Err(e) => return Err(SitemapError::Compressed(e.to_string())),
        };
        if n > limit - out.len() {
            return Err(SitemapError::TooLarge { limit });
        }
        if out.capacity() - out.len() < n {
            // Grow geometrically, but never past the limit.
            let wanted = (out.capacity() * 2).max(out.len() + n).max(GZIP_CHUNK);
            out.reserve_exact(wanted.min(limit) - out.len());
        }
        out.extend_from_slice(chunk.get(..n).unwrap_or_default());
    }
    Ok(out)
}

/// Decodes bytes to text: UTF-16 when a UTF-16 byte-order mark is present,
/// UTF-8 otherwise (a UTF-8 BOM is dropped). Invalid sequences become U+FFFD.
fn to_text(bytes: &[u8]) -> Cow<'_, str> {
    let utf16 = |big_endian: bool, rest: &[u8]| -> Cow<'_, str> {
        let units = rest.chunks_exact(2).map(|pair| {
            let pair = [pair[0], pair[1]];
            if big_endian {
                u16::from_be_bytes(pair)
            } else {
                u16::from_le_bytes(pair)
            }
        });
        Cow::Owned(
            char::decode_utf16(units)
                .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect(),
        )
    };
    if let Some(rest) = bytes.strip_prefix(&[0xef, 0xbb, 0xbf]) {
        String::from_utf8_lossy(rest)
    } else if let Some(rest) = bytes.strip_prefix(&[0xff, 0xfe]) {
        utf16(false, rest)
    } else if let Some(rest) = bytes.strip_prefix(&[0xfe, 0xff]) {
        utf16(true, rest)
    } else {
        String::from_utf8_lossy(bytes)
    }
}

// ---------------------------------------------------------------------------
// Entry filtering
// ---------------------------------------------------------------------------

/// Validates locations and enforces the entry cap.
struct EntryFilter {
    host: Option<String>,
    max_urls: usize,
}

impl EntryFilter {
    fn new(location: &Url, max_urls: usize) -> Self {
        Self {
            host: location.host_str().map(str::to_owned),
            max_urls,
        }
    }

    /// Parses `loc` as an absolute http(s) URL on the sitemap's host.
    fn accept(&self, loc: &str) -> Option<Url> {
        let url = Url::parse(loc.trim()).ok()?;
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        let host = url.host_str()?;
        if let Some(own) = &self.host
            && !host.eq_ignore_ascii_case(own)
        {
            return None;
        }
        Some(url)
    }
}

// ---------------------------------------------------------------------------
// Plain-text sitemaps
// ---------------------------------------------------------------------------

fn parse_text(content: &str, filter: EntryFilter) -> Result<Sitemap, SitemapError> {
    let mut sitemap = Sitemap::new(SitemapKind::Text);
    let mut saw_url = false;
    for line in content.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if sitemap.urls.len() >= filter.max_urls {
            sitemap.skipped += 1;
            continue;
        }
        match filter.accept(line) {
            Some(url) => {
                saw_url = true;
                sitemap.urls.push(SitemapUrl::bare(url));
            }
            None => {
                saw_url |= Url::parse(line).is_ok_and(|u| u.has_host());
                sitemap.skipped += 1;
            }
        }
    }
    if saw_url {
        Ok(sitemap)
    } else {
        Err(SitemapError::NotASitemap(
            "plain-text body contains no absolute URL".to_owned(),
        ))
    }
}

// ---------------------------------------------------------------------------
// XML sitemaps
// ---------------------------------------------------------------------------

/// Child elements of an entry that carry a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Loc,
    LastMod,
    ChangeFreq,
    Priority,
}

impl Field {
    fn from_name(name: &str, kind: SitemapKind) -> Option<Self> {
        match (name, kind) {
            ("loc", _) => Some(Self::Loc),
            ("lastmod", _) => Some(Self::LastMod),
            ("changefreq", SitemapKind::UrlSet) => Some(Self::ChangeFreq),
            ("priority", SitemapKind::UrlSet) => Some(Self::Priority),
            _ => None,
        }
    }
}

/// The entry (`<url>` or `<sitemap>`) being read.
#[derive(Debug, Default)]
struct Entry {
    /// Element depth of the entry element.
    depth: usize,
    loc: Option<String>,
    lastmod: Option<String>,
    changefreq: Option<String>,
    priority: Option<String>,
    /// The field being read, with its element depth.
    field: Option<(Field, usize)>,
    /// Text collected for the current field.
    buf: String,
}

impl Entry {
    fn finish_field(&mut self) {
        if let Some((field, _)) = self.field.take() {
            let value = self.buf.trim();
            let slot = match field {
                Field::Loc => &mut self.loc,
                Field::LastMod => &mut self.lastmod,
                Field::ChangeFreq => &mut self.changefreq,
                Field::Priority => &mut self.priority,
            };
            // The first occurrence of a field wins.
            if slot.is_none() && !value.is_empty() {
                *slot = Some(value.to_owned());
            }
            self.buf.clear();
        }
    }
}

/// Streaming state of the XML parser.
struct XmlState {
    filter: EntryFilter,
    sitemap: Option<Sitemap>,
    depth: usize,
    entry: Option<Entry>,
}

impl XmlState {
    fn kind(&self) -> Option<SitemapKind> {
        self.sitemap.as_ref().map(|s| s.kind)
    }

    fn found_anything(&self) -> bool {
        self.sitemap
            .as_ref()
            .is_some_and(|s| !s.is_empty() || s.skipped > 0)
    }

    /// Handles a start tag (or an empty-element tag, with `empty` set).
    /// Returns `Err` with a message when the root is not a sitemap root.
    fn start(&mut self, local: &str, empty: bool) -> Result<(), String> {
        self.depth += 1;
        match self.kind() {
            None => {
                let kind = match local {
                    "urlset" => SitemapKind::UrlSet,
                    "sitemapindex" => SitemapKind::Index,
                    other => {
                        return Err(format!(
                            "root element <{other}> is neither <urlset> nor <sitemapindex>"
                        ));
                    }
                };
                self.sitemap = Some(Sitemap::new(kind));
            }
            Some(kind) => {
                let entry_name = match kind {
                    SitemapKind::Index => "sitemap",
                    _ => "url",
                };
                match &mut self.entry {
                    None if local == entry_name => {
                        self.entry = Some(Entry {
                            depth: self.depth,
                            ..Entry::default()
                        });
                    }
                    Some(entry) if entry.field.is_none() && self.depth == entry.depth + 1 => {
                        if let Some(field) = Field::from_name(local, kind) {
                            entry.buf.clear();
                            entry.field = Some((field, self.depth));
                        }
                    }
                    _ => {}
                }
            }
        }
        if empty {
            self.end();
        }
        Ok(())
    }

    fn end(&mut self) {
        if let Some(entry) = &mut self.entry {
            if entry.field.is_some_and(|(_, depth)| depth == self.depth) {
                entry.finish_field();
            } else if entry.depth == self.depth {
                self.finish_entry();
            }
        }
        self.depth = self.depth.saturating_sub(1);
    }

    fn text(&mut self, text: &str) {
        if let Some(entry) = &mut self.entry
            && entry.field.is_some()
        {
            entry.buf.push_str(text);
        }
    }

    fn general_ref(&mut self, reference: &BytesRef<'_>) {
        let Some(entry) = &mut self.entry else {
            return;
        };
        if entry.field.is_none() {
            return;
        }
        let name: &str = &reference.xml10_content();
        if let Ok(Some(c)) = reference.resolve_char_ref() {
            entry.buf.push(c);
        } else if let Some(value) = resolve_predefined_entity(name) {
            entry.buf.push_str(value);
        } else {
            // Unknown entity: keep it verbatim rather than losing text.
            entry.buf.push('&');
            entry.buf.push_str(name);
            entry.buf.push(';');
        }
    }

    /// Closes the current entry, keeping it if valid and under the cap.
    fn finish_entry(&mut self) {
        let Some(mut entry) = self.entry.take() else {
            return;
        };
        entry.finish_field();
        let Some(sitemap) = &mut self.sitemap else {
            return;
        };
        if sitemap.len() >= self.filter.max_urls {
            sitemap.skipped += 1;
            return;
        }
        let Some(url) = entry.loc.as_deref().and_then(|loc| self.filter.accept(loc)) else {
            sitemap.skipped += 1;
            return;
        };
        match sitemap.kind {
            SitemapKind::Index => sitemap.sitemaps.push(url),
            _ => sitemap.urls.push(SitemapUrl {
                url,
                lastmod: entry.lastmod,
                changefreq: entry.changefreq.and_then(normalize_changefreq),
                priority: entry.priority.as_deref().and_then(parse_priority),
            }),
        }
    }

    /// Keeps an entry cut short by the end of the input, if its location was complete.
    fn finish_truncated(&mut self) {
        if let Some(entry) = &mut self.entry {
            entry.field = None;
            entry.buf.clear();
            if entry.loc.is_some() {
                self.finish_entry();
            }
        }
    }
}

fn normalize_changefreq(value: String) -> Option<String> {
    let lower = value.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "always" | "hourly" | "daily" | "weekly" | "monthly" | "yearly" | "never"
    )
    .then_some(lower)
}

fn parse_priority(value: &str) -> Option<f32> {
    value
        .parse::<f32>()
        .ok()
        .filter(|p| (0.0..=1.0).contains(p))
}

fn parse_xml(
    content: &str,
    filter: EntryFilter,
    content_type: Option<&str>,
) -> Result<Sitemap, SitemapError> {
    let mut reader = Reader::from_str(content);
    reader.config_mut().allow_dangling_amp = true;
    let mut state = XmlState {
        filter,
        sitemap: None,
        depth: 0,
        entry: None,
    };
    loop {
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(e) => {
                state.finish_truncated();
                if state.found_anything() {
                    break;
                }
                return Err(SitemapError::NotASitemap(format!(
                    "malformed XML at byte {}: {e}",
                    reader.error_position()
                )));
            }
        };
        let outcome = match &event {
            Event::Start(e) => state.start(e.local_name().into_inner(), false),
            Event::Empty(e) => state.start(e.local_name().into_inner(), true),
            Event::End(_) => {
                state.end();
                Ok(())
            }
            Event::Text(t) => {
                state.text(&t.xml10_content());
                Ok(())
            }
            Event::CData(t) => {
                state.text(&t.xml10_content());
                Ok(())
            }
            Event::GeneralRef(r) => {
                state.general_ref(r);
                Ok(())
            }
            Event::Eof => {
                state.finish_truncated();
                break;
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => Ok(()),
        };
        if let Err(msg) = outcome {
            let msg = match content_type {
                Some(ct) => format!("{msg} (content type {ct})"),
                None => msg,
            };
            return Err(SitemapError::NotASitemap(msg));
        }
        if state.sitemap.is_some() && state.depth == 0 {
            // The root element is closed; ignore whatever follows.
            break;
        }
    }
    state
        .sitemap
        .ok_or_else(|| SitemapError::NotASitemap("XML document without a root element".to_owned()))
}

// ---------------------------------------------------------------------------
// Sniffing
// ---------------------------------------------------------------------------

/// Verdict of inspecting the start of a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sniff {
    Yes,
    No,
    Unknown,
}

fn sniff_body(body: &[u8]) -> Sniff {
    let prefix: Cow<'_, [u8]> = if is_gzip(body) {
        let mut out = Vec::new();
        // Errors (truncated or corrupt data) leave whatever was decompressed.
        let _ = MultiGzDecoder::new(body)
            .take(SNIFF_WINDOW as u64)
            .read_to_end(&mut out);
        if out.is_empty() {
            return Sniff::No;
        }
        Cow::Owned(out)
    } else {
        Cow::Borrowed(body.get(..SNIFF_WINDOW).unwrap_or(body))
    };
    let truncated = prefix.len() >= SNIFF_WINDOW;
    let text = to_text(&prefix);
    let text = text.trim_start();
    if text.is_empty() {
        return if truncated { Sniff::No } else { Sniff::Unknown };
    }
    if text.starts_with('<') {
        return match xml_root_name(text) {
            Some(name) => {
                let local = name.rsplit(':').next().unwrap_or(name);
                if local == "urlset" || local == "sitemapindex" {
                    Sniff::Yes
                } else {
                    Sniff::No
                }
            }
            None => Sniff::Unknown,
        };
    }
    let line = text.lines().next().unwrap_or_default().trim();
    match Url::parse(line) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Sniff::Yes,
        _ => Sniff::No,
    }
}

/// Name of the first element in `text`, skipping the XML declaration,
/// processing instructions, comments and a doctype. `None` when `text` ends
/// before an element starts.
fn xml_root_name(mut text: &str) -> Option<&str> {
    loop {
        text = text.trim_start();
        if let Some(rest) = text.strip_prefix("<?") {
            text = &rest[rest.find("?>")? + 2..];
        } else if let Some(rest) = text.strip_prefix("<!--") {
            text = &rest[rest.find("-->")? + 3..];
        } else if let Some(rest) = text.strip_prefix("<!") {
            // A doctype, possibly with an internal subset in brackets.
            let close = match (rest.find('['), rest.find('>')) {
                (Some(open), Some(gt)) if open < gt => open + rest[open..].find("]")?,
                _ => 0,
            };
            text = &rest[close + rest[close..].find('>')? + 1..];
        } else if let Some(rest) = text.strip_prefix('<') {
            let end = rest.find(|c: char| c.is_whitespace() || c == '>' || c == '/')?;
            return Some(&rest[..end]);
        } else {
            // Stray text before the root: skip to the next tag.
            text = &text[text.find('<')?..];
        }
    }
}

/// MIME type without parameters, lower-cased.
fn mime_essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

fn is_xml_type(content_type: &str) -> bool {
    matches!(
        mime_essence(content_type).as_str(),
        "application/xml" | "text/xml" | "application/x-xml"
    )
}

fn is_gzip_type(content_type: &str) -> bool {
    matches!(
        mime_essence(content_type).as_str(),
        "application/gzip"
            | "application/x-gzip"
            | "application/gzipped"
            | "application/gzip-compressed"
            | "application/x-gzip-compressed"
            | "application/x-gunzip"
            | "gzip/document"
    )
}

fn has_sitemap_path(location: &Url) -> bool {
    let path = location.path().to_ascii_lowercase();
    let file = path.rsplit('/').next().unwrap_or_default();
    path.ends_with(".xml")
        || path.ends_with(".xml.gz")
        || (file.starts_with("sitemap") && (file.ends_with(".txt") || file.ends_with(".txt.gz")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::GzEncoder;
    use std::io::Write;

    fn loc() -> Url {
        Url::parse("https://www.example.com/sitemap.xml").unwrap()
    }

    fn parse(body: &str) -> Result<Sitemap, SitemapError> {
        parse_sitemap(
            &loc(),
            Some("application/xml"),
            body.as_bytes(),
            &SitemapLimits::default(),
        )
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn urls(s: &Sitemap) -> Vec<&str> {
        s.urls.iter().map(|u| u.url.as_str()).collect()
    }

    const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url>
    <loc>https://www.example.com/</loc>
    <lastmod>2024-05-01T10:00:00+00:00</lastmod>
    <changefreq>Daily</changefreq>
    <priority>0.8</priority>
  </url>
  <url>
    <loc>
      https://www.example.com/about
    </loc>
  </url>
  <url>
    <loc>https://www.example.com/bad-values</loc>
    <changefreq>sometimes</changefreq>
    <priority>7</priority>
    <lastmod>  </lastmod>
  </url>
</urlset>"#;

    #[test]
    fn urlset_with_all_fields() {
        let s = parse(URLSET).unwrap();
        assert_eq!(s.kind, SitemapKind::UrlSet);
        assert_eq!(s.skipped, 0);
        assert!(s.sitemaps.is_empty());
        assert_eq!(
            s.urls[0],
            SitemapUrl {
                url: Url::parse("https://www.example.com/").unwrap(),
                lastmod: Some("2024-05-01T10:00:00+00:00".into()),
                changefreq: Some("daily".into()),
                priority: Some(0.8),
            }
        );
        assert_eq!(
            s.urls[1],
            SitemapUrl::bare(Url::parse("https://www.example.com/about").unwrap())
        );
        assert_eq!(
            s.urls[2],
            SitemapUrl::bare(Url::parse("https://www.example.com/bad-values").unwrap())
        );
    }

    #[test]
    fn sitemap_index() {
        let body = r#"<?xml version="1.0"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://www.example.com/s1.xml.gz</loc><lastmod>2024-01-01</lastmod></sitemap>
  <sitemap><loc>https://www.example.com/s2.xml</loc></sitemap>
  <sitemap><lastmod>2024-01-01</lastmod></sitemap>
</sitemapindex>"#;
        let s = parse(body).unwrap();
        assert_eq!(s.kind, SitemapKind::Index);
        assert!(s.urls.is_empty());
        let got: Vec<_> = s.sitemaps.iter().map(Url::as_str).collect();
        assert_eq!(
            got,
            [
                "https://www.example.com/s1.xml.gz",
                "https://www.example.com/s2.xml"
            ]
        );
        assert_eq!(s.skipped, 1, "entry without <loc>");
    }

    #[test]
    fn gzipped_urlset_detected_by_magic_bytes() {
        let body = gzip(URLSET.as_bytes());
        // No gzip content type, no .gz extension: magic bytes decide.
        let s = parse_sitemap(
            &loc(),
            Some("application/octet-stream"),
            &body,
            &SitemapLimits::default(),
        )
        .unwrap();
        assert_eq!(s.urls.len(), 3);
        assert_eq!(s.urls[0].priority, Some(0.8));
    }

    #[test]
    fn gzip_bomb_stops_at_cap() {
        // 200 MiB of zeros, compressed (about 200 KiB), built in memory.
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        let zeros = vec![0u8; 1024 * 1024];
        for _ in 0..200 {
            enc.write_all(&zeros).unwrap();
        }
        let bomb = enc.finish().unwrap();
        assert!(bomb.len() < 2 * 1024 * 1024);
        let limits = SitemapLimits {
            max_bytes: 1024 * 1024,
            ..SitemapLimits::default()
        };
        let err = parse_sitemap(&loc(), None, &bomb, &limits).unwrap_err();
        assert_eq!(err, SitemapError::TooLarge { limit: 1024 * 1024 });
        assert!(err.to_string().contains("1048576"));
    }

    #[test]
    fn multi_member_gzip_bomb_stops_at_cap() {
        let member = gzip(&vec![b' '; 64 * 1024]);
        let bomb: Vec<u8> = member
            .iter()
            .copied()
            .cycle()
            .take(member.len() * 100)
            .collect();
        let limits = SitemapLimits {
            max_bytes: 1024 * 1024,
            ..SitemapLimits::default()
        };
        let err = parse_sitemap(&loc(), None, &bomb, &limits).unwrap_err();
        assert_eq!(err, SitemapError::TooLarge { limit: 1024 * 1024 });
    }

    #[test]
    fn plain_body_over_cap_is_too_large() {
        let limits = SitemapLimits {
            max_bytes: 100,
            ..SitemapLimits::default()
        };
        let err = parse_sitemap(&loc(), None, URLSET.as_bytes(), &limits).unwrap_err();
        assert_eq!(err, SitemapError::TooLarge { limit: 100 });
        // Exactly at the cap is fine.
        let limits = SitemapLimits {
            max_bytes: URLSET.len(),
            ..SitemapLimits::default()
        };
        assert!(parse_sitemap(&loc(), None, URLSET.as_bytes(), &limits).is_ok());
        let gz = gzip(URLSET.as_bytes());
        assert!(parse_sitemap(&loc(), None, &gz, &limits).is_ok());
        let limits = SitemapLimits {
            max_bytes: URLSET.len() - 1,
            ..SitemapLimits::default()
        };
        assert!(matches!(
            parse_sitemap(&loc(), None, &gz, &limits),
            Err(SitemapError::TooLarge { .. })
        ));
    }

    #[test]
    fn corrupt_gzip_is_an_error() {
        let mut body = gzip(URLSET.as_bytes());
        body[3] = 0xff; // reserved header flags
        let err = parse_sitemap(&loc(), None, &body, &SitemapLimits::default()).unwrap_err();
        assert!(matches!(err, SitemapError::Compressed(_)), "{err:?}");
        assert!(err.to_string().contains("gzip"));
        let err = parse_sitemap(
            &loc(),
            None,
            &[0x1f, 0x8b, 1, 2, 3],
            &SitemapLimits::default(),
        )
        .unwrap_err();
        assert!(matches!(err, SitemapError::Compressed(_)), "{err:?}");
    }

    #[test]
    fn truncated_gzip_keeps_complete_entries() {
        let mut body = String::from("<urlset>");
        for i in 0..2000 {
            body.push_str(&format!(
                "<url><loc>https://www.example.com/p{i}</loc></url>"
            ));
        }
        body.push_str("</urlset>");
        let gz = gzip(body.as_bytes());
        let cut = &gz[..gz.len() / 2];
        let s = parse_sitemap(&loc(), None, cut, &SitemapLimits::default()).unwrap();
        assert!(
            !s.urls.is_empty() && s.urls.len() < 2000,
            "{}",
            s.urls.len()
        );
        assert_eq!(s.urls[0].url.as_str(), "https://www.example.com/p0");
    }

    #[test]
    fn text_sitemap() {
        let body = "https://www.example.com/a\r\n\n   \nhttps://www.example.com/b  \n\
                    not a url\n/relative\nhttps://other.example.org/x\nftp://www.example.com/f\n";
        let loc = Url::parse("https://www.example.com/sitemap.txt").unwrap();
        let s = parse_sitemap(
            &loc,
            Some("text/plain; charset=utf-8"),
            body.as_bytes(),
            &SitemapLimits::default(),
        )
        .unwrap();
        assert_eq!(s.kind, SitemapKind::Text);
        assert_eq!(
            urls(&s),
            ["https://www.example.com/a", "https://www.example.com/b"]
        );
        assert_eq!(s.skipped, 4);
        // Content type does not matter: a body not starting with '<' is text.
        let s2 = parse_sitemap(
            &loc,
            Some("application/xml"),
            body.as_bytes(),
            &SitemapLimits::default(),
        )
        .unwrap();
        assert_eq!(s2, s);
        // A text/plain body that is an XML sitemap is read as XML.
        let s3 = parse_sitemap(
            &loc,
            Some("text/plain"),
            URLSET.as_bytes(),
            &SitemapLimits::default(),
        )
        .unwrap();
        assert_eq!(s3.kind, SitemapKind::UrlSet);
    }

    #[test]
    fn text_without_urls_is_not_a_sitemap() {
        let err = parse("User-agent: *\nDisallow: /\n").unwrap_err();
        assert!(matches!(err, SitemapError::NotASitemap(_)), "{err:?}");
        let err = parse("   \n\t").unwrap_err();
        assert_eq!(err, SitemapError::NotASitemap("empty body".into()));
        assert!(parse("").is_err());
    }

    #[test]
    fn relative_invalid_and_other_host_locs_are_skipped() {
        let body = r#"<urlset>
  <url><loc>/relative/path</loc></url>
  <url><loc>page.html</loc></url>
  <url><loc>http://[broken</loc></url>
  <url><loc>mailto:someone@www.example.com</loc></url>
  <url><loc>ftp://www.example.com/file</loc></url>
  <url><loc>https://evil.example.net/</loc></url>
  <url><loc>https://example.com/</loc></url>
  <url><loc></loc></url>
  <url></url>
  <url/>
  <url><loc>http://WWW.Example.COM:8080/ok</loc></url>
</urlset>"#;
        let s = parse(body).unwrap();
        assert_eq!(urls(&s), ["http://www.example.com:8080/ok"]);
        assert_eq!(s.skipped, 10);
    }

    #[test]
    fn location_without_host_disables_host_rule() {
        let loc = Url::parse("file:///tmp/sitemap.xml").unwrap();
        let body = "<urlset><url><loc>https://a.example/</loc></url></urlset>";
        let s = parse_sitemap(&loc, None, body.as_bytes(), &SitemapLimits::default()).unwrap();
        assert_eq!(urls(&s), ["https://a.example/"]);
    }

    #[test]
    fn broken_xml_keeps_parsed_entries() {
        let body = "<urlset><url><loc>https://www.example.com/1</loc></url>\
                    <url><loc>https://www.example.com/2</loc></url>\
                    <url><loc>https://www.example.com/3</lo";
        let s = parse(body).unwrap();
        assert_eq!(
            urls(&s),
            ["https://www.example.com/1", "https://www.example.com/2"]
        );
        let body = "<urlset><url><loc>https://www.example.com/1</loc></url>\
                    <url><loc>https://www.example.com/2</loc></wrong></urlset>";
        let s = parse(body).unwrap();
        assert_eq!(
            urls(&s),
            ["https://www.example.com/1", "https://www.example.com/2"]
        );
        // Truncated right after a complete <loc>.
        let body = "<urlset><url><loc>https://www.example.com/1</loc>";
        let s = parse(body).unwrap();
        assert_eq!(urls(&s), ["https://www.example.com/1"]);
    }

    #[test]
    fn broken_xml_without_entries_is_not_a_sitemap() {
        let err = parse("<urlset><url><loc>https://www.example.com/1</wrong>").unwrap_err();
        match err {
            SitemapError::NotASitemap(msg) => assert!(msg.contains("malformed XML"), "{msg}"),
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(parse("<<<>>>"), Err(SitemapError::NotASitemap(_))));
    }

    #[test]
    fn other_roots_are_not_sitemaps() {
        for body in [
            "<html><body><a href='https://www.example.com/'>x</a></body></html>",
            r#"<?xml version="1.0"?><rss version="2.0"><channel><item><link>https://www.example.com/</link></item></channel></rss>"#,
            r#"<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="https://www.example.com/"/></entry></feed>"#,
            "<!-- only a comment -->",
        ] {
            let err = parse(body).unwrap_err();
            assert!(
                matches!(err, SitemapError::NotASitemap(_)),
                "{body}: {err:?}"
            );
        }
        let err = parse("<html></html>").unwrap_err();
        assert!(err.to_string().contains("<html>"), "{err}");
    }

    #[test]
    fn entities_and_cdata() {
        let body = r#"<urlset>
  <url><loc>https://www.example.com/q?a=1&amp;b=2</loc></url>
  <url><loc><![CDATA[https://www.example.com/q?c=3&d=4]]></loc></url>
  <url><loc>https://www.example.com/&#x41;&#66;&lt;</loc></url>
  <url><loc>  <![CDATA[ https://www.example.com/cdata-ws ]]>  </loc></url>
  <url><loc>https://www.example.com/q?e=5&f=6</loc></url>
</urlset>"#;
        let s = parse(body).unwrap();
        assert_eq!(
            urls(&s),
            [
                "https://www.example.com/q?a=1&b=2",
                "https://www.example.com/q?c=3&d=4",
                "https://www.example.com/AB%3C",
                "https://www.example.com/cdata-ws",
                "https://www.example.com/q?e=5&f=6",
            ]
        );
    }

    #[test]
    fn namespaces_and_prefixes() {
        let body = r#"<?xml version="1.0" encoding="UTF-8"?>
<?xml-stylesheet type="text/xsl" href="/sitemap.xsl"?>
<!DOCTYPE urlset>
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <!-- a comment -->
  <sm:url>
    <sm:loc>https://www.example.com/page</sm:loc>
    <image:image><image:loc>https://cdn.example.com/i.png</image:loc></image:image>
    <sm:priority>0.3</sm:priority>
  </sm:url>
  <sm:url>
    <image:image><image:loc>https://www.example.com/only-image.png</image:loc></image:image>
  </sm:url>
</sm:urlset>"#;
        let s = parse(body).unwrap();
        assert_eq!(urls(&s), ["https://www.example.com/page"]);
        assert_eq!(s.urls[0].priority, Some(0.3));
        assert_eq!(s.skipped, 1, "the image loc is not the entry's loc");
    }

    #[test]
    fn byte_order_marks() {
        let mut body = vec![0xef, 0xbb, 0xbf];
        body.extend_from_slice(
            b"\n  <urlset><url><loc>https://www.example.com/bom</loc></url></urlset>",
        );
        let s = parse_sitemap(&loc(), None, &body, &SitemapLimits::default()).unwrap();
        assert_eq!(urls(&s), ["https://www.example.com/bom"]);

        let mut text = vec![0xef, 0xbb, 0xbf];
        text.extend_from_slice(b"https://www.example.com/t\n");
        let s = parse_sitemap(&loc(), None, &text, &SitemapLimits::default()).unwrap();
        assert_eq!(s.kind, SitemapKind::Text);
        assert_eq!(urls(&s), ["https://www.example.com/t"]);

        let xml = "<urlset><url><loc>https://www.example.com/u16</loc></url></urlset>";
        let mut le = vec![0xff, 0xfe];
        le.extend(xml.encode_utf16().flat_map(u16::to_le_bytes));
        let mut be = vec![0xfe, 0xff];
        be.extend(xml.encode_utf16().flat_map(u16::to_be_bytes));
        for body in [le, be] {
            let s = parse_sitemap(&loc(), None, &body, &SitemapLimits::default()).unwrap();
            assert_eq!(urls(&s), ["https://www.example.com/u16"]);
        }
    }

    #[test]
    fn non_utf8_bytes_do_not_panic() {
        let mut body = b"<urlset><url><loc>https://www.example.com/caf".to_vec();
        body.extend_from_slice(&[0xe9, 0xff, 0xfe]);
        body.extend_from_slice(
            b"</loc></url><url><loc>https://www.example.com/ok</loc></url></urlset>",
        );
        let s = parse_sitemap(&loc(), None, &body, &SitemapLimits::default()).unwrap();
        assert_eq!(s.urls.len(), 2);
        assert_eq!(s.urls[1].url.as_str(), "https://www.example.com/ok");
        assert!(
            parse_sitemap(&loc(), None, &[0xff, 0x00, 0xc3], &SitemapLimits::default()).is_err()
        );
    }

    #[test]
    fn max_urls_cap() {
        let mut body = String::from("<urlset>");
        for i in 0..10 {
            body.push_str(&format!(
                "<url><loc>https://www.example.com/{i}</loc></url>"
            ));
        }
        body.push_str("<url><loc>https://elsewhere.example/</loc></url></urlset>");
        let limits = SitemapLimits {
            max_urls: 3,
            ..SitemapLimits::default()
        };
        let s = parse_sitemap(&loc(), None, body.as_bytes(), &limits).unwrap();
        assert_eq!(
            urls(&s),
            [
                "https://www.example.com/0",
                "https://www.example.com/1",
                "https://www.example.com/2"
            ]
        );
        assert_eq!(s.skipped, 8);

        let text: String = (0..10)
            .map(|i| format!("https://www.example.com/{i}\n"))
            .collect();
        let s = parse_sitemap(&loc(), None, text.as_bytes(), &limits).unwrap();
        assert_eq!(s.urls.len(), 3);
        assert_eq!(s.skipped, 7);
    }

    #[test]
    fn empty_urlset_is_a_valid_sitemap() {
        let s = parse("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"/>").unwrap();
        assert_eq!(s.kind, SitemapKind::UrlSet);
        assert!(s.is_empty());
        let s = parse("<sitemapindex></sitemapindex> trailing <junk>").unwrap();
        assert_eq!(s.kind, SitemapKind::Index);
        assert!(s.is_empty());
    }

    #[test]
    fn limits_default() {
        let l = SitemapLimits::default();
        assert_eq!(l.max_bytes, 50 * 1024 * 1024);
        assert_eq!(l.max_urls, 50_000);
    }

    #[test]
    fn looks_like_sitemap_by_body() {
        let any = Url::parse("https://www.example.com/whatever").unwrap();
        assert!(looks_like_sitemap(&any, None, URLSET.as_bytes()));
        assert!(looks_like_sitemap(
            &any,
            Some("text/html"),
            b"\xef\xbb\xbf<?xml version='1.0'?>\n<!-- generated -->\n<!DOCTYPE x [<!ENTITY a 'b'>]>\n<sitemapindex>"
        ));
        assert!(looks_like_sitemap(&any, None, b"<sm:urlset xmlns:sm='x'>"));
        assert!(looks_like_sitemap(&any, None, &gzip(URLSET.as_bytes())));
        assert!(looks_like_sitemap(
            &any,
            None,
            b"https://www.example.com/a\nhttps://www.example.com/b"
        ));

        // Body says no, whatever the metadata.
        let xml_loc = Url::parse("https://www.example.com/feed.xml").unwrap();
        assert!(!looks_like_sitemap(
            &xml_loc,
            Some("application/xml"),
            b"<rss version='2.0'>"
        ));
        assert!(!looks_like_sitemap(
            &xml_loc,
            Some("text/xml"),
            b"<!DOCTYPE html><html>"
        ));
        assert!(!looks_like_sitemap(
            &any,
            Some("text/plain"),
            b"User-agent: *\nDisallow:"
        ));
        assert!(!looks_like_sitemap(&any, None, &[0x1f, 0x8b, 0, 0]));
        assert!(!looks_like_sitemap(
            &any,
            Some("application/xml"),
            &[b' '; 2 * SNIFF_WINDOW]
        ));
    }

    #[test]
    fn looks_like_sitemap_by_metadata() {
        let u = |s: &str| Url::parse(s).unwrap();
        // Empty body: decided by content type and URL.
        assert!(looks_like_sitemap(
            &u("https://e.com/x"),
            Some("application/xml; charset=UTF-8"),
            b""
        ));
        assert!(looks_like_sitemap(
            &u("https://e.com/x"),
            Some("Text/XML"),
            b""
        ));
        assert!(looks_like_sitemap(
            &u("https://e.com/x"),
            Some("application/x-gzip"),
            b""
        ));
        assert!(looks_like_sitemap(
            &u("https://e.com/sitemap.xml"),
            None,
            b""
        ));
        assert!(looks_like_sitemap(
            &u("https://e.com/a/b.XML.gz?x=1"),
            None,
            b""
        ));
        assert!(looks_like_sitemap(
            &u("https://e.com/sitemap-2.txt"),
            Some("text/plain"),
            b""
        ));
        assert!(looks_like_sitemap(
            &u("https://e.com/sitemap_en.txt.gz"),
            None,
            b""
        ));
        assert!(!looks_like_sitemap(
            &u("https://e.com/robots.txt"),
            Some("text/plain"),
            b""
        ));
        assert!(!looks_like_sitemap(
            &u("https://e.com/page.html"),
            Some("text/html"),
            b""
        ));
        assert!(!looks_like_sitemap(&u("https://e.com/"), None, b""));
        // Root element beyond the sniff window: metadata decides.
        let mut long = b"<!--".to_vec();
        long.extend(vec![b'x'; SNIFF_WINDOW]);
        long.extend_from_slice(b"--><urlset>");
        assert!(looks_like_sitemap(&u("https://e.com/s.xml"), None, &long));
        assert!(!looks_like_sitemap(&u("https://e.com/s"), None, &long));
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn never_panics_on_arbitrary_bytes(
                body in proptest::collection::vec(any::<u8>(), 0..512),
                max_urls in 0usize..5,
            ) {
                let limits = SitemapLimits { max_bytes: 4096, max_urls };
                if let Ok(s) = parse_sitemap(&loc(), None, &body, &limits) {
                    prop_assert!(s.len() <= max_urls);
                }
                let _ = looks_like_sitemap(&loc(), None, &body);
            }

            #[test]
            fn never_panics_on_xmlish_input(body in "[<>/a-z:&;#x0-9 \\[\\]!?-]{0,200}") {
                let wrapped = format!("<urlset><url><loc>{body}");
                let _ = parse(&wrapped);
                let _ = parse(&body);
                let _ = looks_like_sitemap(&loc(), None, body.as_bytes());
            }

            #[test]
            fn round_trips_generated_urlsets(
                paths in proptest::collection::vec("[a-zA-Z0-9_.~-]{0,20}", 0..30),
                compress in any::<bool>(),
            ) {
                let mut body = String::from(
                    "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">",
                );
                for p in &paths {
                    body.push_str(&format!("<url><loc> https://www.example.com/{p}?a=1&amp;b=2 </loc></url>"));
                }
                body.push_str("</urlset>");
                let bytes = if compress { gzip(body.as_bytes()) } else { body.into_bytes() };
                let s = parse_sitemap(&loc(), None, &bytes, &SitemapLimits::default()).unwrap();
                let want: Vec<String> = paths
                    .iter()
                    .map(|p| Url::parse(&format!("https://www.example.com/{p}?a=1&b=2")).unwrap().to_string())
                    .collect();
                let got: Vec<String> = s.urls.iter().map(|u| u.url.to_string()).collect();
                prop_assert_eq!(got, want);
                prop_assert_eq!(s.skipped, 0);
            }
        }
    }
}
