//! A local https server for Client ID Metadata Documents (docs/oauth.md#client-id-metadata-documents):
//! the black-box tests (tests/api/oauth_flow.rs) and the MCP SDK's CIMD run
//! (examples/mcp_cimd_server.rs) serve documents from it. The server under test reaches it only
//! with [`relaxed`], the test-only fetch setting that admits loopback and this certificate.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The server's certificate (self-signed, for 127.0.0.1 and localhost; its key signs nothing
/// else: it exists for these tests only).
pub const TEST_CERT_DER: &[u8] = include_bytes!("../api/fixtures/metadata-server-cert.der");
const TEST_KEY_DER: &[u8] = include_bytes!("../api/fixtures/metadata-server-key.der");

/// The relaxation a server under test needs to fetch from here: loopback and [`TEST_CERT_DER`].
pub fn relaxed() -> workapi_kit::oauth::MetadataFetchForTests {
    workapi_kit::oauth::MetadataFetchForTests { allow_loopback: true, extra_roots_der: vec![TEST_CERT_DER.to_vec()] }
}

/// How a response body is sent.
pub enum Body {
    /// With its exact `Content-Length`.
    Sized(Vec<u8>),
    /// Declares this `Content-Length`, then sends the bytes (fewer) and closes.
    Declared(u64, Vec<u8>),
    /// Chunked, without `Content-Length`, 1 KiB chunks for as long as the client reads.
    EndlessChunks,
}

/// What the server answers for a path: status, headers and body.
pub type Route = (u16, Vec<(&'static str, String)>, Body);

/// A JSON `200`, with `Cache-Control` unless `cache` is empty.
pub fn json_route(body: serde_json::Value, cache: &str) -> Route {
    let mut headers = vec![("content-type", "application/json".to_owned())];
    if !cache.is_empty() {
        headers.push(("cache-control", cache.to_owned()));
    }
    (200, headers, Body::Sized(body.to_string().into_bytes()))
}

pub struct DocumentServer {
    /// `https://127.0.0.1:<port>`
    pub base: String,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl DocumentServer {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// How many requests asked for `path`.
    pub fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

/// Serves `route(base, path)` over TLS on 127.0.0.1 (a random port), counting requests per path.
pub async fn start(route: impl Fn(&str, &str) -> Route + Send + Sync + 'static) -> DocumentServer {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(TEST_KEY_DER.to_vec().into());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![TEST_CERT_DER.to_vec().into()], key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("https://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let hits = Arc::new(Mutex::new(HashMap::new()));
    let route = Arc::new(route);
    let (server_base, server_hits) = (base.clone(), hits.clone());
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { return };
            let (acceptor, route, base, hits) =
                (acceptor.clone(), route.clone(), server_base.clone(), server_hits.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                let mut request = Vec::new();
                let mut buffer = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&request);
                let path = text.split(' ').nth(1).unwrap_or("/").to_owned();
                *hits.lock().unwrap().entry(path.clone()).or_insert(0) += 1;
                let (status, headers, body) = route(&base, &path);
                let mut head = format!("HTTP/1.1 {status} X\r\nconnection: close\r\n");
                match &body {
                    Body::Sized(bytes) => head.push_str(&format!("content-length: {}\r\n", bytes.len())),
                    Body::Declared(length, _) => head.push_str(&format!("content-length: {length}\r\n")),
                    Body::EndlessChunks => head.push_str("transfer-encoding: chunked\r\n"),
                }
                for (name, value) in headers {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                head.push_str("\r\n");
                if tls.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                match body {
                    Body::Sized(bytes) | Body::Declared(_, bytes) => {
                        let _ = tls.write_all(&bytes).await;
                    }
                    Body::EndlessChunks => {
                        let chunk = format!("400\r\n{}\r\n", " ".repeat(1024));
                        // Until the client hangs up: one that buffered it all would never finish.
                        while tls.write_all(chunk.as_bytes()).await.is_ok() && tls.flush().await.is_ok() {}
                        return;
                    }
                }
                let _ = tls.shutdown().await;
            });
        }
    });
    DocumentServer { base, hits }
}
