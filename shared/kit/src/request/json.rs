//! Reading a JSON request body strictly: one object, no key twice in any object, and every
//! number exactly what the server will read. Each refusal is a 400 (415 for another content
//! type) with the spec's body, naming the field or `body`.
//!
//! Why strict: a proxy or a client library that keeps the first of two equal keys would disagree
//! with a server keeping the last; and a number such as `1e-400` or `0.1000000000000000000001`
//! becomes another number once read into a double, so it is refused instead of silently changed.

use crate::error::{ApiError, ApiResult, FieldErrors};
use axum::http::{HeaderValue, StatusCode};
use serde_json::Value;
use std::collections::{BTreeSet, HashSet};

/// The body as a JSON object, read strictly (see the module documentation); numbers that do
/// not read exactly are left to the fields that read them ([`read_json_body`]).
pub fn read_json_object(content_type: Option<&HeaderValue>, bytes: &[u8]) -> ApiResult<Value> {
    read_json_body(content_type, bytes).map(|(value, _)| value)
}

/// The body as a JSON object, and the paths of its numbers that the JSON parser cannot read
/// exactly: a field that reads a number refuses them (`workapi_kit::input::Decimal`), an ignored
/// unknown field does not matter.
pub fn read_json_body(content_type: Option<&HeaderValue>, bytes: &[u8]) -> ApiResult<(Value, BTreeSet<String>)> {
    if let Some(content_type) = content_type {
        let essence = content_type.to_str().unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        if essence != "application/json" && !essence.ends_with("+json") {
            let mut error = ApiError::field("body", "the request body must be application/json");
            error.status = StatusCode::UNSUPPORTED_MEDIA_TYPE;
            error.message = "Request body must be application/json".into();
            return Err(error);
        }
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(body_error("body must be a JSON object; the request has no body"));
    }
    let value = match serde_json::from_slice::<Value>(bytes) {
        Ok(value @ Value::Object(_)) => value,
        Ok(_) => return Err(body_error("body must be a JSON object")),
        Err(e) => return Err(body_error(format!("body is not valid JSON: {e}"))),
    };
    let (problems, inexact) = scan(bytes);
    if problems.is_empty() {
        Ok((value, inexact))
    } else {
        let mut errors = FieldErrors::new();
        for (path, message) in problems {
            errors.entry(path).or_default().push(message);
        }
        Err(ApiError::validation(errors))
    }
}

/// The keys that appear more than once in their object, at any depth, by field path (`body` at
/// the top, `options[1]` inside), each with its message; the same check that refuses them in
/// request bodies ([`read_json_body`]), for readers of other JSON messages (the MCP endpoint's
/// JSON-RPC requests). `bytes` must be syntactically valid JSON.
pub fn duplicate_keys(bytes: &[u8]) -> Vec<(String, String)> {
    scan(bytes).0
}

fn body_error(message: impl Into<String>) -> ApiError {
    ApiError::field("body", message)
}

enum Frame {
    Object { keys: HashSet<String>, key: Option<String> },
    Array { index: usize },
}

/// Duplicate keys (with their messages) and inexact numbers of a syntactically valid JSON text,
/// by field path (`options[1].name`, or `body` at the top).
fn scan(bytes: &[u8]) -> (Vec<(String, String)>, BTreeSet<String>) {
    let mut problems = Vec::new();
    let mut inexact = BTreeSet::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                stack.push(Frame::Object { keys: HashSet::new(), key: None });
                i += 1;
            }
            b'[' => {
                stack.push(Frame::Array { index: 0 });
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                i += 1;
            }
            b',' => {
                match stack.last_mut() {
                    Some(Frame::Array { index }) => *index += 1,
                    Some(Frame::Object { key, .. }) => *key = None,
                    None => {}
                }
                i += 1;
            }
            b'"' => {
                let end = string_end(bytes, i);
                if let Some(Frame::Object { keys, key }) = stack.last_mut()
                    && key.is_none()
                {
                    let name: String = serde_json::from_slice(&bytes[i..end]).unwrap_or_default();
                    if !keys.insert(name.clone()) {
                        let path = path(&stack[..stack.len() - 1], Some(&name));
                        problems.push((path, format!("the key {name:?} appears more than once")));
                    }
                    if let Some(Frame::Object { key, .. }) = stack.last_mut() {
                        *key = Some(name);
                    }
                }
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len() && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    i += 1;
                }
                let literal = std::str::from_utf8(&bytes[start..i]).unwrap_or_default();
                if !is_exact(literal) {
                    inexact.insert(path(&stack, None));
                }
            }
            _ => i += 1,
        }
    }
    (problems, inexact)
}

