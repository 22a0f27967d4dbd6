//! The URL filter classes of a `urlfilters.json`, as squall's [`UrlFilter`]s.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::FilterFileError;
use super::chain::Entry;
use super::locate::Locator;
use super::params::{Params, text};
use super::rule_files::{self, DEFAULT_NORMALIZERS, DEFAULT_NORMALIZERS_NAME};
use crate::filter::{
    BasicUrlFilter, BasicUrlNormalizer, MaxDepthFilter, MetadataFilter, RegexUrlFilter,
    RegexUrlNormalizer, ScopeFilter, SelfLinkFilter, SitemapFilter, UrlFilter,
};

/// The classes squall implements, without their package prefix.
pub(super) const URL_CLASSES: [&str; 10] = [
    "filtering.basic.BasicURLFilter",
    "filtering.basic.BasicURLNormalizer",
    "filtering.basic.SelfURLFilter",
    "filtering.depth.MaxDepthFilter",
    "filtering.host.HostURLFilter",
    "filtering.metadata.MetadataFilter",
    "filtering.regex.RegexURLFilter",
    "filtering.regex.RegexURLNormalizer",
    "filtering.robots.RobotsFilter",
    "filtering.sitemap.SitemapFilter",
];

/// What a filter of a file needs besides its entry: the file, and where rule files are found.
pub(super) struct FileContext<'a> {
    /// The filter file, for messages.
    pub path: &'a str,
    /// Its directory: rule files are looked for there too.
    pub dir: Option<&'a Path>,
    /// Where rule files are found.
    pub locator: &'a Locator,
}

/// The URL filter for `entry`; `None` for a class squall does not implement.
pub(super) fn url_filter(
    entry: &Entry,
    file: &FileContext<'_>,
) -> Result<Option<Arc<dyn UrlFilter>>, FilterFileError> {
    let params = Params::new(file.path, entry);
    let filter: Arc<dyn UrlFilter> = match entry.short.as_str() {
        "filtering.basic.BasicURLFilter" => {
            params.only(&["maxPathRepetition", "maxLength"])?;
            let repetition = params.int("maxPathRepetition")?.unwrap_or(3);
            let length = params.int("maxLength")?.unwrap_or(-1);
            Arc::new(BasicUrlFilter::new(
                usize::try_from(repetition).ok(),
                usize::try_from(length).ok().filter(|max| *max > 0),
            ))
        }
        "filtering.basic.BasicURLNormalizer" => Arc::new(basic_normalizer(&params)?),
        "filtering.basic.SelfURLFilter" => {
            params.only(&[])?;
            Arc::new(SelfLinkFilter)
        }
        "filtering.depth.MaxDepthFilter" => {
            params.only(&["maxDepth"])?;
            let max = params.int("maxDepth")?.unwrap_or(-1);
            Arc::new(MaxDepthFilter::new(u32::try_from(max).ok()))
        }
        "filtering.host.HostURLFilter" => {
            params.only(&["ignoreOutsideHost", "ignoreOutsideDomain"])?;
            let host = params.bool("ignoreOutsideHost", false)?;
            let domain = params.bool("ignoreOutsideDomain", false)?;
            Arc::new(ScopeFilter::new(host, domain && !host))
        }
        "filtering.metadata.MetadataFilter" => {
            let pairs = params
                .all()
                .map(|(key, value)| match text(value) {
                    Some(value) => Ok((key.clone(), value)),
                    None => Err(params.error(key, "must be a metadata value (a string)")),
                })
                .collect::<Result<_, _>>()?;
            Arc::new(MetadataFilter::new(pairs))
        }
        "filtering.regex.RegexURLFilter" => Arc::new(regex_filter(&params, file)?),
        "filtering.regex.RegexURLNormalizer" => Arc::new(regex_normalizer(&params, file)?),
        "filtering.robots.RobotsFilter" => {
            params.only(&["fromCacheOnly"])?;
            params.bool("fromCacheOnly", true)?;
            tracing::warn!(
                file = file.path,
                "RobotsFilter: squall's fetcher checks robots.txt before every fetch, so a URL \
                 robots.txt forbids is kept here and gets the status ERROR when its turn comes"
            );
            return Ok(Some(Arc::new(crate::filter::FilterChain::new())));
        }
        "filtering.sitemap.SitemapFilter" => {
            params.only(&[])?;
            Arc::new(SitemapFilter)
        }
        _ => return Ok(None),
    };
    Ok(Some(filter))
}

