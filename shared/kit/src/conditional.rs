//! Conditional reads (docs/conventions.md#conditional-requests): every successful JSON `GET`
//! answers an `ETag`, a strong validator of the exact body (SHA-256 of its bytes, base64url,
//! 128 bits); a request whose `If-None-Match` names it (RFC 9110 §13.1.2: weak comparison, `*`
//! for any) gets `304 Not Modified` with the `ETag` and no body. The tag covers what the answer
//! depends on, whatever it is (a role's inherited permissions, a projection, the caller's
//! language), because it is computed from the answer itself: it can never say "not modified"
//! of an answer that changed. The handler runs either way; what is saved is the transfer.

use axum::body::Body;
use axum::extract::Request;
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

fn is_json(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|t| t.starts_with("application/json"))
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
