//! A page as a server may send it: its links (and visible text) extracted, with the charset the
//! response names and without. Nothing may panic, and the text kept stays within its bound: the
//! extractor cuts it at a char boundary at or below the limit, so never a byte more.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// The most bytes of visible text asked for.
const MAX_TEXT_BYTES: usize = 256;

fuzz_target!(|html: &[u8]| {
    let _ = squall::parse::extract(html, None);
    let page = squall::parse::extract_with_text(html, Some("windows-1252"), MAX_TEXT_BYTES);
    if let Some(text) = &page.text {
        assert!(
            text.len() <= MAX_TEXT_BYTES,
            "{} bytes of text kept, more than {MAX_TEXT_BYTES}",
            text.len()
        );
    }
});
