//! Client ID Metadata Documents (docs/oauth.md#client-id-metadata-documents): a `client_id`
//! that is an `https` URL with a path names a JSON document, published by the client, that
//! describes it. It is fetched (defended against SSRF), validated with the rules of dynamic
//! registration, cached in memory per container by its `Cache-Control: max-age` within
//! [`MAX_CACHE`], and treated as a public client (`token_endpoint_auth_method` `none`).
//!
//! The fetch: `https` only; the host is resolved here and *every* resolved address must be
//! public (`workapi_kit::net::is_public_address`); the connection goes to one of those checked addresses (TLS
//! and HTTP/1 are driven here, so nothing resolves the name again: no DNS rebinding between
//! check and connect); no redirects; `200` with `application/json` only; at most
//! [`MAX_DOCUMENT_BYTES`], read incrementally; [`FETCH_TIMEOUT`] for everything. Failures are
//! never cached.

use crate::client::{self, AuthMethod, Client};
use crate::register::{self, ClientMetadataBody, RegistrationError};
use axum::body::Bytes;
use axum::http::{HeaderMap, Request, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};
use workapi_kit::AppState;
use workapi_kit::oauth::MetadataFetchForTests;
use workapi_kit::{net, outbound};
use workapi_store::StoreError;

/// The largest document read; a longer one is refused.
pub const MAX_DOCUMENT_BYTES: usize = 5 * 1024;
/// The whole fetch (resolution, connection, TLS, request and body) takes at most this long.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(3);
/// The longest a document is cached, whatever its `max-age` says.
pub const MAX_CACHE: Duration = Duration::from_secs(24 * 60 * 60);
/// At most this many documents are cached per container.
const MAX_CACHED: usize = 256;
/// The longest client_id URL accepted.
pub const MAX_URL_CHARS: usize = 2000;

/// True when a `client_id` is meant as a metadata document URL (anything that starts like an
/// http or https URL); [`document_url`] then says whether it is an acceptable one.
pub fn is_document_client_id(client_id: &str) -> bool {
    let lower = client_id.get(..8).unwrap_or(client_id).to_ascii_lowercase();
    lower.starts_with("https:") || lower.starts_with("http:")
}

/// The URL of a metadata document client id, or why it is not acceptable: `https`, a host, a
/// path other than `/`, no user information, no fragment, written in its normalised form (so
/// one client has one id) and at most [`MAX_URL_CHARS`] characters.
pub fn document_url(client_id: &str) -> Result<url::Url, String> {
    if client_id.chars().count() > MAX_URL_CHARS {
        return Err(format!("A client_id URL may have at most {MAX_URL_CHARS} characters."));
    }
    let url = url::Url::parse(client_id).map_err(|_| "The client_id is not a valid URL.".to_owned())?;
    if url.scheme() != "https" {
        return Err("A client_id URL must use https.".into());
    }
    if url.host().is_none() || !url.username().is_empty() || url.password().is_some() {
        return Err("A client_id URL must name a host, without user information.".into());
    }
    if url.fragment().is_some() {
        return Err("A client_id URL must not have a fragment.".into());
    }
    if url.path() == "/" {
        return Err("A client_id URL must have a path (the document's location).".into());
    }
    if url.as_str() != client_id {
        return Err(format!("The client_id URL must be written in its normalised form, {}.", url.as_str()));
    }
    Ok(url)
}

/// Why a client could not be looked up.
#[derive(Debug)]
pub enum LookupError {
    /// A metadata document client id that is not acceptable, or whose document could not be
    /// fetched or is invalid: the message says which, for the error page or `invalid_client`.
    Document(String),
    Store(StoreError),
}

/// The client named by a `client_id`: a metadata document client (fetched or cached), or a
/// registered one (from the table). None for an unknown registered client.
pub async fn lookup(state: &AppState, client_id: &str) -> Result<Option<Client>, LookupError> {
    if !is_document_client_id(client_id) {
        return client::get(state.store(), client_id).await.map_err(LookupError::Store);
    }
    let url = document_url(client_id).map_err(LookupError::Document)?;
    let relaxed = state.metadata_fetch();
    // The cache is per process, and tests run strict and relaxed states in one: a document
    // fetched under the relaxation (from loopback) must never be served to a strict state.
    let key = (relaxed.is_relaxed(), client_id.to_owned());
    if let Some(client) = cached(&key) {
        return Ok(Some(client));
    }
    let fetched = fetch(&url, relaxed).await.map_err(LookupError::Document)?;
    let client = validate(client_id, &fetched.body).map_err(LookupError::Document)?;
    if !fetched.max_age.is_zero() {
        remember(key, &client, fetched.max_age);
    }
    Ok(Some(client))
}

