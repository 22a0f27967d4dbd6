//! Streaming extraction of links, base href, title and robots directives from HTML.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::LazyLock;

use lol_html::html_content::{Element, TextChunk};
use lol_html::{
    AsciiCompatibleEncoding, ElementContentHandlers, HtmlRewriter, MemorySettings, Selector,
    Settings,
};

use super::attributes::{attribute_values, decoded, push_decoded};
use super::directives::RobotsDirectives;
use super::tags::{Opened, Tag};

/// A link as written on a page, before resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawLink {
    /// The `href`/`src` value, entities decoded.
    pub href: String,
    /// Whether the link carries `rel="nofollow"`.
    pub nofollow: bool,
    /// Which element it came from (`a`, `area`, `link`, `frame`, `iframe`).
    pub element: &'static str,
}

/// What the extractor found on a page; its links are a `Vec` of [`RawLink`]s, or (for the parser
/// bolt) a list of its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtractedPage<Links = Vec<RawLink>> {
    /// Links in document order.
    pub links: Links,
    /// The first `<base href>`.
    pub base: Option<String>,
    /// The `<title>` text.
    pub title: Option<String>,
    /// The `<link rel="canonical">` target.
    pub canonical: Option<String>,
    /// `<meta name="robots">` says noindex.
    pub noindex: bool,
    /// `<meta name="robots">` says nofollow.
    pub nofollow: bool,
    /// Visible text (outside `script` and `style`), when asked for, up to the requested length.
    pub text: Option<String>,
    /// The HTML parser stopped on an internal failure (a panic inside it, as lol_html's debug
    /// assertions give on some hostile markup), with its message: what is above was found before
    /// it. The parser stage gives such a page an error status.
    pub failure: Option<String>,
}

/// A page's links in document order, their hrefs (entities decoded) held in one buffer rather than
/// one string each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LinkList {
    hrefs: String,
    links: Vec<LinkEnd>,
}

/// Where a link's href ends in [`LinkList::hrefs`] (it starts where the one before ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LinkEnd {
    end: usize,
    nofollow: bool,
    element: &'static str,
}

/// One link of a [`LinkList`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Link<'a> {
    /// The `href`/`src` value, entities decoded.
    pub href: &'a str,
    /// Whether the link carries `rel="nofollow"`.
    pub nofollow: bool,
    /// Which element it came from.
    pub element: &'static str,
}

impl LinkList {
    /// Adds a link whose raw (not yet decoded) `href` was read from `element`; returns its
    /// decoded href.
    fn push(&mut self, href: &str, nofollow: bool, element: &'static str) -> &str {
        let start = self.hrefs.len();
        push_decoded(&mut self.hrefs, href);
        let end = self.hrefs.len();
        self.links.push(LinkEnd {
            end,
            nofollow,
            element,
        });
        &self.hrefs[start..end]
    }

    /// How many links there are.
    pub(crate) fn len(&self) -> usize {
        self.links.len()
    }

    /// The links, in document order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Link<'_>> {
        let mut start = 0;
        self.links.iter().map(move |link| {
            let href = self.hrefs.get(start..link.end).unwrap_or_default();
            start = link.end;
            Link {
                href,
                nofollow: link.nofollow,
                element: link.element,
            }
        })
    }
}

/// What the extractor found on a page, as the parser bolt reads it: its links in a [`LinkList`].
pub(crate) type Extraction = ExtractedPage<LinkList>;

impl From<Extraction> for ExtractedPage {
    fn from(found: Extraction) -> Self {
        let links = found
            .links
            .iter()
            .map(|link| RawLink {
                href: link.href.to_string(),
                nofollow: link.nofollow,
                element: link.element,
            })
            .collect();
        ExtractedPage {
            links,
            base: found.base,
            title: found.title,
            canonical: found.canonical,
            noindex: found.noindex,
            nofollow: found.nofollow,
            text: found.text,
            failure: found.failure,
        }
    }
}

/// Memory a single page's parse may use; a hostile page fails instead of exhausting memory.
const MAX_PARSER_MEMORY: usize = 16 * 1024 * 1024;

/// The most `<noscript>` markup kept from one page for its second parse.
const MAX_NOSCRIPT_BYTES: usize = 1024 * 1024;

