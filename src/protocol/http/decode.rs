//! Content decoding done by squall itself, for archived fetches: the archive keeps the bytes as
//! received while the parser gets them decoded (`gzip`, `deflate`, and with their features `br`
//! and `zstd`).

use std::io::Write;

#[cfg(feature = "brotli")]
use brotli_decompressor::DecompressorWriter;
use flate2::write::{GzDecoder, ZlibDecoder};

/// The `Accept-Encoding` an archiving client sends: every coding [`ContentDecoder`] decodes (those
/// of this build's features), as reqwest's own decoding asks for the same.
pub(super) const ACCEPT_ENCODING: &str = match (cfg!(feature = "brotli"), cfg!(feature = "zstd")) {
    (true, true) => "gzip, deflate, br, zstd",
    (true, false) => "gzip, deflate, br",
    (false, true) => "gzip, deflate, zstd",
    (false, false) => "gzip, deflate",
};

/// Why a body in `encoding` cannot be read by this build: `br` without the `brotli` feature,
/// `zstd` without `zstd` (a server that sends them unasked). `None` for every other value.
pub(super) fn left_out_coding(encoding: Option<&str>) -> Option<String> {
    let coding = encoding?.trim().to_ascii_lowercase();
    let feature = match coding.as_str() {
        "br" if !cfg!(feature = "brotli") => "brotli",
        "zstd" if !cfg!(feature = "zstd") => "zstd",
        _ => return None,
    };
    Some(format!(
        "the body is `Content-Encoding: {coding}`, which this build of squall does not decode \
         (not asked for): enable its `{feature}` feature"
    ))
}

/// Decodes a body as it arrives, keeping the decoded bytes.
pub(super) enum ContentDecoder {
    /// No coding, or one it does not know (passed through as it is, as reqwest does).
    Identity(Vec<u8>),
    /// `gzip` (and `x-gzip`).
    Gzip(GzDecoder<Vec<u8>>),
    /// `deflate`: zlib-wrapped, as HTTP defines it.
    Deflate(ZlibDecoder<Vec<u8>>),
    /// `br`.
    #[cfg(feature = "brotli")]
    Brotli(Box<DecompressorWriter<Vec<u8>>>),
    /// `zstd`.
    #[cfg(feature = "zstd")]
    Zstd(Box<zstd::stream::write::Decoder<'static, Vec<u8>>>),
}

impl ContentDecoder {
    /// The decoder for a `Content-Encoding` value. A list of codings is passed through undecoded.
    pub(super) fn for_encoding(encoding: Option<&str>) -> std::io::Result<Self> {
        if let Some(message) = left_out_coding(encoding) {
            return Err(std::io::Error::other(message));
        }
        let coding = encoding.map(|value| value.trim().to_ascii_lowercase());
        Ok(match coding.as_deref() {
            Some("gzip" | "x-gzip") => ContentDecoder::Gzip(GzDecoder::new(Vec::new())),
            Some("deflate") => ContentDecoder::Deflate(ZlibDecoder::new(Vec::new())),
            #[cfg(feature = "brotli")]
            Some("br") => {
                ContentDecoder::Brotli(Box::new(DecompressorWriter::new(Vec::new(), 4096)))
            }
            #[cfg(feature = "zstd")]
            Some("zstd") => {
                ContentDecoder::Zstd(Box::new(zstd::stream::write::Decoder::new(Vec::new())?))
            }
            _ => ContentDecoder::Identity(Vec::new()),
        })
    }

    /// Whether bytes pass through as they are.
    pub(super) fn is_identity(&self) -> bool {
        matches!(self, ContentDecoder::Identity(_))
    }

    /// Decodes the next bytes of the body.
    pub(super) fn write(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        match self {
            ContentDecoder::Identity(out) => {
                out.extend_from_slice(chunk);
                Ok(())
            }
            ContentDecoder::Gzip(decoder) => decoder.write_all(chunk),
            ContentDecoder::Deflate(decoder) => decoder.write_all(chunk),
            #[cfg(feature = "brotli")]
            ContentDecoder::Brotli(decoder) => decoder.write_all(chunk),
            #[cfg(feature = "zstd")]
            ContentDecoder::Zstd(decoder) => decoder.write_all(chunk),
        }
    }

    /// Decoded bytes so far (a decoder may still hold a few back).
    pub(super) fn decoded_len(&self) -> usize {
        match self {
            ContentDecoder::Identity(out) => out.len(),
            ContentDecoder::Gzip(decoder) => decoder.get_ref().len(),
            ContentDecoder::Deflate(decoder) => decoder.get_ref().len(),
            #[cfg(feature = "brotli")]
            ContentDecoder::Brotli(decoder) => decoder.get_ref().len(),
            #[cfg(feature = "zstd")]
            ContentDecoder::Zstd(decoder) => decoder.get_ref().len(),
        }
    }

