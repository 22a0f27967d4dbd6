//! Which URLs the browser renders: by host, by URL pattern, or by a metadata key on the URL.

use regex::RegexSet;
use squall::model::Metadata;
use url::Url;

/// Which URLs are rendered; the others stay on plain HTTP.
///
/// A URL is rendered when its host is one of `hosts` (`app.example.org`, or `*.example.org` for the
/// domain and its subdomains), when it matches one of `patterns` (regular expressions over the
/// whole URL), or when its metadata has `metadata_key` with a value other than `false`. With no
/// rule at all, every URL is rendered. List the metadata key in `metadata.transfer` for outlinks to
/// inherit it.
#[derive(Debug, Clone)]
pub struct RenderRules {
    hosts: Vec<String>,
    patterns: RegexSet,
    metadata_key: Option<String>,
}

impl RenderRules {
    /// Rules from hosts, patterns and a metadata key; an invalid pattern is an error naming it.
    pub fn new(
        hosts: Vec<String>,
        patterns: &[String],
        metadata_key: Option<String>,
    ) -> Result<Self, String> {
        let patterns = RegexSet::new(patterns).map_err(|error| error.to_string())?;
        let hosts = hosts
            .into_iter()
            .map(|host| host.trim().to_ascii_lowercase())
            .collect();
        Ok(RenderRules {
            hosts,
            patterns,
            metadata_key,
        })
    }

    /// Every URL rendered.
    pub fn everything() -> Self {
        RenderRules {
            hosts: Vec::new(),
            patterns: RegexSet::empty(),
            metadata_key: None,
        }
    }

    /// Whether `url` (with its `metadata`) is rendered.
    pub fn renders(&self, url: &Url, metadata: &Metadata) -> bool {
        if self.hosts.is_empty() && self.patterns.is_empty() && self.metadata_key.is_none() {
            return true;
        }
        let host = url.host_str().unwrap_or_default();
        self.hosts.iter().any(|rule| host_matches(rule, host))
            || self.patterns.is_match(url.as_str())
            || self.metadata_key.as_deref().is_some_and(|key| {
                metadata
                    .first(key)
                    .is_some_and(|value| !value.eq_ignore_ascii_case("false"))
            })
    }
}

/// `rule` is a host name, or `*.domain` for the domain and every name under it.
fn host_matches(rule: &str, host: &str) -> bool {
    match rule.strip_prefix("*.") {
        Some(domain) => {
            host == domain
                || host
                    .strip_suffix(domain)
                    .is_some_and(|head| head.ends_with('.'))
        }
        None => host == rule,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).expect("url")
    }

    #[test]
    fn no_rule_renders_everything() {
        let rules = RenderRules::new(Vec::new(), &[], None).expect("rules");
        assert!(rules.renders(&url("https://any.test/"), &Metadata::default()));
    }

    #[test]
    fn hosts_patterns_and_metadata_each_select_urls() {
        let rules = RenderRules::new(
            vec!["App.test".into(), "*.spa.test".into()],
            &["/render/".to_string()],
            Some("render".to_string()),
        )
        .expect("rules");
        let plain = Metadata::default();
        assert!(rules.renders(&url("http://app.test/x"), &plain));
        assert!(rules.renders(&url("http://spa.test/"), &plain));
        assert!(rules.renders(&url("http://a.b.spa.test/"), &plain));
        assert!(!rules.renders(&url("http://notspa.test/"), &plain));
        assert!(rules.renders(&url("http://other.test/render/1"), &plain));
        assert!(!rules.renders(&url("http://other.test/page"), &plain));
        let mut marked = Metadata::default();
        marked.set("render", "true");
        assert!(rules.renders(&url("http://other.test/page"), &marked));
        marked.set("render", "false");
        assert!(!rules.renders(&url("http://other.test/page"), &marked));
    }

    #[test]
    fn an_invalid_pattern_is_an_error() {
        assert!(RenderRules::new(Vec::new(), &["(".to_string()], None).is_err());
    }
}
