//! PEM files (a CA's certificates, a client's certificate and key) read once, when the settings
//! are made, so that a missing or empty file fails before anything is contacted.

use std::fmt;
use std::path::{Path, PathBuf};

use super::EsError;

/// A PEM file read once, when the settings are made: certificates (a CA, a client's chain) or a
/// client's key with its certificate. `Debug` shows the path only.
#[derive(Clone, PartialEq, Eq)]
pub struct PemFile {
    path: PathBuf,
    pem: Vec<u8>,
}

impl fmt::Debug for PemFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PemFile({})", self.path.display())
    }
}

impl PemFile {
    /// Reads `path`, which must hold at least one PEM block (`-----BEGIN ...`).
    pub fn read(path: &Path) -> Result<Self, EsError> {
        let pem = squall::bounded_file::read_to_string(path, squall::bounded_file::PEM_FILE)
            .map_err(|e| EsError::Config(format!("the PEM file: {e}")))?;
        Self::from_pem(path, pem.into_bytes())
    }

    /// Reads a client's certificate and its private key from two files (they may be one file).
    pub fn read_pair(certificate: &Path, key: &Path) -> Result<Self, EsError> {
        let mut pem = Self::read(key)?.pem;
        if certificate != key {
            pem.push(b'\n');
            pem.extend(Self::read(certificate)?.pem);
        }
        Self::from_pem(certificate, pem)
    }

    /// PEM text that came from `path` (named in messages).
    pub fn from_pem(path: &Path, pem: Vec<u8>) -> Result<Self, EsError> {
        if !pem.windows(11).any(|w| w == b"-----BEGIN ") {
            return Err(EsError::Config(format!(
                "{} holds no PEM block (-----BEGIN ...)",
                path.display()
            )));
        }
        Ok(PemFile {
            path: path.to_path_buf(),
            pem,
        })
    }

    /// Where the PEM text came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The PEM text.
    pub fn pem(&self) -> &[u8] {
        &self.pem
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pem_file_must_hold_a_pem_block_and_debug_shows_its_path_only() {
        let path = Path::new("/etc/secret.key");
        assert!(PemFile::from_pem(path, b"not pem".to_vec()).is_err());
        let pem = b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".to_vec();
        let file = PemFile::from_pem(path, pem).expect("a PEM block");
        assert_eq!(format!("{file:?}"), "PemFile(/etc/secret.key)");
    }
}