    /// The whole decoded body, once every byte was written; an error if the coded stream is
    /// incomplete or corrupt. An empty body (a 304, a HEAD answer) decodes to nothing.
    pub(super) fn finish(self, received_any: bool) -> std::io::Result<Vec<u8>> {
        if !received_any {
            return Ok(Vec::new());
        }
        match self {
            ContentDecoder::Identity(out) => Ok(out),
            ContentDecoder::Gzip(decoder) => decoder.finish(),
            ContentDecoder::Deflate(decoder) => decoder.finish(),
            #[cfg(feature = "brotli")]
            ContentDecoder::Brotli(mut decoder) => {
                decoder.close()?;
                Ok(decoder.into_inner().unwrap_or_else(|partial| partial))
            }
            #[cfg(feature = "zstd")]
            ContentDecoder::Zstd(mut decoder) => {
                decoder.flush()?;
                Ok(decoder.into_inner())
            }
        }
    }

    /// What was decoded of a body cut short: no end-of-stream check.
    pub(super) fn partial(self) -> Vec<u8> {
        match self {
            ContentDecoder::Identity(out) => out,
            ContentDecoder::Gzip(mut decoder) => {
                let _ = decoder.flush();
                std::mem::take(decoder.get_mut())
            }
            ContentDecoder::Deflate(mut decoder) => {
                let _ = decoder.flush();
                std::mem::take(decoder.get_mut())
            }
            #[cfg(feature = "brotli")]
            ContentDecoder::Brotli(mut decoder) => {
                let _ = decoder.flush();
                std::mem::take(decoder.get_mut())
            }
            #[cfg(feature = "zstd")]
            ContentDecoder::Zstd(mut decoder) => {
                let _ = decoder.flush();
                decoder.into_inner()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &[u8] =
        b"<html><body>the same page, coded four ways, and decoded again</body></html>";

    fn decode(encoding: &str, coded: &[u8]) -> Vec<u8> {
        let mut decoder = ContentDecoder::for_encoding(Some(encoding)).expect("decoder");
        // In small pieces, as a body arrives.
        for chunk in coded.chunks(7) {
            decoder.write(chunk).expect("decoded");
        }
        decoder.finish(true).expect("complete")
    }

    #[test]
    fn every_accepted_coding_decodes() {
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gzip.write_all(TEXT).expect("gzip");
        assert_eq!(decode("gzip", &gzip.finish().expect("gzip")), TEXT);
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        zlib.write_all(TEXT).expect("zlib");
        assert_eq!(decode("deflate", &zlib.finish().expect("zlib")), TEXT);
        #[cfg(feature = "zstd")]
        {
            let zstd = zstd::stream::encode_all(TEXT, 3).expect("zstd");
            assert_eq!(decode("ZSTD", &zstd), TEXT);
        }
        assert_eq!(decode("identity", TEXT), TEXT);
        assert_eq!(decode("gzip, br", TEXT), TEXT, "a list passes through");
    }

    #[test]
    fn a_coding_this_build_leaves_out_is_named_with_its_feature() {
        assert_eq!(left_out_coding(None), None);
        assert_eq!(left_out_coding(Some("gzip")), None);
        for (coding, feature, built) in [
            ("br", "brotli", cfg!(feature = "brotli")),
            ("zstd", "zstd", cfg!(feature = "zstd")),
        ] {
            match left_out_coding(Some(coding)) {
                None => assert!(built, "{coding} left out yet not named"),
                Some(message) => {
                    assert!(!built, "{coding} is decoded by this build: {message}");
                    assert!(
                        message.contains(&format!("`{feature}` feature")),
                        "{message}"
                    );
                    assert!(ContentDecoder::for_encoding(Some(coding)).is_err());
                }
            }
        }
    }

    #[test]
    fn a_corrupt_stream_is_an_error_and_an_empty_body_is_empty() {
        let mut decoder = ContentDecoder::for_encoding(Some("gzip")).expect("decoder");
        let failed =
            decoder.write(b"this is not gzip at all").is_err() || decoder.finish(true).is_err();
        assert!(failed, "garbage decoded as gzip");
        let decoder = ContentDecoder::for_encoding(Some("gzip")).expect("decoder");
        assert_eq!(decoder.finish(false).expect("empty"), Vec::<u8>::new());
    }
}
