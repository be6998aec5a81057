//! The OpenAPI 3.1 document, generated from the code: each function registers its handlers
//! through `utoipa_axum::routes!`, so a route and its documentation are one declaration; this
//! module adds what every operation shares (security, error responses, rate-limit headers) and
//! the projection parameters of [P] endpoints, from the same [`Projected`] declarations the
//! handlers apply.

use crate::projection::Projection;
use serde_json::{Map, Value, json};

/// A [P] endpoint: its operation id and its compact default (top-level fields), declared once.
/// Handlers project with it; the document gets the parameters and `x-lt-response-projection`.
#[derive(Debug, Clone, Copy)]
pub struct Projected {
    pub operation_id: &'static str,
    pub compact: Option<&'static [&'static str]>,
}

impl Projected {
    /// Projects a success body as this endpoint declares.
    pub fn apply(&self, projection: &Projection, body: Value) -> Value {
        projection.apply(body, self.compact)
    }
}

/// Paths served without authentication.
/// OAuth endpoints and discovery documents are public (the RFC 7592 client routes declare
/// their own `registrationAccessToken` security, which is kept).
const PUBLIC_PREFIXES: &[&str] = &["/docs/", LOGIN_PATH, "/api/oauth/", "/api/.well-known/", "/.well-known/"];
/// The password login: public, yet it answers 401 for wrong credentials.
const LOGIN_PATH: &str = "/api/auth/login";

const METHODS: &[&str] = &["get", "put", "post", "delete", "patch", "head", "options", "trace"];

/// Completes a generated document. Panics when a [`Projected`] names an operation the document
/// lacks: a build-time mistake, caught by the OpenAPI tests.
pub fn finish(api: utoipa::openapi::OpenApi, projected: &[Projected]) -> Value {
    let mut doc = serde_json::to_value(api).expect("an OpenAPI document serialises");
    doc["openapi"] = json!("3.1.0");
    doc["info"] = json!({
        "title": "workapi",
        "version": "1.0",
        "description": "Work-management public API. Errors are {statusCode, message, errors?}. \
            Every response carries X-RateLimit-Limit and X-RateLimit-Remaining.",
    });
    add_components(&mut doc);
    let mut found = Vec::new();
    let paths = doc["paths"].as_object_mut().expect("paths");
    for (path, item) in paths.iter_mut() {
        let public = PUBLIC_PREFIXES.iter().any(|p| path.starts_with(p));
        for method in METHODS {
            let Some(operation) = item.get_mut(*method).and_then(Value::as_object_mut) else { continue };
            complete_operation(operation, method, public);
            if path == LOGIN_PATH
                && let Some(responses) = operation.get_mut("responses").and_then(Value::as_object_mut)
            {
                responses.insert("401".into(), json!({"$ref": "#/components/responses/Error"}));
            }
            let id = operation.get("operationId").and_then(Value::as_str).unwrap_or_default().to_owned();
            if let Some(p) = projected.iter().find(|p| p.operation_id == id) {
                add_projection(operation, p);
                found.push(id);
            }
        }
    }
    for p in projected {
        assert!(
            found.iter().any(|id| id == p.operation_id),
            "projected operation {} is not documented",
            p.operation_id
        );
    }
    project_response_schemas(&mut doc);
    doc
}

fn add_components(doc: &mut Value) {
    if !doc["components"].is_object() {
        doc["components"] = json!({});
    }
    let components = &mut doc["components"];
    if !components["schemas"].is_object() {
        components["schemas"] = json!({});
    }
    components["schemas"]["Error"] = json!({
        "type": "object",
        "required": ["statusCode", "message"],
        "properties": {
            "statusCode": {"type": "integer", "description": "The HTTP status"},
            "message": {"type": "string"},
            "errors": {
                "type": "object",
                "description": "Validation errors: field name to messages",
                "additionalProperties": {"type": "array", "items": {"type": "string"}}
            }
        }
    });
    components["headers"] = json!({
        "X-RateLimit-Limit": {"description": "Requests allowed in the current window", "schema": {"type": "integer"}},
        "X-RateLimit-Remaining": {"description": "Requests left in the current window", "schema": {"type": "integer"}},
        "Retry-After": {"description": "Seconds until the window resets", "schema": {"type": "integer"}}
    });
    components["responses"] = json!({
        "Error": {
            "description": "Error in the API's error body",
            "headers": rate_headers(),
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        },
        "TooManyRequests": {
            "description": "Rate limit exceeded",
            "headers": {
                "Retry-After": {"$ref": "#/components/headers/Retry-After"},
                "X-RateLimit-Limit": {"$ref": "#/components/headers/X-RateLimit-Limit"},
                "X-RateLimit-Remaining": {"$ref": "#/components/headers/X-RateLimit-Remaining"}
            },
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        }
    });
    components["securitySchemes"] = json!({
        "bearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal access token (lt_pat_…), an OAuth access token or a session JWT"
        },
        "registrationAccessToken": {
            "type": "http",
            "scheme": "bearer",
            "description": "RFC 7592: the registration access token returned by POST /api/oauth/register"
        },
        "oauth2": {
            "type": "oauth2",
            "flows": {"authorizationCode": {
                "authorizationUrl": "/api/oauth/authorize",
                "tokenUrl": "/api/oauth/token",
                "refreshUrl": "/api/oauth/token",
                "scopes": {"api:read": "Read access", "api:write": "Write access"}
            }}
        }
    });
}

