//! The `docs` function: `GET /docs/json` and `GET /docs/yaml` serve the OpenAPI 3.1 document of
//! the whole API, generated from every function's route declarations (no hand-kept file).

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use serde_json::Value;
use shared::AppState;
use std::sync::OnceLock;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Every function's documented routes, including these.
fn all_apis() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().merge(tags::api()).merge(administration::api()).merge(oauth::api()).merge(api())
}

/// Every [P] declaration of every function.
fn all_projected() -> Vec<shared::openapi::Projected> {
    [tags::PROJECTED, &administration::projected(), oauth::PROJECTED].concat()
}

/// The finished document, built once per container on first use.
pub fn document() -> &'static Value {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    DOCUMENT.get_or_init(|| shared::openapi::finish(all_apis().split_for_parts().1, &all_projected()))
}

pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(openapi_json)).routes(routes!(openapi_yaml))
}

pub fn routes() -> Router<AppState> {
    api().split_for_parts().0
}

pub fn router(state: AppState) -> Router {
    shared::http::service(routes(), state)
}

#[utoipa::path(get, path = "/docs/json", operation_id = "openApiJson", tag = "docs",
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json", body = Object)))]
async fn openapi_json() -> impl IntoResponse {
    axum::Json(document())
}

#[utoipa::path(get, path = "/docs/yaml", operation_id = "openApiYaml", tag = "docs",
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/yaml", body = Object)))]
async fn openapi_yaml() -> impl IntoResponse {
    static YAML: OnceLock<String> = OnceLock::new();
    let yaml = YAML.get_or_init(|| shared::openapi::to_yaml(document()));
    ([(header::CONTENT_TYPE, "application/yaml")], yaml.as_str())
}
