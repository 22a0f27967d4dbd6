//! The `browser.*` keys ([`BrowserSettings`], one line a key) and what they configure
//! ([`BrowserConfig`]): where Chromium is, how many tabs, when a page has settled, which URLs are
//! rendered, and when the browser is restarted.

use std::path::PathBuf;
use std::time::Duration;

use squall::config::{ConfigError, CrawlConfig};

use crate::rules::RenderRules;

/// The prefix the keys are read under.
pub const PREFIX: &str = "browser.";

squall::keyed_settings! {
    /// The `browser.*` keys (prefix left out of the names below), in the keys' units; read and
    /// checked into a [`BrowserConfig`] with [`BrowserConfig::from_config`].
    #[derive(Debug, Clone, PartialEq)]
    pub struct BrowserSettings {
        /// `browser.executable`: the Chromium to launch (empty: `chromium`, `chromium-browser`,
        /// `google-chrome` or `chrome` on `PATH`).
        "executable" => executable: String = String::new(),
        /// `browser.devtools.url`: a running browser to use instead of launching one, its `ws://`
        /// DevTools URL or `http://host:port` (empty: launch one).
        "devtools.url" => devtools_url: String = String::new(),
        /// `browser.args`: extra command-line arguments for a launched browser.
        "args" => args: Vec<String> = Vec::new(),
        /// `browser.host.rules`: Chromium's `--host-resolver-rules`.
        "host.rules" => host_rules: String = String::new(),
        /// `browser.tabs`: tabs rendering at once.
        "tabs" => tabs: usize = 4,
        /// `browser.page.timeout`: seconds a page may take to settle.
        "page.timeout" => page_timeout: f64 = 30.0,
        /// `browser.launch.timeout`: seconds a launched browser may take to start.
        "launch.timeout" => launch_timeout: f64 = 20.0,
        /// `browser.settle.idle`: seconds with no request in flight after which a page has
        /// settled.
        "settle.idle" => settle_idle: f64 = 0.5,
        /// `browser.settle.selector`: a CSS selector whose appearance settles the page instead.
        "settle.selector" => settle_selector: String = String::new(),
        /// `browser.paging.click`: a "more" button clicked until it is gone.
        "paging.click" => paging_click: String = String::new(),
        /// `browser.paging.scroll`: scroll to the bottom until the page stops growing.
        "paging.scroll" => paging_scroll: bool = false,
        /// `browser.paging.max`: clicks or scroll steps per page at most.
        "paging.max" => paging_max: usize = 20,
        /// `browser.block`: resource types not loaded (`image`, `font`, `media`, `stylesheet`).
        "block" => block: Vec<String> = vec!["image".into(), "font".into(), "media".into()],
        /// `browser.restart.pages`: pages rendered before the browser is replaced (0: never).
        "restart.pages" => restart_pages: u64 = 1000,
        /// `browser.max.rss.mb`: MiB its processes may hold before the browser is replaced (0: no
        /// limit).
        "max.rss.mb" => max_rss_mb: u64 = 2048,
        /// `browser.render.hosts`: render only these hosts (or `*.domain`)...
        "render.hosts" => render_hosts: Vec<String> = Vec::new(),
        /// `browser.render.patterns`: ...URLs matching these regular expressions...
        "render.patterns" => render_patterns: Vec<String> = Vec::new(),
        /// `browser.render.metadata`: ...or URLs whose metadata has this key (not `false`).
        "render.metadata" => render_metadata: String = String::new(),
    }
}

/// Where the browser comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrowserSource {
    /// Launched by squall: this executable (`browser.executable`), or the first of `chromium`,
    /// `chromium-browser`, `google-chrome` found on `PATH` when `None`.
    Launch(Option<PathBuf>),
    /// A running browser's DevTools address (`browser.devtools.url`): a `ws://` URL, or the
    /// `http://host:port` of its remote-debugging port. It is never restarted by squall.
    Attach(String),
}

/// Resource types the browser does not load (`browser.block`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockedResource {
    /// Images (`image`).
    Image,
    /// Web fonts (`font`).
    Font,
    /// Audio and video (`media`).
    Media,
    /// Style sheets (`stylesheet`): saves time, but pages that lay out by script may differ.
    Stylesheet,
}

