//! Reading attributes of the elements the extractor visits without copying them: an attribute's
//! name and value are read where they stand in the page's bytes, and only a value that is not
//! plain ASCII is decoded (in the page's encoding) into a string of its own.

use std::borrow::Cow;

use lol_html::html_content::{Attribute, Element};

/// The values of the attributes `names` (lowercase) of `el`, the first of each name as
/// `Element::get_attribute` would give it. `input` is what the parse that produced `el` was given.
///
/// Every encoding the extractor reads is ASCII-compatible: bytes below 0x80 stand for themselves,
/// so an ASCII value read from `input` is what decoding it would give. Anything else is decoded.
pub(super) fn attribute_values<'i, const N: usize>(
    el: &Element<'_, '_>,
    input: &'i [u8],
    names: [&str; N],
) -> [Option<Cow<'i, str>>; N] {
    let mut values: [Option<Cow<'i, str>>; N] = std::array::from_fn(|_| None);
    for attribute in el.attributes() {
        let Some(i) = names.iter().position(|n| name_is(attribute, input, n)) else {
            continue;
        };
        if values[i].is_none() {
            values[i] = Some(value_of(attribute, input));
        }
    }
    values
}

/// Whether `attribute` is named `name` (lowercase), compared as HTML does: ASCII case folded.
fn name_is(attribute: &Attribute<'_>, input: &[u8], name: &str) -> bool {
    let location = attribute.name_source_location();
    match location.and_then(|location| input.get(location.bytes())) {
        Some(raw) => raw.eq_ignore_ascii_case(name.as_bytes()),
        None => attribute.name() == name,
    }
}

/// The value of `attribute`: borrowed from `input` when it is ASCII, decoded otherwise.
fn value_of<'i>(attribute: &Attribute<'_>, input: &'i [u8]) -> Cow<'i, str> {
    let location = attribute.value_source_location();
    if let Some(raw) = location.and_then(|location| input.get(location.bytes()))
        && raw.is_ascii()
        && let Ok(value) = std::str::from_utf8(raw)
    {
        return Cow::Borrowed(value);
    }
    Cow::Owned(attribute.value())
}

/// Appends `value` to `out` with surrounding whitespace trimmed and HTML entities decoded (as
/// `html_escape::decode_html_entities` does).
///
/// `&amp;`, the one entity common in URLs, is decoded here; from the first other `&` on, the rest
/// goes to `html_escape`, which would have started a reference at that `&` too.
pub(super) fn push_decoded(out: &mut String, value: &str) {
    let mut rest = value.trim();
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        match rest[at..].strip_prefix("&amp;") {
            Some(after) => {
                out.push('&');
                rest = after;
            }
            None => {
                html_escape::decode_html_entities_to_string(&rest[at..], out);
                return;
            }
        }
    }
    out.push_str(rest);
}

