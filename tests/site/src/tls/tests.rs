//! The gate against a real upstream (an axum server on loopback), with real TLS clients.

use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, Method, Uri};
use axum::routing::get;

use super::{GateOptions, Identity, TestCa, TlsGate, api_key_credentials};

/// What the upstream answers on `/`.
const UPSTREAM_BODY: &str = r#"{"name":"upstream","tagline":"You Know, for Search"}"#;

/// A plain-HTTP upstream on loopback: `/` answers [`UPSTREAM_BODY`], any other path echoes
/// what reached it. Returns its base URL.
async fn upstream() -> String {
    let root = get(|| async { ([("content-type", "application/json")], UPSTREAM_BODY) });
    let app = Router::new().route("/", root).fallback(echo);
    let addr = crate::serve_router(app).await.expect("serve the upstream");
    format!("http://{addr}")
}

/// `METHOD /path?query auth=<whether authorization came> opaque=<x-opaque-id> body`.
async fn echo(method: Method, uri: Uri, headers: HeaderMap, body: String) -> String {
    let path = uri.path_and_query().map_or("", |path| path.as_str());
    let auth = headers.contains_key("authorization");
    let opaque = headers
        .get("x-opaque-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    format!("{method} {path} auth={auth} opaque={opaque} {body}")
}

/// A gate in front of a fresh upstream, with a server identity from `ca`.
async fn gate(
    ca: &TestCa,
    api_key: Option<(&str, &str)>,
    client_ca_pem: Option<String>,
) -> TlsGate {
    TlsGate::start(GateOptions {
        upstream: upstream().await,
        server: ca.server_identity(&["localhost", "127.0.0.1"]),
        api_key: api_key.map(|(id, key)| (id.to_owned(), key.to_owned())),
        client_ca_pem,
    })
    .await
}

/// A client trusting only `ca`, presenting `identity` if given.
fn client(ca: &TestCa, identity: Option<&Identity>) -> reqwest::Client {
    let root = reqwest::Certificate::from_pem(ca.pem().as_bytes()).expect("CA PEM");
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .tls_built_in_root_certs(false)
        .add_root_certificate(root)
        .timeout(Duration::from_secs(10));
    if let Some(identity) = identity {
        let pem = identity.combined_pem();
        builder =
            builder.identity(reqwest::Identity::from_pem(pem.as_bytes()).expect("identity PEM"));
    }
    builder.build().expect("client")
}

/// `Authorization: ApiKey ...` for `(id, key)`.
fn api_key_header(id: &str, key: &str) -> String {
    format!("ApiKey {}", api_key_credentials(id, key))
}

/// An error and all its sources, on one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Waits (a bounded time) until the gate has counted `n` failed handshakes; the server side
/// may see the failure a moment after the client does.
async fn await_handshakes_failed(gate: &TlsGate, n: u64) {
    for _ in 0..200 {
        if gate.handshakes_failed() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(gate.handshakes_failed(), n, "failed handshakes counted");
}

/// A GET of the gate's `/` through `client` with the right key (`id`, `secret`).
async fn with_the_key(
    client: &reqwest::Client,
    gate: &TlsGate,
) -> reqwest::Result<reqwest::Response> {
    let request = client.get(format!("{}/", gate.url()));
    let request = request.header("authorization", api_key_header("id", "secret"));
    request.send().await
}

#[tokio::test]
async fn right_key_reaches_upstream() {
    let ca = TestCa::new("test CA");
    let gate = gate(&ca, Some(("id", "secret")), None).await;
    let answer = with_the_key(&client(&ca, None), &gate)
        .await
        .expect("request through the gate");
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["content-type"], "application/json");
    assert_eq!(answer.text().await.expect("body"), UPSTREAM_BODY);
    assert_eq!(
        (gate.forwarded(), gate.forwarded_writes(), gate.refused()),
        (1, 0, 0)
    );
}

/// Sends `method path` to `gate` with the right key and `body`; returns status and text.
async fn send(client: &reqwest::Client, gate: &TlsGate, method: &str, path: &str) -> (u16, String) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let answer = client
        .request(method, format!("{}{path}", gate.url()))
        .header("authorization", api_key_header("id", "secret"))
        .header("x-opaque-id", "t1")
        .body("{}")
        .send()
        .await
        .expect("request through the gate");
    let status = answer.status().as_u16();
    (status, answer.text().await.expect("body"))
}

