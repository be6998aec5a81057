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
use domain::{COLORS, MAX_NAME_CHARS, TagType};
use serde_json::{Value, json};
use shared::auth::Authorized;
use shared::http::JsonObject;
use shared::openapi::Projected;
use shared::permissions::AnyMember;
use shared::projection::Projection;
use shared::validate::Fields;
use shared::{ApiError, ApiResult, AppState, Caller};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

/// Compact default of the [P] tag endpoints: identifiers and the display field.
const TAG_COMPACT: Option<&[&str]> = Some(&["id", "name"]);
pub const CREATE_TAG: Projected = Projected { operation_id: "createTag", compact: TAG_COMPACT };
pub const SAVE_TAG_COLOR: Projected = Projected { operation_id: "saveTagColor", compact: TAG_COMPACT };
/// Every [P] endpoint of this function (feeds the OpenAPI document).
pub const PROJECTED: &[Projected] = &[CREATE_TAG, SAVE_TAG_COLOR];

/// Schemas used only as path parameters, which `routes!` does not collect by itself.
#[derive(utoipa::OpenApi)]
#[openapi(components(schemas(TagType)))]
struct TagSchemas;

/// The routes with their OpenAPI declarations: one registration for both.
pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(<TagSchemas as utoipa::OpenApi>::openapi())
        .routes(routes!(list_tags))
        .routes(routes!(create_tag))
        .routes(routes!(save_color))
        .routes(routes!(delete_tag))
}

/// The routes, without the shared layers (the local server merges several of these).
pub fn routes() -> Router<AppState> {
    api().split_for_parts().0
}

/// The finished service for Lambda and `cargo lambda watch`.
pub fn router(state: AppState) -> Router {
    shared::http::service(routes(), state)
}

/// Request body of the create operation (parsed by `Fields`, documented here).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct CreateTagBody {
    /// 1–100 characters after trimming, not only whitespace, no control characters;
    /// compared case-insensitively
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\x00-\x1F\x7F-\x9F]*[^\s\x00-\x1F\x7F-\x9F][^\x00-\x1F\x7F-\x9F]*$"
    )]
    name: String,
}

/// Request body of the colour operation.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct SaveColorBody {
    /// One of the palette, or null to clear
    #[schema(required, nullable)]
    color: Option<domain::Color>,
}

fn parse_id(raw: &str) -> ApiResult<Uuid> {
    Uuid::parse_str(raw).map_err(|_| ApiError::field("id", "id must be a UUID"))
}

#[utoipa::path(get, path = "/tags/{type}", operation_id = "listTags", tag = "tags",
    params(("type" = TagType, Path, description = "Tag type")),
    responses((status = 200, description = "Live tags of the type, ordered by name", body = [store::Tag])))]
async fn list_tags(
    State(state): State<AppState>,
    Authorized(caller, _): Authorized<AnyMember>,
    Path(tag_type): Path<String>,
) -> ApiResult<Json<Value>> {
    let tag_type = TagType::parse(&tag_type)?;
    let tags = store::list_live(state.store(), caller.keys(), tag_type).await?;
    Ok(Json(serde_json::to_value(tags).map_err(ApiError::internal)?))
}

#[utoipa::path(post, path = "/tags/{type}/create", operation_id = "createTag", tag = "tags",
    params(("type" = TagType, Path, description = "Tag type")),
    request_body = CreateTagBody,
    responses((status = 200, description = "The created tag, or the existing tag of the same name (case-insensitive)", body = store::Tag)))]
async fn create_tag(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(tag_type): Path<String>,
    JsonObject(body): JsonObject,
) -> ApiResult<Json<Value>> {
    let tag_type = TagType::parse(&tag_type)?;
    caller.authorize(tag_type.write_requirement())?;
    let mut fields = Fields::new(&body);
    let name = fields.required_text("name", MAX_NAME_CHARS);
    fields.finish()?;
    let name = name.expect("validated");
    let tag = store::create_or_get(state.store(), caller.keys(), tag_type, &name, caller.user.id).await?;
    Ok(Json(CREATE_TAG.apply(&projection, json!(tag))))
}

#[utoipa::path(put, path = "/tags/{type}/{id}/color", operation_id = "saveTagColor", tag = "tags",
    params(("type" = TagType, Path, description = "Tag type"), ("id" = Uuid, Path, description = "Tag id")),
    request_body = SaveColorBody,
    responses((status = 200, description = "The tag with its new colour", body = store::Tag)))]
async fn save_color(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path((tag_type, id)): Path<(String, String)>,
    JsonObject(body): JsonObject,
) -> ApiResult<Json<Value>> {
    let tag_type = TagType::parse(&tag_type)?;
    let id = parse_id(&id)?;
    caller.authorize(tag_type.write_requirement())?;
    let mut fields = Fields::new(&body);
    let color = fields.required_nullable_choice("color", COLORS);
    fields.finish()?;
    let tag = store::set_color(state.store(), caller.keys(), tag_type, id, color.expect("validated")).await?;
    Ok(Json(SAVE_TAG_COLOR.apply(&projection, json!(tag))))
}

#[utoipa::path(delete, path = "/tags/{type}/{id}", operation_id = "deleteTag", tag = "tags",
    params(("type" = TagType, Path, description = "Tag type"), ("id" = Uuid, Path, description = "Tag id")),
    responses((status = 200, description = "Soft-deleted; the name is free again", body = shared::http::Success)))]
async fn delete_tag(
    State(state): State<AppState>,
    caller: Caller,
    Path((tag_type, id)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    let tag_type = TagType::parse(&tag_type)?;
    let id = parse_id(&id)?;
    caller.authorize(tag_type.write_requirement())?;
    store::soft_delete(state.store(), caller.keys(), tag_type, id).await?;
    Ok(Json(json!(shared::http::Success { success: true })))
}
