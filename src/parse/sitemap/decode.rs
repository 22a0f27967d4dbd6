//! Body decoding: gzip detection by magic bytes, decompression capped at the size limit, and
//! byte-order-mark-aware text decoding.

use std::borrow::Cow;
use std::io::{ErrorKind, Read};

use flate2::read::MultiGzDecoder;

use super::{SitemapCut, SitemapError};

/// Size of the chunks read from the gzip decoder.
const GZIP_CHUNK: usize = 32 * 1024;

/// A body's bytes, decompressed if gzipped and never more than the cap, and whether they are only
/// the start of the document.
pub(super) struct Decoded<'a> {
    /// The bytes to parse.
    pub(super) bytes: Cow<'a, [u8]>,
    /// Set when the bytes stop before the document does.
    pub(super) cut: Option<SitemapCut>,
}

/// Whether `body` starts with the gzip magic bytes.
pub(super) fn is_gzip(body: &[u8]) -> bool {
    body.starts_with(&[0x1f, 0x8b])
}

/// Returns the body's bytes, decompressed if gzipped, at most `max_bytes` of them: a longer body is
/// cut at the cap. `cut_short` says the body is known to stop before the document does.
pub(super) fn decode_body(
    body: &[u8],
    max_bytes: usize,
    cut_short: bool,
) -> Result<Decoded<'_>, SitemapError> {
    let (bytes, cut) = if is_gzip(body) {
        let (bytes, cut) = gunzip_capped(body, max_bytes)?;
        (Cow::Owned(bytes), cut)
    } else if body.len() > max_bytes {
        let head = body.get(..max_bytes).unwrap_or(body);
        let cut = SitemapCut::SizeLimit { limit: max_bytes };
        (Cow::Borrowed(head), Some(cut))
    } else {
        (Cow::Borrowed(body), None)
    };
    let cut = cut.or_else(|| cut_short.then_some(SitemapCut::Truncated { bytes: bytes.len() }));
    Ok(Decoded { bytes, cut })
}

/// Decompresses `body`, stopping at `limit` bytes of output: the output buffer never grows beyond
/// `limit` bytes, and a stream with more is cut there ([`SitemapCut::SizeLimit`]).
///
/// A stream that is merely truncated (a common result of download size caps)
/// keeps what was decompressed ([`SitemapCut::Truncated`]); any other decoding error is
/// `Compressed`.
fn gunzip_capped(body: &[u8], limit: usize) -> Result<(Vec<u8>, Option<SitemapCut>), SitemapError> {
    let mut decoder = MultiGzDecoder::new(body);
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; GZIP_CHUNK];
    loop {
        let n = match decoder.read(&mut chunk) {
            Ok(0) => return Ok((out, None)),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == ErrorKind::UnexpectedEof && !out.is_empty() => {
                let bytes = out.len();
                return Ok((out, Some(SitemapCut::Truncated { bytes })));
            }
            Err(e) => return Err(SitemapError::Compressed(e.to_string())),
        };
        let room = limit - out.len();
        let take = n.min(room);
        if out.capacity() - out.len() < take {
            // Grow geometrically, but never past the limit.
            let wanted = (out.capacity() * 2).max(out.len() + take).max(GZIP_CHUNK);
            out.reserve_exact(wanted.min(limit) - out.len());
        }
        out.extend_from_slice(chunk.get(..take).unwrap_or_default());
        if n > room {
            return Ok((out, Some(SitemapCut::SizeLimit { limit })));
        }
    }
}

/// Decompresses at most `limit` bytes from the start of the gzipped `body`. Errors (truncated or
/// corrupt data) leave whatever was decompressed.
pub(super) fn gunzip_prefix(body: &[u8], limit: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = MultiGzDecoder::new(body)
        .take(limit as u64)
        .read_to_end(&mut out);
    out
}