/// Raw `<title>` text stops being collected once this much is held.
const MAX_TITLE_BYTES: usize = 4096;

/// Extracts links and directives from `html`, decoded as `charset` (an encoding label; UTF-8 when
/// unknown or unusable). `<meta charset>` in the page switches the decoding as browsers do.
pub fn extract(html: &[u8], charset: Option<&str>) -> ExtractedPage {
    extract_with_text(html, charset, 0)
}

/// Like [`extract`], also collecting up to `max_text_bytes` of visible text (0: none).
///
/// What a `<noscript>` element holds counts as markup: a crawler runs no script, so its links
/// (frames included) and text are what such a client sees. The HTML tokenizer reads it as raw text;
/// it is parsed a second time, as a fragment, when the element closes.
pub fn extract_with_text(
    html: &[u8],
    charset: Option<&str>,
    max_text_bytes: usize,
) -> ExtractedPage {
    extraction(html, charset, max_text_bytes).into()
}

/// [`extract_with_text`] in the form the parser bolt reads.
pub(crate) fn extraction(html: &[u8], charset: Option<&str>, max_text_bytes: usize) -> Extraction {
    let encoding = charset
        .and_then(|label| encoding_rs::Encoding::for_label(label.trim().as_bytes()))
        .and_then(AsciiCompatibleEncoding::new)
        .unwrap_or_else(AsciiCompatibleEncoding::utf_8);
    let found = Rc::new(Found::new(max_text_bytes));
    run(html, encoding, &found, Part::Document);
    found.finish()
}

/// Which part of a page a parse reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The whole document.
    Document,
    /// The markup of a `<noscript>` element: links and text only.
    Noscript,
}

/// What one page's parses collect.
struct Found {
    page: RefCell<Extraction>,
    title: RefCell<String>,
    text: RefCell<String>,
    max_text_bytes: usize,
    /// Depth of `script`, `style`, `noscript` and `template` elements around the current text.
    hidden_depth: Cell<usize>,
    /// The raw markup of the `<noscript>` element being read.
    noscript: RefCell<String>,
}

impl Found {
    fn new(max_text_bytes: usize) -> Self {
        Found {
            page: RefCell::new(Extraction::default()),
            title: RefCell::new(String::new()),
            text: RefCell::new(String::new()),
            max_text_bytes,
            hidden_depth: Cell::new(0),
            noscript: RefCell::new(String::new()),
        }
    }

    /// Adds the link of element `name` whose target (raw) is `href` and whose `rel` is `rel`.
    fn add_link(&self, name: &'static str, href: &str, rel: &str) {
        let mut page = self.page.borrow_mut();
        let has_rel = |wanted: &str| {
            rel.split_ascii_whitespace()
                .any(|r| r.eq_ignore_ascii_case(wanted))
        };
        let mut canonical = false;
        if name == "link" {
            canonical = has_rel("canonical") && page.canonical.is_none();
            // Only links that lead to other pages; stylesheets, icons etc. are not crawled.
            if !has_rel("canonical") && !has_rel("alternate") {
                return;
            }
        }
        let href = page.links.push(href, has_rel("nofollow"), name);
        if canonical {
            let href = href.to_string();
            page.canonical = Some(href);
        }
    }

    fn add_robots_directives(&self, content: &str) {
        let mut page = self.page.borrow_mut();
        let mut directives = RobotsDirectives::default();
        directives.add(content);
        page.noindex |= directives.noindex;
        page.nofollow |= directives.nofollow;
    }

    fn add_text(&self, piece: &str) {
        let piece = piece.trim();
        let mut text = self.text.borrow_mut();
        if self.hidden_depth.get() > 0 || piece.is_empty() || text.len() >= self.max_text_bytes {
            return;
        }
        if !text.is_empty() && !text.ends_with(' ') {
            text.push(' ');
        }
        text.push_str(piece);
    }

