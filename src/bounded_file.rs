//! Files the user names, read whole but never beyond a bound: a configuration file, a properties
//! file, a StormCrawler filter file, a secret. Each kind has a limit no real file comes near; a file
//! over it is refused by name, and is read no further than one byte past the limit, so that
//! `/dev/zero`, a FIFO or a file still growing ends the read at once.

use std::io::Read;
use std::path::{Path, PathBuf};

/// One MiB.
const MIB: u64 = 1 << 20;

/// A kind of file, with the bound on its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileKind {
    /// What the file is, as the refusal names it (`YAML config`).
    pub name: &'static str,
    /// The most bytes a file of this kind may hold.
    pub limit: u64,
}

impl FileKind {
    /// A kind named `name` (as the refusal names it), of at most `limit` bytes.
    pub const fn new(name: &'static str, limit: u64) -> Self {
        FileKind { name, limit }
    }
}

/// A YAML configuration file (`--config`): 16 MiB.
pub const CONFIG_FILE: FileKind = FileKind::new("YAML config", 16 * MIB);

/// A properties file of values for a flux's placeholders (`--flux-filter`): 16 MiB.
pub const PROPERTIES_FILE: FileKind = FileKind::new("properties", 16 * MIB);

/// A StormCrawler filter file (`urlfilters.json`, `parsefilters.json`, `jsoupfilters.json`) or a
/// resource one names (rules, normalizers, lists): 16 MiB.
pub const FILTER_FILE: FileKind = FileKind::new("filter", 16 * MIB);

/// A PEM file: a certificate chain, a CA bundle, a private key: 4 MiB.
pub const PEM_FILE: FileKind = FileKind::new("PEM", 4 * MIB);

/// A file holding a secret (a token, an API key, a password) on its first line: 64 KiB.
pub const SECRET_FILE: FileKind = FileKind::new("secret", 64 << 10);

/// Why a bounded file could not be read. Each message names the file.
#[derive(Debug, thiserror::Error)]
pub enum BoundedFileError {
    /// The file could not be opened or read, or is not UTF-8.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The file holds more than its kind's bound.
    #[error("{}: over the bound of {limit} bytes for a {kind} file", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The bound, in bytes.
        limit: u64,
        /// The kind of file ([`FileKind::name`]).
        kind: &'static str,
    },
}

impl BoundedFileError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            BoundedFileError::Read { path, .. } | BoundedFileError::TooLarge { path, .. } => path,
        }
    }
}

/// `impl From<BoundedFileError> for $error`, for an error type with the variants
/// `Read { path: String, source: std::io::Error }` and `TooLarge(BoundedFileError)`: a file that
/// could not be read is its `Read`, one over its bound its `TooLarge`.
macro_rules! from_bounded_file_error {
    ($error:ident) => {
        impl From<$crate::bounded_file::BoundedFileError> for $error {
            #[doc = concat!("A file that could not be read is [`", stringify!($error), "::Read`]; one over its bound, [`", stringify!($error), "::TooLarge`].")]
            fn from(error: $crate::bounded_file::BoundedFileError) -> Self {
                match error {
                    $crate::bounded_file::BoundedFileError::Read { path, source } => $error::Read {
                        path: path.display().to_string(),
                        source,
                    },
                    too_large => $error::TooLarge(too_large),
                }
            }
        }
    };
}
pub(crate) use from_bounded_file_error;

/// The text of the file at `path`, refused when it holds more than `kind.limit` bytes (read no
/// further than one byte past it) or is not UTF-8.
pub fn read_to_string(path: &Path, kind: FileKind) -> Result<String, BoundedFileError> {
    let unreadable = |source| BoundedFileError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(kind.limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > kind.limit {
        return Err(BoundedFileError::TooLarge {
            path: path.to_path_buf(),
            limit: kind.limit,
            kind: kind.name,
        });
    }
    String::from_utf8(bytes)
        .map_err(|error| unreadable(std::io::Error::new(std::io::ErrorKind::InvalidData, error)))
}

/// Files, some near a bound, for the tests of what reads them.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::{Path, PathBuf};

    /// A file `name` holding `text` in a new temporary directory (gone when the directory is
    /// dropped).
    pub(crate) fn file_holding(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        (dir, path)
    }

    /// A file `name` in a new temporary directory (gone when the directory is dropped) of `size`
    /// bytes: `head`, spaces, then `tail`.
    pub(crate) fn padded_file(
        name: &str,
        head: &str,
        tail: &str,
        size: u64,
    ) -> (tempfile::TempDir, PathBuf) {
        file_holding(name, &padded(head, tail, size))
    }

    /// Writes at `path` a file of `size` bytes: `head`, spaces, then `tail`.
    pub(crate) fn write_padded(path: &Path, head: &str, tail: &str, size: u64) {
        std::fs::write(path, padded(head, tail, size)).expect("write");
    }

    /// `size` bytes: `head`, spaces, then `tail`.
    fn padded(head: &str, tail: &str, size: u64) -> String {
        let spaces = " ".repeat(size as usize - head.len() - tail.len());
        format!("{head}{spaces}{tail}")
    }

    /// Asserts that `refused` is the error of the file at `path` over the bound `bound` says
    /// (`"65536 bytes for a secret file"`).
    #[track_caller]
    pub(crate) fn assert_over_the_bound(
        refused: &impl std::fmt::Display,
        path: &Path,
        bound: &str,
    ) {
        let expected = format!("{}: over the bound of {bound}", path.display());
        assert_eq!(refused.to_string(), expected);
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{assert_over_the_bound, file_holding};
    use super::*;

    const SMALL: FileKind = FileKind {
        name: "test",
        limit: 8,
    };

    #[test]
    fn a_file_at_the_bound_is_read_and_one_over_it_refused_by_name() {
        let (_dir, path) = file_holding("eight.txt", "12345678");
        assert_eq!(read_to_string(&path, SMALL).expect("read"), "12345678");
        std::fs::write(&path, "123456789").expect("write");
        let refused = read_to_string(&path, SMALL).expect_err("over the bound");
        assert_over_the_bound(&refused, &path, "8 bytes for a test file");
        assert_eq!(refused.path(), path);
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_file_is_refused_after_reading_one_byte_past_the_bound() {
        let refused = read_to_string(Path::new("/dev/zero"), SECRET_FILE).expect_err("endless");
        assert_eq!(
            refused.to_string(),
            "/dev/zero: over the bound of 65536 bytes for a secret file"
        );
    }

    #[test]
    fn a_missing_or_non_utf8_file_is_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let missing = dir.path().join("none.yaml");
        let error = read_to_string(&missing, CONFIG_FILE).expect_err("missing");
        assert!(matches!(error, BoundedFileError::Read { .. }), "{error:?}");
        assert!(error.to_string().contains("none.yaml"), "{error}");
        let latin1 = dir.path().join("latin1.yaml");
        std::fs::write(&latin1, b"caf\xe9\n").expect("write");
        let error = read_to_string(&latin1, CONFIG_FILE).expect_err("not UTF-8");
        assert!(error.to_string().contains("latin1.yaml"), "{error}");
    }
}
