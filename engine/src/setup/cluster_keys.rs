//! The connection keys: how a part of the crawler reaches the cluster. One type,
//! [`ClusterSettings`], is read under each section's prefix — the frontier's `es.status.*`, the
//! content index's `es.indexer.*`, the metrics index's `es.metrics.*`, and the shared `es.*` they
//! fall back to — and one rule, [`connect`], turns a section and its fallbacks into the
//! [`ConnectionConfig`] a client is built from.

use std::path::Path;

use serde_with::{As, OneOrMany, Same, formats::PreferOne};
use squall::config::{ConfigError, Secret};

use crate::client::{ConnectionConfig, PemFile};

/// The address used when no section names one.
pub const DEFAULT_ADDRESS: &str = "http://127.0.0.1:9200";

squall::keyed_settings! {
    /// How one part of the crawler reaches the cluster: its nodes, who it is to them (basic auth
    /// or an API key), the certificates it trusts and shows, and how long a request may take. The
    /// same keys are read under each section's prefix (and under `opensearch.` for `es.`): the
    /// frontier's `es.status.*`, the content index's `es.indexer.*`, the metrics index's
    /// `es.metrics.*`, and the shared `es.*`.
    ///
    /// **One fallback rule.** Each key as the section sets it, else as the section it falls back
    /// to sets it, else its default. The frontier's and the content index's sections fall back to
    /// the shared `es.*` keys; the metrics index's to the frontier's (metrics go where the frontier
    /// is unless told otherwise). A key at its default is not set: an empty string or list,
    /// `false`, 30 seconds; so a file that lists every key at its default (as
    /// `examples/opensearch-conf.yaml` does) changes nothing. Without any address, the nodes are
    /// `http://127.0.0.1:9200`. A secret may be written in the key, taken from the environment
    /// (`${ENV-NAME}` in a configuration file) or read from a file (`*.file`, its first line); it
    /// is never printed. An error names the key as the section that set it writes it.
    #[derive(Debug, Clone, PartialEq)]
    pub section struct ClusterSettings {
        /// `addresses`: the nodes, a list or one string separated by `,` or `;` (an address
        /// without a scheme is `http://`, without a port 9200; credentials in it are basic auth).
        "addresses" with "As::<OneOrMany<Same, PreferOne>>" => addresses: Vec<String> = Vec::new(),
        /// `user`: basic auth's user.
        "user" => user: String = String::new(),
        /// `password`: basic auth's password.
        "password" => password: Secret = Secret::default(),
        /// `password.file`: a file holding the password (its first line).
        "password.file" => password_file: String = String::new(),
        /// `api.key`: an API key, `id:key` or the encoded form (`Authorization: ApiKey ...`); not
        /// with a user.
        "api.key" => api_key: Secret = Secret::default(),
        /// `api.key.file`: a file holding the API key (its first line).
        "api.key.file" => api_key_file: String = String::new(),
        /// `tls.ca.file`: the CA certificates (PEM) the nodes' certificates chain to, trusted beside
        /// the system's roots.
        "tls.ca.file" => ca_file: String = String::new(),
        /// `tls.client.cert.file`: a client certificate (PEM), for clusters that authenticate
        /// clients by certificate...
        "tls.client.cert.file" => client_cert_file: String = String::new(),
        /// `tls.client.key.file`: ...and its private key (PEM).
        "tls.client.key.file" => client_key_file: String = String::new(),
        /// `disable.tls.validation`: accept any TLS certificate (test clusters only).
        "disable.tls.validation" => disable_tls_validation: bool = false,
        /// `request.timeout`: seconds one request may take before it is retried on the next node.
        "request.timeout" => request_timeout: f64 = 30.0,
    }
}

