//! Opening an embedded frontier without harming what is there: a directory of other files is not
//! taken over, a `frontier.redb` that is not a frontier or is damaged is reported and left as it
//! is, and by default the whole file is checked when it is opened (redb verifies every page's
//! checksum), so that damage is found at once rather than as a failure in the middle of a crawl.
//! A path that is a broken symbolic link, and a frontier another process holds, are named as such;
//! the process holding a frontier leaves its PID in [`PID_FILE`] beside it, for that message.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use redb::{Builder, Database, DatabaseError, StorageError};

use super::FrontierError;

/// The frontier's file in its directory.
pub(super) const FILE: &str = "frontier.redb";

/// The file beside [`FILE`] holding the process id of the process that has the frontier open.
pub(super) const PID_FILE: &str = "frontier.pid";

/// Symbolic links followed before a path is called a loop (Linux's own bound).
const MAX_LINKS: usize = 40;

/// How to open a frontier's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbeddedOptions {
    /// Verify every page of the file when it is opened (`frontier.check.on.open`): reads the
    /// whole file (0.4 to 0.7 s for a million URLs, 570 MB, from the page cache) and reports
    /// damage as an error at once.
    pub check_integrity: bool,
}

/// The database in directory `dir`, created when the directory is new or empty.
pub(super) fn open_database(
    dir: &Path,
    options: EmbeddedOptions,
) -> Result<(Database, PathBuf), FrontierError> {
    let unusable = |message: String| FrontierError::Path {
        path: dir.to_path_buf(),
        message,
    };
    if dir.exists() && !dir.is_dir() {
        return Err(unusable("it exists and is not a directory".to_string()));
    }
    if let Some(message) = broken_link(dir) {
        return Err(FrontierError::BrokenLink {
            path: dir.to_path_buf(),
            message,
        });
    }
    std::fs::create_dir_all(dir).map_err(|e| unusable(e.to_string()))?;
    let path = dir.join(FILE);
    refuse_foreign_directory(dir, &path)?;
    let mut builder = Builder::new();
    builder.set_check_integrity_on_open(options.check_integrity);
    match builder.create(&path) {
        Ok(db) => {
            record_pid(dir);
            Ok((db, path))
        }
        Err(DatabaseError::DatabaseAlreadyOpen) => Err(FrontierError::InUse {
            holder: holder_pid(dir),
            path,
        }),
        Err(error) => Err(open_error(&path, error)),
    }
}

/// What is wrong with `dir` when it is a symbolic link that leads nowhere: back to itself (a loop),
/// or to a path that does not exist. `None` for any other path, existing or not.
fn broken_link(dir: &Path) -> Option<String> {
    if std::fs::metadata(dir).is_ok() {
        return None;
    }
    let mut at = dir.to_path_buf();
    let mut seen = HashSet::new();
    for _ in 0..MAX_LINKS {
        let link = std::fs::symlink_metadata(&at).ok()?;
        if !link.file_type().is_symlink() {
            return None;
        }
        if !seen.insert(at.clone()) {
            let at = at.display();
            return Some(format!(
                "it is a symbolic link loop (following it leads back to {at})"
            ));
        }
        let target = std::fs::read_link(&at).ok()?;
        let next = match at.parent() {
            Some(parent) => parent.join(&target),
            None => target.clone(),
        };
        if let Err(error) = std::fs::symlink_metadata(&next)
            && error.kind() == std::io::ErrorKind::NotFound
        {
            let target = target.display();
            return Some(format!("it is a link to {target}, which does not exist"));
        }
        at = next;
    }
    Some(format!(
        "it is a symbolic link loop (more than {MAX_LINKS} links followed)"
    ))
}

/// Leaves this process's id beside the frontier it opened, for a second process's message. Best
/// effort: a frontier in a directory that cannot take it works as well.
fn record_pid(dir: &Path) {
    if let Err(error) = std::fs::write(dir.join(PID_FILE), std::process::id().to_string()) {
        tracing::debug!(dir = %dir.display(), "no PID file for the frontier: {error}");
    }
}

