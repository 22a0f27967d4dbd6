//! Who may call the server: TLS with the operator's certificate, a bearer token checked on every
//! call (gRPC metadata `authorization: Bearer <token>`), and the refusal to listen where others
//! can reach it with neither.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use squall::config::Secret;
use tonic::transport::{Identity, ServerTlsConfig};
use tonic::{Request, Status};

/// How the server is protected. The default is neither TLS nor a token: only for loopback.
#[derive(Clone, Default, derive_more::Debug)]
pub struct ServerAccess {
    /// The server's certificate chain and private key, PEM; `None`: plaintext gRPC.
    pub tls: Option<TlsFiles>,
    /// The bearer token every call must carry; `None`: calls need none.
    pub token: Option<Secret>,
}

/// A certificate chain and its private key, both PEM files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, the server's own first.
    pub certificate: PathBuf,
    /// Its private key.
    pub key: PathBuf,
}

/// Why the server may not start as asked.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// A TLS file cannot be read or used.
    #[error("TLS file {path}: {message}")]
    TlsFile {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A non-loopback address with no token, and no explicit consent.
    #[error(
        "refusing to listen on {addr} without a token{tls}: anyone who reaches it could read and \
         change the frontier. Give a token (--token-file, or SQUALL_FRONTIER_TOKEN) and, off a \
         trusted network, TLS (--tls-cert, --tls-key), or say --allow-open to serve it open anyway",
        tls = if *.tls { " (TLS proves the server to clients, not clients to the server)" } else { "" }
    )]
    Exposed {
        /// The address asked for.
        addr: SocketAddr,
        /// Whether TLS was set up.
        tls: bool,
    },
}

impl ServerAccess {
    /// Fails when `addr` is reachable from other machines (not loopback) and calls would need no
    /// token, unless `allow_open` says to serve it open anyway: TLS alone authenticates the
    /// server, not its clients. A token sent without TLS off loopback is allowed, with a warning.
    pub fn check_exposure(&self, addr: SocketAddr, allow_open: bool) -> Result<(), AccessError> {
        if addr.ip().is_loopback() {
            return Ok(());
        }
        if self.token.is_some() {
            if self.tls.is_none() {
                tracing::warn!(
                    %addr,
                    "the token travels in clear text to {addr}: without TLS (--tls-cert, \
                     --tls-key) anyone on the path can read it"
                );
            }
            return Ok(());
        }
        if allow_open {
            return Ok(());
        }
        Err(AccessError::Exposed {
            addr,
            tls: self.tls.is_some(),
        })
    }

    /// tonic's TLS settings from the files, read now.
    /// A handshake not done within `handshake` is dropped.
    pub(super) fn tls_config(
        &self,
        handshake: std::time::Duration,
    ) -> Result<Option<ServerTlsConfig>, AccessError> {
        let Some(files) = &self.tls else {
            return Ok(None);
        };
        let certificate = read_pem(&files.certificate)?;
        let key = read_pem(&files.key)?;
        Ok(Some(
            ServerTlsConfig::new()
                .identity(Identity::from_pem(certificate, key))
                .timeout(handshake),
        ))
    }

    /// The check every call passes before it reaches the service.
    pub(super) fn checker(&self) -> TokenCheck {
        TokenCheck {
            expected: self
                .token
                .as_ref()
                .map(|token| format!("Bearer {}", token.0.trim())),
        }
    }
}

/// Reads a PEM file, refusing one without a PEM block.
fn read_pem(path: &Path) -> Result<Vec<u8>, AccessError> {
    let failed = |message: String| AccessError::TlsFile {
        path: path.display().to_string(),
        message,
    };
    let pem = squall::bounded_file::read_to_string(path, squall::bounded_file::PEM_FILE)
        .map_err(|e| match e {
            squall::bounded_file::BoundedFileError::Read { source, .. } => {
                failed(source.to_string())
            }
            squall::bounded_file::BoundedFileError::TooLarge { limit, .. } => {
                failed(format!("over the bound of {limit} bytes for a PEM file"))
            }
        })?
        .into_bytes();
    if !pem.windows(11).any(|w| w == b"-----BEGIN ") {
        return Err(failed("holds no PEM block (-----BEGIN ...)".to_string()));
    }
    Ok(pem)
}

