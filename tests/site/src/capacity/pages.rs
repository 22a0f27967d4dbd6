//! The capacity hosts' pages, rendered per request: `/` and `/p/N.html`, each linking to more
//! pages of its host than one fetch uses up, so discovery always outruns fetching.

use std::fmt::Write as _;

use super::spec::CapacitySpec;

/// The page numbers `/p/N.html` that page `n` links to on a host of `pages` pages with
/// `links` links a page: `n + 1` (while there is one), then `(7n + k) mod pages` for
/// `k = 1, 2, ...` until `links` in all. The home page is `n = None` and links to the first ones.
pub fn links_of(n: Option<usize>, pages: usize, links: usize) -> Vec<usize> {
    if pages == 0 {
        return Vec::new();
    }
    let Some(n) = n else {
        return (0..links.min(pages)).collect();
    };
    let next = (n + 1 < pages).then_some(n + 1);
    let spread = (1..).map(|k| (7 * n + k) % pages);
    next.into_iter().chain(spread).take(links).collect()
}

/// The page number of `path` if the host has that page: `/p/N.html`, `N` written without
/// leading zeros and below `pages`.
pub fn page_number(path: &str, pages: usize) -> Option<usize> {
    let digits = path.strip_prefix("/p/")?.strip_suffix(".html")?;
    let n: usize = digits.parse().ok()?;
    (n < pages && n.to_string() == digits).then_some(n)
}

/// The HTML of `path` on `host` for a site on `port`, or `None` when the host has no such page
/// (answered 404). `/` is the home page.
pub fn render(spec: &CapacitySpec, host: &str, path: &str, port: u16) -> Option<String> {
    let n = match path {
        "/" => None,
        _ => Some(page_number(path, spec.pages_per_host)?),
    };
    let title = n.map_or_else(|| format!("{host} home"), |n| format!("{host} page {n}"));
    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\n<body><h1>{title}</h1>\n<ul>\n"
    );
    for target in links_of(n, spec.pages_per_host, spec.links_per_page) {
        let url = crate::url_for(host, port, &format!("/p/{target}.html"));
        let _ = writeln!(html, "<li><a href=\"{url}\">page {target}</a></li>");
    }
    html.push_str("</ul>\n</body></html>\n");
    Some(html)
}
