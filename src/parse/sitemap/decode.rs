//! Body decoding: gzip detection by magic bytes, decompression capped at the size limit, and
//! byte-order-mark-aware text decoding.

use std::borrow::Cow;
use std::io::{ErrorKind, Read};

use flate2::read::MultiGzDecoder;

use super::SitemapError;

/// Size of the chunks read from the gzip decoder.
const GZIP_CHUNK: usize = 32 * 1024;

/// Whether `body` starts with the gzip magic bytes.
pub(super) fn is_gzip(body: &[u8]) -> bool {
    body.starts_with(&[0x1f, 0x8b])
}

/// Returns the body's bytes, decompressed if gzipped, enforcing `max_bytes`.
pub(super) fn decode_body(body: &[u8], max_bytes: usize) -> Result<Cow<'_, [u8]>, SitemapError> {
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

    use crate::parse::sitemap::test_support::{URLSET, gzip, loc, urls};
    use crate::parse::sitemap::{SitemapError, SitemapKind, SitemapLimits, parse_sitemap};

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