/// Lets a call through when it carries the expected `authorization` metadata (or when no token is
/// set); answers UNAUTHENTICATED otherwise, without saying what was expected.
#[derive(Clone, derive_more::Debug)]
pub(super) struct TokenCheck {
    #[debug(skip)]
    expected: Option<String>,
}

impl tonic::service::Interceptor for TokenCheck {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let Some(expected) = &self.expected else {
            return Ok(request);
        };
        let given = request
            .metadata()
            .get("authorization")
            .map(|value| value.as_bytes())
            .unwrap_or_default();
        if constant_time_equal(given, expected.as_bytes()) {
            Ok(request)
        } else {
            Err(Status::unauthenticated(
                "this URLFrontier server needs a bearer token: metadata `authorization: Bearer \
                 <token>` (squall's urlfrontier.token)",
            ))
        }
    }
}

/// Whether two byte strings are equal, in a time that depends on their lengths only.
fn constant_time_equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::service::Interceptor;

    fn call_with(check: &mut TokenCheck, header: Option<&str>) -> Result<(), Status> {
        let mut request = Request::new(());
        if let Some(header) = header {
            request
                .metadata_mut()
                .insert("authorization", header.parse().expect("ascii"));
        }
        check.call(request).map(|_| ())
    }

    #[test]
    fn a_call_passes_only_with_the_token() {
        let access = ServerAccess {
            tls: None,
            token: Some(Secret("s3cret".to_string())),
        };
        let mut check = access.checker();
        assert!(call_with(&mut check, Some("Bearer s3cret")).is_ok());
        for wrong in [
            None,
            Some("Bearer s3cre"),
            Some("Bearer s3cret2"),
            Some("s3cret"),
        ] {
            let status = call_with(&mut check, wrong).expect_err("refused");
            assert_eq!(status.code(), tonic::Code::Unauthenticated);
            assert!(!status.message().contains("s3cret"));
        }
        let mut open = ServerAccess::default().checker();
        assert!(call_with(&mut open, None).is_ok());
        assert!(!format!("{access:?}").contains("s3cret"));
    }

    #[test]
    fn a_pem_file_is_read_within_a_bound() {
        let endless = read_pem(Path::new("/dev/zero")).expect_err("over the bound");
        assert!(
            endless
                .to_string()
                .contains("over the bound of 4194304 bytes for a PEM file"),
            "{endless}"
        );
        let missing = read_pem(Path::new("/nonexistent/cert.pem")).expect_err("missing");
        assert!(
            missing.to_string().contains("/nonexistent/cert.pem"),
            "{missing}"
        );
    }

    #[test]
    fn only_loopback_may_be_served_without_a_token_without_consent() {
        let open = ServerAccess::default();
        let any: SocketAddr = "0.0.0.0:7071".parse().expect("address");
        let loopback: SocketAddr = "127.0.0.1:7071".parse().expect("address");
        let error = open.check_exposure(any, false).expect_err("exposed");
        assert!(error.to_string().contains("0.0.0.0:7071"), "{error}");
        let tls_only = ServerAccess {
            tls: Some(TlsFiles {
                certificate: PathBuf::from("c.pem"),
                key: PathBuf::from("k.pem"),
            }),
            token: None,
        };
        let error = tls_only.check_exposure(any, false).expect_err("TLS alone");
        assert!(error.to_string().contains("not clients"), "{error}");
        assert!(tls_only.check_exposure(any, true).is_ok());
        assert!(tls_only.check_exposure(loopback, false).is_ok());
        assert!(open.check_exposure(any, true).is_ok());
        assert!(open.check_exposure(loopback, false).is_ok());
        let with_token = ServerAccess {
            tls: None,
            token: Some(Secret("t".to_string())),
        };
        assert!(with_token.check_exposure(any, false).is_ok());
    }
}
