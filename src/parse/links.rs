//! Streaming extraction of links, base href, title and robots directives from HTML.

use std::cell::RefCell;
use std::rc::Rc;

use lol_html::html_content::{Element, TextChunk};
use lol_html::{AsciiCompatibleEncoding, HtmlRewriter, MemorySettings, Settings, element, text};

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

/// What the extractor found on a page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtractedPage {
    /// Links in document order.
    pub links: Vec<RawLink>,
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
}

/// Memory a single page's parse may use; a hostile page fails instead of exhausting memory.
const MAX_PARSER_MEMORY: usize = 16 * 1024 * 1024;

/// Extracts links and directives from `html`, decoded as `charset` (an encoding label; UTF-8 when
/// unknown or unusable). `<meta charset>` in the page switches the decoding as browsers do.
pub fn extract(html: &[u8], charset: Option<&str>) -> ExtractedPage {
    extract_with_text(html, charset, 0)
}

/// Like [`extract`], also collecting up to `max_text_bytes` of visible text (0: none).
pub fn extract_with_text(
    html: &[u8],
    charset: Option<&str>,
    max_text_bytes: usize,
) -> ExtractedPage {
    let found = Rc::new(RefCell::new(ExtractedPage::default()));
    let title = Rc::new(RefCell::new(String::new()));
    let text = Rc::new(RefCell::new(String::new()));
    let hidden_depth = Rc::new(RefCell::new(0usize));
    let encoding = charset
        .and_then(|label| encoding_rs::Encoding::for_label(label.trim().as_bytes()))
        .and_then(AsciiCompatibleEncoding::new)
        .unwrap_or_else(AsciiCompatibleEncoding::utf_8);

    let link_handler = |name: &'static str, attribute: &'static str| {
        let found = Rc::clone(&found);
        move |el: &mut Element<'_, '_>| {
            if let Some(href) = el.get_attribute(attribute) {
                let rel = el
                    .get_attribute("rel")
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                let href = decode_owned(href);
                let mut page = found.borrow_mut();
                if name == "link" {
                    let rels: Vec<&str> = rel.split_ascii_whitespace().collect();
                    if rels.contains(&"canonical") && page.canonical.is_none() {
                        page.canonical = Some(href.clone());
                    }
                    // Only links that lead to other pages; stylesheets, icons etc. are not crawled.
                    if !rels.iter().any(|r| matches!(*r, "canonical" | "alternate")) {
                        return Ok(());
                    }
                }
                page.links.push(RawLink {
                    href,
                    nofollow: rel.split_ascii_whitespace().any(|r| r == "nofollow"),
                    element: name,
                });
            }
            Ok(())
        }
    };
    let base_found = Rc::clone(&found);
    let meta_found = Rc::clone(&found);
    let title_text = Rc::clone(&title);
    let settings = Settings::new()
        .with_encoding(encoding)
        .with_adjust_charset_on_meta_tag(true)
        .with_memory_settings(
            MemorySettings::new()
                .with_max_allowed_memory_usage(MAX_PARSER_MEMORY)
                .with_graceful_bail_out_on_memory_limit_exceeded(true),
        )
        .append_element_content_handler(element!("a[href]", link_handler("a", "href")))
        .append_element_content_handler(element!("area[href]", link_handler("area", "href")))
        .append_element_content_handler(element!("link[href]", link_handler("link", "href")))
        .append_element_content_handler(element!("frame[src]", link_handler("frame", "src")))
        .append_element_content_handler(element!("iframe[src]", link_handler("iframe", "src")))
        .append_element_content_handler(element!("base[href]", move |el| {
            let mut page = base_found.borrow_mut();
            if page.base.is_none() {
                page.base = el.get_attribute("href").map(|h| decode(&h));
            }
            Ok(())
        }))
        .append_element_content_handler(element!("meta[name]", move |el| {
            let name = el.get_attribute("name").unwrap_or_default();
            if name.eq_ignore_ascii_case("robots") {
                let content = el
                    .get_attribute("content")
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                let mut page = meta_found.borrow_mut();
                for directive in content.split(',').map(str::trim) {
                    match directive {
                        "noindex" => page.noindex = true,
                        "nofollow" => page.nofollow = true,
                        "none" => {
                            page.noindex = true;
                            page.nofollow = true;
                        }
                        _ => {}
                    }
                }
            }
            Ok(())
        }))
        .append_element_content_handler(text!("title", move |chunk: &mut TextChunk<'_>| {
            let mut title = title_text.borrow_mut();
            if title.len() < 4096 {
                title.push_str(chunk.as_str());
            }
            Ok(())
        }));
    let settings = if max_text_bytes > 0 {
        let hidden_start = Rc::clone(&hidden_depth);
        let hidden_text = Rc::clone(&hidden_depth);
        let body_text = Rc::clone(&text);
        settings
            .append_element_content_handler(element!(
                "script, style, noscript, template",
                move |el| {
                    *hidden_start.borrow_mut() += 1;
                    let hidden_end = Rc::clone(&hidden_start);
                    let on_end: lol_html::EndTagHandler<'static> = Box::new(move |_end| {
                        let mut depth = hidden_end.borrow_mut();
                        *depth = depth.saturating_sub(1);
                        Ok(())
                    });
                    if let Some(handlers) = el.end_tag_handlers() {
                        handlers.push(on_end);
                    }
                    Ok(())
                }
            ))
            .append_element_content_handler(text!("body", move |chunk: &mut TextChunk<'_>| {
                if *hidden_text.borrow() == 0 {
                    let mut text = body_text.borrow_mut();
                    if text.len() < max_text_bytes {
                        let piece = chunk.as_str();
                        if !piece.trim().is_empty() {
                            if !text.is_empty() && !text.ends_with(' ') {
                                text.push(' ');
                            }
                            text.push_str(piece.trim());
                        }
                    }
                }
                Ok(())
            }))
    } else {
        settings
    };
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    // A parse error (broken markup, memory cap) keeps what was found up to that point.
    let _ = rewriter.write(html).and_then(|()| rewriter.end());

    let mut page = found.take();
    let title = title.take();
    let title = decode(title.trim());
    if !title.is_empty() {
        page.title = Some(title);
    }
    if max_text_bytes > 0 {
        let mut text = decode(&text.take());
        if text.len() > max_text_bytes {
            let mut cut = max_text_bytes;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        page.text = Some(text);
    }
    page
}

fn decode(value: &str) -> String {
    html_escape::decode_html_entities(value.trim()).into_owned()
}

/// Like [`decode`], reusing the attribute's own string when there is nothing to decode or trim.
fn decode_owned(value: String) -> String {
    if !value.contains('&') && value.trim().len() == value.len() {
        return value;
    }
    decode(&value)
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
}
