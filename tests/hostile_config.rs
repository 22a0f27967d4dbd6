//! The crawl binary (`examples/crawl.rs`) given hostile or broken configuration: each ends at once,
//! with a clear result, whatever the files hold (issue 57).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod support;

use support::binary::crawl_binary;

/// Longer than any of these runs takes, short enough to tell a run that never ends.
const HANG: Duration = Duration::from_secs(60);

/// The crawl binary in `dir` with `args`, its output once it has ended; a run still going after
/// [`HANG`] is killed and fails the test.
fn run_bounded(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(crawl_binary())
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the crawl binary");
    let started = Instant::now();
    while child.try_wait().expect("poll the crawl binary").is_none() {
        if started.elapsed() > HANG {
            child.kill().expect("kill the crawl binary");
            let output = child.wait_with_output().expect("its output");
            panic!(
                "{args:?} still running after {HANG:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().expect("its output")
}

/// Nine flux files, each including the next ten times (no cycle): 10^8 paths through the
/// includes. The binary reads each file once, and injects the FileSpout's seed.
#[test]
fn a_flux_whose_includes_form_a_diamond_is_read_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("seeds.txt"), "http://diamond.test/\n").expect("seeds");
    for level in 1..=9 {
        let mut text = String::new();
        if level == 1 {
            text.push_str(
                "name: diamond\nspouts:\n  - id: seeds\n    \
                 className: org.apache.stormcrawler.spout.FileSpout\n    \
                 constructorArgs: [\".\", \"seeds.txt\"]\n",
            );
        }
        if level < 9 {
            text.push_str("includes:\n");
            for _ in 0..10 {
                text.push_str(&format!(
                    "  - resource: false\n    file: level{}.flux\n    override: true\n",
                    level + 1
                ));
            }
        }
        text.push_str(&format!(
            "config:\n  http.agent.name: level{level}\n  fetcher.threads.number: {level}\n"
        ));
        std::fs::write(dir.path().join(format!("level{level}.flux")), text).expect("flux");
    }
    let frontier = dir.path().join("frontier").display().to_string();
    let output = run_bounded(
        dir.path(),
        &["--flux", "level1.flux", "--frontier-path", &frontier],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("1 seeds injected"), "{stderr}");
    assert!(stderr.contains("nothing to crawl"), "{stderr}");
}