    /// Parses the `<noscript>` markup just read, adding its links and text where it stood.
    fn parse_noscript(self: &Rc<Self>) {
        let markup = self.noscript.take();
        if markup.trim().is_empty() {
            return;
        }
        // A fragment has no <body>: give it one, so that its text counts as visible.
        let fragment = format!("<body>{markup}</body>");
        // Visible unless something around the <noscript> (a template) hides it: the element's own
        // share of the depth is lifted while its markup is read.
        let hidden = self.hidden_depth.get();
        self.hidden_depth.set(hidden.saturating_sub(1));
        run(
            fragment.as_bytes(),
            AsciiCompatibleEncoding::utf_8(),
            self,
            Part::Noscript,
        );
        self.hidden_depth.set(hidden);
    }

    fn finish(&self) -> Extraction {
        let mut page = self.page.take();
        let title = decoded(&self.title.take());
        if !title.is_empty() {
            page.title = Some(title);
        }
        if self.max_text_bytes > 0 {
            let mut text = decoded(&self.text.take());
            if text.len() > self.max_text_bytes {
                let mut cut = self.max_text_bytes;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
            }
            page.text = Some(text);
        }
        page
    }
}

/// The selectors of the extractor's handlers, parsed once.
struct Selectors {
    links: [(Selector, Tag, &'static str); 5],
    base: Selector,
    meta: Selector,
    title: Selector,
    noscript: Selector,
    hidden: Selector,
    body: Selector,
}

static SELECTORS: LazyLock<Selectors> = LazyLock::new(|| Selectors {
    links: [
        (selector("a[href]"), Tag::A, "href"),
        (selector("area[href]"), Tag::Area, "href"),
        (selector("link[href]"), Tag::Link, "href"),
        (selector("frame[src]"), Tag::Frame, "src"),
        (selector("iframe[src]"), Tag::Iframe, "src"),
    ],
    base: selector("base[href]"),
    meta: selector("meta[name]"),
    title: selector("title"),
    noscript: selector("noscript"),
    hidden: selector("script, style, noscript, template"),
    body: selector("body"),
});

/// A selector written in this file.
fn selector(source: &str) -> Selector {
    match source.parse() {
        Ok(selector) => selector,
        Err(error) => panic!("the extractor's selector {source:?} does not parse: {error}"),
    }
}

/// One streaming parse of `html` into `found`.
///
/// Only the elements `html` may hold get a handler: lol_html's work on every element grows with
/// the handlers it has to match.
fn run(html: &[u8], encoding: AsciiCompatibleEncoding, found: &Rc<Found>, part: Part) {
    let opened = Opened::scan(html);
    let mut handlers = link_handlers(found, html, opened);
    if part == Part::Document {
        handlers.extend(head_handlers(found, html, opened));
        if opened.has(Tag::Noscript) {
            handlers.push(noscript_handlers(found));
        }
    }
    if found.max_text_bytes > 0 {
        handlers.extend(text_handlers(found));
    }
    let settings = Settings::new()
        .with_encoding(encoding)
        .with_adjust_charset_on_meta_tag(part == Part::Document)
        .with_memory_settings(
            MemorySettings::new()
                .with_max_allowed_memory_usage(MAX_PARSER_MEMORY)
                .with_graceful_bail_out_on_memory_limit_exceeded(true),
        );
    let settings = handlers
        .into_iter()
        .fold(settings, Settings::append_element_content_handler);
    // A parse error (broken markup, memory cap) keeps what was found up to that point. So does
    // a panic inside the parser: lol_html checks its own state with debug assertions that hostile
    // markup trips, and a crate that depends on squall builds lol_html with them in its debug
    // profile; one page must not end the crawl (its links found so far are kept).
    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        let _ = rewriter.write(html).and_then(|()| rewriter.end());
    }));
    if let Err(payload) = parsed {
        let message = crate::error_text::panic_message(payload.as_ref());
        tracing::warn!(
            bytes = html.len(),
            "the HTML parser failed on this page ({message}); the links found before it are kept"
        );
        if let Ok(mut page) = found.page.try_borrow_mut() {
            page.failure = Some(format!("the HTML parser failed: {message}"));
        }
    }
}

type Handler<'h> = (Cow<'static, Selector>, ElementContentHandlers<'h>);

