//! The `docs` function: `GET /docs/json` and `GET /docs/yaml` serve the OpenAPI 3.1 document of
//! the whole API, and `/` and `/docs` say where it is; `/docs` asked for HTML is the reference
//! page over that document (`reference`).
//!
//! The document is generated from every function's route declarations (`registry::document`)
//! and kept in `functions/docs/openapi.json`, which the tests hold equal to it
//! (`openapi::the_document_matches_its_snapshot`). This function embeds that file, so its
//! bootstrap links no other function and does not grow when one is added (docs/performance.md).

pub mod reference;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;
use std::sync::OnceLock;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use workapi_kit::AppState;
use workapi_kit::function::{Function, Memory, Needs, Route};
use workapi_kit::openapi::ApiTag;

pub const FUNCTION: Function = Function {
    name: "docs",
    prefixes: &["/docs"],
    tags: &[ApiTag {
        name: "docs",
        description: "This document, as JSON and as YAML, the API's name and version at `/` and `/docs`, and the reference page at `/docs` in a browser",
    }],
    api,
    entities: &[],
    emits: &[],
    needs: Needs {
        summary: "the OpenAPI document as JSON and YAML, the API's name and version at / and /docs, the reference \
                  page at /docs in a browser; public",
        note: "The document needs no data and no secret: only the rate-limit counter.",
        routes: &[Route::new("Docs", "/docs/{proxy+}"), Route::new("DocsIndex", "/docs"), Route::new("ApiIndex", "/")],
        data: false,
        memory: Some(Memory {
            megabytes: 256,
            why: "Serves documents embedded at build time: no store work, little CPU.",
        }),
        ..Needs::DATA
    },
};

/// The document as the tests generated and checked it.
pub const DOCUMENT_JSON: &str = include_str!("../openapi.json");

/// The embedded document, parsed once per container on first use.
pub fn document() -> &'static Value {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    DOCUMENT.get_or_init(|| serde_json::from_str(DOCUMENT_JSON).expect("openapi.json is the JSON the tests wrote"))
}

fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(openapi_json))
        .routes(routes!(openapi_yaml))
        .routes(routes!(api_index))
        .routes(routes!(docs_index))
        .routes(routes!(reference_asset))
}

/// What the API is and where its document is: the public answer at `/` and `/docs`, so that
/// whoever opens the base URL learns where to go next (docs/conventions.md#the-base-url).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({
    "name": "workapi",
    "version": "1.0",
    "documentation": {"json": "https://work.example.com/docs/json", "yaml": "https://work.example.com/docs/yaml"},
    "authorizationServer": "https://work.example.com/api/.well-known/oauth-authorization-server"
})))]
pub struct ApiIndex {
    /// The API's name (the document's title)
    pub name: String,
    /// The API's version (the document's `info.version`; paths carry none)
    pub version: String,
    pub documentation: DocumentUrls,
    /// The OAuth authorization server's metadata (RFC 8414), for clients that sign users in
    pub authorization_server: String,
}

/// The OpenAPI document's URLs
#[derive(Serialize, ToSchema)]
pub struct DocumentUrls {
    /// The OpenAPI 3.1 document as JSON
    pub json: String,
    /// The same document as YAML
    pub yaml: String,
}

fn index(state: &AppState, headers: &HeaderMap) -> axum::Json<ApiIndex> {
    let site = state.site_url().of(headers);
    let info = &document()["info"];
    let text = |field: &str| info[field].as_str().unwrap_or_default().to_owned();
    axum::Json(ApiIndex {
        name: text("title"),
        version: text("version"),
        documentation: DocumentUrls { json: format!("{site}/docs/json"), yaml: format!("{site}/docs/yaml") },
        authorization_server: format!("{site}/api/.well-known/oauth-authorization-server"),
    })
}

/// The API's name, version and document
///
/// Public: the API's name and version, and the URLs of this document. Whoever opens the base
/// URL learns where to go next.
#[utoipa::path(get, path = "/", operation_id = "apiIndex", tag = "docs",
    responses((status = 200, description = "The API's name, version and document URLs", body = ApiIndex)))]
