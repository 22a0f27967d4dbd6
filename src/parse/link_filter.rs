//! A parse filter that adds links found by XPath or CSS (StormCrawler's LinkParseFilter).

use url::Url;

use super::extract::{Expression, ExtractError, ExtractFilter};
use super::{ParseFilter, ParseResult};
use crate::model::Metadata;

/// Adds to a page's links the values that expressions select in it (`//frame/@src`,
/// `//img/@src`), resolved against the page's URL, as StormCrawler's `LinkParseFilter` does. Links
/// the page already has are not added twice; the new links pass through the URL filters as the
/// others do.
#[derive(Debug)]
pub struct LinkFilter {
    extract: ExtractFilter,
}

/// The metadata key the expressions' values are gathered under, before they become links.
const GATHERED: &str = "links";

impl LinkFilter {
    /// A filter adding what these expressions select; the first that does not compile is the
    /// error (its key is `links`).
    pub fn new(expressions: impl IntoIterator<Item = Expression>) -> Result<Self, ExtractError> {
        let rules = expressions.into_iter().map(|e| (GATHERED, e));
        Ok(LinkFilter {
            extract: ExtractFilter::new(rules)?,
        })
    }
}

impl ParseFilter for LinkFilter {
    fn filter(&self, url: &Url, body: &[u8], parse: &mut ParseResult) {
        let mut gathered = Metadata::new();
        self.extract.extract(body, &mut gathered);
        for value in gathered.values(GATHERED) {
            if let Ok(link) = url.join(value)
                && !parse.links.contains(&link)
            {
                parse.links.push(link);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selected_values_become_resolved_links_once() {
        let filter = LinkFilter::new([
            Expression::XPath("//frame/@src".into()),
            Expression::Css("img@src".into()),
        ])
        .expect("valid");
        let page = br#"<html><frameset><frame src="/menu"><frame src="http://b.test/main">
            </frameset><img src="/menu"></html>"#;
        let url = Url::parse("http://a.test/dir/page").expect("test URL");
        let mut parse = ParseResult {
            links: vec![Url::parse("http://b.test/main").expect("test URL")],
            ..ParseResult::default()
        };
        filter.filter(&url, page, &mut parse);
        let links: Vec<&str> = parse.links.iter().map(Url::as_str).collect();
        assert_eq!(links, ["http://b.test/main", "http://a.test/menu"]);
        assert!(LinkFilter::new([Expression::XPath("//a[".into())]).is_err());
    }
}
