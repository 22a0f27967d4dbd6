//! Who the client is to the cluster and which certificates it trusts: basic auth or an API key in
//! the `Authorization` header, a CA of the user's own for the nodes' certificates, and a client
//! certificate. Secrets stay inside [`Secret`] and [`PemFile`], whose `Debug` never shows them.

use data_encoding::BASE64;
use elasticsearch::auth::{ClientCertificate, Credentials};
use elasticsearch::cert::{Certificate, CertificateValidation};
use elasticsearch::http::headers::{AUTHORIZATION, HeaderValue};
use elasticsearch::http::transport::TransportBuilder;
use squall::config::Secret;

use super::{ConnectionConfig, EsError};

/// How the client proves who it is, besides a client certificate.
#[derive(Clone, PartialEq, Eq)]
pub(super) enum Authorization {
    /// Nothing: the cluster lets anyone in.
    None,
    /// `Authorization: Basic ...`.
    Basic(String, Secret),
    /// `Authorization: ApiKey ...`, the key already in its encoded form.
    ApiKey(Secret),
}

impl Authorization {
    /// The settings' credentials; an API key and a user together are refused (which one was
    /// meant cannot be told).
    fn of(settings: &ConnectionConfig) -> Result<Self, EsError> {
        match (&settings.user, &settings.api_key) {
            (Some(_), Some(_)) => Err(EsError::Config(
                "both an API key and a user are set: give one of them".to_string(),
            )),
            (None, Some(key)) => Ok(Authorization::ApiKey(Secret(encoded_api_key(&key.0)?))),
            (Some(user), None) => Ok(Authorization::Basic(
                user.clone(),
                Secret(settings.password.clone().unwrap_or_default()),
            )),
            (None, None) => Ok(Authorization::None),
        }
    }

    /// The header value, marked sensitive so that no log of the request shows it.
    fn header(&self) -> Option<HeaderValue> {
        let text = match self {
            Authorization::None => return None,
            Authorization::Basic(user, password) => {
                let pair = format!("{user}:{}", password.0);
                format!("Basic {}", BASE64.encode(pair.as_bytes()))
            }
            Authorization::ApiKey(encoded) => format!("ApiKey {}", encoded.0),
        };
        let mut value = HeaderValue::from_str(&text).ok()?;
        value.set_sensitive(true);
        Some(value)
    }
}

/// An API key in the form the `Authorization` header carries: `id:key` is encoded (base64, as
/// Elasticsearch's `_security/api_key` answer's `encoded` field), an encoded key is kept as given.
fn encoded_api_key(key: &str) -> Result<String, EsError> {
    let key = key.trim();
    if key.is_empty() || key.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(EsError::Config(
            "the API key is empty or holds spaces or control characters".to_string(),
        ));
    }
    if key.contains(':') {
        return Ok(BASE64.encode(key.as_bytes()));
    }
    let decoded = BASE64
        .decode(key.as_bytes())
        .ok()
        .filter(|bytes| bytes.contains(&b':'));
    match decoded {
        Some(_) => Ok(key.to_string()),
        None => Err(EsError::Config(
            "the API key is neither id:key nor the encoded form (base64 of id:key)".to_string(),
        )),
    }
}

/// `builder` with the settings' credentials, client certificate and certificate validation.
pub(super) fn secure(
    mut builder: TransportBuilder,
    settings: &ConnectionConfig,
) -> Result<TransportBuilder, EsError> {
    if let Some(value) = Authorization::of(settings)?.header() {
        builder = builder.header(AUTHORIZATION, value);
    }
    if let Some(identity) = &settings.client_certificate {
        builder = builder.auth(Credentials::Certificate(ClientCertificate::Pem(
            identity.pem().to_vec(),
        )));
    }
    if settings.tls_insecure {
        return Ok(builder.cert_validation(CertificateValidation::None));
    }
    if let Some(ca) = &settings.ca_certificate {
        if !String::from_utf8_lossy(ca.pem()).contains("-----BEGIN CERTIFICATE-----") {
            return Err(EsError::Config(format!(
                "the CA file {} holds no certificate (-----BEGIN CERTIFICATE-----)",
                ca.path().display()
            )));
        }
        let certificate = Certificate::from_pem(ca.pem()).map_err(|e| {
            EsError::Config(format!(
                "the CA file {} is not a PEM certificate: {e}",
                ca.path().display()
            ))
        })?;
        builder = builder.cert_validation(CertificateValidation::Full(certificate));
    }
    Ok(builder)
}

/// Whether a connection-level failure comes from TLS (a certificate refused on either side, a
/// handshake that failed): asking again fails the same way.
pub(super) fn is_tls_failure(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    ["certificate", "handshake", "tls", "unknownissuer", "alert"]
        .iter()
        .any(|word| message.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_key_is_sent_in_its_encoded_form_whichever_form_is_given() {
        let encoded =
            encoded_api_key("VuaCfGcBCdbkQm-e5aOx:ui2lp2axTNmsyakw9tvNnw").expect("id:key");
        assert_eq!(
            encoded,
            "VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw=="
        );
        assert_eq!(encoded_api_key(&encoded).expect("encoded"), encoded);
        for bad in ["", "not base64!", "bm9jb2xvbg==", "a b:c"] {
            let error = encoded_api_key(bad).expect_err(bad);
            assert!(
                !error.to_string().contains(bad) || bad.is_empty(),
                "{error}"
            );
        }
    }

    #[test]
    fn basic_auth_and_api_keys_make_the_headers_the_engines_expect() {
        let basic = Authorization::Basic("elastic".into(), Secret("changeme".into()));
        let header = basic.header().expect("a header");
        assert_eq!(header.to_str().ok(), Some("Basic ZWxhc3RpYzpjaGFuZ2VtZQ=="));
        assert!(header.is_sensitive());
        let key = Authorization::ApiKey(Secret("aWQ6a2V5".into()));
        assert_eq!(
            key.header().expect("a header").to_str().ok(),
            Some("ApiKey aWQ6a2V5")
        );
        assert!(Authorization::None.header().is_none());
    }

    #[test]
    fn tls_failures_are_told_from_other_connection_failures() {
        assert!(is_tls_failure(
            "error sending request: invalid peer certificate: UnknownIssuer"
        ));
        assert!(is_tls_failure("received fatal alert: CertificateRequired"));
        assert!(!is_tls_failure(
            "error sending request: Connection refused (os error 111)"
        ));
    }
}
