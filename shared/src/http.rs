//! HTTP conventions applied to every function (DESIGN §4): one place that turns a set of routes
//! into the service that runs on Lambda, under `cargo lambda watch` and in the local server.

use crate::app::AppState;
use crate::error::ApiError;
use axum::Router;
use axum::body::Body;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};
use tower_http::catch_panic::CatchPanicLayer;

/// Request bodies above this size get 413. API Gateway caps payloads at 10 MB; nothing this
/// API accepts comes near 1 MiB.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Turns routes into the finished service: state, the 404 fallback, the body limit, panic
/// containment, and error bodies in the spec's shape for every framework-made error.
pub fn service(routes: Router<AppState>, state: AppState) -> Router {
    routes
        .fallback(|| async { ApiError::not_found("No such route") })
        .layer(axum::middleware::map_response(normalize_error))
        .layer(CatchPanicLayer::custom(|_panic: Box<dyn std::any::Any + Send>| {
            // The payload may describe internals: log it, never send it.
            ApiError::internal("handler panicked").into_response()
        }))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// Framework-made errors (405 from the router, 413 from the body limit, a 404 of an
/// unmatched method router…) arrive without our JSON body: give them one. Responses that
/// already are JSON pass untouched.
async fn normalize_error(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
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
    let mut error = ApiError::new(status, message);
    for name in [header::ALLOW, header::RETRY_AFTER, header::WWW_AUTHENTICATE] {
        if let Some(value) = parts.headers.get(&name) {
            error = error.with_header(name, value.clone());
        }
    }
    error.into_response()
}

/// A JSON object request body. Invalid JSON and non-objects are 400 with the error body; a
/// body declared as something other than JSON is 415; a body over the limit is 413.
pub struct JsonObject(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for JsonObject {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if let Some(content_type) = req.headers().get(header::CONTENT_TYPE) {
            let essence =
                content_type.to_str().unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            if essence != "application/json" && !essence.ends_with("+json") {
                return Err(ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Request body must be application/json"));
            }
        }
        let bytes = axum::body::Bytes::from_request(req, state).await.map_err(|rejection| {
            let status = rejection.status();
            if status == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(status, "Request body too large")
            } else {
                ApiError::bad_request("Could not read the request body")
            }
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::bad_request("Request body must be a JSON object"));
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(JsonObject(map)),
            Ok(_) => Err(ApiError::bad_request("Request body must be a JSON object")),
            Err(e) => Err(ApiError::bad_request(format!("Invalid JSON body: {e}"))),
        }
    }
}

/// Builds a JSON response with a status.
pub fn json(status: StatusCode, value: Value) -> Response {
    let mut response = Response::new(Body::from(serde_json::to_vec(&value).unwrap_or_default()));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