/// Validates a fetched document for the client id `url`: a JSON object whose `client_id` is
/// the URL exactly, with a `client_name` and `redirect_uris`, checked with the rules of dynamic
/// registration ([`register::metadata`]), and `token_endpoint_auth_method` `none` if given.
pub fn validate(url: &str, body: &[u8]) -> Result<Client, String> {
    let invalid = |why: &str| format!("The client metadata document is invalid: {why}.");
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|_| invalid("it is not JSON"))?;
    let Some(object) = value.as_object() else {
        return Err(invalid("it is not a JSON object"));
    };
    match object.get("client_id").and_then(|v| v.as_str()) {
        Some(id) if id == url => {}
        Some(_) => return Err(invalid("its client_id is not the URL it was fetched from")),
        None => return Err(invalid("it has no client_id")),
    }
    if object.get("client_name").is_none_or(|v| v.is_null()) {
        return Err(invalid("client_name is required"));
    }
    for secret in ["client_secret", "client_secret_expires_at"] {
        if object.contains_key(secret) {
            return Err(invalid(&format!("{secret} has no place in a public document")));
        }
    }
    let body: ClientMetadataBody = serde_json::from_value(value).map_err(|_| invalid("it is not client metadata"))?;
    let metadata = register::metadata(&body).map_err(|e| match e {
        RegistrationError::RedirectUri(why) | RegistrationError::Metadata(why) => invalid(&why),
        _ => invalid("it is not client metadata"),
    })?;
    if metadata.token_endpoint_auth_method != AuthMethod::None {
        return Err(invalid("token_endpoint_auth_method must be none (a document client is public)"));
    }
    Ok(Client::from_metadata_document(url, metadata))
}

/// Cached documents by (fetched under the test relaxation, client id).
type CacheKey = (bool, String);

static CACHE: LazyLock<Mutex<HashMap<CacheKey, (Client, Instant)>>> = LazyLock::new(Default::default);

fn cached(key: &CacheKey) -> Option<Client> {
    let cache = CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    cache.get(key).filter(|(_, until)| *until > Instant::now()).map(|(client, _)| client.clone())
}

fn remember(key: CacheKey, client: &Client, max_age: Duration) {
    let mut cache = CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let now = Instant::now();
    if cache.len() >= MAX_CACHED {
        cache.retain(|_, (_, until)| *until > now);
        if cache.len() >= MAX_CACHED {
            cache.clear();
        }
    }
    cache.insert(key, (client.clone(), now + max_age));
}

/// How long a response may be cached: its `Cache-Control` `max-age`, at most [`MAX_CACHE`];
/// zero without one, or with `no-store` or `no-cache`.
pub fn cache_lifetime(headers: &HeaderMap) -> Duration {
    let mut max_age = None;
    for value in headers.get_all(header::CACHE_CONTROL) {
        let Ok(value) = value.to_str() else { return Duration::ZERO };
        for directive in value.split(',').map(|d| d.trim().to_ascii_lowercase()) {
            if directive == "no-store" || directive == "no-cache" {
                return Duration::ZERO;
            }
            if let Some(seconds) = directive.strip_prefix("max-age=") {
                let Ok(seconds) = seconds.trim_matches('"').parse::<u64>() else { return Duration::ZERO };
                max_age = Some(Duration::from_secs(seconds));
            }
        }
    }
    max_age.unwrap_or(Duration::ZERO).min(MAX_CACHE)
}

struct Fetched {
    body: Vec<u8>,
    max_age: Duration,
}

async fn fetch(url: &url::Url, relaxed: &MetadataFetchForTests) -> Result<Fetched, String> {
    match tokio::time::timeout(FETCH_TIMEOUT, fetch_within(url, relaxed)).await {
        Ok(result) => result,
        Err(_) => Err(format!("The client metadata document could not be fetched within {FETCH_TIMEOUT:?}.")),
    }
}

fn unreachable(why: impl std::fmt::Display) -> String {
    format!("The client metadata document could not be fetched: {why}.")
}

