//! HTTP conventions applied to every function (DESIGN §4): one place that turns a set of routes
//! into the service that runs on Lambda, under `cargo lambda watch` and in the local server.

use crate::app::AppState;
use crate::auth::Caller;
use crate::cors;
use crate::error::ApiError;
use crate::ratelimit::{self, Bucket, Reported};
use axum::Router;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_http::catch_panic::CatchPanicLayer;
use workapi_store::clock;

/// Request bodies above this size get 413. API Gateway caps payloads at 10 MB; nothing this
/// API accepts comes near 1 MiB.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Request targets (path and query) above this size get 414 with the error body. API Gateway
/// refuses request lines above 10 KiB itself; the local server's HTTP library, above 64 KiB.
pub const MAX_URI_BYTES: usize = 8 * 1024;

/// A request still running after this long is answered 503 (and its handler dropped), so the
/// client gets the error body before the function's `Timeout: 10` (template.yaml) kills the
/// invocation without one. One store call gives up sooner ([`workapi_store::aws::AwsSettings`]: 5 s);
/// this bounds a request that makes several slow ones. docs/reliability.md.
pub const REQUEST_DEADLINE: std::time::Duration = std::time::Duration::from_secs(8);

/// Paths served without a bearer credential: the OAuth endpoints and discovery documents,
/// the login, the consent pages and the document. Everything else is protected, but for
/// [`PUBLIC_FILE_CONTENT`].
pub const PUBLIC_PREFIXES: &[&str] =
    &["/docs/", "/api/auth/login", "/api/oauth/", "/api/.well-known/", "/.well-known/"];

/// The local server's signed file URLs, `/workspace/files/{id}/content`: public, the signature
/// is their credential (docs/files.md). Only they: the file itself, `/workspace/files/{id}`
/// (its delete), takes a bearer credential like the rest of the API.
pub const PUBLIC_FILE_CONTENT: (&str, &str) = ("/workspace/files/", "/content");

/// Exact paths served without a bearer credential: the base URL and `/docs`, which say what
/// the API is and where its document is (docs/conventions.md#the-base-url).
pub const PUBLIC_PATHS: &[&str] = &["/", "/docs"];

pub fn is_public(path: &str) -> bool {
    let (files, content) = PUBLIC_FILE_CONTENT;
    let file_content = path
        .strip_prefix(files)
        .and_then(|rest| rest.strip_suffix(content))
        .is_some_and(|id| !id.is_empty() && !id.contains('/'));
    PUBLIC_PATHS.contains(&path) || PUBLIC_PREFIXES.iter().any(|p| path.starts_with(p)) || file_content
}

/// Turns routes into the finished service: state, the 404 and 405 fallbacks, the body limit,
/// panic containment, error bodies in the spec's shape for every framework-made error, CORS
/// and the headers every response carries. Outermost first: security headers → CORS (answers
/// preflights) → panic containment → challenge → error bodies → IP rate limit → repeated
/// identity headers → routing (the fallbacks authenticate before 404/405) → handler.
pub fn service(routes: Router<AppState>, state: AppState) -> Router {
    let routed = routes
        .method_not_allowed_fallback(|State(state): State<AppState>, parts: Parts| async move {
            unrouted(&state, parts, ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "Method not allowed for this route"))
                .await
        })
        .fallback(|State(state): State<AppState>, parts: Parts| async move {
            unrouted(&state, parts, ApiError::not_found("No such route")).await
        })
        .with_state(state.clone());
    // The layers wrap the routed service whole (not each route, as `Router::layer` would), so
    // they see what the router adds to its answers (`Allow`) and answer preflights before it.
    Router::new()
        .fallback_service(routed)
        .layer(axum::middleware::from_fn(crate::conditional::conditional_get))
        .layer(axum::middleware::from_fn(reject_repeated_identity_headers))
        .layer(axum::middleware::from_fn(reject_long_uri))
        .layer(axum::middleware::from_fn_with_state(state.clone(), limit_by_ip))
        .layer(axum::middleware::map_response(normalize_error))
        .layer(axum::middleware::from_fn_with_state(REQUEST_DEADLINE, deadline))
        .layer(axum::middleware::from_fn_with_state(state.clone(), announce_resource_metadata))
        .layer(CatchPanicLayer::custom(|_panic: Box<dyn std::any::Any + Send>| {
            // The payload may describe internals: log it, never send it.
            ApiError::internal("handler panicked").into_response()
        }))
        .layer(axum::middleware::from_fn_with_state(state, apply_cors))
        .layer(axum::middleware::map_response(security_headers))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(observe))
}

/// The header that names the request on every answer: API Gateway's request id, else (the
/// local server) a fresh UUID. A client's own `X-Request-Id` is never taken as ours: it is
/// logged as `clientRequestId` (docs/operations.md).
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// A client's `X-Request-Id` is logged up to this many characters.
const CLIENT_REQUEST_ID_MAX: usize = 128;

