//! Memory of a browser: what its process and every process under it (renderers, GPU and network
//! services) hold resident, read from `/proc` (Linux; elsewhere it is unknown).

use std::collections::HashMap;

/// Bytes resident in memory for `root` and all its descendants, or `None` when `/proc` cannot
/// tell (not Linux, or the process is gone).
pub fn tree_rss_bytes(root: u32) -> Option<u64> {
    let tree = process_tree(root)?;
    let root_rss = process_rss_bytes(root)?;
    let rest: u64 = tree[1..]
        .iter()
        .filter_map(|pid| process_rss_bytes(*pid))
        .sum();
    Some(root_rss + rest)
}

/// `root` and every process below it, children before grandchildren, or `None` when `/proc`
/// cannot tell (not Linux).
pub fn process_tree(root: u32) -> Option<Vec<u32>> {
    let parents = parent_map()?;
    let mut tree = vec![root];
    let mut index = 0;
    while let Some(&pid) = tree.get(index) {
        tree.extend(
            parents
                .iter()
                .filter(|(_, parent)| **parent == pid)
                .map(|(child, _)| *child),
        );
        index += 1;
    }
    Some(tree)
}

/// Every process's parent.
fn parent_map() -> Option<HashMap<u32, u32>> {
    let entries = std::fs::read_dir("/proc").ok()?;
    let mut parents = HashMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(parent) = parent_of(pid) {
            parents.insert(pid, parent);
        }
    }
    Some(parents)
}

/// The parent of `pid`, from `/proc/PID/stat` (the field after the command name, which may hold
/// spaces and parentheses).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// Resident bytes of one process: its proportional set (`Pss` of `/proc/PID/smaps_rollup`, which
/// shares pages mapped by several of the browser's processes among them instead of counting them
/// in each), or `VmRSS` where that is not available.
fn process_rss_bytes(pid: u32) -> Option<u64> {
    let field = |file: &str, name: &str| -> Option<u64> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/{file}")).ok()?;
        let line = text.lines().find(|line| line.starts_with(name))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    };
    field("smaps_rollup", "Pss:").or_else(|| field("status", "VmRSS:"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process's id, where the system has `/proc` to read (the tests pass where it has not).
    fn this_process() -> Option<u32> {
        let has_proc = std::path::Path::new("/proc/self/status").exists();
        has_proc.then(std::process::id)
    }

    #[test]
    fn this_process_has_a_resident_set_and_a_parent() {
        let Some(me) = this_process() else {
            return;
        };
        let rss = tree_rss_bytes(me).expect("rss of this process");
        assert!(rss > 1024 * 1024, "{rss}");
        assert!(parent_of(me).is_some());
    }

    #[test]
    fn a_child_process_counts_in_the_tree() {
        let Some(me) = this_process() else {
            return;
        };
        let alone = process_rss_bytes(me).expect("own rss");
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep");
        let with_child = tree_rss_bytes(me).expect("tree rss");
        let _ = child.kill();
        let _ = child.wait();
        assert!(with_child > alone, "{with_child} vs {alone}");
    }
}