impl BlockedResource {
    fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "image" => Some(BlockedResource::Image),
            "font" => Some(BlockedResource::Font),
            "media" => Some(BlockedResource::Media),
            "stylesheet" => Some(BlockedResource::Stylesheet),
            _ => None,
        }
    }
}

/// How a page is considered settled, and what is done to reveal more of it.
#[derive(Debug, Clone, PartialEq)]
pub struct SettleConfig {
    /// Quiet time with no request in flight after which the page has settled (`browser.settle.idle`).
    pub idle: Duration,
    /// A CSS selector whose appearance settles the page instead (`browser.settle.selector`).
    pub selector: Option<String>,
    /// A "more" button clicked until it is gone, settling after each click (`browser.paging.click`).
    pub click: Option<String>,
    /// Scroll to the bottom until the page stops growing, settling after each step
    /// (`browser.paging.scroll`).
    pub scroll: bool,
    /// At most this many clicks or scroll steps per page (`browser.paging.max`).
    pub max_steps: usize,
}

/// Everything the browser protocol is configured with: its keys ([`BrowserSettings`]) checked, with
/// the core's keys it takes (User-Agent, redirects, content limit).
#[derive(Debug, Clone)]
pub struct BrowserConfig {
    /// Where the browser comes from.
    pub source: BrowserSource,
    /// Extra command-line arguments for a launched browser (`browser.args`).
    pub args: Vec<String>,
    /// Chromium's `--host-resolver-rules` (`browser.host.rules`), e.g. `MAP *.test 127.0.0.1`.
    pub host_rules: String,
    /// Tabs rendering at once (`browser.tabs`); a fetch waits for a free tab.
    pub tabs: usize,
    /// A page not settled after this long fails (FETCH_ERROR, cause `timeout`) and its tab is
    /// replaced (`browser.page.timeout`).
    pub page_timeout: Duration,
    /// How long a launched browser may take to start (`browser.launch.timeout`).
    pub launch_timeout: Duration,
    /// When a page has settled.
    pub settle: SettleConfig,
    /// Resource types not loaded (`browser.block`).
    pub block: Vec<BlockedResource>,
    /// The browser is restarted after rendering this many pages (`browser.restart.pages`); 0: never.
    pub restart_pages: u64,
    /// The browser is restarted once its processes use more memory than this
    /// (`browser.max.rss.mb`); `None`: no limit.
    pub max_rss_bytes: Option<u64>,
    /// Which URLs are rendered; the others are fetched over plain HTTP.
    pub rules: RenderRules,
    /// Redirects are followed within a render (`http.allow.redirects`), up to `max_redirects`.
    pub follow_redirects: bool,
    /// Redirects followed in one render (`http.max.redirects`).
    pub max_redirects: usize,
    /// The User-Agent the browser sends (`http.agent.*`).
    pub user_agent: String,
    /// A rendered page's HTML is cut at this many bytes (`http.content.limit`); `None`: no limit.
    pub content_limit: Option<usize>,
}

