//! The crawl binary (the `squall-crawler` crate, run as the example `crawl`) given hostile or
//! broken configuration: each ends at once, with a clear result, whatever the files hold
//! (issue 57).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support;
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

/// The binary run in `dir` on `args`, which it must refuse (exit 2): what it says.
fn refused(dir: &Path, args: &[&str]) -> String {
    let output = run_bounded(dir, args);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    stderr
}

/// A YAML error in the second of two config files, or in a flux, names the file and the line:
/// a key given twice, aliases that expand too far, a syntax error.
#[test]
fn a_yaml_error_names_its_file_and_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, text: &str| {
        std::fs::write(dir.path().join(name), text).expect("write");
    };
    write("good.yaml", "http.agent.name: squall-test\n");
    write(
        "twice.yaml",
        "fetcher.threads.number: 2\nhttp.agent.name: x\nhttp.agent.name: y\n",
    );
    let mut bomb = "a: &a [1]\n".to_string();
    for (name, from) in [("b", "a"), ("c", "b"), ("d", "c"), ("e", "d"), ("f", "e")] {
        let uses = vec![format!("*{from}"); 9].join(",");
        bomb.push_str(&format!("{name}: &{name} [{uses}]\n"));
    }
    write("aliases.yaml", &bomb);
    write(
        "broken.yaml",
        "fetcher.threads.number: 2\nhttp.agent.name: [x\n",
    );
    let config = |file: &str| {
        let frontier = dir.path().join("frontier").display().to_string();
        refused(
            dir.path(),
            &[
                "--config",
                "good.yaml",
                "--config",
                file,
                "--frontier-path",
                &frontier,
            ],
        )
    };
    let said = config("twice.yaml");
    assert!(said.contains("config file twice.yaml, line 3: "), "{said}");
    assert!(said.contains("http.agent.name"), "{said}");
    let said = config("aliases.yaml");
    assert!(
        said.contains("config file aliases.yaml, line 2: "),
        "{said}"
    );
    assert!(said.contains("aliases expand too far"), "{said}");
    let said = config("broken.yaml");
    assert!(said.contains("config file broken.yaml, line 3: "), "{said}");

    write(
        "twice.flux",
        "name: twice\nconfig:\n  http.agent.name: x\n  fetcher.threads.number: 2\n  \
         http.agent.name: y\n",
    );
    let said = refused(dir.path(), &["--flux", "twice.flux"]);
    assert!(said.contains("twice.flux, line 5: "), "{said}");
}

/// A flux whose `${agent.name}` no `--flux-filter` property fills: Flux leaves it as written with
/// a warning; squall warns the same (file and line), and refuses to send it to sites as the
/// User-Agent.
#[test]
fn an_unfilled_placeholder_is_never_sent_as_the_user_agent() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, text: &str| {
        std::fs::write(dir.path().join(name), text).expect("write");
    };
    // Nothing listens on the discard port: a crawl that starts ends at once.
    write("seeds.txt", "http://127.0.0.1:9/\n");
    write(
        "conf.yaml",
        "config:\n  http.agent.name: \"${agent.name}\"\n  fetcher.threads.number: 1\n",
    );
    write(
        "crawler.flux",
        "name: agent\nincludes:\n  - resource: false\n    file: conf.yaml\n    override: true\n\
         spouts:\n  - id: spout\n    \
         className: org.apache.stormcrawler.opensearch.persistence.AggregationSpout\n  \
         - id: seeds\n    className: org.apache.stormcrawler.spout.FileSpout\n    \
         constructorArgs: [\".\", \"seeds.txt\"]\n",
    );
    let frontier = dir.path().join("frontier").display().to_string();
    let args = [
        "--flux",
        "crawler.flux",
        "--frontier",
        "embedded",
        "--frontier-path",
        &frontier,
        "--until-idle",
    ];
    let said = refused(dir.path(), &args);
    assert!(said.contains("conf.yaml, line 2: ${agent.name}"), "{said}");
    assert!(said.contains("config key `http.agent.name`"), "{said}");
    assert!(said.contains("${agent.name}, a placeholder"), "{said}");
}

/// 20,000 exclude patterns: each compiled alone took about 14 KB and every URL was tried against
/// each in turn (190,000 took 2 GB and 15 s before the crawl began). Over the bound, the list is
/// refused by name, with its figures.
#[test]
fn too_many_exclude_patterns_are_refused_with_the_figures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = "http.agent.name: squall-test\nurlfilter.exclude:\n".to_string();
    for host in 0..20_000 {
        config.push_str(&format!("  - '^https?://host{host}\\.example\\.com/'\n"));
    }
    std::fs::write(dir.path().join("conf.yaml"), config).expect("write");
    let frontier = dir.path().join("frontier").display().to_string();
    let args = [
        "--config",
        "conf.yaml",
        "--frontier-path",
        &frontier,
        "--until-idle",
        "http://127.0.0.1:9/",
    ];
    let said = refused(dir.path(), &args);
    assert!(said.contains("urlfilter.exclude: 20000 patterns"), "{said}");
    assert!(said.contains("over the bound of 10000 patterns"), "{said}");
}

/// `/dev/zero` given as a config file or as a flux's properties file: each read stops one byte
/// past its bound (16 MiB) and the file is refused by name, at once, with exit 2 (the whole read
/// grew without end before).
#[cfg(unix)]
#[test]
fn an_endless_config_or_properties_file_is_refused_at_its_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("seeds.txt"), "http://127.0.0.1:9/\n").expect("seeds");
    std::fs::write(
        dir.path().join("crawler.flux"),
        "name: zero\nspouts:\n  - id: seeds\n    \
         className: org.apache.stormcrawler.spout.FileSpout\n    \
         constructorArgs: [\".\", \"seeds.txt\"]\n",
    )
    .expect("flux");
    let frontier = dir.path().join("frontier").display().to_string();
    let started = Instant::now();
    let said = refused(
        dir.path(),
        &["--config", "/dev/zero", "--frontier-path", &frontier],
    );
    assert!(
        said.contains("/dev/zero: over the bound of 16777216 bytes for a YAML config file"),
        "{said}"
    );
    let flux = ["--flux", "crawler.flux", "--flux-filter", "/dev/zero"];
    let said = refused(
        dir.path(),
        &[&flux[..], &["--frontier-path", &frontier]].concat(),
    );
    assert!(
        said.contains("/dev/zero: over the bound of 16777216 bytes for a properties file"),
        "{said}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}
