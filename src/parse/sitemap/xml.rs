//! XML sitemaps (`<urlset>` and `<sitemapindex>`), read with a streaming parser: a small state
//! machine follows the element depth and collects each entry's fields; no DOM is built.

use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesRef, Event};
use quick_xml::reader::Reader;

use super::entries::EntryFilter;
use super::{Sitemap, SitemapError, SitemapKind, SitemapUrl};

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
    fn new(filter: EntryFilter) -> Self {
        Self {
            filter,
            sitemap: None,
            depth: 0,
            entry: None,
        }
    }

    /// Handles one parse event other than the end of input. Returns `Err` with a message when
    /// the root is not a sitemap root.
    fn event(&mut self, event: &Event<'_>) -> Result<(), String> {
        match event {
            Event::Start(e) => return self.start(e.local_name().into_inner(), false),
            Event::Empty(e) => return self.start(e.local_name().into_inner(), true),
            Event::End(_) => self.end(),
            Event::Text(t) => self.text(&t.xml10_content()),
            Event::CData(t) => self.text(&t.xml10_content()),
            Event::GeneralRef(r) => self.general_ref(r),
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) | Event::Eof => {}
        }
        Ok(())
    }

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

/// Reads an XML sitemap. Malformed XML keeps the entries read before the error; it is only an
/// error when nothing was found.
pub(super) fn parse_xml(
    content: &str,
    filter: EntryFilter,
    content_type: Option<&str>,
) -> Result<Sitemap, SitemapError> {
    let mut reader = Reader::from_str(content);
    reader.config_mut().allow_dangling_amp = true;
    let mut state = XmlState::new(filter);
    loop {
        let event = match reader.read_event() {
            Ok(Event::Eof) => {
                state.finish_truncated();
                break;
            }
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
        if let Err(msg) = state.event(&event) {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use url::Url;

    use crate::parse::sitemap::test_support::{URLSET, parse, urls};
    use crate::parse::sitemap::{SitemapError, SitemapKind, SitemapUrl};

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
    fn empty_urlset_is_a_valid_sitemap() {
        let s = parse("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"/>").unwrap();
        assert_eq!(s.kind, SitemapKind::UrlSet);
        assert!(s.is_empty());
        let s = parse("<sitemapindex></sitemapindex> trailing <junk>").unwrap();
        assert_eq!(s.kind, SitemapKind::Index);
        assert!(s.is_empty());
    }
}