impl BrowserConfig {
    /// Reads the `browser.*` keys of `config` (and its `http.agent.*` and redirect keys).
    pub fn from_config(config: &CrawlConfig) -> Result<Self, ConfigError> {
        let keys: BrowserSettings = config.extension(&[PREFIX])?;
        let invalid = |key: &str, reason: String| ConfigError::InvalidValue {
            key: format!("{PREFIX}{key}"),
            message: reason,
        };
        let seconds = |key: &str, value: f64| {
            Duration::try_from_secs_f64(value)
                .ok()
                .filter(|d| !d.is_zero() || key == "settle.idle")
                .ok_or_else(|| invalid(key, format!("{value} is not a positive number of seconds")))
        };
        if keys.tabs == 0 {
            return Err(invalid("tabs", "at least one tab is needed".to_string()));
        }
        let block = keys
            .block
            .iter()
            .map(|name| {
                BlockedResource::parse(name).ok_or_else(|| {
                    invalid(
                        "block",
                        format!("unknown resource type `{name}` (image, font, media, stylesheet)"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let rules = RenderRules::new(
            keys.render_hosts,
            &keys.render_patterns,
            non_empty(keys.render_metadata),
        )
        .map_err(|reason| invalid("render.patterns", reason))?;
        Ok(BrowserConfig {
            source: match non_empty(keys.devtools_url) {
                Some(url) => BrowserSource::Attach(url),
                None => BrowserSource::Launch(non_empty(keys.executable).map(PathBuf::from)),
            },
            args: keys.args,
            host_rules: keys.host_rules,
            tabs: keys.tabs,
            page_timeout: seconds("page.timeout", keys.page_timeout)?,
            launch_timeout: seconds("launch.timeout", keys.launch_timeout)?,
            settle: SettleConfig {
                idle: seconds("settle.idle", keys.settle_idle)?,
                selector: non_empty(keys.settle_selector),
                click: non_empty(keys.paging_click),
                scroll: keys.paging_scroll,
                max_steps: keys.paging_max,
            },
            block,
            restart_pages: keys.restart_pages,
            max_rss_bytes: (keys.max_rss_mb > 0).then(|| keys.max_rss_mb * 1024 * 1024),
            rules,
            follow_redirects: config.http.allow_redirects,
            max_redirects: config.http.max_redirects,
            user_agent: config.agent.user_agent(),
            content_limit: config.http.content_limit,
        })
    }
}

fn non_empty(text: String) -> Option<String> {
    let text = text.trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(yaml: &str) -> CrawlConfig {
        let text = format!("http.agent.name: test\n{yaml}");
        CrawlConfig::from_yaml_str(&text).expect("config")
    }

    #[test]
    fn defaults_launch_from_path_with_four_tabs_and_block_images_fonts_media() {
        let settings = BrowserConfig::from_config(&config("")).expect("settings");
        assert_eq!(settings.source, BrowserSource::Launch(None));
        assert_eq!(settings.tabs, 4);
        assert_eq!(
            settings.block,
            [
                BlockedResource::Image,
                BlockedResource::Font,
                BlockedResource::Media
            ]
        );
        assert_eq!(settings.max_rss_bytes, Some(2048 * 1024 * 1024));
        assert!(
            settings.user_agent.starts_with("test/"),
            "{}",
            settings.user_agent
        );
    }

    #[test]
    fn the_shipped_example_lists_every_key_with_its_default() {
        let text = include_str!("../../examples/browser-conf.yaml");
        if let Err(error) = squall::config::check_example::<BrowserSettings>(text, &[PREFIX], &[]) {
            panic!("examples/browser-conf.yaml: {error}");
        }
    }

    #[test]
    fn keys_are_read_and_checked() {
        let settings = BrowserConfig::from_config(&config(
            "browser.devtools.url: http://127.0.0.1:9222\nbrowser.tabs: 2\nbrowser.paging.click: '#more'\nbrowser.render.hosts: [app.test]\nbrowser.max.rss.mb: 0\n",
        ))
        .expect("settings");
        assert_eq!(
            settings.source,
            BrowserSource::Attach("http://127.0.0.1:9222".to_string())
        );
        assert_eq!(settings.settle.click.as_deref(), Some("#more"));
        assert_eq!(settings.max_rss_bytes, None);
        let typo = BrowserConfig::from_config(&config("browser.tab: 2\n")).expect_err("typo");
        assert!(typo.to_string().contains("browser.tabs"), "{typo}");
        let zero = BrowserConfig::from_config(&config("browser.tabs: 0\n")).expect_err("0 tabs");
        assert!(zero.to_string().contains("browser.tabs"), "{zero}");
        let block = BrowserConfig::from_config(&config("browser.block: [video]\n"))
            .expect_err("unknown type");
        assert!(block.to_string().contains("video"), "{block}");
        let pattern = BrowserConfig::from_config(&config("browser.render.patterns: ['(']\n"))
            .expect_err("bad regex");
        assert!(
            pattern.to_string().contains("browser.render.patterns"),
            "{pattern}"
        );
    }

    /// Each `browser.*` key has one default: the value [`BrowserSettings`] holds when the key is
    /// absent is the one examples/browser-conf.yaml documents, and the file documents every key.
    #[test]
    fn each_key_has_one_default_the_example_documents() {
        let text = include_str!("../../examples/browser-conf.yaml");
        let defaults = squall::settings::documented_defaults::<BrowserSettings>();
        assert_eq!(defaults.len(), 18, "every key is listed");
        let wrong = squall::settings::undocumented_defaults(&defaults, text, PREFIX);
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
