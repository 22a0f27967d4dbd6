//! The hostile site's bodies that do not depend on the port, built once per process: the index,
//! the gzip bomb, invalid UTF-8, lying content types, the page of 100,000 links, broken HTML.

use std::sync::OnceLock;

use axum::body::Bytes;

use super::MANY_LINKS;

/// Size of every chunk `/endless` sends.
pub const ENDLESS_CHUNK_LEN: usize = 64 * 1024;

/// Spaces after the prefix in the gzip bomb's inflated body: 1 GiB.
pub(super) const GZIP_BOMB_SPACES: u64 = 1 << 30;

/// Start of the gzip bomb's inflated body.
pub(super) const GZIP_BOMB_PREFIX: &str = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Gzip bomb</title></head>\n<body><p>";

/// Size of the `title` attribute value on `/broken-html`.
pub const BROKEN_HTML_LONG_ATTR_LEN: usize = 100 * 1024;

pub(super) const HTML: &str = "text/html; charset=utf-8";

/// Port-independent bodies, built once per process.
pub(super) struct Content {
    pub(super) index: Bytes,
    pub(super) endless_head: Bytes,
    pub(super) endless_chunk: Bytes,
    pub(super) gzip_bomb: Bytes,
    pub(super) invalid_utf8: Bytes,
    pub(super) lying_type: Bytes,
    pub(super) lying_type_2: Bytes,
    pub(super) many_links: Bytes,
    pub(super) broken_html: Bytes,
    pub(super) not_found: Bytes,
    pub(super) not_allowed: Bytes,
}

pub(super) fn content() -> &'static Content {
    static CONTENT: OnceLock<Content> = OnceLock::new();
    CONTENT.get_or_init(Content::build)
}

/// Every path the index links to.
pub(super) const INDEX_LINKS: &[&str] = &[
    "/drip",
    "/endless",
    "/gzip-bomb",
    "/loop/a",
    "/loop/b",
    "/loop/self",
    "/invalid-utf8",
    "/lying-type",
    "/lying-type-2",
    "/many-links",
    "/broken-html",
    "/ok/0",
    "/l/0",
];

pub(super) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\n<body>\n{body}</body></html>\n"
    )
}

impl Content {
    pub(super) fn build() -> Content {
        let mut index = String::from("<h1>Hostile site</h1>\n<ul>\n");
        for p in INDEX_LINKS {
            index.push_str(&format!("<li><a href=\"{p}\">{p}</a></li>\n"));
        }
        index.push_str("</ul>\n");

        let endless_head =
            page("Endless", "<p><a href=\"/ok/5\">ok 5</a></p>\n").replace("</body></html>\n", "");
        let line = "<p>endless endless endless endless endless endless endless</p>\n";
        let mut endless_chunk = line.repeat(ENDLESS_CHUNK_LEN / line.len() + 1);
        endless_chunk.truncate(ENDLESS_CHUNK_LEN - 1);
        endless_chunk.push('\n');

        let mut many = String::with_capacity(MANY_LINKS * 26 + 256);
        many.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Many links</title></head>\n<body>\n");
        for n in 0..MANY_LINKS {
            many.push_str(&format!("<a href=\"/l/{n}\">{n}</a>\n"));
        }
        many.push_str("</body></html>\n");

        Content {
            index: page("Hostile site", &index).into(),
            endless_head: endless_head.into(),
            endless_chunk: endless_chunk.into(),
            gzip_bomb: gzip_bomb(GZIP_BOMB_PREFIX.as_bytes(), GZIP_BOMB_SPACES).into(),
            invalid_utf8: invalid_utf8().into(),
            lying_type: png_like_blob(32 * 1024).into(),
            lying_type_2: page(
                "Not a PNG",
                "<p>Served as image/png.</p>\n<p><a href=\"/ok/3\">ok 3</a></p>\n",
            )
            .into(),
            many_links: many.into(),
            broken_html: broken_html().into(),
            not_found: page("404 Not Found", "<h1>404 Not Found</h1>\n").into(),
            not_allowed: page(
                "405 Method Not Allowed",
                "<h1>405 Method Not Allowed</h1>\n",
            )
            .into(),
        }
    }
}

