//! What the kernel says about a process and the machine: CPU time, peak memory, busy share.

/// Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`, 100 on Linux).
const CLOCK_TICKS: f64 = 100.0;

/// CPU seconds (user + system) process `pid` used so far; 0 when it is gone.
pub fn cpu_seconds(pid: u32) -> f64 {
    stat_cpu_seconds(std::path::Path::new(&format!("/proc/{pid}/stat")))
}

/// The largest resident set process `pid` has had so far (`VmHWM`), in bytes; 0 when it is gone.
pub fn peak_rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// The machine's (busy, total) jiffies from /proc/stat.
pub fn machine_jiffies() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(cpu) = stat.lines().next() else {
        return (0.0, 0.0);
    };
    let values: Vec<f64> = cpu
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    let total: f64 = values.iter().take(8).sum();
    let idle = values.get(3).copied().unwrap_or(0.0) + values.get(4).copied().unwrap_or(0.0);
    (total - idle, total)
}

/// CPU seconds (user + system) used so far by the threads of this process whose name starts with
/// `prefix` (`/proc/self/task/*/comm`, names cut at 15 bytes); threads already gone are not counted.
pub fn thread_cpu_seconds(prefix: &str) -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    tasks
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.trim_end().starts_with(prefix))
        })
        .map(|task| stat_cpu_seconds(&task.path().join("stat")))
        .sum()
}

/// `pid` and every process below it, children before grandchildren (`pid` alone where `/proc`
/// cannot tell).
pub fn process_tree(pid: u32) -> Vec<u32> {
    squall_browser::process_tree(pid).unwrap_or_else(|| vec![pid])
}

/// CPU seconds used so far by the processes of `pid`'s tree, counting for each the children it
/// has reaped (`cutime` and `cstime`): a process that exited and was waited for by its parent in
/// the tree still counts (Chromium's zygote reaps the renderers it replaces); one reaped by a
/// process outside the tree does not.
pub fn tree_cpu_seconds(pid: u32) -> f64 {
    process_tree(pid)
        .into_iter()
        .map(|p| {
            stat_fields_seconds(
                std::path::Path::new(&format!("/proc/{p}/stat")),
                &[11, 12, 13, 14],
            )
        })
        .sum()
}

/// Utime + stime of a `/proc/.../stat` file, in seconds; 0 when it cannot be read.
fn stat_cpu_seconds(path: &std::path::Path) -> f64 {
    // utime and stime are fields 14 and 15 of the line; after the name, field 3 (the state) is
    // index 0, so they are indices 11 and 12.
    stat_fields_seconds(path, &[11, 12])
}

/// The sum of clock-tick fields of a `/proc/.../stat` file, by index after the command name (the
/// state is index 0), in seconds; 0 when it cannot be read.
fn stat_fields_seconds(path: &std::path::Path, indices: &[usize]) -> f64 {
    let Ok(stat) = std::fs::read_to_string(path) else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0.0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    indices.iter().map(|i| ticks(*i)).sum::<f64>() / CLOCK_TICKS
}

/// Asks `child` to stop as Ctrl-C does (SIGINT): a crawl process finishes its fetches and writes
/// its summary.
pub fn interrupt(child: &std::process::Child) {
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
}

/// Waits for `child` to end, looking every 100 ms, and kills it once `since` is a minute past.
pub async fn wait_or_kill(child: &mut std::process::Child, since: std::time::Instant) {
    while matches!(child.try_wait(), Ok(None)) {
        if since.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
