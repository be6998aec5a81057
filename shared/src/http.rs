//! HTTP conventions applied to every function (DESIGN §4): one place that turns a set of routes
//! into the service that runs on Lambda, under `cargo lambda watch` and in the local server.

use crate::app::AppState;
use crate::clock;
use crate::error::ApiError;
use crate::ratelimit::{self, Bucket, Reported};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_http::catch_panic::CatchPanicLayer;

/// Request bodies above this size get 413. API Gateway caps payloads at 10 MB; nothing this
/// API accepts comes near 1 MiB.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Turns routes into the finished service: state, the 404 fallback, the body limit, panic
/// containment, and error bodies in the spec's shape for every framework-made error.
pub fn service(routes: Router<AppState>, state: AppState) -> Router {
    routes
        .fallback(|| async { ApiError::not_found("No such route") })
        .layer(axum::middleware::from_fn_with_state(state.clone(), limit_by_ip))
        .layer(axum::middleware::map_response(normalize_error))
        .layer(axum::middleware::from_fn_with_state(state.clone(), announce_resource_metadata))
        .layer(CatchPanicLayer::custom(|_panic: Box<dyn std::any::Any + Send>| {
            // The payload may describe internals: log it, never send it.
            ApiError::internal("handler panicked").into_response()
        }))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// Charges every request to its client IP before anything else runs, and writes the
/// `X-RateLimit-*` headers of the tightest limit the request was charged to (the token limit is
/// charged by authentication, through the same [`Reported`] slot).
async fn limit_by_ip(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let reported = Reported::default();
    parts.extensions.insert(reported.clone());
    let ip = ratelimit::client_ip(&parts).unwrap_or_else(|| "unknown".into());
    let admitted = ratelimit::hit(state.store(), state.rate_limits(), Bucket::Ip(&ip), clock::now_epoch()).await;
    let mut response = match admitted {
        Ok(quota) => {
            reported.record(quota);
            next.run(Request::from_parts(parts, body)).await
        }
        Err(quota) => {
            reported.record(quota);
            ratelimit::too_many_requests(quota).into_response()
        }
    };
    reported.write_headers(response.headers_mut());
    response
}

/// Every 401 with a `Bearer` challenge names the API's protected-resource metadata (RFC 9728
/// §5.1), so an OAuth client can discover the authorization server from any failed call:
/// `WWW-Authenticate: Bearer resource_metadata="{site_url}/.well-known/oauth-protected-resource"`.
/// Other challenges (the token endpoint's `Basic`) pass untouched.
async fn announce_resource_metadata(State(state): State<AppState>, request: Request, next: Next) -> Response {
    // Only the Host header is kept; the URL is built for 401s alone.
    let host = request.headers().get(header::HOST).cloned();
    let mut response = next.run(request).await;
    if response.status() != StatusCode::UNAUTHORIZED {
        return response;
    }
    let mut request_headers = axum::http::HeaderMap::new();
    if let Some(host) = host {
        request_headers.insert(header::HOST, host);
    }
    let url = state.site_url().resource_metadata_url(&request_headers);
    let challenges: Vec<_> = response.headers().get_all(header::WWW_AUTHENTICATE).iter().cloned().collect();
    let headers = response.headers_mut();
    if challenges.is_empty() {
        if let Ok(value) = header::HeaderValue::from_str(&format!("Bearer resource_metadata=\"{url}\"")) {
            headers.insert(header::WWW_AUTHENTICATE, value);
        }
        return response;
    }
    headers.remove(header::WWW_AUTHENTICATE);
    for challenge in challenges {
        let text = challenge.to_str().unwrap_or_default();
        let is_bearer = text.len() >= 6 && text[..6].eq_ignore_ascii_case("bearer");
        let rewritten = if !is_bearer || text.contains("resource_metadata=") {
            None
        } else if text.trim().len() == 6 {
            Some(format!("Bearer resource_metadata=\"{url}\""))
        } else {
            Some(format!("{text}, resource_metadata=\"{url}\""))
        };
        let value = rewritten.and_then(|r| header::HeaderValue::from_str(&r).ok()).unwrap_or(challenge);
        headers.append(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// Framework-made errors (405 from the router, 413 from the body limit, a 404 of an
/// unmatched method router…) arrive without our JSON body: give them one. Responses that
/// already are JSON, and the HTML pages of the OAuth consent flow, pass untouched.
async fn normalize_error(response: Response) -> Response {
    let status = response.status();
    let is_ours = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/html"));
    if !(status.is_client_error() || status.is_server_error()) || is_ours {
        return response;
    }
    let message = match status {
        StatusCode::METHOD_NOT_ALLOWED => "Method not allowed for this route",
        StatusCode::PAYLOAD_TOO_LARGE => "Request body too large",
        StatusCode::NOT_FOUND => "No such route",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "Request body must be application/json",
        s if s.is_server_error() => "Internal server error",
        _ => status.canonical_reason().unwrap_or("Request failed"),
    };
    let (parts, _) = response.into_parts();
    let mut rebuilt = ApiError::new(status, message).into_response();
    // Keep Allow, Retry-After, the rate-limit headers…; only the body's own headers change.
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            rebuilt.headers_mut().append(name.clone(), value.clone());
        }
    }
    rebuilt
}

/// The `{success: true}` body of operations that return no resource.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Success {
    pub success: bool,
}
