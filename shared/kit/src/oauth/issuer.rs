//! The site URL and what every function derives from it: the OAuth issuer (`{site_url}/api`),
//! the API's resource identifier and its protected-resource metadata URL (docs/oauth.md#site-url).
//! The authorization server's endpoints under the issuer are the oauth function's.
//!
//! The site URL is configured ([`SiteUrl`], held by the `AppState`): `LT_SITE_URL` on Lambda
//! (deployments must set it: behind API Gateway the `Host` header names the execute-api domain,
//! not the public one), `LT_SITE_URL` or else the listen address on the local server. Only
//! when nothing is configured (tests that serve on an ephemeral port, a function without
//! `LT_SITE_URL`) is it derived from the request's `Host` header: `http` for loopback hosts,
//! `https` for every other host. `X-Forwarded-*` headers are never trusted. A missing or
//! malformed `Host` gives `http://localhost`.

use axum::http::{HeaderMap, header};

/// Environment variable naming the public site URL, e.g. `https://work.example.com`.
pub const SITE_URL_ENV: &str = "LT_SITE_URL";
/// The path of the authorization server under the site URL.
pub const ISSUER_PATH: &str = "/api";

/// The public site URL as configured, or "from the request's `Host`" when not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteUrl(Option<String>);

impl SiteUrl {
    /// A configured site URL, normalised (no trailing slash); None when it is not an absolute
    /// `http`/`https` URL without query, fragment or userinfo.
    pub fn configured(raw: &str) -> Option<SiteUrl> {
        normalise(raw.trim()).map(|url| SiteUrl(Some(url)))
    }

    /// Derived from each request's `Host` header (see the module documentation).
    pub fn from_host() -> SiteUrl {
        SiteUrl(None)
    }

    /// `LT_SITE_URL` when set and valid; an invalid value is ignored with a warning (the
    /// request's `Host` decides then), never a crash.
    pub fn from_env() -> SiteUrl {
        match std::env::var(SITE_URL_ENV) {
            Ok(raw) if !raw.trim().is_empty() => SiteUrl::configured(&raw).unwrap_or_else(|| {
                tracing::warn!(env = SITE_URL_ENV, "ignoring an invalid site URL");
                SiteUrl::from_host()
            }),
            _ => SiteUrl::from_host(),
        }
    }

    /// The local server's site URL: `LT_SITE_URL` when set, else the address it listens on
    /// (`localhost` for an unspecified address such as 0.0.0.0), never the request's `Host`,
    /// which any caller can set.
    pub fn local(listening: std::net::SocketAddr) -> SiteUrl {
        let configured = SiteUrl::from_env();
        if configured.0.is_some() {
            return configured;
        }
        let host = match listening.ip() {
            ip if ip.is_unspecified() => "localhost".to_owned(),
            std::net::IpAddr::V4(ip) => ip.to_string(),
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        };
        SiteUrl(Some(format!("http://{host}:{}", listening.port())))
    }

    /// The public site URL of a request, without a trailing slash.
    pub fn of(&self, headers: &HeaderMap) -> String {
        if let Some(configured) = &self.0 {
            return configured.clone();
        }
        headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .and_then(from_host)
            .unwrap_or_else(|| "http://localhost".into())
    }

    /// The issuer identifier (RFC 8414): `{site_url}/api`.
    pub fn issuer(&self, headers: &HeaderMap) -> String {
        format!("{}{ISSUER_PATH}", self.of(headers))
    }

    /// The API's resource identifier (RFC 9728 `resource`): the site URL, under which every
    /// API route lives.
    pub fn resource(&self, headers: &HeaderMap) -> String {
        self.of(headers)
    }

    /// The protected-resource metadata URL named by `WWW-Authenticate` on every 401 (RFC 9728
    /// §5.1).
    pub fn resource_metadata_url(&self, headers: &HeaderMap) -> String {
        format!("{}/.well-known/oauth-protected-resource", self.of(headers))
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
    fn a_configured_site_url_wins_over_the_host() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, "evil.example".parse().unwrap());
        let site = SiteUrl::configured("http://127.0.0.1:3000/").unwrap();
        assert_eq!(site.issuer(&headers), "http://127.0.0.1:3000/api");
        assert_eq!(SiteUrl::from_host().issuer(&headers), "https://evil.example/api");
        assert_eq!(SiteUrl::configured("not a url"), None);
        // The local server (no LT_SITE_URL in the test environment): its listen address.
        let local = |a: &str| SiteUrl::local(a.parse().unwrap()).of(&headers);
        assert_eq!(local("127.0.0.1:3000"), "http://127.0.0.1:3000");
        assert_eq!(local("0.0.0.0:8080"), "http://localhost:8080");
        assert_eq!(local("[::1]:9000"), "http://[::1]:9000");
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
