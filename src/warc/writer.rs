//! The WARC files: named, opened with a `warcinfo` record, appended to one exchange at a time,
//! and rotated by size.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;

use chrono::Utc;
use tracing::info;

use super::error::WarcError;
use super::exchange::Exchange;
use super::record::{exchange_members, record_id, warcinfo};
use super::settings::WarcSettings;

/// The suffix of a file still being written.
const OPEN_SUFFIX: &str = ".open";

/// The file being written.
struct OpenFile {
    /// Its name while written (`... .warc.gz.open`).
    open_path: PathBuf,
    /// Its name once closed.
    path: PathBuf,
    file: File,
    /// Bytes written: complete records only.
    length: u64,
    /// The ID of its `warcinfo` record.
    warcinfo_id: String,
}

/// Writes exchanges to WARC files in one directory.
pub(super) struct WarcFiles {
    settings: WarcSettings,
    current: Option<OpenFile>,
    serial: u32,
    /// Files closed so far, by final name.
    pub(super) closed: Vec<PathBuf>,
    /// Records written so far (`warcinfo` records included).
    pub(super) records: u64,
}

impl WarcFiles {
    /// Files in `settings.dir`, which is created if missing.
    pub(super) fn new(settings: WarcSettings) -> Result<Self, WarcError> {
        if settings.max_file_size == 0 {
            return Err(WarcError::Settings(
                "the maximum file size is 0".to_string(),
            ));
        }
        if settings.prefix.is_empty() || settings.prefix.contains(['/', '\\']) {
            return Err(WarcError::Settings(format!(
                "the file name prefix {:?} is empty or holds a path separator",
                settings.prefix
            )));
        }
        std::fs::create_dir_all(&settings.dir).map_err(|source| WarcError::CreateDir {
            path: settings.dir.clone(),
            source,
        })?;
        Ok(WarcFiles {
            settings,
            current: None,
            serial: 0,
            closed: Vec::new(),
            records: 0,
        })
    }

    /// Appends the records of `exchange` to the current file, opening one first if there is none,
    /// and closes the file once it has reached the maximum size. A failed append cuts the file
    /// back to its last complete record and closes it.
    pub(super) fn write(&mut self, exchange: &Exchange) -> Result<(), WarcError> {
        if self.current.is_none() {
            self.open_next()?;
        }
        let Some(file) = self.current.as_mut() else {
            return Err(WarcError::Stopped);
        };
        let members = exchange_members(exchange, &file.warcinfo_id, self.settings.request_records)
            .map_err(|source| WarcError::Write {
                path: file.open_path.clone(),
                source,
            })?;
        if let Err(error) = append(file, &members) {
            // Best effort: the file keeps only complete records, and the next exchange gets a new one.
            let _ = file.file.set_len(file.length);
            let _ = self.close();
            return Err(error);
        }
        let full = file.length >= self.settings.max_file_size;
        self.records += members.len() as u64;
        if full {
            self.close()?;
        }
        Ok(())
    }

    /// Closes the current file, if there is one: synced to disk and renamed to its final name (it
    /// holds complete records only, so it is renamed even when the sync fails).
    pub(super) fn close(&mut self) -> Result<(), WarcError> {
        let Some(file) = self.current.take() else {
            return Ok(());
        };
        let synced = file.file.sync_all();
        let renamed = std::fs::rename(&file.open_path, &file.path);
        if renamed.is_ok() {
            info!(path = %file.path.display(), bytes = file.length, "WARC file closed");
            self.closed.push(file.path);
        }
        synced.and(renamed).map_err(|source| WarcError::Close {
            path: file.open_path,
            source,
        })
    }

    /// Opens the next file and writes its `warcinfo` record.
    fn open_next(&mut self) -> Result<(), WarcError> {
        let timestamp = Utc::now().format("%Y%m%d%H%M%S").to_string();
        let (name, open_path, file) = loop {
            let name = format!(
                "{}-{timestamp}-{:05}.warc.gz",
                self.settings.prefix, self.serial
            );
            self.serial += 1;
            let path = self.settings.dir.join(&name);
            let open_path = self.settings.dir.join(format!("{name}{OPEN_SUFFIX}"));
            if path.exists() {
                continue;
            }
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&open_path)
            {
                Ok(file) => break (name, open_path, file),
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(source) => {
                    return Err(WarcError::CreateFile {
                        path: open_path,
                        source,
                    });
                }
            }
        };
        let warcinfo_id = record_id();
        let mut opened = OpenFile {
            path: self.settings.dir.join(&name),
            open_path,
            file,
            length: 0,
            warcinfo_id,
        };
        let info = warcinfo(&opened.warcinfo_id, &name, &self.settings.info).map_err(|source| {
            WarcError::Write {
                path: opened.open_path.clone(),
                source,
            }
        })?;
        append(&mut opened, &[info])?;
        self.records += 1;
        self.current = Some(opened);
        Ok(())
    }
}

