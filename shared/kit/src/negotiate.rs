//! Content negotiation (RFC 9110 §12.5.1) for the few resources with a second representation
//! beside JSON: the reference page at `/docs` and an issued invoice's page. JSON stays the
//! default: no `Accept`, `*/*` or a tie keeps the JSON that programs have always had; a
//! browser's `Accept` (`text/html,…,*/*;q=0.8`) ranks `text/html` first and gets the page.

use crate::{ApiError, ApiResult};
use axum::http::{HeaderMap, StatusCode, header};

/// Whether the request wants HTML rather than JSON: `text/html` is acceptable and ranks above
/// `application/json`. A tie, no `Accept`, or `*/*` alone keeps the JSON.
pub fn wants_html(headers: &HeaderMap) -> bool {
    let html = quality(headers, "text/html");
    html > 0.0 && html > quality(headers, "application/json")
}

/// The representations of a resource that has a page beside its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Representation {
    Json,
    Html,
}

/// JSON or HTML as [`wants_html`] ranks them; a 406 in the error body when the request's
/// `Accept` takes neither (`application/xml`, `text/csv`, `application/json;q=0`).
pub fn json_or_html(headers: &HeaderMap) -> ApiResult<Representation> {
    if wants_html(headers) {
        Ok(Representation::Html)
    } else if quality(headers, "application/json") > 0.0 {
        Ok(Representation::Json)
    } else {
        Err(ApiError::new(
            StatusCode::NOT_ACCEPTABLE,
            "This resource is served as application/json or text/html: send an Accept that takes one of them",
        ))
    }
}

/// The quality `Accept` gives a media type: that of its most specific matching range (RFC 9110
/// §12.5.1), 1 without an `Accept`, 0 when no range matches.
pub fn quality(headers: &HeaderMap, media_type: &str) -> f32 {
    let mut ranges = headers.get_all(header::ACCEPT).iter().filter_map(|value| value.to_str().ok()).peekable();
    if ranges.peek().is_none() {
        return 1.0;
    }
    let (kind, _) = media_type.split_once('/').unwrap_or((media_type, ""));
    let mut best: Option<(u8, f32)> = None;
    for range in ranges.flat_map(|value| value.split(',')) {
        let mut parts = range.split(';');
        let name = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let specificity = if name == media_type {
            2
        } else if name == format!("{kind}/*") {
            1
        } else if name == "*/*" {
            0
        } else {
            continue;
        };
        let q = parts
            .filter_map(|param| param.trim().strip_prefix("q=").and_then(|q| q.trim().parse::<f32>().ok()))
            .next()
            .unwrap_or(1.0);
        if best.is_none_or(|(seen, _)| specificity > seen) {
            best = Some((specificity, q));
        }
    }
    best.map_or(0.0, |(_, q)| q)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::ACCEPT, value.parse().unwrap());
        }
        headers
    }

    #[test]
    fn browsers_get_the_page_and_programs_the_json() {
        let html = |values: &[&str]| wants_html(&accept(values));
        // Chromium's and Firefox's navigation Accept.
        assert!(html(&["text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"]));
        assert!(html(&["text/html"]));
        assert!(html(&["application/json;q=0.5, text/html"]));
        assert!(!html(&[]));
        assert!(!html(&["*/*"]));
        assert!(!html(&["application/json"]));
        assert!(!html(&["text/html, application/json"]));
        assert!(!html(&["text/html;q=0"]));
        assert!(!html(&["text/*;q=0.2, application/json"]));
    }

    #[test]
    fn what_takes_neither_json_nor_html_is_a_406() {
        let chosen = |values: &[&str]| json_or_html(&accept(values)).map_err(|e| e.status);
        assert_eq!(chosen(&[]), Ok(Representation::Json));
        assert_eq!(chosen(&["*/*"]), Ok(Representation::Json));
        assert_eq!(chosen(&["application/*"]), Ok(Representation::Json));
        assert_eq!(chosen(&["application/json"]), Ok(Representation::Json));
        assert_eq!(chosen(&["text/html, application/json"]), Ok(Representation::Json));
        assert_eq!(chosen(&["text/html;q=0.9, */*;q=0.8"]), Ok(Representation::Html));
        assert_eq!(chosen(&["text/*"]), Ok(Representation::Html));
        assert_eq!(chosen(&["application/xml"]), Err(StatusCode::NOT_ACCEPTABLE));
        assert_eq!(chosen(&["text/csv", "image/png"]), Err(StatusCode::NOT_ACCEPTABLE));
        assert_eq!(chosen(&["application/json;q=0"]), Err(StatusCode::NOT_ACCEPTABLE));
        assert_eq!(chosen(&["*/*;q=0"]), Err(StatusCode::NOT_ACCEPTABLE));
    }
}