/// Whether the next request is this execution environment's first (the `ColdStart` metric).
static COLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// API Gateway's id of the request (`requestContext.requestId`), when the request came through it.
fn gateway_request_id(request: &Request) -> Option<String> {
    use lambda_http::RequestExt;
    use lambda_http::request::RequestContext;
    #[allow(unreachable_patterns)] // which variants exist depends on lambda_http's features
    match request.request_context_ref()? {
        #[cfg(feature = "watch")]
        RequestContext::ApiGatewayV2(context) => context.request_id.clone(),
        RequestContext::ApiGatewayV1(context) => context.request_id.clone(),
        _ => None,
    }
}

/// The outermost layer: names the request (a span whose fields every log line inside it
/// carries: `requestId`, and on Lambda `traceId` and `invocationId`; `clientRequestId` when the
/// client sent one), answers with `X-Request-Id` whatever the answer, and writes the request's
/// metric document (`workapi_kit::metrics`).
async fn observe(mut request: Request, next: Next) -> Response {
    use lambda_http::RequestExt;
    use tracing::Instrument;
    let started = std::time::Instant::now();
    let request_id = gateway_request_id(&request).unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let (trace_id, invocation_id) = request
        .lambda_context_ref()
        .map(|context| (context.xray_trace_id.clone(), Some(context.request_id.clone())))
        .unwrap_or_default();
    let client_request_id = request
        .headers()
        .get(REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.chars().take(CLIENT_REQUEST_ID_MAX).collect::<String>());
    // At error level, so that its fields are on the lines of every enabled level.
    let span = tracing::error_span!(
        "request",
        requestId = %request_id,
        traceId = tracing::field::Empty,
        invocationId = tracing::field::Empty,
        clientRequestId = tracing::field::Empty,
    );
    if let Some(id) = &trace_id {
        span.record("traceId", id.as_str());
    }
    if let Some(id) = &invocation_id {
        span.record("invocationId", id.as_str());
    }
    if let Some(id) = &client_request_id {
        span.record("clientRequestId", id.as_str());
    }
    let operation = crate::metrics::OperationSlot::default();
    request.extensions_mut().insert(operation.clone());
    let mut response = next.run(request).instrument(span.clone()).await;
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    crate::metrics::emit(&crate::metrics::Measured {
        operation: operation.get(),
        status: response.status().as_u16(),
        latency: started.elapsed(),
        cold_start: COLD.swap(false, std::sync::atomic::Ordering::Relaxed),
        request_id: &request_id,
        trace_id: trace_id.as_deref(),
    });
    response
}

/// Runs the handler in the request's span ([`observe`]) on a task of its own, and answers 503
/// at `limit` ([`REQUEST_DEADLINE`]).
///
/// The handler runs on a task of its own and the deadline times out its handle, here: a
/// timeout wrapped around the handler's future in the same task is polled only when that
/// future yields, so a handler computing without an await would never be interrupted. On a
/// multi-threaded runtime ([`runtime`], at least two workers) the timer wakes this task on
/// another worker while the handler's holds its own. The handler's task is aborted when the
/// answer is given or the client leaves (the `JoinSet` is dropped): work that awaits stops at
/// its next await, as before; work that never yields runs to its end, which the domain bounds
/// (docs/reliability.md, "Request deadline").
async fn deadline(State(limit): State<std::time::Duration>, request: Request, next: Next) -> Response {
    use tracing::Instrument;
    let span = tracing::Span::current();
    let (method, path) = (request.method().clone(), request.uri().path().to_owned());
    let mut handler = tokio::task::JoinSet::new();
    handler.spawn(next.run(request).instrument(span.clone()));
    async move {
        match tokio::time::timeout(limit, handler.join_next()).await {
            Ok(Some(Ok(response))) => response,
            // The panic goes on to the panic layer outside, as when the handler ran here.
            Ok(Some(Err(e))) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Ok(Some(Err(_)) | None) => ApiError::internal("the request's task was cancelled").into_response(),
            Err(_) => ApiError::unavailable(format!("{method} {path} ran past {limit:?}")).into_response(),
        }
    }
    .instrument(span)
    .await
}

/// The runtime every server runs on (Lambda and the local server): multi-threaded with at
/// least two workers, so that the request deadline's timer has a worker to fire on while a
/// request computes on another (see [`deadline`]); more on machines with more cores.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    tokio::runtime::Builder::new_multi_thread().worker_threads(cores.max(2)).enable_all().build()
}

