//! What a crawl opens before it starts, each named on standard error as it opens: the frontier
//! (`frontier.rs`, the only place that chooses one by `frontier.kind`), the content index
//! (`content.rs`) and the headless browser (`browser.rs`).

mod browser;
mod content;
mod frontier;

pub(crate) use browser::start_browser;
pub(crate) use content::open_content_index;
pub(crate) use frontier::{ChosenFrontier, frontiers, open_frontier};