async fn fetch_within(url: &url::Url, relaxed: &MetadataFetchForTests) -> Result<Fetched, String> {
    let port = url.port_or_known_default().unwrap_or(443);
    let admitted = |ip: IpAddr| net::is_public_address(ip) || (relaxed.allow_loopback && ip.is_loopback());
    let addresses = match net::resolve_admitted(url, port, admitted).await {
        Ok(addresses) => addresses,
        Err(net::Refused::NoSuchHost) => return Err(unreachable("no such host")),
        Err(net::Refused::Address(ip)) => {
            return Err(format!(
                "The client metadata document is not fetched: its host resolves to a non-public address ({ip})."
            ));
        }
    };
    let tls = outbound::tls_config(&relaxed.extra_roots_der).map_err(unreachable)?;
    let mut sender =
        outbound::connect::<Empty<Bytes>>(url, &addresses, &tls, FETCH_TIMEOUT).await.map_err(unreachable)?;
    let (authority, path) = (outbound::authority(url), outbound::target(url));
    let request = Request::get(path)
        .header(header::HOST, authority)
        .header(header::ACCEPT, "application/json")
        .header(header::USER_AGENT, "workapi-oauth")
        .body(Empty::<Bytes>::new())
        .map_err(unreachable)?;
    let mut response = sender.send_request(request).await.map_err(|_| unreachable("no response"))?;
    let status = response.status();
    if status.is_redirection() {
        return Err(format!(
            "The client metadata document is not fetched: its URL answered with a redirect ({}), and redirects are not followed.",
            status.as_u16()
        ));
    }
    if status != StatusCode::OK {
        return Err(unreachable(format!("the server answered {}", status.as_u16())));
    }
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err("The client metadata document is invalid: it is not served as application/json.".into());
    }
    let too_large =
        || format!("The client metadata document is invalid: it is larger than {MAX_DOCUMENT_BYTES} bytes.");
    let declared = response.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_DOCUMENT_BYTES as u64) {
        return Err(too_large());
    }
    let max_age = cache_lifetime(response.headers());
    let mut body = Vec::new();
    while let Some(frame) = response.body_mut().frame().await {
        let frame = frame.map_err(|_| unreachable("the body could not be read"))?;
        if let Some(data) = frame.data_ref() {
            if body.len() + data.len() > MAX_DOCUMENT_BYTES {
                return Err(too_large());
            }
            body.extend_from_slice(data);
        }
    }
    Ok(Fetched { body, max_age })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_urls() {
        assert!(document_url("https://vscode.dev/oauth/client-metadata.json").is_ok());
        assert!(document_url("https://app.example:8443/client?v=1").is_ok());
        for bad in [
            "http://vscode.dev/oauth/client-metadata.json",
            "https://vscode.dev",
            "https://vscode.dev/",
            "https://u:p@vscode.dev/client.json",
            "https://vscode.dev/client.json#x",
            "https://VSCODE.dev/client.json",
            "https://vscode.dev/a/../client.json",
            "https://vscode.dev:443/client.json",
            "https:vscode.dev/client.json",
            // IPv4 in octal, hex or integer form and IPv4-mapped IPv6 written dotted are other
            // spellings of 127.0.0.1 / ::ffff:7f00:1: refused as not normalised (and the
            // normalised forms are refused by address after parsing, below).
            "https://0177.0.0.1/client.json",
            "https://0x7f.1/client.json",
            "https://2130706433/client.json",
            "https://[::ffff:127.0.0.1]/client.json",
        ] {
            assert!(document_url(bad).is_err(), "{bad}");
        }
        for literal in
            ["https://127.0.0.1/c.json", "https://[::ffff:7f00:1]/c.json", "https://[64:ff9b::7f00:1]/c.json"]
        {
            let url = document_url(literal).unwrap();
            let ip = match url.host() {
                Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
                Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
                _ => panic!("{literal}"),
            };
            assert!(!net::is_public_address(ip), "{literal}");
        }
        assert!(is_document_client_id("https://x"));
        assert!(is_document_client_id("HTTP://x"));
        assert!(!is_document_client_id("dcr_0b7e9d4c-8d1f-4b43-9a8e-3f0f5f6f0a11"));
    }

    #[test]
    fn cache_lifetimes() {
        let of = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::CACHE_CONTROL, value.parse().unwrap());
            cache_lifetime(&headers)
        };
        assert_eq!(cache_lifetime(&HeaderMap::new()), Duration::ZERO);
        assert_eq!(of("max-age=600"), Duration::from_secs(600));
        assert_eq!(of("public, max-age=60"), Duration::from_secs(60));
        assert_eq!(of("max-age=99999999"), MAX_CACHE);
        assert_eq!(of("max-age=600, no-store"), Duration::ZERO);
        assert_eq!(of("no-cache"), Duration::ZERO);
        assert_eq!(of("max-age=-1"), Duration::ZERO);
    }

    #[test]
    fn documents_are_validated() {
        let url = "https://app.example/client.json";
        let good = serde_json::json!({
            "client_id": url, "client_name": "App", "redirect_uris": ["https://app.example/cb"],
            "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"]
        });
        let client = validate(url, good.to_string().as_bytes()).unwrap();
        assert_eq!(client.client_id, url);
        assert!(!client.is_confidential());
        assert_eq!(client.document_host().as_deref(), Some("app.example"));
        let with = |field: &str, value: serde_json::Value| {
            let mut doc = good.clone();
            doc[field] = value;
            validate(url, doc.to_string().as_bytes())
        };
        assert!(with("client_id", "https://app.example/other.json".into()).is_err());
        assert!(with("client_id", serde_json::Value::Null).is_err());
        assert!(with("client_name", serde_json::Value::Null).is_err());
        assert!(with("client_name", "\u{202e}ppA".into()).is_err());
        assert!(with("redirect_uris", serde_json::json!([])).is_err());
        assert!(with("redirect_uris", serde_json::json!(["javascript:alert(1)"])).is_err());
        assert!(with("token_endpoint_auth_method", "client_secret_basic".into()).is_err());
        assert!(with("client_secret", "s".into()).is_err());
        let mut missing = good.clone();
        missing.as_object_mut().unwrap().remove("redirect_uris");
        assert!(validate(url, missing.to_string().as_bytes()).is_err());
        assert!(validate(url, b"<html>").is_err());
        assert!(validate(url, b"[]").is_err());
    }
}
