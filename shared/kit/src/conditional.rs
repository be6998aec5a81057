//! Conditional reads (docs/conventions.md#conditional-requests): every successful JSON `GET`
//! answers an `ETag`, a strong validator of the exact body (SHA-256 of its bytes, base64url,
//! 128 bits); a request whose `If-None-Match` names it (RFC 9110 §13.1.2: weak comparison, `*`
//! for any) gets `304 Not Modified` with the `ETag` and no body. The tag covers what the answer
//! depends on, whatever it is (a role's inherited permissions, a projection, the caller's
//! language), because it is computed from the answer itself: it can never say "not modified"
//! of an answer that changed. The handler runs either way; what is saved is the transfer.
//!
//! Writes take `If-Match` ([`IfMatch`]): the write happens only while the resource, as its read
//! answers it, still has one of the named tags. The check runs inside the write's own
//! read-modify-write, on the version the write is conditioned on, so two writers holding the
//! same tag cannot both pass: the second re-reads, finds a new tag and gets 412.

use crate::error::{ApiError, ApiResult};
use axum::body::Body;
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// The largest body tagged; larger answers (none today: pages stop at 1 MiB) pass untagged.
const MAX_TAGGED_BYTES: usize = 8 * 1024 * 1024;

/// The layer: tags successful JSON reads and answers `If-None-Match` (see the module).
pub async fn conditional_get(request: Request, next: Next) -> Response {
    let read = request.method() == Method::GET;
    let if_none_match = request.headers().get(header::IF_NONE_MATCH).cloned();
    let response = next.run(request).await;
    if !read || response.status() != StatusCode::OK || !is_json(response.headers()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_TAGGED_BYTES).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "").into_response();
    };
    let tag = etag(&bytes);
    let value = HeaderValue::from_str(&tag).expect("base64url is a valid header value");
    parts.headers.insert(header::ETAG, value);
    if if_none_match.as_ref().and_then(|v| v.to_str().ok()).is_some_and(|list| matches_any(list, &tag)) {
        parts.status = StatusCode::NOT_MODIFIED;
        parts.headers.remove(header::CONTENT_TYPE);
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(parts, Body::empty());
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// A write's `If-Match`: absent, `*`, or a list of strong tags (RFC 9110 §13.1.1).
#[derive(Debug, Clone, Default)]
pub struct IfMatch(Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for IfMatch {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        match parts.headers.get(header::IF_MATCH) {
            None => Ok(IfMatch(None)),
            // An empty list names no tag: it matches nothing (412), as RFC 9110 reads it.
            Some(value) => {
                let text =
                    value.to_str().map_err(|_| ApiError::field("If-Match", "If-Match must be * or a list of ETags"))?;
                Ok(IfMatch(Some(text.trim().to_owned())))
            }
        }
    }
}

impl IfMatch {
    /// Ok when no `If-Match` was sent, or when it names the tag of `current` (the resource as
    /// its read answers it) or is `*`; else 412 with the error body. Call it inside the write's
    /// read-modify-write, on the stored state the write is conditioned on.
    pub fn check(&self, current: &impl serde::Serialize) -> ApiResult<()> {
        let Some(list) = &self.0 else { return Ok(()) };
        let tag = etag_of(current)?;
        // Strong comparison: a weak tag never matches.
        if list.split(',').map(str::trim).any(|candidate| candidate == "*" || candidate == tag) {
            return Ok(());
        }
        Err(changed())
    }

    /// For a resource computed from a stored part (a potential invoice): after [`Self::check`]
    /// passed on the resource computed from version `seen` of that part, the write of version
    /// `current` goes ahead only if it is still the same (else 412). Without `If-Match`, Ok.
    pub fn check_version(&self, seen: i64, current: i64) -> ApiResult<()> {
        if self.0.is_none() || seen == current { Ok(()) } else { Err(changed()) }
    }
}

fn changed() -> ApiError {
    ApiError::new(
        StatusCode::PRECONDITION_FAILED,
        "The resource changed since it was read (If-Match names none of its current ETags); read it again",
    )
}

/// The `If-Match` parameter, for the OpenAPI document (`params(IfMatchParams)`); the document
/// adds the 412 to every operation that takes it.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)]
pub struct IfMatchParams {
    /// The ETag a read of the resource answered (or *): the write happens only while it is
    /// current, else 412
    #[serde(rename = "If-Match")]
    #[param(rename = "If-Match", example = "\"q1mJ7a0p9dXtX3uH2bq6Zg\"")]
    if_match: Option<String>,
}

/// `answer` with the `ETag` of `resource` as its read would answer it, so that a client can
/// send its next write's `If-Match` without reading again.
pub fn with_etag(resource: &impl serde::Serialize, answer: impl IntoResponse) -> ApiResult<Response> {
    let tag = etag_of(resource)?;
    let mut response = answer.into_response();
    response.headers_mut().insert(header::ETAG, HeaderValue::from_str(&tag).map_err(ApiError::internal)?);
    Ok(response)
}

fn is_json(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|t| t.starts_with("application/json"))
}

/// The `ETag` a read answering `resource` (as JSON, unprojected) carries.
pub fn etag_of(resource: &impl serde::Serialize) -> ApiResult<String> {
    Ok(etag(&serde_json::to_vec(resource).map_err(ApiError::internal)?))
}

/// The strong entity tag of a body: `"<base64url of the first 16 bytes of its SHA-256>"`.
pub fn etag(body: &[u8]) -> String {
    format!("\"{}\"", URL_SAFE_NO_PAD.encode(&Sha256::digest(body)[..16]))
}

/// Whether an `If-None-Match` value (`*`, or a comma-separated list of tags, weak or strong)
/// names `tag`; weak comparison (RFC 9110 §8.8.3.2): `W/` is ignored.
fn matches_any(list: &str, tag: &str) -> bool {
    list.split(',').map(str::trim).any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_strong_fixed_width_and_differ_with_the_body() {
        let a = etag(b"[1]");
        assert_eq!(a.len(), 24, "{a}");
        assert!(a.starts_with('"') && a.ends_with('"'));
        assert_eq!(a, etag(b"[1]"));
        assert_ne!(a, etag(b"[2]"));
    }

    #[test]
    fn if_none_match_compares_weakly_and_takes_lists_and_any() {
        let tag = etag(b"{}");
        for (list, matches) in [
            (tag.clone(), true),
            (format!("W/{tag}"), true),
            (format!("\"other\", {tag}"), true),
            ("*".to_owned(), true),
            ("\"other\"".to_owned(), false),
            (tag.trim_matches('"').to_owned(), false),
            (String::new(), false),
        ] {
            assert_eq!(matches_any(&list, &tag), matches, "{list}");
        }
    }
}
