//! Helpers the unit tests of every module share.

use url::Url;

/// `text` as a URL; a test's own URLs are valid.
pub(crate) fn url(text: &str) -> Url {
    Url::parse(text).expect("a test URL")
}