/// `value` with surrounding whitespace trimmed and HTML entities decoded.
pub(super) fn decoded(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    push_decoded(&mut out, value);
    out
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use lol_html::{HtmlRewriter, Settings, element};
    use proptest::prelude::*;

    use super::*;

    /// For every attribute of every element of `html` read as `charset`: the name test and the
    /// value read in place against lol_html's own (decoding) accessors.
    fn compare_with_lol_html(html: &[u8], charset: &'static encoding_rs::Encoding) -> usize {
        let checked = RefCell::new(0);
        let encoding = lol_html::AsciiCompatibleEncoding::new(charset)
            .unwrap_or_else(lol_html::AsciiCompatibleEncoding::utf_8);
        let settings = Settings::new()
            .with_encoding(encoding)
            .append_element_content_handler(element!("*", |el| {
                for attribute in el.attributes() {
                    let name = attribute.name();
                    // The extractor asks for ASCII names only.
                    assert_eq!(name_is(attribute, html, &name), name.is_ascii(), "{name:?}");
                    assert!(!name_is(attribute, html, "a-name-never-used"));
                    assert_eq!(value_of(attribute, html), attribute.value(), "{name:?}");
                    if name.is_ascii() {
                        let [found] = attribute_values(el, html, [name.as_str()]);
                        let expected = el.get_attribute(&name);
                        let page = String::from_utf8_lossy(html);
                        assert_eq!(found.as_deref(), expected.as_deref(), "{name:?} in {page}");
                    }
                    *checked.borrow_mut() += 1;
                }
                Ok(())
            }));
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        rewriter.write(html).expect("parse");
        rewriter.end().expect("parse");
        checked.into_inner()
    }

    #[test]
    fn reads_names_and_values_as_lol_html_does() {
        let html = "<a HREF=' /x?a=1&amp;b ' Rel=NoFollow href=second data-x=caf\u{e9} hidden>\
            <link rel=canonical href=\"/c\"><p title=\"\u{1F600}\" x=>"
            .as_bytes();
        assert_eq!(compare_with_lol_html(html, encoding_rs::UTF_8), 9);
        let latin1 = b"<a href='/caf\xe9' title=\"plain\" \xe9t\xe9=1>";
        assert_eq!(compare_with_lol_html(latin1, encoding_rs::WINDOWS_1252), 3);
        // A page that switches its own encoding midway.
        let switching = b"<meta charset=shift_jis><a href='/\x82\xa0' rel=x>";
        assert_eq!(compare_with_lol_html(switching, encoding_rs::UTF_8), 3);
    }

    #[test]
    fn decodes_entities_and_trims() {
        assert_eq!(decoded("  a.html?x=1&amp;y=2\t"), "a.html?x=1&y=2");
        assert_eq!(decoded("/plain"), "/plain");
        let mut out = "kept|".to_string();
        push_decoded(&mut out, " &lt;b&gt; ");
        assert_eq!(out, "kept|<b>");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(15), ..ProptestConfig::default() })]
        #[test]
        fn decoding_agrees_with_html_escape(
            value in "( |\t|a|/|;|#|x|3|8|&|&amp;|&amp|&AMP;|&lt;|&#38;|&#x26;|&#;|&bogus;|&nbsp;|é){0,12}",
        ) {
            let mut out = "kept".to_string();
            push_decoded(&mut out, &value);
            let expected = html_escape::decode_html_entities(value.trim());
            prop_assert_eq!(&out[4..], &*expected);
        }
    }

    fn attribute_strategy() -> impl Strategy<Value = String> {
        let name = "[a-zA-Z][a-zA-Z0-9-]{0,6}";
        let value = "([a-z/?=.#%-]|&amp;|&lt;|&#38;|&bogus;|é|\u{1F600}| |'|\"){0,8}";
        let quote = prop_oneof![Just(""), Just("'"), Just("\"")];
        (name, value, quote).prop_map(|(name, value, quote)| {
            let value = match quote {
                "" => value.replace([' ', '\'', '"', '>'], "_"),
                q => value.replace(q, "_"),
            };
            format!(" {name}={quote}{value}{quote}")
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, rng_seed: proptest::test_runner::RngSeed::Fixed(15), ..ProptestConfig::default() })]
        #[test]
        fn in_place_reads_agree_with_lol_html(
            tags in proptest::collection::vec(
                ("[a-z]{1,3}", proptest::collection::vec(attribute_strategy(), 0..5)),
                1..8,
            ),
            latin1 in any::<bool>(),
        ) {
            let mut html = String::new();
            for (tag, attributes) in tags {
                html.push('<');
                html.push_str(&tag);
                for attribute in attributes {
                    html.push_str(&attribute);
                }
                html.push_str(">text");
            }
            if latin1 {
                let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(&html);
                compare_with_lol_html(&bytes, encoding_rs::WINDOWS_1252);
            } else {
                compare_with_lol_html(html.as_bytes(), encoding_rs::UTF_8);
            }
        }
    }
}