/// `a`, `area` and `link` with an `href`, `frame` and `iframe` with a `src`, those of them that
/// `html` may open. The handlers read attributes in `html`, the input of the parse they serve.
fn link_handlers<'h>(found: &'h Found, html: &'h [u8], opened: Opened) -> Vec<Handler<'h>> {
    let mut handlers = Vec::with_capacity(12);
    for (selector, tag, attribute) in &SELECTORS.links {
        if !opened.has(*tag) {
            continue;
        }
        let (name, attribute) = (tag.name(), *attribute);
        let handler = move |el: &mut Element<'_, '_>| {
            if let [Some(target), rel] = attribute_values(el, html, [attribute, "rel"]) {
                found.add_link(name, &target, rel.as_deref().unwrap_or_default());
            }
            Ok(())
        };
        let handlers_of_element = ElementContentHandlers::default().element(handler);
        handlers.push((Cow::Borrowed(selector), handlers_of_element));
    }
    handlers
}

/// `<base href>`, `<meta name="robots">` and `<title>`, those of them that `html` may open.
fn head_handlers<'h>(found: &'h Found, html: &'h [u8], opened: Opened) -> Vec<Handler<'h>> {
    let base = move |el: &mut Element<'_, '_>| {
        let mut page = found.page.borrow_mut();
        if page.base.is_none()
            && let [Some(href)] = attribute_values(el, html, ["href"])
        {
            page.base = Some(decoded(&href));
        }
        Ok(())
    };
    let meta = move |el: &mut Element<'_, '_>| {
        if let [Some(name), content] = attribute_values(el, html, ["name", "content"])
            && name.eq_ignore_ascii_case("robots")
        {
            found.add_robots_directives(content.as_deref().unwrap_or_default());
        }
        Ok(())
    };
    let title = move |chunk: &mut TextChunk<'_>| {
        push_capped(&found.title, chunk.as_str(), MAX_TITLE_BYTES);
        Ok(())
    };
    let selectors = &*SELECTORS;
    let mut handlers = Vec::with_capacity(3);
    if opened.has(Tag::Base) {
        let base = ElementContentHandlers::default().element(base);
        handlers.push((Cow::Borrowed(&selectors.base), base));
    }
    if opened.has(Tag::Meta) {
        let meta = ElementContentHandlers::default().element(meta);
        handlers.push((Cow::Borrowed(&selectors.meta), meta));
    }
    if opened.has(Tag::Title) {
        let title = ElementContentHandlers::default().text(title);
        handlers.push((Cow::Borrowed(&selectors.title), title));
    }
    handlers
}

/// Collects each `<noscript>` element's raw markup and parses it when the element closes.
fn noscript_handlers<'h>(found: &'h Rc<Found>) -> Handler<'h> {
    let on_element = move |el: &mut Element<'_, '_>| {
        found.noscript.borrow_mut().clear();
        on_end_tag(el, found, Found::parse_noscript);
        Ok(())
    };
    let on_text = move |chunk: &mut TextChunk<'_>| {
        push_capped(&found.noscript, chunk.as_str(), MAX_NOSCRIPT_BYTES);
        Ok(())
    };
    let handlers = ElementContentHandlers::default()
        .element(on_element)
        .text(on_text);
    (Cow::Borrowed(&SELECTORS.noscript), handlers)
}

/// Visible text: what `body` holds outside `script`, `style`, `noscript` (read as markup on its
/// own) and `template`.
fn text_handlers<'h>(found: &'h Rc<Found>) -> [Handler<'h>; 2] {
    let hidden = move |el: &mut Element<'_, '_>| {
        found.hidden_depth.set(found.hidden_depth.get() + 1);
        on_end_tag(el, found, |found| {
            let depth = &found.hidden_depth;
            depth.set(depth.get().saturating_sub(1));
        });
        Ok(())
    };
    let text = move |chunk: &mut TextChunk<'_>| {
        found.add_text(chunk.as_str());
        Ok(())
    };
    let selectors = &*SELECTORS;
    [
        (
            Cow::Borrowed(&selectors.hidden),
            ElementContentHandlers::default().element(hidden),
        ),
        (
            Cow::Borrowed(&selectors.body),
            ElementContentHandlers::default().text(text),
        ),
    ]
}

/// Appends `piece` to `buf` unless `buf` already holds `cap` bytes or more.
fn push_capped(buf: &RefCell<String>, piece: &str, cap: usize) {
    let mut buf = buf.borrow_mut();
    if buf.len() < cap {
        buf.push_str(piece);
    }
}