fn rate_headers() -> Value {
    json!({
        "X-RateLimit-Limit": {"$ref": "#/components/headers/X-RateLimit-Limit"},
        "X-RateLimit-Remaining": {"$ref": "#/components/headers/X-RateLimit-Remaining"}
    })
}

fn complete_operation(operation: &mut Map<String, Value>, method: &str, public: bool) {
    let scope = if matches!(method, "get" | "head" | "options") { "api:read" } else { "api:write" };
    if !operation.contains_key("security") {
        operation.insert(
            "security".into(),
            if public { json!([]) } else { json!([{"bearer": [scope]}, {"oauth2": [scope]}]) },
        );
    }
    let responses = operation.entry("responses").or_insert_with(|| json!({}));
    let responses = responses.as_object_mut().expect("responses");
    for (_, response) in responses.iter_mut() {
        if let Some(response) = response.as_object_mut()
            && !response.contains_key("$ref")
        {
            response.insert("headers".into(), rate_headers());
        }
    }
    let mut errors = vec!["400", "404", "405", "413", "415", "500"];
    if !public {
        errors.extend(["401", "403"]);
    }
    // Writes use optimistic concurrency: a write that keeps losing races (or a delete of
    // something still in use) answers 409.
    if !matches!(method, "get" | "head" | "options") {
        errors.push("409");
    }
    for status in errors {
        responses.entry(status).or_insert_with(|| json!({"$ref": "#/components/responses/Error"}));
    }
    responses.entry("429").or_insert_with(|| json!({"$ref": "#/components/responses/TooManyRequests"}));
}

fn add_projection(operation: &mut Map<String, Value>, projected: &Projected) {
    let parameters = operation.entry("parameters").or_insert_with(|| json!([]));
    let parameters = parameters.as_array_mut().expect("parameters");
    parameters.extend([
        json!({
            "name": "fieldsToReturn", "in": "query", "required": false,
            "description": "Comma-separated top-level response fields; overrides the compact default unless responseShape=full. Unknown names are ignored.",
            "schema": {"type": "string"}
        }),
        json!({
            "name": "responseShape", "in": "query", "required": false,
            "description": "compact (default) or full (the complete response)",
            "schema": {"type": "string", "enum": ["compact", "full"]}
        }),
        json!({
            "name": "LT-Response-Shape", "in": "header", "required": false,
            "description": "full: same as responseShape=full",
            "schema": {"type": "string", "enum": ["full"]}
        }),
    ]);
    operation.insert(
        "x-lt-response-projection".into(),
        json!({"compact": projected.compact, "parameters": ["fieldsToReturn", "responseShape", "LT-Response-Shape"]}),
    );
    operation.insert("x-lt-projected".into(), json!(true));
}

/// A projected success response may omit any field: point it at a copy of its schema without
/// `required`, so the document describes every shape the endpoint can return.
fn project_response_schemas(doc: &mut Value) {
    let mut copies = Vec::new();
    for item in doc["paths"].as_object_mut().expect("paths").values_mut() {
        for method in METHODS {
            let Some(operation) = item.get_mut(*method).and_then(Value::as_object_mut) else { continue };
            if operation.remove("x-lt-projected").is_none() {
                continue;
            }
            for (status, response) in operation["responses"].as_object_mut().expect("responses").iter_mut() {
                if !status.starts_with('2') {
                    continue;
                }
                let Some(schema) = response.pointer_mut("/content/application~1json/schema") else { continue };
                if let Some(name) =
                    schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/"))
                {
                    let copy = format!("{name}Projection");
                    copies.push((name.to_owned(), copy.clone()));
                    *schema = json!({"$ref": format!("#/components/schemas/{copy}")});
                }
            }
        }
    }
    let schemas = doc["components"]["schemas"].as_object_mut().expect("schemas");
    for (name, copy) in copies {
        if let Some(mut schema) = schemas.get(&name).cloned() {
            if let Some(object) = schema.as_object_mut() {
                object.remove("required");
                object.insert(
                    "description".into(),
                    json!(format!("{name}, possibly projected to a subset of its fields")),
                );
            }
            schemas.insert(copy, schema);
        }
    }
}

/// The document as YAML.
pub fn to_yaml(doc: &Value) -> String {
    serde_norway::to_string(doc).unwrap_or_default()
}