async fn api_index(State(state): State<AppState>, headers: HeaderMap) -> axum::Json<ApiIndex> {
    index(&state, &headers)
}

/// The document's URLs, or the reference page
///
/// Public: the same answer as `/`, the API's name and version with the URLs of this document
/// as JSON and YAML. A request whose `Accept` ranks `text/html` above `application/json` (a
/// browser's) gets the interactive reference page of this document instead: searchable, and
/// able to try a call with the reader's token; without JavaScript, a list of the operations.
#[utoipa::path(get, path = "/docs", operation_id = "docsIndex", tag = "docs",
    responses((status = 200, description = "The API's name, version and document URLs; or, asked for HTML, the reference page", content(
        (ApiIndex = "application/json"),
        (String = "text/html", example = json!("<!doctype html>\n<html lang=\"en\">…</html>\n"))))))]
async fn docs_index(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if reference::wants_html(&headers) {
        return reference::page(&state.site_url().of(&headers), document());
    }
    let mut response = index(&state, &headers).into_response();
    response.headers_mut().insert(header::VARY, axum::http::HeaderValue::from_static("Accept"));
    response
}

/// A file of the reference page
///
/// Public: the reference page's scripts and style sheet, by the versioned names the page links
/// (`swagger-ui-bundle-5.35.0.js`, `swagger-ui-5.35.0.css`, `reference-<hash>.js`). Stored and
/// sent gzip-compressed where marked (`Content-Encoding: gzip`; 406 to a client that refuses
/// gzip), with `Cache-Control: public, max-age=31536000, immutable`.
#[utoipa::path(get, path = "/docs/assets/{asset}", operation_id = "referenceAsset", tag = "docs",
    params(("asset" = String, Path, description = "The asset's versioned file name, as the reference page links it", example = "swagger-ui-5.35.0.css")),
    responses(
        (status = 200, description = "The asset", content(
            (String = "text/javascript", example = json!("\"use strict\";")),
            (String = "text/css", example = json!(".swagger-ui{}")))),
        (status = 406, description = "The client refuses gzip, the only coding this asset is kept in (the error body, {statusCode, message})", content_type = "application/json", body = Object)))]
async fn reference_asset(Path(asset): Path<String>, headers: HeaderMap) -> Response {
    reference::asset_response(&asset, &headers)
}

/// The document as JSON
///
/// The OpenAPI 3.1 document of the whole API.
#[utoipa::path(get, path = "/docs/json", operation_id = "openApiJson", tag = "docs",
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json", body = Object,
        example = json!({"openapi": "3.1.0", "info": {"title": "workapi", "version": "1.0"}, "paths": {}}))))]
async fn openapi_json() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT_JSON)
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
    match YAML.get_or_init(|| workapi_kit::openapi::json_to_yaml(DOCUMENT_JSON)) {
        Ok(yaml) => ([(header::CONTENT_TYPE, yaml_media_type(&headers))], yaml.as_str()).into_response(),
        Err(e) => workapi_kit::ApiError::internal(format!("the document does not render as YAML: {e}")).into_response(),
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
mod tests {
    use super::*;

    #[test]
    fn yaml_is_application_yaml_unless_text_yaml_is_asked_for() {
        let with = |accept: &[&str]| {
            let mut headers = HeaderMap::new();
            for value in accept {
                headers.append(header::ACCEPT, value.parse().unwrap());
            }
            yaml_media_type(&headers)
        };
        assert_eq!(with(&[]), "application/yaml");
        assert_eq!(with(&["*/*"]), "application/yaml");
        assert_eq!(with(&["application/yaml, text/yaml;q=0.5"]), "application/yaml");
        assert_eq!(with(&["text/yaml"]), "text/yaml; charset=utf-8");
        assert_eq!(with(&["application/json", "Text/YAML; q=0.9"]), "text/yaml; charset=utf-8");
    }

    #[test]
    fn the_embedded_document_parses_and_names_the_api() {
        assert_eq!(document()["openapi"], "3.1.0");
        assert!(document()["info"]["title"].as_str().is_some_and(|t| !t.is_empty()));
    }
}
