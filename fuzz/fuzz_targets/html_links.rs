//! A page as a server may send it: its links (and visible text) extracted, with the charset the
//! response names and without. Nothing may panic, and the text kept stays within its bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|html: &[u8]| {
    let _ = squall::parse::extract(html, None);
    let page = squall::parse::extract_with_text(html, Some("windows-1252"), 256);
    if let Some(text) = &page.text {
        assert!(text.len() <= 256 + 4, "{} bytes of text kept", text.len());
    }
});
