//! A throw-away certificate authority that issues server and client certificates for tests.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// A self-signed certificate authority made for one test, living only in memory.
///
/// Its certificate ([`TestCa::pem`]) is what a client is told to trust; the identities it issues
/// ([`TestCa::server_identity`], [`TestCa::client_identity`]) chain to it.
#[derive(Debug)]
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A certificate and its private key, both PEM-encoded (the key in PKCS#8 form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The leaf certificate, PEM-encoded.
    pub cert_pem: String,
    /// The leaf's private key, PKCS#8, PEM-encoded.
    pub key_pem: String,
}

impl TestCa {
    /// Makes a new self-signed CA named `common_name`, with a fresh key.
    pub fn new(common_name: &str) -> TestCa {
        let mut params = CertificateParams::default();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().expect("generate the test CA's key");
        let issuer =
            CertifiedIssuer::self_signed(params, key).expect("self-sign the test CA's certificate");
        TestCa { issuer }
    }

    /// The CA certificate, PEM-encoded: what a client adds to the roots it trusts.
    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// Writes the CA certificate to `dir/file_name` and returns that path.
    pub fn write_pem(&self, dir: &Path, file_name: &str) -> PathBuf {
        let path = dir.join(file_name);
        std::fs::write(&path, self.pem()).expect("write the test CA's certificate");
        path
    }

    /// Issues a certificate for a TLS server known by `names`.
    ///
    /// Each name becomes a subject alternative name: an IP address when it parses as one, a DNS
    /// name otherwise, so `&["localhost", "127.0.0.1"]` covers both ways of reaching loopback.
    /// The first name is also the subject's common name.
    pub fn server_identity(&self, names: &[&str]) -> Identity {
        let sans: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
        let mut params = CertificateParams::new(sans).expect("server names are valid SANs");
        let common_name = names.first().copied().unwrap_or("test server");
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        self.issue(params)
    }

    /// Issues a certificate a client presents to authenticate itself (mutual TLS), with
    /// `common_name` as its subject.
    pub fn client_identity(&self, common_name: &str) -> Identity {
        let mut params = CertificateParams::default();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.issue(params)
    }

    /// Signs a leaf described by `params` (given a fresh key) with this CA.
    fn issue(&self, mut params: CertificateParams) -> Identity {
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().expect("generate a leaf key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("sign a leaf certificate with the test CA");
        Identity {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }
}

impl Identity {
    /// Writes the certificate to `dir/<stem>.crt` and the key to `dir/<stem>.key`; returns both
    /// paths, certificate first.
    pub fn write(&self, dir: &Path, stem: &str) -> (PathBuf, PathBuf) {
        let cert_path = dir.join(format!("{stem}.crt"));
        let key_path = dir.join(format!("{stem}.key"));
        std::fs::write(&cert_path, &self.cert_pem).expect("write a test certificate");
        std::fs::write(&key_path, &self.key_pem).expect("write a test private key");
        (cert_path, key_path)
    }

    /// The key then the certificate in one PEM, the form some clients (reqwest's
    /// `Identity::from_pem`, curl's `--cert`) take.
    pub fn combined_pem(&self) -> String {
        let mut pem = self.key_pem.clone();
        if !pem.ends_with('\n') {
            pem.push('\n');
        }
        pem.push_str(&self.cert_pem);
        pem
    }
}
