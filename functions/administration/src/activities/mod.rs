//! Work activities of the task settings (spec §2.2, §4.2; docs/administration.md).

pub mod rules;
pub mod store;

use crate::MANAGE_TASK_SETTINGS;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use rules::{Activity, ActivityBody, ActivityProjection, NewActivityBody};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;
use workapi_domain::permissions::Requirement;
use workapi_kit::conditional::{IfMatch, IfMatchParams, with_etag};
use workapi_kit::events::{Event, types};
use workapi_kit::idempotency::{Answer, Idempotency};
use workapi_kit::paging::{PageParams, Paged, Paging};
use workapi_kit::projection::Projection;
use workapi_kit::request::{Body, Path};
use workapi_kit::{ApiResult, AppState, Caller};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ActivityPath {
    /// Work activity id
    #[param(example = "0b7f3f0e-2a4b-4f5e-9d1c-5e6f7a8b9c0d")]
    id: Uuid,
}

/// List work activities
///
/// Every work activity of the workspace, by sort order.
#[utoipa::path(get, path = "/administration/task-settings/activities", operation_id = "listWorkActivities", tag = "administration",
    params(PageParams),
    responses((status = 200, description = "Every work activity, by sort order", body = [Activity])))]
pub async fn list_activities(
    State(state): State<AppState>,
    caller: Caller,
    paging: Paging,
) -> ApiResult<Paged<Activity>> {
    caller.authorize(Requirement::Member)?;
    paging.window(store::list(state.store(), caller.keys()).await?, store::order)?.answer()
}

/// Create a work activity
///
/// A new activity, sorted after the existing ones.
#[utoipa::path(post, path = "/administration/task-settings/activities", operation_id = "createWorkActivity", tag = "administration",
    request_body = NewActivityBody,
    responses((status = 201, description = "The new activity, sorted last", body = ActivityProjection)))]
pub async fn create_activity(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    idempotency: Idempotency,
    body: Body<NewActivityBody>,
) -> ApiResult<Answer> {
    let permit = caller.authorize(MANAGE_TASK_SETTINGS)?;
    let draft = body.parse(&permit)?.into();
    let record = store::prepare(state.store(), caller.keys(), draft).await?;
    let answer =
        idempotency.answer_resource(StatusCode::CREATED, record.activity(), &projection.project(record.activity())?)?;
    let event = Event::new(&caller, types::WORK_ACTIVITY_CREATED, record.activity().id).op(record.activity())?;
    let answer = answer.with_event(event);
    store::create(state.store(), caller.keys(), &record, answer.completion()).await?;
    Ok(answer)
}

/// Replace a work activity
///
/// Replaces the name and the translations; the sort order stays.
#[utoipa::path(put, path = "/administration/task-settings/activities/{id}", operation_id = "replaceWorkActivity", tag = "administration",
    params(ActivityPath, IfMatchParams), request_body = ActivityBody,
    responses((status = 200, description = "The updated activity", body = ActivityProjection)))]
pub async fn replace_activity(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<ActivityPath>,
    if_match: IfMatch,
    body: Body<ActivityBody>,
) -> ApiResult<Response> {
    let permit = caller.authorize(MANAGE_TASK_SETTINGS)?;
    let draft = body.parse(&permit)?.into();
    let event =
        |activity: &Activity| Event::new(&caller, types::WORK_ACTIVITY_UPDATED, activity.id).completion(activity);
    let activity = store::replace(state.store(), caller.keys(), path.id, draft, &if_match, event).await?;
    with_etag(&activity, projection.project(&activity)?)
}