/// Has `on_end` called with `found` when the element `el` closes.
fn on_end_tag(
    el: &mut Element<'_, '_>,
    found: &Rc<Found>,
    on_end: impl FnOnce(&Rc<Found>) + 'static,
) {
    let found = Rc::clone(found);
    let handler: lol_html::EndTagHandler<'static> = Box::new(move |_end| {
        on_end(&found);
        Ok(())
    });
    if let Some(handlers) = el.end_tag_handlers() {
        handlers.push(handler);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_links_base_title_and_directives() {
        let html = br#"<html><head><title>A &amp; B</title><base href="/dir/">
            <link rel="canonical" href="https://x.test/c"><link rel="stylesheet" href="s.css">
            <meta name="robots" content="NOINDEX, follow"></head>
            <body><a href="a.html?x=1&amp;y=2">a</a> <a rel="nofollow ugc" href="/n">n</a>
            <map><area href="/area"></map><iframe src="/frame"></iframe><a>no href</a></body></html>"#;
        let page = extract(html, None);
        assert_eq!(page.title.as_deref(), Some("A & B"));
        assert_eq!(page.base.as_deref(), Some("/dir/"));
        assert_eq!(page.canonical.as_deref(), Some("https://x.test/c"));
        assert!(page.noindex);
        assert!(!page.nofollow);
        let hrefs: Vec<(&str, bool)> = page
            .links
            .iter()
            .map(|l| (l.href.as_str(), l.nofollow))
            .collect();
        assert_eq!(
            hrefs,
            [
                ("https://x.test/c", false),
                ("a.html?x=1&y=2", false),
                ("/n", true),
                ("/area", false),
                ("/frame", false)
            ]
        );
    }

    #[test]
    fn visible_text_skips_scripts_and_styles() {
        let html = b"<html><head><title>T</title><style>p{}</style></head><body><h1>Hello</h1>\
            <script>var x = '<a href=/no>';</script><p>world &amp; more</p></body></html>";
        let page = extract_with_text(html, None, 100);
        assert_eq!(page.text.as_deref(), Some("Hello world & more"));
        assert!(
            page.links.is_empty(),
            "a link inside a script is not a link"
        );
        assert_eq!(
            extract_with_text(html, None, 3).text.as_deref(),
            Some("Hel")
        );
        assert_eq!(extract(html, None).text, None);
    }

    #[test]
    fn survives_broken_markup_and_other_charsets() {
        let page = extract(b"<a href='/x'>x<a href=\"/y\"<<<>></div></table>", None);
        assert_eq!(page.links.first().map(|l| l.href.as_str()), Some("/x"));
        let latin1 = b"<title>caf\xe9</title><a href='/caf\xe9'>";
        let page = extract(latin1, Some("iso-8859-1"));
        assert_eq!(page.title.as_deref(), Some("caf\u{e9}"));
        assert_eq!(page.links[0].href, "/caf\u{e9}");
    }

    #[test]
    fn noscript_content_is_read_as_markup() {
        let html = br#"<html><head><title>Book</title>
            <noscript><link rel="alternate" href="/feed"></noscript></head>
            <body><p>before</p><noscript><iframe src="toc.html"></iframe>
            <p>Enable <b>JavaScript</b> &amp; <a href="/plain">read on</a></p></noscript>
            <a href="/after">after</a></body></html>"#;
        let page = extract_with_text(html, None, 200);
        let hrefs: Vec<(&str, &str)> = page
            .links
            .iter()
            .map(|l| (l.href.as_str(), l.element))
            .collect();
        assert_eq!(
            hrefs,
            [
                ("/feed", "link"),
                ("toc.html", "iframe"),
                ("/plain", "a"),
                ("/after", "a")
            ]
        );
        assert_eq!(
            page.text.as_deref(),
            Some("before Enable JavaScript & read on after")
        );
        assert_eq!(page.title.as_deref(), Some("Book"));
    }

    #[test]
    fn noscript_inside_a_template_stays_hidden() {
        let html = b"<body><template><noscript><p>hidden</p><a href=/t>t</a></noscript></template>\
            <p>shown</p></body>";
        let page = extract_with_text(html, None, 100);
        assert_eq!(page.text.as_deref(), Some("shown"));
    }
}
