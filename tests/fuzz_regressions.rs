//! Inputs that made a fuzz target (`fuzz/`, see docs/fuzzing.md) fail, fed to the same code with
//! the same assertions, so that a fixed bug stays fixed. Each test names its target and the
//! artifact libFuzzer wrote; the bytes are the artifact's, exactly.

/// `html_links`, `crash-3ecba109b5d73f48643a6dd996b72b6cef298c1e` (the first crash of the
/// published run of 2026-12-05, on 5e0927e): a `<noscript>` whose markup, parsed a second time as a
/// fragment, trips an internal check of lol_html 3.0.3 ("Tag should be a start tag at this point",
/// a `debug_assert!` in its dispatcher): a panic where lol_html is built with debug assertions (as
/// cargo-fuzz builds by default, a crate that depends on squall in its debug profile, and squall's
/// own dev builds), which the link extractor contains, keeping what it found; in release builds an
/// error that ends the parse early.
#[test]
fn html_links_noscript_markup_that_trips_lol_html_does_not_panic() {
    let html: Vec<u8> = [
        &b"<html><head><styletitle>Book</ti+tl  <bod?>0p\xc0before</p><noscript><iframe src=\""[..],
        &b"\xff\xfeto\x01\x005\x00\x02c.h\x01\x00\x00\x00\x00'''''\x00\x00\x01tmAAAAAAAAAAAAAAA"[..],
        &b"AAAAAAA\x00\xc3\xbf\xc3\xbf\xc3\xbf\nAAAAAAAAAAl\"></iframe>\n      ipt>\n         "[..],
        &b"\x0e\x00\x00\x00\xae@@@@\x00<body>\xae<@dy>\xae</A><\x0eRRRRRRRRody=><A>><title\r"[..],
        &b"\x00\x00\x00t|4body=><A>@dy>\xae</A><\x0e\x00\x00\x00\xae@@@@\x1e  <\xc2a href=\"/"[..],
        &b"\xeb\xff\xff\xffafter/\xeb\xff\xff\xffafter\">afte&amp; href=\"/\xeb\xff\xff        "[..],
        &b" \x1e  <a hre\xff\">read\x16</noscript>\n         \x1e  <a href=\"\xfe\xff\xff\xff"[..],
        &b"\xffaft\xe9\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00"[..],
        &b"\x00\x00er\"html>"[..],
    ]
    .concat();
    let _ = squall::parse::extract(&html, None);
    let page = squall::parse::extract_with_text(&html, Some("windows-1252"), 256);
    if let Some(text) = &page.text {
        assert!(text.len() <= 256, "{} bytes of text kept", text.len());
    }
}

/// `html_links`, `crash-2036a632107535631f69efe7621312064a6f3e51`: the smallest of the inputs that
/// tripped the same lol_html check ("Tag should be a start tag at this point") in the published run
/// (nine in all, 123 to 417 bytes); this one holds no `<noscript>`. Its bytes are in
/// tests/fixtures/fuzz/, where the parser's own tests and `dependent/` read them too.
#[test]
fn html_links_a_short_page_that_trips_lol_html_does_not_panic() {
    let html: &[u8] =
        include_bytes!("fixtures/fuzz/html_links-crash-2036a632107535631f69efe7621312064a6f3e51");
    let _ = squall::parse::extract(html, None);
    let page = squall::parse::extract_with_text(html, Some("windows-1252"), 256);
    if let Some(text) = &page.text {
        assert!(text.len() <= 256, "{} bytes of text kept", text.len());
    }
}