/// The process id in the frontier's PID file, when it names a process that is running (checked
/// where /proc is; elsewhere taken as it is).
fn holder_pid(dir: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(dir.join(PID_FILE)).ok()?;
    let pid: u32 = text.trim().parse().ok()?;
    let proc = Path::new("/proc");
    let gone = proc.is_dir() && !proc.join(pid.to_string()).exists();
    (!gone).then_some(pid)
}

/// A directory that holds files but no frontier is someone else's: refused, naming a few of them.
fn refuse_foreign_directory(dir: &Path, file: &Path) -> Result<(), FrontierError> {
    if file.exists() {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| FrontierError::Path {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        // squall-frontier's crawls of their own, and a PID file left beside a frontier file
        .filter(|name| name != "crawls" && name != PID_FILE)
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    names.sort();
    names.truncate(3);
    Err(FrontierError::NotAFrontier {
        path: dir.to_path_buf(),
        found: names.join(", "),
    })
}

/// What went wrong opening the file at `path`, for the user.
fn open_error(path: &Path, error: DatabaseError) -> FrontierError {
    let damaged = |message: String| FrontierError::Damaged {
        path: path.to_path_buf(),
        message,
    };
    match error {
        DatabaseError::Storage(StorageError::Corrupted(message)) => damaged(message),
        DatabaseError::Storage(StorageError::Io(io))
            if io.kind() == std::io::ErrorKind::InvalidData =>
        {
            damaged(format!("not a redb database ({io})"))
        }
        DatabaseError::UpgradeRequired(version) => damaged(format!(
            "written in file format {version}, which this squall does not read"
        )),
        other => FrontierError::Storage(other.into()),
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::super::EmbeddedFrontier;
    use super::*;
    use crate::frontier::{StatusStore, StatusWrite};
    use crate::model::{CrawlUrl, Status};

    /// A frontier in `dir` holding `count` URLs over 50 hosts, closed.
    async fn filled(dir: &Path, count: usize) {
        let frontier = EmbeddedFrontier::open(dir).expect("open");
        let writes = (0..count)
            .map(|i| StatusWrite {
                url: CrawlUrl::new(
                    url::Url::parse(&format!("http://h{}.test/{i}", i % 50)).expect("url"),
                ),
                key: format!("h{}.test", i % 50),
                status: Status::Discovered,
                next_fetch: Some(Utc::now()),
                queue: Default::default(),
            })
            .collect();
        let written = frontier.store(writes).await;
        assert!(written.iter().all(Result::is_ok));
    }

    /// Opening `dir` fails; the message, and whether the file is as it was.
    fn refused(dir: &Path, before: &[u8]) -> (String, bool) {
        let error = match EmbeddedFrontier::open(dir) {
            Ok(_) => panic!("a damaged frontier opened"),
            Err(error) => error.to_string(),
        };
        let after = std::fs::read(dir.join(FILE)).expect("the file is still there");
        (error, after == before)
    }

    #[tokio::test]
    async fn a_damaged_file_is_named_at_open_and_left_as_it_is() {
        let dir = tempfile::tempdir().expect("temp dir");
        filled(dir.path(), 2000).await;
        let file = dir.path().join(FILE);
        let mut bytes = std::fs::read(&file).expect("read");
        let len = bytes.len();
        for byte in bytes.iter_mut().skip(len / 3).take(len / 3) {
            *byte ^= 0x5a;
        }
        std::fs::write(&file, &bytes).expect("damage it");
        let (error, unchanged) = refused(dir.path(), &bytes);
        assert!(
            error.contains("is damaged") && error.contains(&*file.to_string_lossy()),
            "{error}"
        );
        assert!(unchanged, "the damaged file was changed");
    }

    #[tokio::test]
    async fn a_file_that_is_not_a_frontier_is_named_and_left_as_it_is() {
        let dir = tempfile::tempdir().expect("temp dir");
        let text = b"name,url\nhome,https://example.org/\n".to_vec();
        std::fs::write(dir.path().join(FILE), &text).expect("write");
        let (error, unchanged) = refused(dir.path(), &text);
        assert!(error.contains("not a redb database"), "{error}");
        assert!(unchanged);
    }

    #[test]
    fn a_directory_of_other_files_is_not_taken_over() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("notes.txt"), "mine").expect("write");
        let error = EmbeddedFrontier::open(dir.path())
            .expect_err("refused")
            .to_string();
        assert!(
            error.contains("is not a squall frontier") && error.contains("notes.txt"),
            "{error}"
        );
        assert!(
            !dir.path().join(FILE).exists(),
            "a frontier was created in it"
        );
        let empty = tempfile::tempdir().expect("temp dir");
        assert!(
            EmbeddedFrontier::open(empty.path()).is_ok(),
            "an empty directory is fine"
        );
    }

    #[tokio::test]
    async fn without_the_check_a_good_file_opens_as_before() {
        let dir = tempfile::tempdir().expect("temp dir");
        filled(dir.path(), 10).await;
        let options = EmbeddedOptions {
            check_integrity: false,
        };
        let frontier = EmbeddedFrontier::open_with(dir.path(), options).expect("open");
        let total: u64 = frontier
            .count_by_status()
            .expect("count")
            .iter()
            .map(|(_, n)| n)
            .sum();
        assert_eq!(total, 10);
    }
}

#[cfg(all(test, unix))]
mod path_tests {
    use super::super::{EmbeddedFrontier, FrontierError};
    use super::*;

    #[test]
    fn a_symlink_loop_and_a_link_to_nothing_are_named_and_nothing_is_created() {
        let dir = tempfile::tempdir().expect("temp dir");
        let looped = dir.path().join("a");
        std::os::unix::fs::symlink(dir.path().join("b"), &looped).expect("link a");
        std::os::unix::fs::symlink(&looped, dir.path().join("b")).expect("link b");
        let error = EmbeddedFrontier::open(&looped).expect_err("a loop opened");
        assert!(
            matches!(error, FrontierError::BrokenLink { .. }),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(
            message.contains(&*looped.to_string_lossy()) && message.contains("symbolic link loop"),
            "{message}"
        );
        let dangling = dir.path().join("dangling");
        let target = dir.path().join("gone").join("frontier");
        std::os::unix::fs::symlink(&target, &dangling).expect("link");
        let message = EmbeddedFrontier::open(&dangling)
            .expect_err("a dangling link opened")
            .to_string();
        let named = format!("a link to {}, which does not exist", target.display());
        assert!(
            message.contains(&*dangling.to_string_lossy()) && message.contains(&named),
            "{message}"
        );
        assert!(!target.exists() && !dir.path().join("gone").exists());
    }

    #[test]
    fn a_frontier_in_use_is_named_with_its_holder() {
        let dir = tempfile::tempdir().expect("temp dir");
        let _held = EmbeddedFrontier::open(dir.path()).expect("open");
        let pid = std::process::id();
        let recorded = std::fs::read_to_string(dir.path().join(PID_FILE)).expect("PID file");
        assert_eq!(recorded, pid.to_string());
        let error = EmbeddedFrontier::open(dir.path()).expect_err("opened twice");
        assert!(
            matches!(error, FrontierError::InUse { holder: Some(p), .. } if p == pid),
            "{error:?}"
        );
        assert_eq!(error.kind(), crate::frontier::ErrorKind::Unavailable);
        let file = dir.path().join(FILE);
        assert_eq!(
            error.to_string(),
            format!(
                "the embedded frontier {} is in use by another process (PID {pid}): stop it, or \
                 give another frontier path",
                file.display()
            )
        );
        // A PID file naming no live process is not quoted.
        std::fs::write(dir.path().join(PID_FILE), u32::MAX.to_string()).expect("write");
        let error = EmbeddedFrontier::open(dir.path()).expect_err("opened twice");
        assert!(
            matches!(error, FrontierError::InUse { holder: None, .. }),
            "{error:?}"
        );
    }
}
