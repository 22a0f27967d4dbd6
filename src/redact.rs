//! Secrets kept out of what squall shows, logs and archives: the password of a URL's userinfo
//! (`http://user:pass@host/` is shown as `http://user:***@host/`) and the values of the request
//! headers that carry credentials. The fetch itself still uses them; only their text is masked.

use std::borrow::Cow;

/// What a masked secret is shown as.
pub const MASK: &str = "***";

/// The request headers whose values are credentials, in lower case: `Authorization` and
/// `Proxy-Authorization` (Basic passwords, bearer tokens) and `Cookie` (session cookies, which may
/// come from the user's `http.custom.headers` as well as from the sites).
pub const CREDENTIAL_HEADERS: [&str; 3] = ["authorization", "proxy-authorization", "cookie"];

/// `text` with the password of every URL userinfo in it masked: a URL, or a message that quotes
/// URLs (an error naming the URL it failed on). Text without such a password is returned as it is.
///
/// ```
/// use squall::redact::url_text;
/// assert_eq!(url_text("http://me:secret@a.test/x"), "http://me:***@a.test/x");
/// assert_eq!(url_text("failed for url (https://me:pw@a.test/)"), "failed for url (https://me:***@a.test/)");
/// assert_eq!(url_text("http://me@a.test/"), "http://me@a.test/");
/// ```
pub fn url_text(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find("://") {
        let start = search + found + 3;
        let rest = &text[start..];
        let authority_len = rest
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | ')' | '"' | '\'' | '>') || c.is_whitespace()
            })
            .unwrap_or(rest.len());
        let authority = &rest[..authority_len];
        search = start + authority_len;
        let Some(at) = authority.rfind('@') else {
            continue;
        };
        let Some(colon) = authority[..at].find(':') else {
            continue;
        };
        let password = start + colon + 1..start + at;
        if password.is_empty() || &text[password.clone()] == MASK {
            continue;
        }
        out.push_str(&text[copied..password.start]);
        out.push_str(MASK);
        copied = password.end;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The value a request header is archived or shown with: a credential header's value masked (an
/// `Authorization` keeps its scheme, `Basic ***`; a `Cookie` its cookie names, `a=***; b=***`),
/// any other as it is.
///
/// ```
/// use squall::redact::header_value;
/// assert_eq!(header_value("Authorization", "Basic bWU6c2VjcmV0"), "Basic ***");
/// assert_eq!(header_value("cookie", "sid=abc; theme=dark"), "sid=***; theme=***");
/// assert_eq!(header_value("Accept", "text/html"), "text/html");
/// ```
pub fn header_value<'a>(name: &str, value: &'a str) -> Cow<'a, str> {
    let name = name.trim().to_ascii_lowercase();
    if !CREDENTIAL_HEADERS.contains(&name.as_str()) {
        return Cow::Borrowed(value);
    }
    if name == "cookie" {
        let cookies: Vec<String> = value
            .split(';')
            .map(|pair| match pair.split_once('=') {
                Some((cookie, _)) => format!("{}={MASK}", cookie.trim()),
                None => MASK.to_string(),
            })
            .collect();
        return Cow::Owned(cookies.join("; "));
    }
    match value.trim().split_once(' ') {
        Some((scheme, _)) => Cow::Owned(format!("{scheme} {MASK}")),
        None => Cow::Borrowed(MASK),
    }
}

/// An HTTP/1.1 message head (a request line or status line, header lines, `\r\n` line ends) with
/// each credential header's value masked ([`header_value`]); a head without one is returned as it
/// is. Lines that are not UTF-8 are kept as they are.
pub fn http_head(head: &[u8]) -> Cow<'_, [u8]> {
    let masked = |line: &[u8]| -> Option<Vec<u8>> {
        let line = std::str::from_utf8(line).ok()?;
        let (name, value) = line.split_once(':')?;
        let value = value.trim_start();
        let shown = header_value(name, value.trim_end_matches(['\r', '\n']));
        matches!(shown, Cow::Owned(_)).then(|| {
            let end = &value[value.trim_end_matches(['\r', '\n']).len()..];
            format!("{name}: {shown}{end}").into_bytes()
        })
    };
    let lines: Vec<&[u8]> = head.split_inclusive(|&b| b == b'\n').collect();
    if !lines.iter().skip(1).any(|line| masked(line).is_some()) {
        return Cow::Borrowed(head);
    }
    let mut out = Vec::with_capacity(head.len());
    for (i, line) in lines.into_iter().enumerate() {
        match masked(line).filter(|_| i > 0) {
            Some(line) => out.extend_from_slice(&line),
            None => out.extend_from_slice(line),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_passwords_of_userinfo_are_masked() {
        assert_eq!(url_text("https://a.test/p?q=1"), "https://a.test/p?q=1");
        assert_eq!(url_text("http://u:@a.test/"), "http://u:@a.test/");
        assert_eq!(
            url_text("a http://u:p@a.test/ and ftp://v:q:r@b.test?x and http://c.test/@x:y"),
            "a http://u:***@a.test/ and ftp://v:***@b.test?x and http://c.test/@x:y"
        );
        assert_eq!(url_text("http://u:***@a.test/"), "http://u:***@a.test/");
        assert_eq!(url_text("http://u:p%40w@a.test"), "http://u:***@a.test");
    }

    #[test]
    fn a_request_head_keeps_its_form_with_credentials_masked() {
        let head = b"GET / HTTP/1.1\r\nhost: a.test\r\nauthorization: Basic dTpw\r\ncookie: s=1\r\naccept: */*\r\n\r\n";
        let masked = http_head(head);
        assert_eq!(
            String::from_utf8_lossy(&masked),
            "GET / HTTP/1.1\r\nhost: a.test\r\nauthorization: Basic ***\r\ncookie: s=***\r\naccept: */*\r\n\r\n"
        );
        let plain = b"GET / HTTP/1.1\r\nhost: a.test\r\n\r\n";
        assert!(matches!(http_head(plain), Cow::Borrowed(_)));
    }
}
