//! The posts of an app site: titles, texts and their JSON forms.

use serde::Serialize;

use super::AppSpec;
use crate::model::SplitMix;

/// Words the post texts are made of.
const WORDS: [&str; 32] = [
    "amber", "basalt", "cedar", "delta", "ember", "fjord", "granite", "harbor", "indigo",
    "juniper", "kestrel", "lantern", "meadow", "nickel", "orchid", "pepper", "quartz", "raven",
    "saffron", "timber", "umber", "velvet", "willow", "xenon", "yarrow", "zephyr", "anchor",
    "bramble", "cobalt", "dune", "falcon", "garnet",
];

/// Words in a post text after its unique prefix.
const TEXT_WORDS: usize = 12;

/// `app-01` for `app-01.test`.
fn short_name(host: &str) -> &str {
    host.strip_suffix(".test").unwrap_or(host)
}

/// Title of post `id` of `host`: `Post 7 on app-01`.
pub(crate) fn title(host: &str, id: usize) -> String {
    format!("Post {id} on {}", short_name(host))
}

/// Text of post `id` of `host`: `The text of post 7 on app-01.test: ` then
/// deterministic words and a full stop.
pub(crate) fn text(host: &str, id: usize) -> String {
    // FNV-1a of the host name, mixed with the id: the words depend on both.
    let host_hash = host.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let mut rng = SplitMix::new(host_hash ^ (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut out = format!("The text of post {id} on {host}:");
    for _ in 0..TEXT_WORDS {
        out.push(' ');
        out.push_str(WORDS[rng.below(WORDS.len())]);
    }
    out.push('.');
    out
}

/// One entry of `/api/posts`.
#[derive(Debug, Serialize)]
pub(crate) struct PostSummary {
    /// Post id.
    pub(crate) id: usize,
    /// Post title.
    pub(crate) title: String,
}

/// The answer of `/api/posts?page=N`.
#[derive(Debug, Serialize)]
pub(crate) struct PostsPage {
    /// The page number asked for.
    pub(crate) page: usize,
    /// The posts of the page, by id.
    pub(crate) posts: Vec<PostSummary>,
    /// Whether a later page has posts.
    pub(crate) more: bool,
}

impl PostsPage {
    /// Page `page` of the posts of `host`.
    pub(crate) fn of(spec: &AppSpec, host: &str, page: usize) -> PostsPage {
        let ids = spec.page_ids(page);
        let more = ids.end < spec.posts_per_host;
        PostsPage {
            page,
            posts: ids
                .map(|id| PostSummary {
                    id,
                    title: title(host, id),
                })
                .collect(),
            more,
        }
    }
}

/// The answer of `/api/post/ID`.
#[derive(Debug, Serialize)]
pub(crate) struct PostJson {
    /// Post id.
    pub(crate) id: usize,
    /// Post title.
    pub(crate) title: String,
    /// Post text.
    pub(crate) text: String,
}

impl PostJson {
    /// Post `id` of `host`, if the host has it.
    pub(crate) fn of(spec: &AppSpec, host: &str, id: usize) -> Option<PostJson> {
        (id < spec.posts_per_host).then(|| PostJson {
            id,
            title: title(host, id),
            text: text(host, id),
        })
    }
}