/// BasicURLNormalizer's params.
fn basic_normalizer(params: &Params<'_>) -> Result<BasicUrlNormalizer, FilterFileError> {
    params.only(&[
        "removeAnchorPart",
        "unmangleQueryString",
        "checkValidURI",
        "removeHashes",
        "hostIDNtoASCII",
        "queryElementsToRemove",
    ])?;
    // squall's URLs are always valid, with hosts in ASCII: these two ask for nothing more.
    params.bool("checkValidURI", true)?;
    params.bool("hostIDNtoASCII", false)?;
    Ok(BasicUrlNormalizer::default()
        .remove_anchor(params.bool("removeAnchorPart", true)?)
        .unmangle_query(params.bool("unmangleQueryString", true)?)
        .remove_hashes(params.bool("removeHashes", false)?)
        .remove_params(params.strings("queryElementsToRemove")?.unwrap_or_default()))
}

/// RegexURLFilter: rules inline (`urlFilters`) or in a file (`regexFilterFile`).
fn regex_filter(
    params: &Params<'_>,
    file: &FileContext<'_>,
) -> Result<RegexUrlFilter, FilterFileError> {
    params.only(&["urlFilters", "regexFilterFile"])?;
    let (source, rules) = match params.strings("urlFilters")? {
        Some(lines) => {
            let mut rules = Vec::new();
            for (index, line) in lines.iter().enumerate() {
                let rule = rule_files::filter_rule(line).map_err(|message| {
                    params.error("urlFilters", format!("rule {}: {message}", index + 1))
                })?;
                rules.extend(rule);
            }
            (file.path.to_string(), rules)
        }
        None => {
            let name = params
                .string("regexFilterFile")?
                .unwrap_or_else(|| "default-regex-filters.txt".to_string());
            let what = format!("{}: RegexURLFilter", file.path);
            let (path, text) = file.locator.read(&what, &name, file.dir)?;
            let path = path.display().to_string();
            let rules = rule_files::filter_rules(&path, &text)?;
            (path, rules)
        }
    };
    RegexUrlFilter::new(&rules).map_err(|error| bad_regex(source, &error))
}

/// RegexURLNormalizer: rules inline (`urlNormalizers`) or in a file (`regexNormalizerFile`;
/// squall's own `default-regex-normalizers.xml` when that name is found nowhere).
fn regex_normalizer(
    params: &Params<'_>,
    file: &FileContext<'_>,
) -> Result<RegexUrlNormalizer, FilterFileError> {
    params.only(&["urlNormalizers", "regexNormalizerFile"])?;
    let inline = params
        .all()
        .any(|(key, value)| key == "urlNormalizers" && value.is_array());
    let (source, rules) = if inline {
        (file.path.to_string(), inline_normalizers(params)?)
    } else {
        let name = params
            .string("regexNormalizerFile")?
            .unwrap_or_else(|| DEFAULT_NORMALIZERS_NAME.to_string());
        let what = format!("{}: RegexURLNormalizer", file.path);
        let (path, text) = match file.locator.read(&what, &name, file.dir) {
            Ok((path, text)) => (path.display().to_string(), text),
            Err(FilterFileError::NotFound { .. }) if name == DEFAULT_NORMALIZERS_NAME => (
                format!("squall's {DEFAULT_NORMALIZERS_NAME}"),
                DEFAULT_NORMALIZERS.to_string(),
            ),
            Err(error) => return Err(error),
        };
        let rules = rule_files::normalizer_rules(&path, &text)?;
        (path, rules)
    };
    RegexUrlNormalizer::new(&rules).map_err(|error| bad_regex(source, &error))
}

/// A rule whose regex does not compile, in the rules read from `path`.
fn bad_regex(path: String, error: &dyn std::fmt::Display) -> FilterFileError {
    FilterFileError::BadRule {
        path,
        location: "regex".to_string(),
        message: error.to_string(),
    }
}

/// `urlNormalizers`: a list of `{"pattern": ..., "substitution": ...}`.
fn inline_normalizers(params: &Params<'_>) -> Result<Vec<(String, String)>, FilterFileError> {
    let Some((_, Value::Array(items))) = params.all().find(|(k, _)| *k == "urlNormalizers") else {
        return Ok(Vec::new());
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let pattern = item
                .get("pattern")
                .and_then(text)
                .filter(|p| !p.trim().is_empty());
            let substitution = item.get("substitution").and_then(text).unwrap_or_default();
            pattern
                .map(|pattern| (pattern, substitution))
                .ok_or_else(|| {
                    params.error(
                        "urlNormalizers",
                        format!("rule {} has no \"pattern\"", index + 1),
                    )
                })
        })
        .collect()
}
