//! The `docs` function: `GET /docs/json` and `GET /docs/yaml` serve the OpenAPI 3.1 document of
//! the whole API, generated from the route declarations of every function in [`FUNCTIONS`]
//! (no hand-kept file).
//!
//! [`FUNCTIONS`] is the registry: the one list of every function. The document, the local
//! server (`functions/local`) and the tests (`tests/`) iterate it; adding a function is one
//! line here (docs/functions.md).

use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use shared::AppState;
use shared::function::Function;
use shared::openapi::ApiTag;
use std::sync::OnceLock;
use utoipa::openapi::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Every function of the API, this one included.
pub const FUNCTIONS: &[&Function] = &[
    &tags::FUNCTION,
    &administration::FUNCTION,
    &projects::FUNCTION,
    &contacts::FUNCTION,
    &tasks::FUNCTION,
    &workspace::FUNCTION,
    &oauth::FUNCTION,
    &agents::FUNCTION,
    &FUNCTION,
];

pub const FUNCTION: Function = Function {
    name: "docs",
    prefixes: &["/docs"],
    tags: &[ApiTag { name: "docs", description: "This document, as JSON and as YAML" }],
    api,
    entities: &[],
};

/// The finished document, built once per container on first use.
pub fn document() -> &'static OpenApi {
    static DOCUMENT: OnceLock<OpenApi> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let mut api = OpenApi::default();
        for function in FUNCTIONS {
            api.merge(function.document());
        }
        let tags: Vec<ApiTag> = FUNCTIONS.iter().flat_map(|f| f.tags.iter().copied()).collect();
        shared::openapi::finish(api, &tags)
    })
}

fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(openapi_json)).routes(routes!(openapi_yaml))
}

/// The document as JSON
///
/// The OpenAPI 3.1 document of the whole API.
#[utoipa::path(get, path = "/docs/json", operation_id = "openApiJson", tag = "docs",
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json", body = Object,
        example = json!({"openapi": "3.1.0", "info": {"title": "workapi", "version": "1.0"}, "paths": {}}))))]
async fn openapi_json() -> impl IntoResponse {
    axum::Json(document())
}

/// The document as YAML
///
/// The same OpenAPI 3.1 document, in YAML: `application/yaml` (RFC 9512), or `text/yaml` when
/// the request's `Accept` names `text/yaml` and not `application/yaml`. Both are documented:
/// `application/yaml` as the document object (what YAML-aware clients and schemathesis parse
/// it to), `text/yaml` as a string, so that client generators which know only `text/*` among
/// text responses read it as one.
#[utoipa::path(get, path = "/docs/yaml", operation_id = "openApiYaml", tag = "docs",
    responses((status = 200, description = "The OpenAPI 3.1 document in YAML", content(
        (Object = "application/yaml", example = json!({"openapi": "3.1.0", "info": {"title": "workapi", "version": "1.0"}, "paths": {}})),
        (String = "text/yaml", example = json!(YAML_EXAMPLE))))))]
async fn openapi_yaml(headers: HeaderMap) -> Response {
    static YAML: OnceLock<Result<String, String>> = OnceLock::new();
    match YAML.get_or_init(|| shared::openapi::to_yaml(document())) {
        Ok(yaml) => ([(header::CONTENT_TYPE, yaml_media_type(&headers))], yaml.as_str()).into_response(),
        Err(e) => shared::ApiError::internal(format!("the document does not render as YAML: {e}")).into_response(),
    }
}

const YAML_EXAMPLE: &str = "openapi: 3.1.0\ninfo:\n  title: workapi\n  version: '1.0'\npaths: {}\n";

/// `text/yaml` when `Accept` names it and not `application/yaml` (quality values aside);
/// otherwise the registered `application/yaml`.
fn yaml_media_type(headers: &HeaderMap) -> &'static str {
    let names = |media_type: &str| {
        headers.get_all(header::ACCEPT).iter().filter_map(|value| value.to_str().ok()).any(|value| {
            value.split(',').any(|range| range.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case(media_type))
        })
    };
    if names("text/yaml") && !names("application/yaml") { "text/yaml; charset=utf-8" } else { "application/yaml" }
}

#[cfg(test)]
mod tests;
