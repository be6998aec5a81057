//! Every response the black-box tests receive is checked against the OpenAPI document: the
//! operation (method and path template) must declare the status, the content type, and a
//! JSON body must validate against the declared schema (JSON Schema 2020-12, formats
//! included). A mismatch replaces the response with a 500 whose message describes it, so the
//! test that made the request fails where it reads the answer; it is also printed.
//!
//! Requests the document cannot describe are not checked: paths no operation has (the 404 of
//! an unknown route), methods it does not list (CORS preflights, HEAD), and the document
//! itself. Each checked response adds a line to `target/test-artifacts/validated-responses.log`
//! (`wc -l` gives the count for a run).

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

struct Operation {
    method: String,
    segments: Vec<Option<String>>,
    responses: Value,
}

struct Document {
    operations: Vec<Operation>,
    components: Value,
    validators: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

fn document() -> &'static Document {
    static DOCUMENT: OnceLock<Document> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let document = serde_json::to_value(registry::document()).expect("the document serializes");
        let mut operations = Vec::new();
        for (path, item) in document["paths"].as_object().into_iter().flatten() {
            for (method, operation) in item.as_object().into_iter().flatten() {
                let segments = path
                    .split('/')
                    .map(|s| (!(s.starts_with('{') && s.ends_with('}'))).then(|| s.to_owned()))
                    .collect();
                operations.push(Operation {
                    method: method.to_ascii_uppercase(),
                    segments,
                    responses: operation["responses"].clone(),
                });
            }
        }
        // Literal segments before templated ones: `/tags/task/create` is not `/tags/{type}/{id}`.
        operations.sort_by_key(|o| std::cmp::Reverse(o.segments.iter().filter(|s| s.is_some()).count()));
        Document { operations, components: document["components"].clone(), validators: Mutex::default() }
    })
}

fn find<'d>(document: &'d Document, method: &str, path: &str) -> Option<&'d Operation> {
    let parts: Vec<&str> = path.split('/').collect();
    document.operations.iter().find(|o| {
        o.method == method
            && o.segments.len() == parts.len()
            && o.segments.iter().zip(&parts).all(|(segment, part)| segment.as_deref().is_none_or(|s| s == *part))
    })
}

/// The response object declared for `status`, its reference resolved.
fn declared(document: &Document, operation: &Operation, status: u16) -> Option<Value> {
    let response = operation.responses.get(status.to_string())?;
    match response.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let name = reference.rsplit('/').next()?;
            document.components["responses"].get(name).cloned()
        }
        None => Some(response.clone()),
    }
}

fn validator(document: &Document, schema: &Value) -> Result<Arc<jsonschema::Validator>, String> {
    let key = schema.to_string();
    if let Some(found) = document.validators.lock().unwrap().get(&key) {
        return Ok(found.clone());
    }
    // The schema with the document's components beside it, so `#/components/...` resolves.
    let mut root = json!({"components": document.components});
    match schema {
        Value::Object(fields) => {
            for (name, value) in fields {
                root[name] = value.clone();
            }
        }
        other => root["allOf"] = json!([other]),
    }
    let built = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&root)
        .map_err(|e| format!("the declared schema does not compile: {e}"))?;
    let built = Arc::new(built);
    document.validators.lock().unwrap().insert(key, built.clone());
    Ok(built)
}

/// What is wrong with a response, if anything; None when the document cannot describe it.
fn check(method: &str, path: &str, status: u16, content_type: &str, body: &Bytes) -> Option<Result<(), String>> {
    if path.starts_with("/docs/") {
        return None;
    }
    let document = document();
    let operation = find(document, method, path)?;
    let Some(response) = declared(document, operation, status) else {
        return Some(Err(format!("status {status} is not documented")));
    };
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let Some(content) = response.get("content").and_then(Value::as_object) else {
        return Some(if body.is_empty() { Ok(()) } else { Err(format!("a {essence} body where none is documented")) });
    };
    if body.is_empty() && essence.is_empty() {
        return Some(Err("no body where one is documented".into()));
    }
    let Some(media) = content.get(&essence) else {
        let documented: Vec<&String> = content.keys().collect();
        return Some(Err(format!("content type {essence:?} is not documented (documented: {documented:?})")));
    };
    if essence != "application/json" {
        return Some(Ok(()));
    }
    let Some(schema) = media.get("schema") else { return Some(Ok(())) };
    let instance: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => return Some(Err(format!("the body is not JSON: {e}"))),
    };
    Some(validator(document, schema).and_then(|validator| {
        let problems: Vec<String> =
            validator.iter_errors(&instance).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        if problems.is_empty() { Ok(()) } else { Err(problems.join("; ")) }
    }))
}

fn record(line: &str) {
    static LOG: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
    let log = LOG.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-artifacts");
        std::fs::create_dir_all(&dir).ok()?;
        let file =
            std::fs::OpenOptions::new().create(true).append(true).open(dir.join("validated-responses.log")).ok()?;
        Some(Mutex::new(file))
    });
    if let Some(file) = log {
        let _ = writeln!(file.lock().unwrap(), "{line}");
    }
}

/// The middleware: checks the response, passes it on unchanged, or answers the mismatch.
pub async fn validate(request: Request, next: Next) -> Response {
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "the response body could not be read").into_response();
    };
    let content_type = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let status = parts.status.as_u16();
    match check(&method, &path, status, content_type, &bytes) {
        None => {}
        Some(Ok(())) => record(&format!("ok {method} {path} {status}")),
        Some(Err(problem)) => {
            let message = format!("response schema mismatch: {method} {path} {status}: {problem}");
            eprintln!("*** {message}\n    body: {}", String::from_utf8_lossy(&bytes));
            record(&format!("MISMATCH {method} {path} {status}: {problem}"));
            let body = json!({"statusCode": 500, "message": message});
            return (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response();
        }
    }
    Response::from_parts(parts, Body::from(bytes))
}