/// No route, or no such method on a route: 404 or 405, but only to an authenticated caller on
/// a protected path. Without valid credentials the answer is the 401 every protected route
/// gives, so an anonymous caller learns nothing about which paths and methods exist
/// (docs/conventions.md, check order). Public paths keep their 404/405. This runs only for
/// requests no handler took, so it never doubles a handler's authentication.
async fn unrouted(state: &AppState, mut parts: Parts, answer: ApiError) -> ApiError {
    if is_public(parts.uri.path()) {
        return answer;
    }
    match Caller::from_request_parts(&mut parts, state).await {
        // 401, or 429 for a token over its limit; a valid credential lacking the scope or
        // asking for imposter mode still learns only that there is no such route.
        Err(e) if matches!(e.status, StatusCode::UNAUTHORIZED | StatusCode::TOO_MANY_REQUESTS) => e,
        _ => answer,
    }
}

/// Which identity header a request repeats, if any: more than one `Authorization`, imposter
/// (`LT_IMPOSTER_USER_ID` and `LT-Imposter-User-Id` counted together, in any case) or
/// custom-now header. Two values could be read differently by a proxy and by us (first or last
/// wins), so such a request is refused whole.
pub fn repeated_identity_header(headers: &HeaderMap) -> Option<&'static str> {
    let count = |normalized: &str| {
        headers.iter().filter(|(name, _)| name.as_str().replace('-', "_").eq_ignore_ascii_case(normalized)).count()
    };
    if headers.get_all(header::AUTHORIZATION).iter().count() > 1 {
        return Some("Authorization");
    }
    if count(crate::auth::IMPOSTER_USER_HEADER) > 1 {
        return Some(crate::auth::IMPOSTER_USER_HEADER);
    }
    if count(crate::auth::CUSTOM_NOW_HEADER) > 1 {
        return Some(crate::auth::CUSTOM_NOW_HEADER);
    }
    None
}

/// 400 for a request that repeats an identity header, before authentication or routing.
async fn reject_repeated_identity_headers(request: Request, next: Next) -> Response {
    match repeated_identity_header(request.headers()) {
        Some(name) => ApiError::field(name, format!("Send the {name} header once, not several times")).into_response(),
        None => next.run(request).await,
    }
}

/// 414 with the error body for a request target above [`MAX_URI_BYTES`].
async fn reject_long_uri(request: Request, next: Next) -> Response {
    let length = request.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if length > MAX_URI_BYTES {
        let mut error = ApiError::field("uri", format!("the request target may be at most {MAX_URI_BYTES} bytes"));
        error.status = StatusCode::URI_TOO_LONG;
        error.message = "Request URI too long".into();
        return error.into_response();
    }
    next.run(request).await
}

/// `X-Content-Type-Options: nosniff` on every response, and `Cache-Control: no-store` on every
/// response that does not set its own (the discovery documents are cacheable on purpose).
async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// CORS (`workapi_kit::cors`): preflights are answered here, before rate limits and
/// authentication; other responses get the headers of their path's policy.
async fn apply_cors(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let policy = cors::policy(request.uri().path());
    let origin = request.headers().get(header::ORIGIN).and_then(|o| o.to_str().ok()).map(str::to_owned);
    if cors::is_preflight(request.method(), request.headers()) {
        let headers = cors::preflight_headers(policy, state.cors_origins(), origin.as_deref().unwrap_or_default());
        return (StatusCode::NO_CONTENT, headers).into_response();
    }
    let mut response = next.run(request).await;
    cors::decorate(response.headers_mut(), policy, state.cors_origins(), origin.as_deref());
    response
}

