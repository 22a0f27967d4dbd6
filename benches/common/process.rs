//! What the kernel says about a process and the machine: CPU time, peak memory, busy share.

/// Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`, 100 on Linux).
const CLOCK_TICKS: f64 = 100.0;

/// CPU seconds (user + system) process `pid` used so far; 0 when it is gone.
pub fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
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
    // utime and stime are fields 14 and 15 of the line; after the name, field 3 (the state) is
    // index 0, so they are indices 11 and 12.
    (ticks(11) + ticks(12)) / CLOCK_TICKS
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
