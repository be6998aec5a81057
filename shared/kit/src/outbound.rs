//! Outbound HTTP/1 to addresses already checked ([`crate::net`]): the caller resolves a URL's
//! host once, checks every address, and connects here to one of *those* addresses, never to the
//! name again (no DNS rebinding between the check and the request). Used by the client metadata
//! document fetch (functions/oauth) and the webhook deliveries (functions/events); neither
//! follows redirects.

use hyper::body::Body;
use hyper::client::conn::http1::SendRequest;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, LazyLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// A TLS client configuration: the system's roots, and `extra_roots_der` (tests' own CA).
pub fn tls_config(extra_roots_der: &[Vec<u8>]) -> Result<Arc<rustls::ClientConfig>, String> {
    static SYSTEM_ROOTS: LazyLock<rustls::RootCertStore> = LazyLock::new(|| {
        let mut roots = rustls::RootCertStore::empty();
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        roots
    });
    let mut roots = SYSTEM_ROOTS.clone();
    for der in extra_roots_der {
        roots.add(der.clone().into()).map_err(|e| e.to_string())?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// A connection's byte stream: TLS, or plain TCP for `http` URLs.
pub trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// An HTTP/1 connection to the first of `addresses` that accepts, with TLS for `https` (the
/// certificate checked against `url`'s host), plain for `http`. The connection is driven in the
/// background for at most `lifetime`. Errors are short phrases for a caller's message.
pub async fn connect<B>(
    url: &url::Url,
    addresses: &[SocketAddr],
    tls: &Arc<rustls::ClientConfig>,
    lifetime: Duration,
) -> Result<SendRequest<B>, &'static str>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut tcp = None;
    for address in addresses {
        if let Ok(stream) = tokio::net::TcpStream::connect(address).await {
            tcp = Some(stream);
            break;
        }
    }
    let tcp = tcp.ok_or("no connection")?;
    let io: Box<dyn Io> = match url.scheme() {
        "https" => {
            let server_name: rustls::pki_types::ServerName<'static> = match url.host() {
                Some(url::Host::Domain(domain)) => {
                    rustls::pki_types::ServerName::try_from(domain.to_owned()).map_err(|_| "an invalid host name")?
                }
                Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).into(),
                Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).into(),
                None => return Err("no host"),
            };
            let tls = tokio_rustls::TlsConnector::from(tls.clone())
                .connect(server_name, tcp)
                .await
                .map_err(|_| "the TLS handshake failed")?;
            Box::new(tls)
        }
        "http" => Box::new(tcp),
        _ => return Err("a scheme other than http(s)"),
    };
    let (sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io)).await.map_err(|_| "no HTTP")?;
    tokio::spawn(tokio::time::timeout(lifetime, connection));
    Ok(sender)
}

/// The request's `Host`: the URL's host, with its port when one is written.
pub fn authority(url: &url::Url) -> String {
    match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_owned(),
    }
}

/// The request target: path and query.
pub fn target(url: &url::Url) -> String {
    match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    }
}
