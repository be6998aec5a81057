//! Request extractors every protected route uses, in the check order of docs/conventions.md:
//! the caller (`Caller`), the projection parameters (`Projection`), the path ([`Path`]), then,
//! inside the handler, the permission (`Caller::authorize`, which hands out a [`Permit`]) and
//! only then the body ([`Body::parse`], which needs the permit).

use crate::error::{ApiError, ApiResult};
use crate::input::{self, Input};

mod json;
use axum::extract::path::ErrorKind;
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
pub use json::{duplicate_keys, read_json_body, read_json_object};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::marker::PhantomData;
pub use workapi_wire::deserialize_str;

/// Proof that the route's permission check passed (or that the route is public): a body is
/// read only with one, so no handler can validate a body before it authorizes.
#[derive(Debug)]
pub struct Permit(());

impl Permit {
    /// Granted by `Caller::authorize`.
    pub(crate) fn granted() -> Permit {
        Permit(())
    }

    /// For the public routes (login, the OAuth endpoints), which have no caller to authorize.
    pub fn public() -> Permit {
        Permit(())
    }
}

/// Typed path parameters: a struct deriving `Deserialize` and `utoipa::IntoParams`, so the
/// parameters are parsed and documented by one declaration. A malformed value is a 400 naming
/// the parameter.
pub struct Path<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(Path(value)),
            Err(rejection) => Err(path_error(rejection)),
        }
    }
}

fn path_error(rejection: PathRejection) -> ApiError {
    let PathRejection::FailedToDeserializePathParams(failed) = rejection else {
        return ApiError::internal(format!("path parameters: {rejection}"));
    };
    match failed.into_kind() {
        ErrorKind::ParseErrorAtKey { key, expected_type, .. } => {
            ApiError::field(&key, format!("{key} must be a {expected_type}"))
        }
        ErrorKind::DeserializeError { key, message, .. } => ApiError::field(&key, format!("{key} {message}")),
        ErrorKind::InvalidUtf8InPathParam { key } => ApiError::field(&key, format!("{key} is not valid UTF-8")),
        other => ApiError::field("path", format!("Invalid path: {other}")),
    }
}

/// Typed query parameters: a struct deriving `Deserialize` and `utoipa::IntoParams` whose fields
/// are optional, so the parameters are parsed and documented by one declaration. Unknown
/// parameters (the projection's among them) are ignored; a malformed value is a 400 naming the
/// parameter.
pub struct Query<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let pairs: Vec<(String, String)> =
            form_urlencoded::parse(parts.uri.query().unwrap_or_default().as_bytes()).into_owned().collect();
        let read = |pairs: &[(String, String)]| {
            let map = pairs.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
            serde_json::from_value::<T>(Value::Object(map))
        };
        match read(&pairs) {
            Ok(value) => Ok(Query(value)),
            Err(_) => {
                // Each parameter alone: the ones that fail by themselves are the offenders.
                let mut errors = crate::error::FieldErrors::new();
                for pair in &pairs {
                    if let Err(e) = read(std::slice::from_ref(pair)) {
                        errors.entry(pair.0.clone()).or_default().push(format!("{}: {e}", pair.0));
                    }
                }
                Err(if errors.is_empty() {
                    ApiError::field("query", "Invalid query parameters")
                } else {
                    ApiError::validation(errors)
                })
            }
        }
    }
}

/// A JSON request body of type `T`, read from the wire by the extractor and parsed only by
/// [`Body::parse`], after authorization. Over the size limit: 413; not JSON: 415; invalid: 400
/// naming every failing field.
pub struct Body<T> {
    content_type: Option<HeaderValue>,
    bytes: axum::body::Bytes,
    input: PhantomData<fn() -> T>,
}

impl<T, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let content_type = req.headers().get(header::CONTENT_TYPE).cloned();
        let bytes = axum::body::Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large")
            } else {
                ApiError::field("body", "the request body could not be read")
            }
        })?;
        Ok(Body { content_type, bytes, input: PhantomData })
    }
}

impl<T> Body<T> {
    /// The body as a JSON object, without reading it into `T` (for bodies with their own rules),
    /// read strictly: `workapi_kit::input::read_json_object`.
    pub fn json(self, _permit: &Permit) -> ApiResult<Value> {
        read_json_object(self.content_type.as_ref(), &self.bytes)
    }
}

impl<T: Input> Body<T> {
    /// Reads the body into `T`; every failing field is reported together.
    pub fn parse(self, permit: &Permit) -> ApiResult<T> {
        Ok(self.check(permit)?.finish()?)
    }

    /// Reads the body field by field, leaving the verdict open for rules that need the store
    /// (`workapi_kit::input::Checked`): every problem, parse and rules alike, comes in one 400.
    pub fn check(self, _permit: &Permit) -> ApiResult<input::Checked<T>> {
        let (value, inexact) = read_json_body(self.content_type.as_ref(), &self.bytes)?;
        Ok(input::Checked::read_json(&value, inexact)?)
    }
}

/// Reads a request body: `workapi_kit::input::parse`, answered as a 400.
pub fn parse<T: Input>(value: &Value) -> ApiResult<T> {
    Ok(workapi_wire::parse(value)?)
}
