//! Request rate limits (spec §8): per client IP and per token or session, in fixed windows,
//! counted in the store so they are exact across Lambda instances.
//!
//! Each limit costs one conditional atomic write: `increment` with `CounterBelow(limit)` on the
//! window's counter item. The item expires (TTL) a minute after its window, so counters never
//! need cleaning. The client IP comes from the API Gateway request context (or the socket when
//! served locally), never from `X-Forwarded-For`, which any client can write.

use crate::error::ApiError;
use crate::store::{Condition, ENTITY, Item, Store, StoreError, TTL};
use axum::http::{HeaderMap, HeaderValue, request::Parts};
use std::sync::{Arc, Mutex};

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
        let read = |name: &str, default: i64| {
            std::env::var(name).ok().and_then(|v| v.parse::<i64>().ok()).filter(|v| *v > 0).unwrap_or(default)
        };
        let d = RateLimits::default();
        RateLimits {
            per_token: read("LT_RATE_LIMIT_TOKEN", d.per_token),
            per_ip: read("LT_RATE_LIMIT_IP", d.per_ip),
            window_secs: read("LT_RATE_LIMIT_WINDOW_SECS", d.window_secs),
        }
    }
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
    let (start, reset_in) = window(now, limits.window_secs);
    let key = crate::store::keys::rate_limit_window(&name, start);
    let mut init = Item::new();
    init.insert(ENTITY.into(), ENTITY_WINDOW.into());
    init.insert(TTL.into(), (start + limits.window_secs + 60).into());
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

/// The caller's IP: API Gateway's `sourceIp`, else the TCP peer (local server). Headers such as
/// `X-Forwarded-For` are ignored on purpose.
pub fn client_ip(parts: &Parts) -> Option<String> {
    use lambda_http::request::RequestContext;
    match parts.extensions.get::<RequestContext>() {
        Some(RequestContext::ApiGatewayV1(ctx)) => return ctx.identity.source_ip.clone(),
        Some(RequestContext::ApiGatewayV2(ctx)) => return ctx.http.source_ip.clone(),
        _ => {}
    }
    parts.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|info| info.0.ip().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

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
