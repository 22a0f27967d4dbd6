//! The character encoding of a page: from its Content-Type header, its byte order mark, its
//! `<meta charset>`, or a guess.

#[cfg(feature = "extract")]
use std::borrow::Cow;

use encoding_rs::Encoding;

/// The `charset` parameter of a Content-Type header.
pub(super) fn charset_of(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"'))
    })
}

/// The charset of a body whose headers name none and which is not UTF-8: a `<meta charset>` in the
/// first KiB is left to the HTML parser; otherwise Firefox's detector guesses.
pub(super) fn sniff_charset(body: &[u8]) -> Option<String> {
    let head = &body[..body.len().min(1024)];
    if String::from_utf8_lossy(head)
        .to_ascii_lowercase()
        .contains("charset")
    {
        return None;
    }
    if std::str::from_utf8(body).is_ok() {
        return None;
    }
    Some(guess(body).name().to_string())
}

/// An HTML body as text, for code that sees the body without its headers (parse filters): decoded
/// by its byte order mark, else by the first `charset=` in its first KiB (`<meta charset>` or
/// `<meta http-equiv=Content-Type>`), else as UTF-8 when it is UTF-8, else by Firefox's detector.
/// Bytes that do not decode become U+FFFD; nothing fails.
#[cfg(feature = "extract")]
pub(super) fn decode_html(body: &[u8]) -> Cow<'_, str> {
    if let Some((encoding, bom_length)) = Encoding::for_bom(body) {
        return encoding.decode_without_bom_handling(&body[bom_length..]).0;
    }
    // As browsers do, a page that declares UTF-16 in ASCII-compatible bytes is read as UTF-8.
    if let Some(encoding) = meta_charset(body).map(Encoding::output_encoding) {
        return encoding.decode_without_bom_handling(body).0;
    }
    match std::str::from_utf8(body) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => guess(body).decode_without_bom_handling(body).0,
    }
}

/// The encoding named by the first usable `charset=` in the first KiB of `body`.
#[cfg(feature = "extract")]
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = &body[..body.len().min(1024)];
    let mut rest = head;
    while let Some(at) = find_ignoring_ascii_case(rest, b"charset") {
        rest = &rest[at + b"charset".len()..];
        let after = trim_start(rest);
        let Some(value) = after.strip_prefix(b"=") else {
            continue;
        };
        let value = trim_start(value);
        let value = value
            .strip_prefix(b"\"")
            .or_else(|| value.strip_prefix(b"'"))
            .unwrap_or(value);
        let end = value
            .iter()
            .position(|b| matches!(b, b'"' | b'\'' | b';' | b'>' | b'/') || b.is_ascii_whitespace())
            .unwrap_or(value.len());
        if let Some(encoding) = Encoding::for_label(&value[..end]) {
            return Some(encoding);
        }
    }
    None
}

/// Where `needle` (lowercase ASCII) first occurs in `haystack`, ignoring ASCII case.
#[cfg(feature = "extract")]
fn find_ignoring_ascii_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
}

/// `bytes` without leading ASCII whitespace.
#[cfg(feature = "extract")]
fn trim_start(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    &bytes[start..]
}

/// Firefox's guess at the encoding of a body that is not UTF-8.
fn guess(body: &[u8]) -> &'static Encoding {
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(&body[..body.len().min(64 * 1024)], true);
    detector.guess(None, chardetng::Utf8Detection::Allow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_charset_of_a_content_type() {
        assert_eq!(
            charset_of("text/html; charset=\"ISO-8859-1\""),
            Some("ISO-8859-1")
        );
        assert_eq!(charset_of("text/html"), None);
    }

    #[test]
    fn charset_sniffing_only_when_needed() {
        assert_eq!(sniff_charset("déjà vu".as_bytes()), None, "valid UTF-8");
        assert_eq!(
            sniff_charset(b"<meta charset=latin1>caf\xe9"),
            None,
            "left to the meta tag"
        );
        let guess = sniff_charset(b"<p>Le caf\xe9 est tr\xe8s bon, d\xe9j\xe0 servi.</p>");
        assert_eq!(guess.as_deref(), Some("windows-1252"));
    }

    #[test]
    fn html_is_decoded_by_bom_meta_utf8_or_guess() {
        assert_eq!(decode_html("déjà".as_bytes()), "déjà");
        assert_eq!(
            decode_html(b"\xef\xbb\xbfd\xc3\xa9j\xc3\xa0"),
            "déjà",
            "BOM"
        );
        assert_eq!(decode_html(b"\xff\xfeh\0i\0"), "hi", "UTF-16 by its BOM");
        let latin1 = b"<meta charset='ISO-8859-1'><p>caf\xe9";
        assert!(decode_html(latin1).ends_with("café"));
        let http_equiv =
            b"<meta http-equiv=Content-Type content=\"text/html; charset=windows-1251\">\xcf";
        assert!(decode_html(http_equiv).ends_with('П'));
        let unusable = b"<meta charset=nonsense><meta charset=\"koi8-r\">\xf0";
        assert!(
            decode_html(unusable).ends_with('П'),
            "the first usable label"
        );
        let utf16 = b"<meta charset=utf-16>d\xc3\xa9j\xc3\xa0";
        assert!(
            decode_html(utf16).ends_with("déjà"),
            "UTF-16 in ASCII is UTF-8"
        );
        let guessed = decode_html(b"<p>Le caf\xe9 est tr\xe8s bon, d\xe9j\xe0 servi.</p>");
        assert!(guessed.contains("café"), "{guessed}");
        assert_eq!(decode_html(b"charset"), "charset");
        assert_eq!(decode_html(b"charset = "), "charset = ");
    }
}
