//! Request rate limits (spec §8): per client IP and per token or session, in fixed windows,
//! counted in the store so they are exact across Lambda instances; and the tighter login
//! limits ([`LoginLimits`]).
//!
//! Each limit costs one conditional atomic write: `increment` with `CounterBelow(limit)` on the
//! window's counter item. The item expires (TTL) a minute after its window, so counters never
//! need cleaning. The client IP comes from the API Gateway request context (or the socket when
//! served locally), never from `X-Forwarded-For`, which any client can write.

use crate::error::ApiError;
use axum::http::{HeaderMap, HeaderValue, request::Parts};
use std::sync::{Arc, Mutex};
use workapi_store::{Condition, ENTITY, Item, Store, StoreError, TTL};

const ENTITY_WINDOW: &str = "RateLimitWindow";

/// The limits. Defaults are the spec's; `LT_RATE_LIMIT_TOKEN`, `LT_RATE_LIMIT_IP` and
/// `LT_RATE_LIMIT_WINDOW_SECS` override them (tests use small values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    pub per_token: i64,
    pub per_ip: i64,
    pub window_secs: i64,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits { per_token: 1200, per_ip: 3000, window_secs: 60 }
    }
}

impl RateLimits {
    pub fn from_env() -> Self {
        let d = RateLimits::default();
        RateLimits {
            per_token: env_limit("LT_RATE_LIMIT_TOKEN", d.per_token),
            per_ip: env_limit("LT_RATE_LIMIT_IP", d.per_ip),
            window_secs: env_limit("LT_RATE_LIMIT_WINDOW_SECS", d.window_secs),
        }
    }
}

/// The tighter limits of the public endpoints that work for anonymous callers, charged on top
/// of the IP limit:
/// - `POST /api/auth/login` (spec §8.4) and the consent page's sign-in, per client IP and per
///   e-mail address (so guessing one account's password from many addresses is limited too),
///   for every attempt that passes validation;
/// - `POST /api/oauth/register` (RFC 7591), per client IP, for every attempt: registration is
///   anonymous and stores what it is sent.
///
/// Defaults: 10 a minute each; `LT_LOGIN_LIMIT_IP`, `LT_LOGIN_LIMIT_EMAIL`,
/// `LT_REGISTER_LIMIT_IP` and `LT_LOGIN_LIMIT_WINDOW_SECS` override them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginLimits {
    pub per_ip: i64,
    pub per_email: i64,
    pub registrations_per_ip: i64,
    pub window_secs: i64,
}

impl Default for LoginLimits {
    fn default() -> Self {
        LoginLimits { per_ip: 10, per_email: 10, registrations_per_ip: 10, window_secs: 60 }
    }
}

impl LoginLimits {
    pub fn from_env() -> Self {
        let d = LoginLimits::default();
        LoginLimits {
            per_ip: env_limit("LT_LOGIN_LIMIT_IP", d.per_ip),
            per_email: env_limit("LT_LOGIN_LIMIT_EMAIL", d.per_email),
            registrations_per_ip: env_limit("LT_REGISTER_LIMIT_IP", d.registrations_per_ip),
            window_secs: env_limit("LT_LOGIN_LIMIT_WINDOW_SECS", d.window_secs),
        }
    }
}

fn env_limit(name: &str, default: i64) -> i64 {
    std::env::var(name).ok().and_then(|v| v.parse::<i64>().ok()).filter(|v| *v > 0).unwrap_or(default)
}

