//! How to reach the cluster: addresses (StormCrawler's forms), credentials, TLS, timeouts, retries.

use std::time::Duration;

use squall::config::Secret;
use url::Url;

use super::{EsError, PemFile, UpdateMode};

/// How to reach the cluster.
#[derive(Clone, PartialEq)]
pub struct ConnectionConfig {
    /// Node addresses (`http://host:9200`); requests go round-robin over the nodes thought alive.
    /// A node that fails at the connection level (refused, reset, timed out) is left out for
    /// [`node_cooloff`](Self::node_cooloff), and the request is retried on another one.
    /// Credentials in an address are taken out and used as basic auth.
    pub addresses: Vec<Url>,
    /// Basic-auth user.
    pub user: Option<String>,
    /// Basic-auth password.
    pub password: Option<String>,
    /// An API key (`id:key`, or the encoded form Elasticsearch gives), sent as
    /// `Authorization: ApiKey ...`; not together with [`user`](Self::user).
    pub api_key: Option<Secret>,
    /// The CA certificates (PEM) the nodes' certificates must chain to, beside the system's roots.
    pub ca_certificate: Option<PemFile>,
    /// A client certificate with its private key (PEM), for clusters that authenticate clients by
    /// certificate.
    pub client_certificate: Option<PemFile>,
    /// Accept any TLS certificate (test clusters only).
    pub tls_insecure: bool,
    /// Time allowed for one request.
    pub timeout: Duration,
    /// Retries after a 429, a 5xx or a connection error, before giving up.
    pub max_retries: u32,
    /// The first wait between two tries; it doubles each time, up to `max_backoff`.
    pub initial_backoff: Duration,
    /// The longest wait between two tries.
    pub max_backoff: Duration,
    /// How long a node that failed is left out before one request tries it again; doubled after
    /// each further failure, up to [`max_node_cooloff`](Self::max_node_cooloff). It is tried only
    /// once its cluster state is as new as a live node's (a node back from a pause must not answer
    /// from copies the cluster dropped meanwhile).
    pub node_cooloff: Duration,
    /// The longest a failed node is left out.
    pub max_node_cooloff: Duration,
    /// How updates that read and change a document in one step are made (Painless scripts, or
    /// conditional writes); by default as the engine allows.
    pub update_mode: UpdateMode,
}

impl std::fmt::Debug for ConnectionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionConfig")
            .field(
                "addresses",
                &self.addresses.iter().map(Url::as_str).collect::<Vec<_>>(),
            )
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("api_key", &self.api_key)
            .field("ca_certificate", &self.ca_certificate)
            .field("client_certificate", &self.client_certificate)
            .field("tls_insecure", &self.tls_insecure)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("node_cooloff", &self.node_cooloff)
            .field("update_mode", &self.update_mode)
            .finish()
    }
}

impl ConnectionConfig {
    /// Settings for one address, with defaults: 30 s timeout, 6 retries from 250 ms to 10 s, a
    /// failed node left out 10 s at first and at most 5 minutes.
    pub fn new(address: &str) -> Result<Self, EsError> {
        Self::for_addresses(&[address])
    }

    /// Settings for several addresses (StormCrawler's `es.status.addresses`: a list, or `;`- or
    /// `,`-separated); `http://` is assumed when no scheme is given, and port 9200 for a bare host.
    pub fn for_addresses(addresses: &[&str]) -> Result<Self, EsError> {
        let mut settings = ConnectionConfig {
            addresses: Vec::new(),
            user: None,
            password: None,
            api_key: None,
            ca_certificate: None,
            client_certificate: None,
            tls_insecure: false,
            timeout: Duration::from_secs(30),
            max_retries: 6,
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(10),
            node_cooloff: Duration::from_secs(10),
            max_node_cooloff: Duration::from_secs(300),
            update_mode: UpdateMode::Auto,
        };
        for raw in addresses.iter().flat_map(|a| a.split([';', ','])) {
            let raw = raw.trim();
            if raw.is_empty() {
                continue;
            }
            let with_scheme = if raw.contains("://") {
                raw.to_string()
            } else {
                format!("http://{raw}")
            };
            let mut url = Url::parse(&with_scheme)
                .map_err(|e| EsError::Config(format!("address {:?}: {e}", redact(raw))))?;
            if url.port().is_none() && !raw.contains("://") {
                let _ = url.set_port(Some(9200));
            }
            if !url.username().is_empty() {
                settings.user = Some(url.username().to_string());
                settings.password = url.password().map(str::to_string);
                let _ = url.set_username("");
                let _ = url.set_password(None);
            }
            settings.addresses.push(url);
        }
        if settings.addresses.is_empty() {
            return Err(EsError::Config(
                "no Elasticsearch/OpenSearch address given".to_string(),
            ));
        }
        Ok(settings)
    }
}

/// An address with any credentials replaced, for messages.
fn redact(address: &str) -> String {
    match address.rsplit_once('@') {
        Some((_, host)) => format!("<credentials>@{host}"),
        None => address.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_separate_addresses_too() {
        let settings = ConnectionConfig::new("http://a:9200,http://b:9201").expect("settings");
        assert_eq!(settings.addresses.len(), 2);
    }

    #[test]
    fn addresses_are_parsed_like_stormcrawler_and_credentials_taken_out() {
        let settings =
            ConnectionConfig::for_addresses(&["es1;es2:9201", "https://u:secret@es3:443"])
                .expect("settings");
        let addresses: Vec<&str> = settings.addresses.iter().map(Url::as_str).collect();
        assert_eq!(
            addresses,
            ["http://es1:9200/", "http://es2:9201/", "https://es3/"]
        );
        assert_eq!(settings.user.as_deref(), Some("u"));
        assert_eq!(settings.password.as_deref(), Some("secret"));
        let debug = format!("{settings:?}");
        assert!(!debug.contains("secret"), "{debug}");
        assert!(ConnectionConfig::for_addresses(&[" ; "]).is_err());
        let err = ConnectionConfig::new("http://u:secret@bad host").expect_err("invalid");
        assert!(!err.to_string().contains("secret"), "{err}");
    }
}
