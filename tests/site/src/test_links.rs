//! What the tests of the sites share: the links a real HTML tokenizer sees in a page.

/// `href` of every `<a>` that a real HTML tokenizer sees.
pub(crate) fn links(html: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    {
        let settings = lol_html::Settings::new().append_element_content_handler(
            lol_html::element!("a[href]", |el| {
                if let Some(h) = el.get_attribute("href") {
                    out.push(h);
                }
                Ok(())
            }),
        );
        let mut rw = lol_html::HtmlRewriter::new(settings, |_: &[u8]| {});
        rw.write(html).expect("parse");
        rw.end().expect("parse end");
    }
    out
}