#[tokio::test]
async fn writes_are_forwarded_with_path_query_headers_and_body() {
    let ca = TestCa::new("test CA");
    let gate = gate(&ca, Some(("id", "secret")), None).await;
    let client = client(&ca, None);
    let post = send(&client, &gate, "POST", "/idx/_search?q=1").await;
    assert_eq!(post.1, "POST /idx/_search?q=1 auth=false opaque=t1 {}");
    let get = send(&client, &gate, "GET", "/idx/_doc/1").await;
    assert_eq!(get.1, "GET /idx/_doc/1 auth=false opaque=t1 {}");
    assert_eq!(send(&client, &gate, "GET", "/idx/_count").await.0, 200);
    assert_eq!((gate.forwarded(), gate.forwarded_writes()), (3, 2));
}

#[tokio::test]
async fn wrong_or_missing_key_is_refused() {
    let ca = TestCa::new("test CA");
    let gate = gate(&ca, Some(("id", "secret")), None).await;
    let client = client(&ca, None);
    for authorization in [
        Some(api_key_header("id", "wrong")),
        Some("Basic abc".to_owned()),
        None,
    ] {
        let mut request = client.get(format!("{}/", gate.url()));
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        let answer = request.send().await.expect("request to the gate");
        assert_eq!(answer.status(), 401);
        assert_eq!(answer.headers()["content-type"], "application/json");
        assert_eq!(answer.headers()["www-authenticate"], "ApiKey");
        let body: serde_json::Value =
            serde_json::from_str(&answer.text().await.expect("body")).expect("JSON");
        assert_eq!(body["error"]["type"], "security_exception");
        assert_eq!(body["status"], 401);
    }
    assert_eq!((gate.refused(), gate.forwarded()), (3, 0));
}

#[tokio::test]
async fn client_trusting_another_ca_fails_the_handshake() {
    let ca = TestCa::new("test CA");
    let gate = gate(&ca, None, None).await;
    let error = client(&TestCa::new("other CA"), None)
        .get(format!("{}/", gate.url()))
        .send()
        .await
        .expect_err("the gate's certificate is not trusted");
    assert!(chain(&error).contains("certificate"), "{}", chain(&error));
    await_handshakes_failed(&gate, 1).await;
    assert_eq!(gate.forwarded(), 0);
}

#[tokio::test]
async fn client_certificate_required_when_client_ca_set() {
    let ca = TestCa::new("test CA");
    let gate = gate(&ca, Some(("id", "secret")), Some(ca.pem())).await;
    let me = ca.client_identity("squall");
    let answer = with_the_key(&client(&ca, Some(&me)), &gate)
        .await
        .expect("a client with a certificate gets through");
    assert_eq!(answer.status(), 200);
    let stranger = TestCa::new("other CA").client_identity("stranger");
    for identity in [None, Some(&stranger)] {
        let sent = with_the_key(&client(&ca, identity), &gate).await;
        assert!(
            sent.is_err(),
            "a client without an accepted certificate must fail: {sent:?}"
        );
    }
    await_handshakes_failed(&gate, 2).await;
    assert_eq!(gate.forwarded(), 1);
}

/// The text of the file at `path`.
fn read(path: impl AsRef<std::path::Path>) -> String {
    std::fs::read_to_string(path).expect("read a written file")
}

#[test]
fn identities_write_and_combine() {
    let ca = TestCa::new("test CA");
    let dir = std::env::temp_dir().join(format!("squall-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let server = ca.server_identity(&["localhost", "127.0.0.1"]);
    let (cert, key) = server.write(&dir, "node");
    assert_eq!(
        (read(cert), read(key)),
        (server.cert_pem.clone(), server.key_pem.clone())
    );
    assert!(server.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
    assert_eq!(read(ca.write_pem(&dir, "ca.crt")), ca.pem());
    let combined = server.combined_pem();
    assert!(combined.find("PRIVATE KEY") < combined.find("CERTIFICATE"));
    std::fs::remove_dir_all(&dir).expect("clean up");
}