/// Decodes bytes to text: UTF-16 when a UTF-16 byte-order mark is present,
/// UTF-8 otherwise (a UTF-8 BOM is dropped). Invalid sequences become U+FFFD.
pub(super) fn to_text(bytes: &[u8]) -> Cow<'_, str> {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::io::Write;

    use flate2::Compression;
    use flate2::write::GzEncoder;

    use crate::parse::sitemap::test_support::{URLSET, gzip, loc, url_entries, urls};
    use crate::parse::sitemap::{
        SitemapCut, SitemapError, SitemapKind, SitemapLimits, parse_sitemap, parse_sitemap_prefix,
    };

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

    /// `n` MiB of `byte`, gzip-compressed, after `head` (a gzip bomb).
    fn bomb(head: &[u8], byte: u8, n: usize) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(head).unwrap();
        let block = vec![byte; 1024 * 1024];
        for _ in 0..n {
            enc.write_all(&block).unwrap();
        }
        enc.finish().unwrap()
    }

    fn capped(max_bytes: usize) -> SitemapLimits {
        SitemapLimits {
            max_bytes,
            ..SitemapLimits::default()
        }
    }

    const MIB: usize = 1024 * 1024;

    #[test]
    fn gzip_bomb_stops_at_cap() {
        // 200 MiB of zeros, compressed (about 200 KiB), built in memory.
        let zeros = bomb(b"", 0, 200);
        assert!(zeros.len() < 2 * MIB);
        let err = parse_sitemap(&loc(), None, &zeros, &capped(MIB)).unwrap_err();
        assert_eq!(err, SitemapError::TooLarge { limit: MIB });
        assert!(err.to_string().contains("1048576"));
        // The decompressed bytes never outgrow the cap.
        let (out, cut) = super::gunzip_capped(&zeros, MIB).unwrap();
        assert_eq!(out.len(), MIB);
        assert!(out.capacity() <= MIB, "{}", out.capacity());
        assert_eq!(cut, Some(SitemapCut::SizeLimit { limit: MIB }));
        // A sitemap padded past the cap keeps what lies within it, and says it was cut.
        let head = b"<urlset><url><loc>https://www.example.com/a</loc></url>";
        let padded = bomb(head, b' ', 200);
        let s = parse_sitemap(&loc(), None, &padded, &capped(MIB)).unwrap();
        assert_eq!(urls(&s), ["https://www.example.com/a"]);
        assert_eq!(s.cut, Some(SitemapCut::SizeLimit { limit: MIB }));
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
        let err = parse_sitemap(&loc(), None, &bomb, &capped(MIB)).unwrap_err();
        assert_eq!(err, SitemapError::TooLarge { limit: MIB });
        let mut led = gzip(b"https://www.example.com/first\nhttps://www.example.com/second\n");
        led.extend_from_slice(&bomb);
        let s = parse_sitemap(&loc(), None, &led, &capped(MIB)).unwrap();
        assert_eq!(
            urls(&s),
            [
                "https://www.example.com/first",
                "https://www.example.com/second"
            ]
        );
        assert_eq!(s.cut, Some(SitemapCut::SizeLimit { limit: MIB }));
    }

    #[test]
    fn plain_body_over_cap_keeps_the_entries_within_it() {
        // The cap falls after the root tag, before the first entry: nothing to keep, an error.
        let err = parse_sitemap(&loc(), None, URLSET.as_bytes(), &capped(100)).unwrap_err();
        assert_eq!(err, SitemapError::TooLarge { limit: 100 });
        // After the first entry (270), then in the middle of the second one's location (300):
        // only the first is kept, never a location cut short.
        for cap in [270, 300] {
            let s = parse_sitemap(&loc(), None, URLSET.as_bytes(), &capped(cap)).unwrap();
            assert_eq!(urls(&s), ["https://www.example.com/"], "cap {cap}");
            assert_eq!(s.urls[0].priority, Some(0.8));
            assert_eq!(s.cut, Some(SitemapCut::SizeLimit { limit: cap }));
            assert_eq!(s.skipped, 0);
        }
        // Exactly at the cap is whole, plain or gzipped.
        let gz = gzip(URLSET.as_bytes());
        for body in [URLSET.as_bytes(), &gz] {
            let s = parse_sitemap(&loc(), None, body, &capped(URLSET.len())).unwrap();
            assert_eq!(s.urls.len(), 3);
            assert_eq!(s.cut, None);
        }
        // One byte under: the closing tag is cut, every entry is complete.
        let limit = URLSET.len() - 1;
        let s = parse_sitemap(&loc(), None, &gz, &capped(limit)).unwrap();
        assert_eq!(s.urls.len(), 3);
        assert_eq!(s.cut, Some(SitemapCut::SizeLimit { limit }));
    }

    #[test]
    fn a_text_sitemap_cut_short_drops_its_last_line() {
        let text = "https://www.example.com/1\nhttps://www.example.com/22\n";
        let s = parse_sitemap(&loc(), None, text.as_bytes(), &capped(text.len() - 3)).unwrap();
        assert_eq!(urls(&s), ["https://www.example.com/1"]);
        let limit = text.len() - 3;
        assert_eq!(s.cut, Some(SitemapCut::SizeLimit { limit }));
        // A body known to be cut: its last line is dropped unless the cut fell after it.
        let cut = &text.as_bytes()[..text.len() - 2];
        let s = parse_sitemap_prefix(&loc(), None, cut, &SitemapLimits::default()).unwrap();
        assert_eq!(urls(&s), ["https://www.example.com/1"]);
        let bytes = cut.len();
        assert_eq!(s.cut, Some(SitemapCut::Truncated { bytes }));
        let s = parse_sitemap_prefix(&loc(), None, text.as_bytes(), &SitemapLimits::default());
        assert_eq!(s.unwrap().urls.len(), 2);
        // Nothing complete: an error that says the body was cut.
        let err = parse_sitemap_prefix(&loc(), None, &cut[..20], &SitemapLimits::default());
        assert_eq!(err.unwrap_err(), SitemapError::Truncated { bytes: 20 });
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
        let body = format!("<urlset>{}</urlset>", url_entries("p", 2000));
        let gz = gzip(body.as_bytes());
        let cut = &gz[..gz.len() / 2];
        let s = parse_sitemap(&loc(), None, cut, &SitemapLimits::default()).unwrap();
        assert!(
            !s.urls.is_empty() && s.urls.len() < 2000,
            "{}",
            s.urls.len()
        );
        // The entries kept are the first ones, whole.
        for (i, url) in urls(&s).iter().enumerate() {
            assert_eq!(*url, format!("https://www.example.com/p{i}"));
        }
        assert!(matches!(s.cut, Some(SitemapCut::Truncated { bytes }) if bytes > 0));
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
}