/// The connection a section's keys describe: `layers` holds the section's keys first, then those
/// it falls back to, each with the prefix its keys are written under (`es.status.`, `es.`). The
/// fallback rule ([`ClusterSettings::over`]) makes one set of keys; each value is then checked
/// and its files read, so that a missing file or a secret given twice is refused at once, naming
/// the key as written.
pub(crate) fn connect(
    layers: &[(&'static str, &ClusterSettings)],
) -> Result<ConnectionConfig, ConfigError> {
    let layers: Vec<(&'static str, ClusterSettings)> = layers
        .iter()
        .map(|(prefix, keys)| {
            let mut keys = (*keys).clone();
            keys.addresses.retain(|address| !address.trim().is_empty());
            (*prefix, keys)
        })
        .collect();
    let keys = layers
        .iter()
        .rev()
        .fold(ClusterSettings::default(), |fallback, (_, keys)| {
            keys.over(&fallback)
        });
    let named = Named { layers: &layers };
    let mut connection = if keys.addresses.is_empty() {
        ConnectionConfig::new(DEFAULT_ADDRESS)
    } else {
        let entries: Vec<&str> = keys.addresses.iter().map(String::as_str).collect();
        ConnectionConfig::for_addresses(&entries)
    }
    .map_err(|e| invalid(&named.key("addresses"), e.to_string()))?;
    apply_access(&keys, &named, &mut connection)?;
    connection.timeout = seconds(&named.key("request.timeout"), keys.request_timeout, 0.001)?;
    Ok(connection)
}

/// Which section set each key, to name it as the user wrote it.
struct Named<'a> {
    layers: &'a [(&'static str, ClusterSettings)],
}

impl Named<'_> {
    /// The prefix of the first section that sets `name`, else of the section read.
    fn prefix(&self, name: &str) -> &'static str {
        self.layers
            .iter()
            .find(|(_, keys)| keys.keys_set().contains(&name))
            .or(self.layers.first())
            .map_or("es.", |(prefix, _)| prefix)
    }

    /// `name` with the prefix of the section that sets it.
    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix(name))
    }
}

/// `connection` with the credentials and TLS files of `keys`.
fn apply_access(
    keys: &ClusterSettings,
    named: &Named<'_>,
    connection: &mut ConnectionConfig,
) -> Result<(), ConfigError> {
    if !keys.user.trim().is_empty() {
        connection.user = Some(keys.user.trim().to_string());
    }
    let password = secret(&keys.password, &keys.password_file, named, "password")?;
    if let Some(password) = password {
        connection.password = Some(password.0);
    }
    connection.api_key = secret(&keys.api_key, &keys.api_key_file, named, "api.key")?;
    if connection.api_key.is_some() && connection.user.is_some() {
        return Err(invalid(
            &named.key("api.key"),
            format!(
                "set together with {} (or a user in the address): give one",
                named.key("user")
            ),
        ));
    }
    if !keys.ca_file.trim().is_empty() {
        let path = Path::new(keys.ca_file.trim());
        connection.ca_certificate = Some(
            PemFile::read(path).map_err(|e| invalid(&named.key("tls.ca.file"), e.to_string()))?,
        );
    }
    connection.client_certificate = client_certificate(keys, named)?;
    connection.tls_insecure |= keys.disable_tls_validation;
    Ok(())
}

/// The client certificate and its key, both or neither (the one missing named under the prefix
/// of the one given).
fn client_certificate(
    keys: &ClusterSettings,
    named: &Named<'_>,
) -> Result<Option<PemFile>, ConfigError> {
    let cert = keys.client_cert_file.trim();
    let private = keys.client_key_file.trim();
    match (cert.is_empty(), private.is_empty()) {
        (true, true) => Ok(None),
        (false, false) => PemFile::read_pair(Path::new(cert), Path::new(private))
            .map(Some)
            .map_err(|e| invalid(&named.key("tls.client.cert.file"), e.to_string())),
        (false, true) => Err(invalid(
            &format!(
                "{}tls.client.key.file",
                named.prefix("tls.client.cert.file")
            ),
            "is needed with tls.client.cert.file (the certificate's private key)".to_string(),
        )),
        (true, false) => Err(invalid(
            &format!(
                "{}tls.client.cert.file",
                named.prefix("tls.client.key.file")
            ),
            "is needed with tls.client.key.file".to_string(),
        )),
    }
}

