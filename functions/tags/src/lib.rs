//! The `tags` function: create, list, recolour and soft-delete tags of the seven types
//! (spec §2.5, §4.6; docs/tags.md).

pub mod domain;
pub mod store;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use domain::{Color, MAX_NAME_CHARS, TagType};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;
use workapi_kit::conditional::{IfMatch, IfMatchParams, with_etag};
use workapi_kit::entity::Entity;
use workapi_kit::events::{Emits, Event, types};
use workapi_kit::function::{Function, Needs, Route};
use workapi_kit::idempotency::{Answer, Idempotency, idempotent};
use workapi_kit::input::{Input, Nullable, Text};
use workapi_kit::openapi::ApiTag;
use workapi_kit::paging::{PageParams, Paged, Paging};
use workapi_kit::projection::Projection;
use workapi_kit::request::{Body, Path};
use workapi_kit::{ApiResult, AppState, Caller};

pub use store::{Tag, TagProjection};

pub const FUNCTION: Function = Function {
    name: "tags",
    prefixes: &["/tags"],
    tags: &[ApiTag {
        name: "tags",
        description: "Tags of seven types (task, project, project-component, organization, object, form-template, \
                      project-documentation): list, create, recolour and delete",
    }],
    api,
    entities: &[workapi_domain::tag::TagRecord::KIND, store::NameGuard::KIND],
    emits: &[
        Emits { operation: "createTag", events: &[types::TAG_CREATED] },
        Emits { operation: "saveTagColor", events: &[types::TAG_UPDATED] },
        Emits { operation: "deleteTag", events: &[types::TAG_DELETED] },
    ],
    needs: Needs {
        summary: "create, list, colour, soft delete",
        routes: &[Route::new("Tags", "/tags/{proxy+}")],
        ..Needs::DATA
    },
};

/// Schemas used only as path parameters, which `routes!` does not collect by itself.
#[derive(utoipa::OpenApi)]
#[openapi(components(schemas(TagType)))]
struct PathSchemas;

/// `idempotent(…)`: the group's POST creates (Idempotency-Key, docs/conventions.md).
fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(<PathSchemas as utoipa::OpenApi>::openapi())
        .routes(routes!(list_tags))
        .routes(idempotent(routes!(create_tag)))
        .routes(routes!(save_color))
        .routes(routes!(delete_tag))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct TypePath {
    /// Tag type
    #[serde(rename = "type")]
    #[param(example = "task")]
    tag_type: TagType,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct TagPath {
    /// Tag type
    #[serde(rename = "type")]
    #[param(example = "task")]
    tag_type: TagType,
    /// Tag id
    #[param(example = "3f0c6a5e-8f1e-4c55-9d3a-0b1d2c3e4f50")]
    id: Uuid,
}

/// A new tag
#[derive(Input)]
#[input(example = serde_json::json!({"name": "Urgent"}))]
struct CreateTagBody {
    /// Compared case-insensitively with the live tags of the type
    name: Text<1, MAX_NAME_CHARS>,
}

/// A tag's colour
#[derive(Input)]
#[input(example = serde_json::json!({"color": "red"}))]
struct SaveColorBody {
    /// One of the palette, or null to clear
    color: Nullable<Color>,
}

/// List tags
///
/// The live (not deleted) tags of the type, ordered by name.
#[utoipa::path(get, path = "/tags/{type}", operation_id = "listTags", tag = "tags", params(TypePath, PageParams),
    responses((status = 200, description = "Live tags of the type, ordered by name", body = [Tag])))]
async fn list_tags(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<TypePath>,
    paging: Paging,
) -> ApiResult<Paged<Tag>> {
    caller.authorize(workapi_domain::permissions::Requirement::Member)?;
    store::list_page(state.store(), (caller.keys(), path.tag_type), &paging).await?.answer()
}

/// Create a tag
///
/// Creates a tag, or returns the live tag of the same type whose name matches
/// case-insensitively (so creating is idempotent by name).
#[utoipa::path(post, path = "/tags/{type}/create", operation_id = "createTag", tag = "tags", params(TypePath),
    request_body = CreateTagBody,
    responses((status = 200, description = "The created tag, or the existing tag of the same name", body = TagProjection)))]
async fn create_tag(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<TypePath>,
    idempotency: Idempotency,
    body: Body<CreateTagBody>,
) -> ApiResult<Answer> {
    let permit = caller.authorize(path.tag_type.write_requirement())?;
    let input = body.parse(&permit)?;
    let scope = (caller.keys(), path.tag_type);
    let respond = |tag: &Tag| {
        let answer = idempotency.answer_resource(StatusCode::OK, tag, &projection.project(tag)?)?;
        Ok(answer.with_event(Event::new(&caller, types::TAG_CREATED, tag.id).op(tag)?))
    };
    store::create_or_get(state.store(), scope, &input.name, caller.user.id, respond).await
}

/// Save a tag's colour
///
/// Sets the colour of a live tag, or clears it with null.
#[utoipa::path(put, path = "/tags/{type}/{id}/color", operation_id = "saveTagColor", tag = "tags",
    params(TagPath, IfMatchParams),
    request_body = SaveColorBody,
    responses((status = 200, description = "The tag with its new colour", body = TagProjection)))]
async fn save_color(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<TagPath>,
    if_match: IfMatch,
    body: Body<SaveColorBody>,
) -> ApiResult<Response> {
    let permit = caller.authorize(path.tag_type.write_requirement())?;
    let input = body.parse(&permit)?;
    let scope = (caller.keys(), path.tag_type);
    let event = |tag: &Tag| Event::new(&caller, types::TAG_UPDATED, tag.id).completion(tag);
    let tag = store::set_color(state.store(), scope, path.id, input.color.0, &if_match, event).await?;
    with_etag(&tag, projection.project(&tag)?)
}

/// Delete a tag
///
/// Soft-deletes a live tag: it leaves the lists and its name is free again.
#[utoipa::path(delete, path = "/tags/{type}/{id}", operation_id = "deleteTag", tag = "tags",
    params(TagPath, IfMatchParams),
    responses((status = 200, description = "Soft-deleted; the name is free again", body = workapi_kit::http::Success,
        example = json!({"success": true}))))]
async fn delete_tag(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<TagPath>,
    if_match: IfMatch,
) -> ApiResult<axum::Json<workapi_kit::http::Success>> {
    caller.authorize(path.tag_type.write_requirement())?;
    let event = |tag: &Tag| Event::new(&caller, types::TAG_DELETED, tag.id).op(tag);
    store::soft_delete(state.store(), (caller.keys(), path.tag_type), path.id, &if_match, event).await?;
    Ok(axum::Json(workapi_kit::http::Success { success: true }))
}