/// Appends whole members to `file`.
fn append(file: &mut OpenFile, members: &[Vec<u8>]) -> Result<(), WarcError> {
    for member in members {
        file.file
            .write_all(member)
            .map_err(|source| WarcError::Write {
                path: file.open_path.clone(),
                source,
            })?;
        file.length += member.len() as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Whether `path` is a WARC file still being written.
    fn is_open_file(path: &Path) -> bool {
        path.to_string_lossy().ends_with(OPEN_SUFFIX)
    }

    fn exchange(body: &'static [u8]) -> Exchange {
        Exchange {
            target_uri: "http://a.test/".to_string(),
            date: Utc::now(),
            ip_address: None,
            request: bytes::Bytes::from_static(b"GET / HTTP/1.1\r\nhost: a.test\r\n\r\n"),
            response_head: bytes::Bytes::from_static(b"HTTP/1.1 200 OK\r\n\r\n"),
            payload: bytes::Bytes::from_static(body),
            truncated: false,
        }
    }

    fn files_in(dir: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("read dir")
            .map(|entry| entry.expect("entry").path())
            .collect();
        files.sort();
        files
    }

    #[test]
    fn files_rotate_once_they_reach_the_size_and_close_under_their_final_name() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut files = WarcFiles::new(WarcSettings {
            dir: dir.path().join("out"),
            max_file_size: 1,
            ..WarcSettings::default()
        })
        .expect("files");
        files.write(&exchange(b"one")).expect("written");
        files.write(&exchange(b"two")).expect("written");
        files.close().expect("closed");
        let names = files_in(&dir.path().join("out"));
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names.iter().all(|name| !is_open_file(name)), "{names:?}");
        assert_eq!(files.closed, names);
        assert_eq!(
            files.records, 6,
            "warcinfo, request and response in each file"
        );
        let name = names[0]
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        assert!(
            name.starts_with("squall-") && name.ends_with("-00000.warc.gz"),
            "{name}"
        );
    }

    /// Files in `dir` with the other settings at their defaults.
    fn files_with_defaults(dir: &Path) -> WarcFiles {
        WarcFiles::new(WarcSettings {
            dir: dir.to_path_buf(),
            ..WarcSettings::default()
        })
        .expect("files")
    }

    #[test]
    fn a_file_below_the_size_stays_open_until_closed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut files = files_with_defaults(dir.path());
        files.write(&exchange(b"one")).expect("written");
        files.write(&exchange(b"two")).expect("written");
        let names = files_in(dir.path());
        assert_eq!(names.len(), 1);
        assert!(is_open_file(&names[0]), "{names:?}");
        files.close().expect("closed");
        assert!(!is_open_file(&files_in(dir.path())[0]));
    }

    #[test]
    fn a_failed_write_is_an_error_naming_the_file_and_the_next_exchange_gets_a_new_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut files = files_with_defaults(dir.path());
        files.write(&exchange(b"one")).expect("written");
        // The disk fills up under the open file.
        let full = OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let first = files.current.as_mut().expect("an open file");
        first.file = full;
        let first_path = first.path.clone();
        let Err(error) = files.write(&exchange(b"two")) else {
            panic!("a write to a full disk succeeded");
        };
        assert!(matches!(error, WarcError::Write { .. }), "{error:?}");
        assert!(
            error.to_string().contains("cannot write to the WARC file"),
            "{error}"
        );
        assert!(files.current.is_none(), "the failed file is closed");
        files
            .write(&exchange(b"three"))
            .expect("written to a new file");
        files.close().expect("closed");
        assert_eq!(files.closed.len(), 2);
        assert_eq!(files.closed[0], first_path);
        assert_ne!(files.closed[1], first_path);
    }

    #[test]
    fn bad_settings_are_errors_that_say_why() {
        let dir = tempfile::tempdir().expect("temp dir");
        let settings = |prefix: &str, max_file_size| WarcSettings {
            dir: dir.path().to_path_buf(),
            prefix: prefix.to_string(),
            max_file_size,
            ..WarcSettings::default()
        };
        let message = |settings| match WarcFiles::new(settings) {
            Err(error) => error.to_string(),
            Ok(_) => panic!("accepted"),
        };
        assert!(message(settings("a", 0)).contains("maximum file size"));
        assert!(message(settings("a/b", 10)).contains("path separator"));
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"").expect("file");
        let under_a_file = WarcSettings {
            dir: file.join("warc"),
            ..WarcSettings::default()
        };
        assert!(message(under_a_file).contains("cannot create the WARC directory"));
    }
}
