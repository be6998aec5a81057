//! CORS (docs/conventions.md#cors): two policies by path, applied by one layer of
//! `workapi_kit::http` in front of everything else, so a preflight is neither rate-limited nor
//! authenticated.
//!
//! - The discovery documents, dynamic registration (and its RFC 7592 management routes), the
//!   token and revocation endpoints and the OpenAPI document allow any origin: they are public
//!   and carry no ambient credentials (no cookies; secrets travel in headers or bodies that a
//!   foreign page does not have).
//! - The consent page (`/api/oauth/authorize`) is a top-level navigation and its form posts to
//!   its own origin: no CORS at all.
//! - Every other route (the API) allows the origins the operator lists in
//!   `LT_CORS_ALLOWED_ORIGINS` (comma-separated; `*` for any; empty by default: none).
//!
//! Credentials mode is never allowed (`Access-Control-Allow-Credentials` is not sent): bearer
//! tokens are sent explicitly by the page, never attached by the browser.

use axum::http::{HeaderMap, HeaderValue, Method, header};

/// The environment variable (and SAM parameter `CorsAllowedOrigins`) listing the API's origins.
pub const ORIGINS_ENV: &str = "LT_CORS_ALLOWED_ORIGINS";

/// Request headers a page may send: the credential, the body type, the spec's own headers
/// (both spellings of the imposter headers, as accepted by `workapi_kit::auth`), and the MCP
/// headers (browser-based MCP clients send them to `/mcp` and to the discovery documents,
/// and choose a surface with the two `X-MCP-` headers: docs/mcp.md, "Surfaces").
pub const ALLOWED_HEADERS: &str = "Authorization, Content-Type, Idempotency-Key, If-None-Match, LT-Response-Shape, \
     LT_IMPOSTER_USER_ID, LT-Imposter-User-Id, LT_CUSTOM_NOW, LT-Custom-Now, \
     MCP-Protocol-Version, Mcp-Method, Mcp-Name, X-MCP-Toolsets, X-MCP-Readonly";
/// Response headers a page may read besides the CORS-safelisted ones. `WWW-Authenticate` names
/// the protected-resource metadata on every 401 (browser-based OAuth clients discover the
/// authorization server from it); `X-Request-Id` is what a user reports (docs/operations.md).
pub const EXPOSED_HEADERS: &str = "X-RateLimit-Limit, X-RateLimit-Remaining, Retry-After, WWW-Authenticate, Idempotent-Replayed, X-Request-Id, Link, ETag";
pub const ALLOWED_METHODS: &str = "GET, POST, PUT, PATCH, DELETE";
/// How long a browser may cache a preflight answer (seconds).
pub const MAX_AGE_SECS: u32 = 600;

/// The origins the API routes allow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedOrigins {
    any: bool,
    origins: Vec<String>,
}

impl AllowedOrigins {
    /// None: no CORS on the API routes (the default).
    pub fn none() -> Self {
        Self::default()
    }

    /// Any origin (`*`).
    pub fn any() -> Self {
        AllowedOrigins { any: true, origins: Vec::new() }
    }

    /// A comma-separated list of origins (`https://app.example.com`, `http://localhost:5173`)
    /// or `*`. Entries are compared with the browser's `Origin` case-insensitively, without a
    /// trailing slash; an entry with a path, query or another scheme is an error.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut allowed = AllowedOrigins::none();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if entry == "*" {
                allowed.any = true;
                continue;
            }
            let origin = entry.trim_end_matches('/').to_ascii_lowercase();
            let rest = origin.strip_prefix("https://").or_else(|| origin.strip_prefix("http://"));
            let valid = rest.is_some_and(|host| {
                !host.is_empty() && !host.contains(['/', '?', '#', '@', ' ', '*']) && !host.starts_with(':')
            });
            if !valid {
                return Err(format!("{ORIGINS_ENV}: {entry:?} is not an origin such as https://app.example.com"));
            }
            allowed.origins.push(origin);
        }
        Ok(allowed)
    }

    /// From `LT_CORS_ALLOWED_ORIGINS`; unset or empty is none. An invalid list is logged and
    /// allows nothing (failing closed).
    pub fn from_env() -> Self {
        let text = std::env::var(ORIGINS_ENV).unwrap_or_default();
        Self::parse(&text).unwrap_or_else(|e| {
            tracing::error!(error = %e, "CORS disabled for the API routes");
            AllowedOrigins::none()
        })
    }

    pub fn is_empty(&self) -> bool {
        !self.any && self.origins.is_empty()
    }

    /// Whether a browser's `Origin` is one of these (the MCP endpoint checks it on every request).
    pub fn allows(&self, origin: &str) -> bool {
        self.any || self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }
}

/// Which CORS policy a path has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Public endpoints: any origin.
    AnyOrigin,
    /// The API: the configured origins.
    Configured,
    /// The consent page: none.
    Closed,
}

pub fn policy(path: &str) -> Policy {
    let any_origin = path.starts_with("/.well-known/")
        || path.starts_with("/api/.well-known/")
        || path == "/api/oauth/register"
        || path.starts_with("/api/oauth/register/")
        || path == "/api/oauth/token"
        || path == "/api/oauth/revoke"
        || path.starts_with("/docs/");
    if any_origin {
        Policy::AnyOrigin
    } else if path == "/api/oauth/authorize" {
        Policy::Closed
    } else {
        Policy::Configured
    }
}