/// Which login counter an attempt is charged to.
pub enum LoginBucket<'a> {
    Ip(&'a str),
    /// The e-mail as typed; it is case-folded and hashed, so no address is written to a key.
    Email(&'a str),
    /// A client registration from this IP.
    Registration(&'a str),
}

/// Counts one login attempt, like [`hit`].
pub async fn hit_login(
    store: &dyn Store,
    limits: &LoginLimits,
    bucket: LoginBucket<'_>,
    now: i64,
) -> Result<Quota, Quota> {
    let (name, limit) = match bucket {
        LoginBucket::Ip(ip) => (format!("login-ip:{ip}"), limits.per_ip),
        LoginBucket::Email(email) => {
            use sha2::Digest;
            let digest = sha2::Sha256::digest(email.trim().to_lowercase().as_bytes());
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            (format!("login-email:{hex}"), limits.per_email)
        }
        LoginBucket::Registration(ip) => (format!("register-ip:{ip}"), limits.registrations_per_ip),
    };
    count(store, &name, limit, limits.window_secs, now).await
}

/// The state of one limit after a request was counted against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    pub limit: i64,
    pub remaining: i64,
    /// Seconds until the window ends (at least 1).
    pub reset_in: i64,
}

/// Which counter a request is charged to.
pub enum Bucket<'a> {
    Ip(&'a str),
    Token(&'a str),
}

/// The window containing `now` and the seconds left in it.
pub fn window(now: i64, window_secs: i64) -> (i64, i64) {
    let start = now - now.rem_euclid(window_secs);
    (start, (start + window_secs - now).max(1))
}

/// Counts one request. `Ok` when admitted, `Err` with the exhausted quota when over the limit.
/// A store failure admits the request (logged): the limiter must not take the API down.
pub async fn hit(store: &dyn Store, limits: &RateLimits, bucket: Bucket<'_>, now: i64) -> Result<Quota, Quota> {
    let (name, limit) = match bucket {
        Bucket::Ip(ip) => (format!("ip:{ip}"), limits.per_ip),
        Bucket::Token(id) => (format!("token:{id}"), limits.per_token),
    };
    count(store, &name, limit, limits.window_secs, now).await
}

/// One conditional increment of a bucket's counter in the window containing `now`.
async fn count(store: &dyn Store, name: &str, limit: i64, window_secs: i64, now: i64) -> Result<Quota, Quota> {
    let (start, reset_in) = window(now, window_secs);
    let key = workapi_store::keys::rate_limit_window(name, start);
    let mut init = Item::new();
    init.insert(ENTITY.into(), ENTITY_WINDOW.into());
    init.insert(TTL.into(), (start + window_secs + 60).into());
    let below = Condition::CounterBelow { attr: "count".into(), limit };
    match store.increment(&key, "count", 1, init, below).await {
        Ok(count) => Ok(Quota { limit, remaining: (limit - count).max(0), reset_in }),
        Err(StoreError::ConditionFailed) => Err(Quota { limit, remaining: 0, reset_in }),
        Err(e) => {
            tracing::warn!(error = %e, "rate limiter unavailable; admitting the request");
            Ok(Quota { limit, remaining: limit, reset_in })
        }
    }
}

pub fn too_many_requests(quota: Quota) -> ApiError {
    ApiError::new(axum::http::StatusCode::TOO_MANY_REQUESTS, "Too many requests; retry after the window resets")
        .with_header(axum::http::header::RETRY_AFTER, HeaderValue::from(quota.reset_in))
}

/// The quota to report on a response: the tightest of the limits the request was charged to.
/// Shared between the IP layer and the authentication extractor through request extensions.
#[derive(Clone, Default)]
pub struct Reported(Arc<Mutex<Option<Quota>>>);

impl Reported {
    pub fn record(&self, quota: Quota) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none_or(|current| quota.remaining < current.remaining) {
            *slot = Some(quota);
        }
    }

    pub fn write_headers(&self, headers: &mut HeaderMap) {
        if let Some(quota) = *self.0.lock().unwrap_or_else(|p| p.into_inner()) {
            headers.insert("x-ratelimit-limit", HeaderValue::from(quota.limit));
            headers.insert("x-ratelimit-remaining", HeaderValue::from(quota.remaining));
        }
    }
}

/// The caller's rate-limit identity by address: API Gateway's `sourceIp` (REST event, or a
/// Function URL event under `cargo lambda watch`), else the TCP peer
/// (local server), as [`ip_bucket`] groups it. Headers such as `X-Forwarded-For` are ignored
/// on purpose.
pub fn client_ip(parts: &Parts) -> Option<String> {
    use lambda_http::request::RequestContext;
    let ip = match parts.extensions.get::<RequestContext>() {
        Some(RequestContext::ApiGatewayV1(ctx)) => ctx.identity.source_ip.clone(),
        // `cargo lambda watch` sends Function URL (v2) events (feature `watch`).
        #[cfg(feature = "watch")]
        Some(RequestContext::ApiGatewayV2(ctx)) => ctx.http.source_ip.clone(),
        _ => parts
            .extensions
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map(|info| info.0.ip().to_string()),
    };
    ip.map(|ip| ip_bucket(&ip))
}

/// One bucket per IPv4 address, and one per IPv6 /64: a single subscriber usually holds a
/// whole /64, so per-address buckets would let one client spread over billions of limits.
/// IPv4-mapped IPv6 addresses count as their IPv4 address; text that is no address stays as is.
pub fn ip_bucket(ip: &str) -> String {
    match ip.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(v4)) => v4.to_string(),
        Ok(std::net::IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
        Err(_) => ip.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_clients_share_a_bucket_per_64() {
        assert_eq!(ip_bucket("198.51.100.7"), "198.51.100.7");
        assert_eq!(ip_bucket("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
        assert_eq!(ip_bucket("2001:db8:1:2:ffff:ffff:ffff:ffff"), "2001:db8:1:2::/64");
        assert_ne!(ip_bucket("2001:db8:1:3::1"), ip_bucket("2001:db8:1:2::1"));
        assert_eq!(ip_bucket("::ffff:198.51.100.7"), "198.51.100.7");
        assert_eq!(ip_bucket("unknown"), "unknown");
    }

    #[test]
    fn windows_are_aligned_and_reset_is_never_zero() {
        assert_eq!(window(120, 60), (120, 60));
        assert_eq!(window(179, 60), (120, 1));
        assert_eq!(window(181, 60), (180, 59));
    }

    #[test]
    fn the_tightest_quota_is_reported() {
        let reported = Reported::default();
        reported.record(Quota { limit: 3000, remaining: 2999, reset_in: 5 });
        reported.record(Quota { limit: 1200, remaining: 10, reset_in: 5 });
        reported.record(Quota { limit: 3000, remaining: 2998, reset_in: 5 });
        let mut headers = HeaderMap::new();
        reported.write_headers(&mut headers);
        assert_eq!(headers["x-ratelimit-limit"], "1200");
        assert_eq!(headers["x-ratelimit-remaining"], "10");
    }

    #[test]
    fn forwarded_for_is_not_the_client_ip() {
        let request = axum::http::Request::builder().header("x-forwarded-for", "203.0.113.9").body(()).unwrap();
        let (parts, _) = request.into_parts();
        assert_eq!(client_ip(&parts), None);
    }
}
