//! The one error type of the API and its body `{statusCode, message, errors?}` (spec §7).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::collections::BTreeMap;

use workapi_store::StoreError;
use workapi_store::entity::EntityError;
use workapi_wire::Invalid;

/// The `Retry-After` of a 503: long enough for a throttled partition or a restarted
/// dependency to recover, short enough that a user does not give up.
pub const RETRY_AFTER_SECS: &str = "2";

/// Field name → messages, as in the spec's validation error body.
pub use workapi_wire::FieldErrors;

#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub errors: Option<FieldErrors>,
    /// Extra response headers (Retry-After, WWW-Authenticate, Allow…).
    pub headers: Vec<(header::HeaderName, HeaderValue)>,
    /// Why a server error happened: logged when the response is produced, never sent.
    cause: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody<'a> {
    pub status_code: u16,
    pub message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<&'a FieldErrors>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError { status, message: message.into(), errors: None, headers: Vec::new(), cause: None }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// A 400 naming the offending fields.
    pub fn validation(errors: FieldErrors) -> Self {
        ApiError { errors: Some(errors), ..Self::bad_request("Validation failed") }
    }

    /// A 400 for one field.
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        Self::validation(BTreeMap::from([(field.to_owned(), vec![message.into()])]))
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, message)
            .with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))
    }

    /// A presented bearer credential that is not valid (RFC 6750 §3.1 `invalid_token`).
    pub fn invalid_token(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, message)
            .with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer error=\"invalid_token\""))
    }

    /// A valid token without the scope the operation needs (RFC 6750 §3.1), naming the scope
    /// so that a client can ask for it (step-up authorization).
    pub fn insufficient_scope(scope: &'static str) -> Self {
        let challenge = format!("Bearer error=\"insufficient_scope\", scope=\"{scope}\"");
        let mut error = Self::new(StatusCode::FORBIDDEN, format!("Token lacks scope {scope}"));
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            error = error.with_header(header::WWW_AUTHENTICATE, value);
        }
        error
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }

    /// A 500 whose cause is logged when the response is produced, never sent.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        ApiError {
            cause: Some(cause.to_string()),
            ..Self::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal server error")
        }
    }

    /// A dependency (the store, S3, Secrets Manager) failed beyond its retries, or the request
    /// ran out of time: 503 with `Retry-After`, the cause logged once when the response is
    /// produced, never sent (docs/reliability.md).
    pub fn unavailable(cause: impl std::fmt::Display) -> Self {
        ApiError {
            cause: Some(cause.to_string()),
            ..Self::new(StatusCode::SERVICE_UNAVAILABLE, "A dependency is unavailable; retry shortly")
        }
        .with_header(header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER_SECS))
    }

    /// Why a server error happened (for a log line), never sent.
    pub fn cause(&self) -> Option<&str> {
        self.cause.as_deref()
    }

    pub fn with_header(mut self, name: header::HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    pub fn body(&self) -> ErrorBody<'_> {
        ErrorBody { status_code: self.status.as_u16(), message: &self.message, errors: self.errors.as_ref() }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let Some(cause) = &self.cause {
            tracing::error!(status = self.status.as_u16(), cause = %cause, "request failed");
        }
        let mut response = (self.status, axum::Json(self.body())).into_response();
        for (name, value) in self.headers {
            response.headers_mut().append(name, value);
        }
        response
    }
}

/// The entity layer's refusals are conflicts (409) with their own message; its store failures
/// are answered as any store failure.
impl From<EntityError> for ApiError {
    fn from(e: EntityError) -> Self {
        match e {
            EntityError::Exists(_) | EntityError::Stale(_) => ApiError::conflict(e.to_string()),
            EntityError::Store(e) => e.into(),
        }
    }
}

/// A body that does not read: the spec's 400 naming every failing field.
impl From<Invalid> for ApiError {
    fn from(e: Invalid) -> Self {
        ApiError::validation(e.errors)
    }
}

impl From<StoreError> for ApiError {
    /// Store errors that reach a handler unhandled are server faults; a handler that expects a
    /// failed condition matches on it before converting.
    fn from(e: StoreError) -> Self {
        match e {
            // The request's own size: the client can shorten it (docs/conventions.md#errors).
            StoreError::TooLarge { message, part } => {
                let advice = match &part {
                    Some(part) => format!("shorten {part}"),
                    None => "shorten its longest texts or lists".to_owned(),
                };
                ApiError::field(
                    part.as_deref().unwrap_or("body"),
                    format!("The change is too large to store ({message}): {advice}"),
                )
            }
            e if e.is_transient() => ApiError::unavailable(e),
            e => ApiError::internal(e),
        }
    }
}

/// An object store that is unreachable, slow or answers 5xx is a dependency outage (503); any
/// other failure (a refused request, the disk) is a server fault.
impl From<workapi_store::objects::ObjectError> for ApiError {
    fn from(e: workapi_store::objects::ObjectError) -> Self {
        match e {
            workapi_store::objects::ObjectError::Unavailable(_) => ApiError::unavailable(e),
            workapi_store::objects::ObjectError::Backend(_) => ApiError::internal(e),
        }
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
