//! Work activities of the task settings (spec §2.2, §4.2; docs/administration.md).

pub mod rules;
pub mod store;

use crate::ManageTaskSettings;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use rules::Activity;
use serde_json::{Value, json};
use shared::auth::Authorized;
use shared::http::JsonObject;
use shared::openapi::Projected;
use shared::permissions::AnyMember;
use shared::projection::Projection;
use shared::{ApiError, ApiResult, AppState};
use uuid::Uuid;

const ACTIVITY_COMPACT: Option<&[&str]> = Some(&["id", "name"]);
pub const CREATE_ACTIVITY: Projected = Projected { operation_id: "createWorkActivity", compact: ACTIVITY_COMPACT };
pub const REPLACE_ACTIVITY: Projected = Projected { operation_id: "replaceWorkActivity", compact: ACTIVITY_COMPACT };
pub const PROJECTED: &[Projected] = &[CREATE_ACTIVITY, REPLACE_ACTIVITY];

/// Request body of the full update.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct ActivityBody {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\x00-\x1F\x7F-\x9F]*[^\s\x00-\x1F\x7F-\x9F][^\x00-\x1F\x7F-\x9F]*$"
    )]
    name: String,
    /// A language may appear once
    #[schema(max_items = 184)]
    translations: Vec<rules::Translation>,
}

/// Request body of create: translations may be omitted.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct NewActivityBody {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\x00-\x1F\x7F-\x9F]*[^\s\x00-\x1F\x7F-\x9F][^\x00-\x1F\x7F-\x9F]*$"
    )]
    name: String,
    /// A language may appear once; omitted means none
    #[schema(max_items = 184, nullable = false)]
    translations: Option<Vec<rules::Translation>>,
}

#[utoipa::path(get, path = "/administration/task-settings/activities", operation_id = "listWorkActivities", tag = "administration",
    responses((status = 200, description = "Every work activity, by sort order", body = [Activity])))]
pub async fn list_activities(
    State(state): State<AppState>,
    Authorized(caller, _): Authorized<AnyMember>,
) -> ApiResult<Json<Value>> {
    Ok(Json(json!(store::list(state.store(), caller.keys()).await?)))
}

#[utoipa::path(post, path = "/administration/task-settings/activities", operation_id = "createWorkActivity", tag = "administration",
    request_body = NewActivityBody,
    responses((status = 201, description = "The new activity, sorted last", body = Activity)))]
pub async fn create_activity(
    State(state): State<AppState>,
    Authorized(caller, _): Authorized<ManageTaskSettings>,
    projection: Projection,
    JsonObject(body): JsonObject,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let draft = rules::draft(&body, false)?;
    let activity = store::create(state.store(), caller.keys(), draft).await?;
    Ok((StatusCode::CREATED, Json(CREATE_ACTIVITY.apply(&projection, json!(activity)))))
}

#[utoipa::path(put, path = "/administration/task-settings/activities/{id}", operation_id = "replaceWorkActivity", tag = "administration",
    params(("id" = Uuid, Path, description = "Work activity id")),
    request_body = ActivityBody,
    responses((status = 200, description = "The updated activity", body = Activity)))]
pub async fn replace_activity(
    State(state): State<AppState>,
    Authorized(caller, _): Authorized<ManageTaskSettings>,
    projection: Projection,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> ApiResult<Json<Value>> {
    let id = Uuid::parse_str(&id).map_err(|_| ApiError::field("id", "id must be a UUID"))?;
    let draft = rules::draft(&body, true)?;
    let activity = store::replace(state.store(), caller.keys(), id, draft).await?;
    Ok(Json(REPLACE_ACTIVITY.apply(&projection, json!(activity))))
}