/// A secret written in its key `name` or read from the file its `.file` key names (first line,
/// trimmed); both set is refused. The message never holds the secret.
fn secret(
    value: &Secret,
    file: &str,
    named: &Named<'_>,
    name: &str,
) -> Result<Option<Secret>, ConfigError> {
    let key = named.key(name);
    let written = !value.0.trim().is_empty();
    let file = file.trim();
    match (written, file.is_empty()) {
        (false, true) => Ok(None),
        (true, true) => Ok(Some(Secret(value.0.trim().to_string()))),
        (true, false) => Err(invalid(
            &key,
            format!("is set together with {key}.file: give one of them"),
        )),
        (false, false) => Secret::from_file(file)
            .map(Some)
            .map_err(|e| invalid(&named.key(&format!("{name}.file")), e.to_string())),
    }
}

/// A number of seconds, `at_least` or more, as a `Duration` (the error names `key`).
pub(crate) fn seconds(
    key: &str,
    value: f64,
    at_least: f64,
) -> Result<std::time::Duration, ConfigError> {
    std::time::Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| d.as_secs_f64() >= at_least)
        .ok_or_else(|| {
            invalid(
                key,
                format!("{value} is not a number of seconds, {at_least} or more"),
            )
        })
}

/// The error for a value that cannot be used, naming its key.
pub(crate) fn invalid(key: &str, message: String) -> ConfigError {
    ConfigError::InvalidValue {
        key: key.to_string(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(user: &str, timeout: f64) -> ClusterSettings {
        ClusterSettings {
            user: user.to_string(),
            request_timeout: timeout,
            ..ClusterSettings::default()
        }
    }

    #[test]
    fn a_section_key_else_its_fallbacks_else_the_default() {
        let shared = ClusterSettings {
            addresses: vec!["http://shared:9200".to_string()],
            ..keys("elastic", 10.0)
        };
        let status = ClusterSettings {
            addresses: vec![" ".to_string()],
            ..keys("", 5.0)
        };
        let connection = connect(&[("es.status.", &status), ("es.", &shared)]).expect("valid");
        assert_eq!(connection.addresses[0].as_str(), "http://shared:9200/");
        assert_eq!(connection.user.as_deref(), Some("elastic"));
        assert_eq!(connection.timeout, std::time::Duration::from_secs(5));
        let none = connect(&[("es.indexer.", &ClusterSettings::default())]).expect("defaults");
        assert_eq!(none.addresses[0].as_str(), "http://127.0.0.1:9200/");
        assert_eq!(none.timeout, std::time::Duration::from_secs(30));
    }

    #[test]
    fn errors_name_the_key_as_the_section_that_set_it_writes_it() {
        let shared = ClusterSettings {
            api_key: Secret("a:b".to_string()),
            ..ClusterSettings::default()
        };
        let status = keys("elastic", 30.0);
        let error = connect(&[("es.status.", &status), ("es.", &shared)]).expect_err("both");
        let text = error.to_string();
        assert!(text.contains("es.api.key"), "{text}");
        assert!(text.contains("es.status.user"), "{text}");
        let cert = ClusterSettings {
            client_cert_file: "/run/client.crt".to_string(),
            ..ClusterSettings::default()
        };
        let error = connect(&[("es.metrics.", &ClusterSettings::default()), ("es.", &cert)])
            .expect_err("no key file");
        assert!(
            error.to_string().contains("es.tls.client.key.file"),
            "{error}"
        );
        let error = connect(&[("es.indexer.", &keys("", 0.0))]).expect_err("zero timeout");
        assert!(
            error.to_string().contains("es.indexer.request.timeout"),
            "{error}"
        );
    }
}