/// Charges every request to its client IP before anything else runs, and writes the
/// `X-RateLimit-*` headers of the tightest limit the request was charged to (the token limit is
/// charged by authentication, through the same [`Reported`] slot).
async fn limit_by_ip(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let reported = Reported::default();
    parts.extensions.insert(reported.clone());
    // For layers on single routes (the idempotency layer), which cannot hold the state.
    parts.extensions.insert(state.clone());
    let ip = ratelimit::client_ip(&parts).unwrap_or_else(|| "unknown".into());
    // The bearer token's credential record is read meanwhile: the first of authentication's two
    // round trips (auth::Caller) overlaps the IP counter's.
    let (admitted, credential) = tokio::join!(
        ratelimit::hit(state.store(), state.rate_limits(), Bucket::Ip(&ip), clock::now_epoch()),
        crate::auth::prefetch_credential(&parts, &state),
    );
    if let Some(credential) = credential {
        parts.extensions.insert(credential);
    }
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
    // The router adds `Allow` to whatever its 405 fallback answers, a 401 included: it must
    // not tell an anonymous caller which methods a path has.
    response.headers_mut().remove(header::ALLOW);
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
    let mut rebuilt = if status == StatusCode::BAD_REQUEST {
        ApiError::field("request", message)
    } else {
        ApiError::new(status, message)
    }
    .into_response();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_call_and_the_request_deadline_fit_the_function_timeout_with_room_to_answer() {
        let p = workapi_store::aws::AwsSettings::PRODUCTION;
        assert!(p.connect < p.attempt && p.attempt < p.operation);
        assert!(p.operation < REQUEST_DEADLINE);
        // template.yaml: `Timeout: 10`.
        assert!(REQUEST_DEADLINE + std::time::Duration::from_secs(2) <= std::time::Duration::from_secs(10));
    }

    /// Lets a spinning handler go when dropped, also when an assertion fails (else the runtime's
    /// shutdown would wait for it forever).
    struct Release(std::sync::Arc<std::sync::atomic::AtomicBool>);

    impl Drop for Release {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::Release);
        }
    }

    /// Issue 31: a handler that computes without ever yielding still gets its 503 at the
    /// deadline, and the server answers other requests meanwhile. The handler spins until the
    /// test lets it go, so no assertion depends on how long anything takes; the watchdog only
    /// turns a hang (a deadline that waits for an await point) into a failure.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_handler_that_never_yields_is_answered_at_the_deadline_while_others_are_served() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        use tower::ServiceExt;
        let (released, finished) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let release = Release(released.clone());
        let spin = {
            let (released, finished) = (released.clone(), finished.clone());
            move || async move {
                while !released.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
                finished.store(true, Ordering::Release);
                "done"
            }
        };
        let app = Router::new()
            .route("/spin", axum::routing::get(spin))
            .route("/ok", axum::routing::get(|| async { "ok" }))
            .layer(axum::middleware::from_fn_with_state(std::time::Duration::from_millis(200), deadline));
        let get = |path: &str| Request::get(path).body(axum::body::Body::empty()).unwrap();
        let spinning = tokio::spawn(app.clone().oneshot(get("/spin")));
        let watchdog = std::time::Duration::from_secs(60);
        let answer = tokio::time::timeout(watchdog, spinning).await.expect("no answer: the deadline did not fire");
        let answer = answer.unwrap().unwrap();
        assert_eq!(answer.status(), StatusCode::SERVICE_UNAVAILABLE);
        let body = axum::body::to_bytes(answer.into_body(), 1 << 16).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["statusCode"], 503, "the error body: {body}");
        assert!(!finished.load(Ordering::Acquire), "answered while the handler still computes");
        let other = tokio::time::timeout(watchdog, app.oneshot(get("/ok"))).await.expect("the server answers others");
        assert_eq!(other.unwrap().status(), StatusCode::OK);
        drop(release);
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(header::HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn identity_headers_count_every_spelling_together() {
        assert_eq!(repeated_identity_header(&headers(&[])), None);
        let once = [("authorization", "Bearer a"), ("LT_IMPOSTER_USER_ID", "u"), ("LT-Custom-Now", "2026-01-01")];
        assert_eq!(repeated_identity_header(&headers(&once)), None);
        assert_eq!(
            repeated_identity_header(&headers(&[("Authorization", "Bearer a"), ("authorization", "Bearer b")])),
            Some("Authorization")
        );
        for pair in [
            [("LT_IMPOSTER_USER_ID", "a"), ("LT-Imposter-User-Id", "b")],
            [("lt_imposter_user_id", "a"), ("LT_IMPOSTER_USER_ID", "a")],
            [("lt-imposter-user-id", "a"), ("LT-IMPOSTER-USER-ID", "a")],
        ] {
            assert_eq!(repeated_identity_header(&headers(&pair)), Some("LT_IMPOSTER_USER_ID"), "{pair:?}");
        }
        assert_eq!(
            repeated_identity_header(&headers(&[("LT_CUSTOM_NOW", "2026-01-01"), ("lt-custom-now", "2026-01-02")])),
            Some("LT_CUSTOM_NOW")
        );
        // Other headers may repeat.
        assert_eq!(repeated_identity_header(&headers(&[("accept", "a"), ("accept", "b")])), None);
    }

    #[test]
    fn public_paths_are_the_oauth_discovery_login_and_docs_paths() {
        for path in [
            "/docs/json",
            "/api/auth/login",
            "/api/oauth/token",
            "/api/oauth/authorize",
            "/.well-known/x",
            "/",
            "/docs",
            "/workspace/files/{id}/content",
            "/workspace/files/6d3b2f0e-1c4a-4e8b-9f2d-3a5b7c9d1e20/content",
        ] {
            assert!(is_public(path), "{path}");
        }
        for path in [
            "/tags/task",
            "/nope",
            "/api/auth/other",
            "/docsx",
            "//",
            "/docs.json",
            "/workspace/files/{id}",
            "/workspace/files/6d3b2f0e-1c4a-4e8b-9f2d-3a5b7c9d1e20",
            "/workspace/files//content",
            "/workspace/files/a/b/content",
            "/workspace/upload",
        ] {
            assert!(!is_public(path), "{path}");
        }
    }
}
