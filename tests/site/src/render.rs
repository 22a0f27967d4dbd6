//! The bytes of a generated page: its HTML with each link in its form, or a small PDF.

use crate::model::{Form, Loc, Page};

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Writes the `href` of `target` for a document whose base URL is `base`.
fn href(base: &Loc, target: &Loc, form: Form, port: u16) -> String {
    let same = base.host == target.host;
    let dir = base.dir();
    let form = match form {
        Form::DirRelative
            if same && target.path.len() > dir.len() && target.path.starts_with(dir) =>
        {
            Form::DirRelative
        }
        Form::DotDot if same && dir == "/p/" => Form::DotDot,
        Form::DirRelative | Form::DotDot | Form::RootRelative if same => Form::RootRelative,
        Form::DirRelative | Form::DotDot | Form::RootRelative => Form::Absolute,
        f => f,
    };
    match form {
        Form::Absolute => target.url(port),
        Form::AbsoluteUpper => {
            crate::url_for(&target.host.to_ascii_uppercase(), port, &target.path)
        }
        Form::ProtocolRelative => format!("//{}:{port}{}", target.host, target.path),
        Form::RootRelative => target.path.clone(),
        Form::DirRelative => target.path[dir.len()..].to_owned(),
        Form::DotDot => format!("..{}", target.path),
    }
}

/// Renders an HTML page located at `loc`.
pub(crate) fn render_page(loc: &Loc, page: &Page, port: u16) -> String {
    use std::fmt::Write;
    let title = escape(&page.title);
    let mut out = String::with_capacity(256 + page.links.len() * 96);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(out, "<title>{title}</title>");
    let base = match &page.base {
        Some(b) => {
            let _ = writeln!(out, "<base href=\"{}\">", escape(&b.url(port)));
            b
        }
        None => loc,
    };
    let _ = writeln!(
        out,
        "</head>\n<body>\n<h1 id=\"top\">{title}</h1>\n<p>Généré pour squall — page de test déterministe.</p>\n<ul>"
    );
    if page.self_fragment {
        out.push_str("<li><a href=\"#top\">Back to top</a></li>\n");
    }
    for link in &page.links {
        let mut h = href(base, &link.target, link.form, port);
        if let Some(f) = link.fragment {
            let _ = write!(h, "#s{f}");
        }
        let rel = if link.nofollow {
            " rel=\"nofollow\""
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "<li><a href=\"{}\"{rel}>{} {}</a></li>",
            escape(&h),
            escape(&link.target.host),
            escape(&link.target.path)
        );
    }
    out.push_str("</ul>\n</body>\n</html>\n");
    out
}

/// The bytes of PDF file number `k`.
pub(crate) fn render_pdf(k: usize) -> Vec<u8> {
    format!(
        "%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n% squall test file {k}\ntrailer << /Root 1 0 R >>\n%%EOF\n"
    )
    .into_bytes()
}