/// A CORS preflight: `OPTIONS` with `Origin` and `Access-Control-Request-Method`.
pub fn is_preflight(method: &Method, headers: &HeaderMap) -> bool {
    method == Method::OPTIONS
        && headers.contains_key(header::ORIGIN)
        && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

/// The `Access-Control-Allow-Origin` value for a request from `origin` to a path with `policy`,
/// or None when that origin is not allowed there.
pub fn allow_origin(policy: Policy, allowed: &AllowedOrigins, origin: &str) -> Option<HeaderValue> {
    match policy {
        Policy::AnyOrigin => Some(HeaderValue::from_static("*")),
        Policy::Configured if allowed.any => Some(HeaderValue::from_static("*")),
        Policy::Configured if allowed.allows(origin) => HeaderValue::from_str(origin).ok(),
        Policy::Configured | Policy::Closed => None,
    }
}

/// Whether the answer depends on `Origin` (so caches must key on it).
pub fn varies_by_origin(policy: Policy, allowed: &AllowedOrigins) -> bool {
    policy == Policy::Configured && !allowed.any && !allowed.is_empty()
}

/// The headers of a preflight answer (the status is 204 whether or not the origin is allowed;
/// without `Access-Control-Allow-Origin` the browser refuses the real request).
pub fn preflight_headers(policy: Policy, allowed: &AllowedOrigins, origin: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::VARY,
        HeaderValue::from_static("Origin, Access-Control-Request-Method, Access-Control-Request-Headers"),
    );
    if let Some(value) = allow_origin(policy, allowed, origin) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
        headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(ALLOWED_METHODS));
        headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static(ALLOWED_HEADERS));
        headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from(MAX_AGE_SECS));
    }
    headers
}

/// Adds the CORS headers of an actual (non-preflight) response.
pub fn decorate(headers: &mut HeaderMap, policy: Policy, allowed: &AllowedOrigins, origin: Option<&str>) {
    if varies_by_origin(policy, allowed) {
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
    }
    let Some(value) = origin.and_then(|origin| allow_origin(policy, allowed, origin)) else { return };
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
    headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSED_HEADERS));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_parse_strictly() {
        assert_eq!(AllowedOrigins::parse("").unwrap(), AllowedOrigins::none());
        assert_eq!(AllowedOrigins::parse(" , ").unwrap(), AllowedOrigins::none());
        let list = AllowedOrigins::parse("https://App.example.com/, http://localhost:5173").unwrap();
        assert!(list.allows("https://app.example.com"));
        assert!(list.allows("http://localhost:5173"));
        assert!(!list.allows("http://localhost:5174"));
        assert!(!list.allows("https://app.example.com.evil.example"));
        assert!(!list.allows("null"));
        assert!(AllowedOrigins::parse("*").unwrap().allows("https://anything.example"));
        for bad in
            ["app.example.com", "https://app.example.com/path", "ftp://x.example", "https://", "https://*.example.com"]
        {
            assert!(AllowedOrigins::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn public_endpoints_allow_any_origin_the_api_only_configured_ones() {
        for path in [
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-authorization-server/api",
            "/api/.well-known/oauth-authorization-server",
            "/api/oauth/register",
            "/api/oauth/register/dcr_1",
            "/api/oauth/token",
            "/api/oauth/revoke",
            "/docs/json",
        ] {
            assert_eq!(policy(path), Policy::AnyOrigin, "{path}");
        }
        assert_eq!(policy("/api/oauth/authorize"), Policy::Closed);
        for path in ["/tags/task", "/administration/roles", "/api/auth/login", "/api/oauth/registerx", "/nope"] {
            assert_eq!(policy(path), Policy::Configured, "{path}");
        }
        let none = AllowedOrigins::none();
        let one = AllowedOrigins::parse("https://app.example.com").unwrap();
        assert_eq!(allow_origin(Policy::AnyOrigin, &none, "https://x.example").unwrap(), "*");
        assert_eq!(allow_origin(Policy::Configured, &none, "https://app.example.com"), None);
        assert_eq!(
            allow_origin(Policy::Configured, &one, "https://app.example.com").unwrap(),
            "https://app.example.com"
        );
        assert_eq!(allow_origin(Policy::Configured, &one, "https://x.example"), None);
        assert_eq!(allow_origin(Policy::Closed, &AllowedOrigins::any(), "https://x.example"), None);
    }

    #[test]
    fn preflights_allow_the_credential_and_the_spec_headers() {
        let one = AllowedOrigins::parse("https://app.example.com").unwrap();
        let headers = preflight_headers(Policy::Configured, &one, "https://app.example.com");
        let allowed = headers[header::ACCESS_CONTROL_ALLOW_HEADERS].to_str().unwrap().to_ascii_lowercase();
        for name in [
            "authorization",
            "content-type",
            "idempotency-key",
            "lt-response-shape",
            "lt_imposter_user_id",
            "lt_custom_now",
            "mcp-protocol-version",
            "mcp-method",
            "mcp-name",
            "x-mcp-toolsets",
            "x-mcp-readonly",
        ] {
            assert!(allowed.split(", ").any(|h| h == name), "{name}");
        }
        assert!(headers.get(header::ACCESS_CONTROL_ALLOW_CREDENTIALS).is_none());
        let refused = preflight_headers(Policy::Configured, &one, "https://x.example");
        assert!(refused.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
    }
}
