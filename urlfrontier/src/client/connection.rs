//! The connection to a URLFrontier server: plaintext or TLS (`https://`, with the CA of
//! `urlfrontier.tls.ca.file` beside the system's roots), and the bearer token of
//! `urlfrontier.token` added to every call.

use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status};

use super::{ClientError, ClientSettings};

/// A connection to a URLFrontier server whose calls carry the token, if any.
pub type Connection = InterceptedService<Channel, BearerToken>;

/// Adds `authorization: Bearer <token>` to every call when a token is set.
#[derive(Clone, derive_more::Debug)]
pub struct BearerToken {
    #[debug(skip)]
    value: Option<MetadataValue<Ascii>>,
}

impl BearerToken {
    /// The token of `settings` (none when empty); one gRPC metadata cannot carry is refused.
    fn of(settings: &ClientSettings) -> Result<Self, String> {
        let token = settings.token.0.trim();
        if token.is_empty() {
            return Ok(BearerToken { value: None });
        }
        let mut value: MetadataValue<Ascii> = format!("Bearer {token}")
            .parse()
            .map_err(|_| "the token holds characters gRPC metadata cannot carry".to_string())?;
        value.set_sensitive(true);
        Ok(BearerToken { value: Some(value) })
    }
}

impl Interceptor for BearerToken {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.value {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// A connection to the server at `settings.address`, made now (within the connect timeout).
pub async fn connect(settings: &ClientSettings) -> Result<Connection, ClientError> {
    let failed = |reason: String| ClientError::Connect {
        address: settings.address.clone(),
        reason,
    };
    let token = BearerToken::of(settings).map_err(failed)?;
    let mut endpoint = Endpoint::from_shared(settings.address.clone())
        .map_err(|error| failed(squall::error_text::with_causes(&error)))?
        .connect_timeout(settings.connect_timeout);
    if settings.address.starts_with("https://") {
        let tls = tls_config(settings).map_err(failed)?;
        endpoint = endpoint
            .tls_config(tls)
            .map_err(|error| failed(squall::error_text::with_causes(&error)))?;
    }
    let channel = endpoint
        .connect()
        .await
        .map_err(|error| failed(squall::error_text::with_causes(&error)))?;
    Ok(InterceptedService::new(channel, token))
}

/// TLS with the system's roots and the CA file's certificates.
fn tls_config(settings: &ClientSettings) -> Result<ClientTlsConfig, String> {
    let tls = ClientTlsConfig::new().with_native_roots();
    let path = settings.ca_file.trim();
    if path.is_empty() {
        return Ok(tls);
    }
    let pem = squall::bounded_file::read_to_string(
        std::path::Path::new(path),
        squall::bounded_file::PEM_FILE,
    )
    .map_err(|e| format!("urlfrontier.tls.ca.file: {e}"))?;
    if !pem.contains("-----BEGIN CERTIFICATE-----") {
        return Err(format!(
            "urlfrontier.tls.ca.file {path} holds no certificate (-----BEGIN CERTIFICATE-----)"
        ));
    }
    Ok(tls.ca_certificate(Certificate::from_pem(pem)))
}
