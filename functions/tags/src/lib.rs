//! The `tags` function: create, list, recolour and soft-delete tags of the seven types.
//!
//! Routes (docs/tags.md):
//! - `GET    /tags/{type}`               list live tags, by name
//! - `POST   /tags/{type}/create`   [P]  create, or return the same-name tag
//! - `PUT    /tags/{type}/{id}/color` [P] save the colour (null clears it)
//! - `DELETE /tags/{type}/{id}`          soft-delete; the name becomes free again

pub mod domain;
mod store;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::routing::{delete, get, post, put};
use domain::{COLORS, MAX_NAME_CHARS, TagType};
use serde_json::{Value, json};
use shared::http::JsonObject;
use shared::projection::Projection;
use shared::validate::Fields;
use shared::{ApiError, ApiResult, AppState, Caller};
use uuid::Uuid;

/// Compact default of every [P] tag endpoint: identifiers and the display field.
pub const TAG_COMPACT: &[&str] = &["id", "name"];

/// The routes, without the shared layers (the local server merges several of these).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/tags/{type}", get(list_tags))
        .route("/tags/{type}/create", post(create_tag))
        .route("/tags/{type}/{id}/color", put(save_color))
        .route("/tags/{type}/{id}", delete(delete_tag))
}

/// The finished service for Lambda and `cargo lambda watch`.
pub fn router(state: AppState) -> Router {
    shared::http::service(routes(), state)
}

fn parse_id(raw: &str) -> ApiResult<Uuid> {
    Uuid::parse_str(raw).map_err(|_| ApiError::field("id", "id must be a UUID"))
}

async fn list_tags(
    State(state): State<AppState>,
    caller: Caller,
    Path(tag_type): Path<String>,
) -> ApiResult<Json<Value>> {
    let tag_type = TagType::parse(&tag_type)?;
    let tags = store::list_live(state.store(), caller.keys(), tag_type).await?;
    Ok(Json(serde_json::to_value(tags).map_err(ApiError::internal)?))
}

async fn create_tag(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(tag_type): Path<String>,
    JsonObject(body): JsonObject,
) -> ApiResult<Json<Value>> {
    let tag_type = TagType::parse(&tag_type)?;
    tag_type.authorize_write(&caller)?;
    let mut fields = Fields::new(&body);
    let name = fields.required_text("name", MAX_NAME_CHARS);
    fields.finish()?;
    let name = name.expect("validated");
    let tag = store::create_or_get(state.store(), caller.keys(), tag_type, &name, caller.user.id).await?;
    Ok(Json(projection.apply(json!(tag), Some(TAG_COMPACT))))
}

async fn save_color(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path((tag_type, id)): Path<(String, String)>,
    JsonObject(body): JsonObject,
) -> ApiResult<Json<Value>> {
    let tag_type = TagType::parse(&tag_type)?;
    let id = parse_id(&id)?;
    tag_type.authorize_write(&caller)?;
    let mut fields = Fields::new(&body);
    let color = fields.required_nullable_choice("color", COLORS);
    fields.finish()?;
    let tag = store::set_color(state.store(), caller.keys(), tag_type, id, color.expect("validated")).await?;
    Ok(Json(projection.apply(json!(tag), Some(TAG_COMPACT))))
}

async fn delete_tag(
    State(state): State<AppState>,
    caller: Caller,
    Path((tag_type, id)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    let tag_type = TagType::parse(&tag_type)?;
    let id = parse_id(&id)?;
    tag_type.authorize_write(&caller)?;
    store::soft_delete(state.store(), caller.keys(), tag_type, id).await?;
    Ok(Json(json!({ "success": true })))
}
