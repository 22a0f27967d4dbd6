//! The parse filter classes of a `parsefilters.json` or `jsoupfilters.json`, as squall's
//! [`ParseFilter`]s.

use std::sync::Arc;

use super::FilterFileError;
use super::chain::{Entry, FileKind};
use super::params::{Params, strings};
use super::xpath_dialect::translate;
use crate::parse::{
    CommaSplitFilter, DomainFilter, Expression, ExtractFilter, FormatFilter, LinkFilter,
    ParseFilter,
};

/// The classes squall implements in a `parsefilters.json`, without their package prefix.
pub(super) const PARSE_CLASSES: [&str; 5] = [
    "parse.filter.XPathFilter",
    "parse.filter.LinkParseFilter",
    "parse.filter.DomainParseFilter",
    "parse.filter.MimeTypeNormalization",
    "parse.filter.CommaSeparatedToMultivaluedMetadata",
];

/// The classes squall implements in a `jsoupfilters.json`, without their package prefix.
pub(super) const JSOUP_CLASSES: [&str; 2] = ["jsoup.XPathFilter", "jsoup.LinkParseFilter"];

/// The parse filter for `entry` of a file of `kind`; `None` for a class squall does not
/// implement there.
pub(super) fn parse_filter(
    entry: &Entry,
    kind: FileKind,
    path: &str,
) -> Result<Option<Arc<dyn ParseFilter>>, FilterFileError> {
    let params = Params::new(path, entry);
    let class = entry.short.as_str();
    let known = match kind {
        FileKind::JSoupFilters => JSOUP_CLASSES.contains(&class),
        _ => PARSE_CLASSES.contains(&class),
    };
    if !known {
        return Ok(None);
    }
    let filter: Arc<dyn ParseFilter> = match class.rsplit('.').next().unwrap_or(class) {
        "XPathFilter" => {
            let rules = expressions(&params)?;
            let filter = ExtractFilter::new(rules)
                .map_err(|e| params.error(&e.key, format!("{}: {}", e.expression, e.message)))?;
            Arc::new(filter.first_match_per_key(true))
        }
        "LinkParseFilter" => {
            let rules = expressions(&params)?;
            let labels: Vec<String> = rules.iter().map(|(label, _)| label.clone()).collect();
            let filter = LinkFilter::new(rules.into_iter().map(|(_, e)| e)).map_err(|e| {
                let label = labels.first().map_or("pattern", String::as_str);
                params.error(label, format!("{}: {}", e.expression, e.message))
            })?;
            Arc::new(filter)
        }
        "DomainParseFilter" => {
            params.only(&["key", "byHost"])?;
            let key = params
                .string("key")?
                .unwrap_or_else(|| "domain".to_string());
            Arc::new(DomainFilter::new(key, params.bool("byHost", false)?))
        }
        "MimeTypeNormalization" => {
            params.only(&[])?;
            Arc::new(FormatFilter)
        }
        _ => {
            params.only(&["keys"])?;
            Arc::new(CommaSplitFilter::new(
                params.strings("keys")?.unwrap_or_default(),
            ))
        }
    };
    Ok(Some(filter))
}

/// An XPathFilter's params: each a metadata key (or, for LinkParseFilter, a label) with an
/// expression or a list of them, translated to squall's XPath.
fn expressions(params: &Params<'_>) -> Result<Vec<(String, Expression)>, FilterFileError> {
    let mut rules = Vec::new();
    for (key, value) in params.all() {
        let list = strings(value)
            .ok_or_else(|| params.error(key, "must be an XPath expression or a list of them"))?;
        for expression in list {
            let xpath = translate(&expression)
                .map_err(|message| params.error(key, format!("`{expression}`: {message}")))?;
            rules.push((key.clone(), Expression::XPath(xpath)));
        }
    }
    Ok(rules)
}
