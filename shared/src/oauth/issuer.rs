//! The site URL and what every function derives from it: the OAuth issuer (`{site_url}/api`),
//! the API's resource identifier and its protected-resource metadata URL (docs/oauth.md#site-url).
//! The authorization server's endpoints under the issuer are the oauth function's.
//!
//! `site_url` is `LT_SITE_URL` when set (deployments must set it: behind API Gateway the
//! `Host` header names the execute-api domain, not the public one). Otherwise it is derived
//! from the request's `Host` header: `http` for loopback hosts (the local server, tests),
//! `https` for every other host. `X-Forwarded-*` headers are never trusted. A missing or
//! malformed `Host` gives `http://localhost`.

use axum::http::{HeaderMap, header};

/// Environment variable naming the public site URL, e.g. `https://work.example.com`.
pub const SITE_URL_ENV: &str = "LT_SITE_URL";
/// The path of the authorization server under the site URL.
pub const ISSUER_PATH: &str = "/api";

/// The public site URL, without a trailing slash.
pub fn site_url(headers: &HeaderMap) -> String {
    if let Some(configured) = configured_site_url() {
        return configured;
    }
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(from_host)
        .unwrap_or_else(|| "http://localhost".into())
}

/// The issuer identifier (RFC 8414): `{site_url}/api`.
pub fn issuer(headers: &HeaderMap) -> String {
    format!("{}{ISSUER_PATH}", site_url(headers))
}

/// The API's resource identifier (RFC 9728 `resource`): the site URL, under which every API
/// route lives.
pub fn resource(headers: &HeaderMap) -> String {
    site_url(headers)
}

/// The protected-resource metadata URL named by `WWW-Authenticate` on every 401 (RFC 9728 §5.1).
pub fn resource_metadata_url(headers: &HeaderMap) -> String {
    format!("{}/.well-known/oauth-protected-resource", site_url(headers))
}

/// `LT_SITE_URL`, normalised, when set and valid: an absolute `http`/`https` URL without
/// query, fragment or userinfo. An invalid value is ignored with a warning (the request's
/// `Host` decides then), never a crash.
fn configured_site_url() -> Option<String> {
    let raw = std::env::var(SITE_URL_ENV).ok()?;
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    match normalise(raw) {
        Some(url) => Some(url),
        None => {
            tracing::warn!(env = SITE_URL_ENV, "ignoring an invalid site URL");
            None
        }
    }
}

fn normalise(raw: &str) -> Option<String> {
    let url = url::Url::parse(raw).ok()?;
    let valid = matches!(url.scheme(), "http" | "https")
        && url.host().is_some()
        && url.username().is_empty()
        && url.password().is_none()
        && url.query().is_none()
        && url.fragment().is_none();
    valid.then(|| url.as_str().trim_end_matches('/').to_owned())
}

/// `http(s)://<host>` from a `Host` header value; None unless it is a plain host with an
/// optional port.
fn from_host(host: &str) -> Option<String> {
    let plain = !host.is_empty()
        && host.len() <= 255
        && host.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'));
    if !plain {
        return None;
    }
    let probe = url::Url::parse(&format!("http://{host}")).ok()?;
    if probe.path() != "/" || probe.host().is_none() {
        return None;
    }
    let scheme = if is_loopback_host(&probe) { "http" } else { "https" };
    let mut url = url::Url::parse(&format!("{scheme}://{host}")).ok()?;
    url.set_path("");
    Some(url.origin().ascii_serialization())
}

/// True for the loopback hosts of RFC 8252 §7.3 (and `localhost`, §8.3 notwithstanding, since
/// common clients register it): plain `http` is allowed there, for the site and for redirect
/// URIs alike.
pub fn is_loopback_host(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_decides_without_configuration() {
        assert_eq!(from_host("127.0.0.1:3000").as_deref(), Some("http://127.0.0.1:3000"));
        assert_eq!(from_host("localhost").as_deref(), Some("http://localhost"));
        assert_eq!(from_host("[::1]:9000").as_deref(), Some("http://[::1]:9000"));
        assert_eq!(from_host("Work.Example.com").as_deref(), Some("https://work.example.com"));
        assert_eq!(from_host("work.example.com:443").as_deref(), Some("https://work.example.com"));
        for bad in ["", "a/b", "evil.example/x?", "user@host", "host name", "a\"b", "h#x"] {
            assert_eq!(from_host(bad), None, "{bad}");
        }
    }

    #[test]
    fn configured_urls_are_normalised() {
        assert_eq!(normalise("https://work.example.com/").as_deref(), Some("https://work.example.com"));
        assert_eq!(normalise("https://work.example.com/prefix/").as_deref(), Some("https://work.example.com/prefix"));
        for bad in [
            "work.example.com",
            "ftp://x.example",
            "https://u:p@x.example",
            "https://x.example/?q",
            "https://x.example/#f",
        ] {
            assert_eq!(normalise(bad), None, "{bad}");
        }
    }
}
