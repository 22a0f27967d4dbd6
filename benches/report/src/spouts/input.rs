//! `spouts.json`: URLs emitted per second and query latency of each spout at each frontier size,
//! and the lookups the spout tables and plots share.

pub use squall_bench_schema::spouts::{ShardSkew, SpoutResult, SpoutSize, Spouts};

/// The spout every other spout is compared with.
pub const REFERENCE_SPOUT: &str = "aggregation";

/// The spout the headlines are about.
pub const HEADLINE_SPOUT: &str = "queue";

/// The sizes in ascending order of URLs.
pub fn sorted_sizes(s: &Spouts) -> Vec<&SpoutSize> {
    let mut sizes: Vec<&SpoutSize> = s.sizes.iter().collect();
    sizes.sort_by_key(|sz| sz.urls);
    sizes
}

/// Spout names in order of first appearance over all sizes.
pub fn spout_names(sizes: &[&SpoutSize]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for sz in sizes {
        for sp in &sz.spouts {
            if !names.contains(&sp.spout) {
                names.push(sp.spout.clone());
            }
        }
    }
    names
}

/// The label of the spout named `name`: its row label where a size gives one, else the name.
pub fn label_of(sizes: &[&SpoutSize], name: &str) -> String {
    sizes
        .iter()
        .find_map(|sz| find(sz, name).and_then(|sp| sp.label.clone()))
        .unwrap_or_else(|| name.to_string())
}

/// Whether the spout ran at the equal budget of the headline (absent: yes).
pub fn equal_budget(sp: &SpoutResult) -> bool {
    sp.equal_budget != Some(false)
}

/// The spout named `name` at one size.
pub fn find<'a>(sz: &'a SpoutSize, name: &str) -> Option<&'a SpoutResult> {
    sz.spouts.iter().find(|sp| sp.spout == name)
}
