//! The keys that say who squall is to the cluster and which certificates it trusts, the same for
//! every component (`es.*` shared, `es.status.*` the frontier's own, `es.indexer.*` the content
//! index's): basic auth, an API key, a CA file, a client certificate. A secret may be written in
//! the key, taken from the environment (`${ENV-NAME}` in a configuration file) or read from a file
//! (`*.file`); it is never printed.

use std::path::Path;

use serde::{Deserialize, Serialize};
use squall::config::{ConfigError, Secret};

use crate::client::{ConnectionSettings, PemFile};

/// The access keys of one component, as written (prefix left out of the serde names).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct AccessKeys {
    /// `user` / `password`: basic auth.
    user: String,
    password: Secret,
    /// `password.file`: a file holding the password (its first line).
    #[serde(rename = "password.file")]
    password_file: String,
    /// `api.key`: an API key, `id:key` or the encoded form (`Authorization: ApiKey ...`).
    #[serde(rename = "api.key")]
    api_key: Secret,
    /// `api.key.file`: a file holding the API key (its first line).
    #[serde(rename = "api.key.file")]
    api_key_file: String,
    /// `tls.ca.file`: the CA certificates (PEM) the nodes' certificates chain to.
    #[serde(rename = "tls.ca.file")]
    ca_file: String,
    /// `tls.client.cert.file` / `tls.client.key.file`: a client certificate and its key (PEM).
    #[serde(rename = "tls.client.cert.file")]
    client_cert_file: String,
    #[serde(rename = "tls.client.key.file")]
    client_key_file: String,
    /// `disable.tls.validation`: accept any TLS certificate (test clusters only).
    #[serde(rename = "disable.tls.validation")]
    disable_tls_validation: bool,
}

serde_with::with_prefix!(pub(crate) status_prefix "status.");

impl AccessKeys {
    /// These keys where set, else `fallback`'s, key by key (a component's own keys over the
    /// shared ones).
    pub(crate) fn or(&self, fallback: &AccessKeys) -> AccessKeys {
        let pick =
            |own: &str, other: &str| if own.trim().is_empty() { other } else { own }.to_string();
        AccessKeys {
            user: pick(&self.user, &fallback.user),
            password: Secret(pick(&self.password.0, &fallback.password.0)),
            password_file: pick(&self.password_file, &fallback.password_file),
            api_key: Secret(pick(&self.api_key.0, &fallback.api_key.0)),
            api_key_file: pick(&self.api_key_file, &fallback.api_key_file),
            ca_file: pick(&self.ca_file, &fallback.ca_file),
            client_cert_file: pick(&self.client_cert_file, &fallback.client_cert_file),
            client_key_file: pick(&self.client_key_file, &fallback.client_key_file),
            disable_tls_validation: self.disable_tls_validation || fallback.disable_tls_validation,
        }
    }

    /// `connection` with these credentials and TLS files, read now so that a missing file or a
    /// secret given twice is refused at once, naming the key (`prefix` is the keys' prefix as the
    /// user wrote them, e.g. `es.status.`).
    pub(crate) fn apply(
        &self,
        prefix: &str,
        connection: &mut ConnectionSettings,
    ) -> Result<(), ConfigError> {
        let key = |name: &str| format!("{prefix}{name}");
        if !self.user.trim().is_empty() {
            connection.user = Some(self.user.trim().to_string());
        }
        if let Some(password) = secret(&self.password, &self.password_file, &key("password"))? {
            connection.password = Some(password.0);
        }
        connection.api_key = secret(&self.api_key, &self.api_key_file, &key("api.key"))?;
        if connection.api_key.is_some() && connection.user.is_some() {
            return Err(invalid(
                &key("api.key"),
                format!("set together with {prefix}user (or a user in the address): give one"),
            ));
        }
        if !self.ca_file.trim().is_empty() {
            let path = Path::new(self.ca_file.trim());
            connection.ca_certificate =
                Some(PemFile::read(path).map_err(|e| invalid(&key("tls.ca.file"), e.to_string()))?);
        }
        connection.client_certificate = self.client_certificate(&key)?;
        connection.tls_insecure |= self.disable_tls_validation;
        Ok(())
    }

    /// The client certificate and its key, both or neither.
    fn client_certificate(
        &self,
        key: &dyn Fn(&str) -> String,
    ) -> Result<Option<PemFile>, ConfigError> {
        let cert = self.client_cert_file.trim();
        let private = self.client_key_file.trim();
        match (cert.is_empty(), private.is_empty()) {
            (true, true) => Ok(None),
            (false, false) => PemFile::read_pair(Path::new(cert), Path::new(private))
                .map(Some)
                .map_err(|e| invalid(&key("tls.client.cert.file"), e.to_string())),
            (false, true) => Err(invalid(
                &key("tls.client.key.file"),
                "is needed with tls.client.cert.file (the certificate's private key)".to_string(),
            )),
            (true, false) => Err(invalid(
                &key("tls.client.cert.file"),
                "is needed with tls.client.key.file".to_string(),
            )),
        }
    }
}

/// A secret written in its key or read from the file its `.file` key names (first line, trimmed);
/// both set is refused. The message never holds the secret.
fn secret(value: &Secret, file: &str, key: &str) -> Result<Option<Secret>, ConfigError> {
    let written = !value.0.trim().is_empty();
    let file = file.trim();
    match (written, file.is_empty()) {
        (false, true) => Ok(None),
        (true, true) => Ok(Some(Secret(value.0.trim().to_string()))),
        (true, false) => Err(invalid(
            key,
            format!("is set together with {key}.file: give one of them"),
        )),
        (false, false) => Secret::from_file(file)
            .map(Some)
            .map_err(|e| invalid(&format!("{key}.file"), e.to_string())),
    }
}

fn invalid(key: &str, message: String) -> ConfigError {
    ConfigError::InvalidValue {
        key: key.to_string(),
        message,
    }
}