/// The index just past the string literal starting at `start` (a `"`).
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The path of the value being read, in the form of `workapi_kit::input::At`.
fn path(stack: &[Frame], last_key: Option<&str>) -> String {
    let mut out = String::new();
    let push_key = |out: &mut String, key: &str| {
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(key);
    };
    for frame in stack {
        match frame {
            Frame::Object { key: Some(key), .. } => push_key(&mut out, key),
            Frame::Object { key: None, .. } => {}
            Frame::Array { index } => out.push_str(&format!("[{index}]")),
        }
    }
    if let Some(key) = last_key {
        push_key(&mut out, key);
    }
    if out.is_empty() { "body".into() } else { out }
}

/// Whether the JSON parser reads the number literal as exactly the value it denotes: an integer
/// within 64 bits, or a number whose double's shortest form has the literal's decimal value.
fn is_exact(literal: &str) -> bool {
    if !literal.contains(['.', 'e', 'E']) {
        return literal.parse::<i64>().is_ok() || literal.parse::<u64>().is_ok();
    }
    match literal.parse::<f64>() {
        Ok(double) if double.is_finite() => canonical(literal) == canonical(&double.to_string()),
        _ => false,
    }
}

/// A decimal text as (negative, significant digits, exponent): `-1.50e2` is (true, "15", 1).
/// Zero is (false, "", 0) whatever its spelling; an unreadable exponent yields None.
fn canonical(text: &str) -> Option<(bool, String, i64)> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, e),
        None => (unsigned, "0"),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Some((false, String::new(), 0));
    }
    let exponent: i64 = exponent.parse().ok()?;
    let trimmed = digits.trim_end_matches('0');
    let exponent = exponent - fraction.len() as i64 + (digits.len() - trimmed.len()) as i64;
    Some((negative, trimmed.to_owned(), exponent))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(body: &str) -> FieldErrors {
        read_json_object(None, body.as_bytes()).unwrap_err().errors.expect("a validation body")
    }

    #[test]
    fn duplicate_keys_are_named_at_any_depth() {
        assert!(errors(r#"{"name": "a", "name": "b"}"#).contains_key("name"));
        let nested = errors(r#"{"variants": [{"name": "a"}, {"name": "b", "price": 1, "price": 2}]}"#);
        assert_eq!(nested.keys().collect::<Vec<_>>(), ["variants[1].price"]);
        let deep = errors(r#"{"a": {"b": {"c": 1, "c": 1}}}"#);
        assert!(deep.contains_key("a.b.c"));
        // The same key in two objects is fine, and so is a key inside a string.
        assert!(read_json_object(None, br#"{"a": {"x": 1}, "b": {"x": "\"x\": 2, \"x\""}}"#).is_ok());
    }

    fn inexact(body: &str) -> Vec<String> {
        read_json_body(None, body.as_bytes()).unwrap().1.into_iter().collect()
    }

    #[test]
    fn numbers_read_inexactly_are_found_by_path() {
        assert_eq!(inexact(r#"{"price": 1e-400}"#), ["price"]);
        assert_eq!(inexact(r#"{"a": {"price": 0.1000000000000000000001}}"#), ["a.price"]);
        assert_eq!(inexact(r#"{"list": [1, 2, 123456789012345678901234]}"#), ["list[2]"]);
        for fine in ["0", "-0", "0.0", "1.5", "1e2", "2.5E-3", "0.1", "24.9", "-7", "1.005", "9007199254740993"] {
            assert!(inexact(&format!(r#"{{"n": {fine}}}"#)).is_empty(), "{fine}");
        }
    }

    #[test]
    fn every_refusal_has_the_validation_body() {
        for bad in [r#"{"name":"#, "[1]", "", "  ", "\"text\"", "null"] {
            let error = read_json_object(None, bad.as_bytes()).unwrap_err();
            assert_eq!(error.status, StatusCode::BAD_REQUEST, "{bad:?}");
            assert!(error.errors.as_ref().is_some_and(|e| e.contains_key("body")), "{bad:?}");
        }
        let form = HeaderValue::from_static("application/x-www-form-urlencoded");
        let error = read_json_object(Some(&form), b"a=1").unwrap_err();
        assert_eq!(error.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert!(error.errors.is_some_and(|e| e.contains_key("body")));
    }

    #[test]
    fn canonical_forms() {
        assert_eq!(canonical("-1.50e2"), Some((true, "15".into(), 1)));
        assert_eq!(canonical("150"), Some((false, "15".into(), 1)));
        assert_eq!(canonical("0.00"), Some((false, String::new(), 0)));
        assert_eq!(canonical("1e-400"), Some((false, "1".into(), -400)));
    }
}