/// A gzip member whose deflate stream is `prefix` then `spaces` spaces.
///
/// Compressing a gibibyte is too slow in a debug build, so one chunk of
/// spaces is compressed once, ending with a sync flush (byte-aligned,
/// not final, no reference outside itself), and repeated; a final empty
/// block closes the stream. The CRC-32 is combined, not computed over the
/// whole inflated body.
pub(crate) fn gzip_bomb(prefix: &[u8], spaces: u64) -> Vec<u8> {
    use flate2::{Compression, Crc};

    const CHUNK: u64 = 4 << 20;
    fn deflate_synced(data: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), Compression::best());
        // Writing to a Vec cannot fail; flush() is a sync flush.
        let ok = enc.write_all(data).and_then(|()| enc.flush());
        debug_assert!(ok.is_ok());
        enc.get_ref().clone()
    }

    let mut crc = Crc::new();
    crc.update(prefix);
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255];
    out.extend_from_slice(&deflate_synced(prefix));

    let full = spaces / CHUNK;
    let rest = (spaces % CHUNK) as usize;
    if full > 0 {
        let chunk = vec![b' '; CHUNK as usize];
        let deflated = deflate_synced(&chunk);
        let mut chunk_crc = Crc::new();
        chunk_crc.update(&chunk);
        out.reserve(deflated.len() * full as usize + 64);
        for _ in 0..full {
            out.extend_from_slice(&deflated);
            crc.combine(&chunk_crc);
        }
    }
    if rest > 0 {
        let chunk = vec![b' '; rest];
        out.extend_from_slice(&deflate_synced(&chunk));
        crc.update(&chunk);
    }
    // Final block: fixed Huffman, just end-of-block.
    out.extend_from_slice(&[0x03, 0x00]);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    let isize = (prefix.len() as u64).wrapping_add(spaces) as u32;
    out.extend_from_slice(&isize.to_le_bytes());
    out
}

pub(super) fn invalid_utf8() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(
        b"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Invalid \xff UTF-8</title></head>\n<body>\n",
    );
    b.extend_from_slice(b"<p>lone continuation \x80\x81\xbf, bad start \xc3\x28, overlong \xc0\xaf \xe0\x80\xaf, surrogate \xed\xa0\x80, truncated \xe2\x82, out of range \xf5\x80\x80\x80 \xf4\x90\x80\x80, never \xfe\xff</p>\n");
    b.extend_from_slice(b"<p>\xff<a href=\"/ok/1\">one \xff\xfe</a>\xc0</p>\n");
    b.extend_from_slice(b"<p title=\"\xed\xbf\xbf\">\xf0\x9f\x98</p>\n");
    b.extend_from_slice(
        b"<ul><li>\xe2\x28\xa1<a href=\"/ok/2\">two \x80</a>\xf0\x28\x8c\xbc</li></ul>\n",
    );
    b.extend_from_slice(b"</body></html>\n");
    b
}

/// A PNG signature, an IHDR-looking chunk, then deterministic noise.
pub(super) fn png_like_blob(len: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(len);
    b.extend_from_slice(b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06\x00\x00\x00");
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while b.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b.extend_from_slice(&x.to_le_bytes());
    }
    b.truncate(len);
    b
}

pub(super) fn broken_html() -> String {
    let long = "x".repeat(BROKEN_HTML_LONG_ATTR_LEN);
    format!(
        "<html><head><title>Broken <b>html</title>\n\
         <body bgcolor=white class=a b c data-x=1=2>\n\
         <div><p>unclosed paragraph<p>another <b><i>misnested</b></i>\n\
         <table><tr><td><table><tr><td>nested<table><tr><td>never closed<td>\n\
         <a href=/ok/4 class=unquoted>unquoted link</a>\n\
         <script>var s = '<a href=\"/not-a-link\">no</a>'; document.write(\"<a href='/not-a-link'>\");</script>\n\
         <!-- <a href=\"/commented\">commented</a> -->\n\
         <p>a null byte: \0 here</p>\n\
         <a href=\"javascript:alert(1)\">js</a>\n\
         <a href=\"mailto:x@y\">mail</a>\n\
         <div title=\"{long}\">long attribute</div>\n\
         <p><span><em>never closed\n\
         <a href=\"#\">fragment only</a> <a>no href</a> <a href=\"\">empty href</a>\n\
         </table></td></div></html>\n"
    )
}
