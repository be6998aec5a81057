//! The `account` function: the caller's own notifications (spec §3, §4.10; docs/account.md):
//! list them newest first (all or unread only, with a cursor), count the unread ones, mark one
//! read. Everything acts as the calling user, which in imposter mode is the impersonated user.
//! The notifications themselves are made from the service's events (`notify`).

pub mod cursor;
pub mod notifications;
pub mod notify;

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use cursor::Position;
use notifications::{Notification, NotificationRecord, TimelineEntry, UnreadEntry};
use serde::{Deserialize, Serialize};
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;
use workapi_domain::permissions::Requirement;
use workapi_kit::entity::Entity;
use workapi_kit::events::{Emits, Event, types};
use workapi_kit::function::{Function, Needs, Route};
use workapi_kit::http::Success;
use workapi_kit::openapi::ApiTag;
use workapi_kit::paging::{PageParams, Paging, with_link};
use workapi_kit::request::{Path, Query, deserialize_str};
use workapi_kit::{ApiError, ApiResult, AppState, Caller};

pub const FUNCTION: Function = Function {
    name: "account",
    prefixes: &["/account"],
    tags: &[ApiTag {
        name: "account",
        description: "The calling user's own account: notifications (list, unread count, mark read)",
    }],
    api,
    entities: &[NotificationRecord::KIND, TimelineEntry::KIND, UnreadEntry::KIND],
    emits: &[Emits { operation: "markNotificationRead", events: &[types::NOTIFICATION_READ] }],
    needs: Needs {
        summary: "the caller's notifications",
        routes: &[Route::new("Account", "/account/{proxy+}")],
        ..Needs::DATA
    },
};

fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_notifications)).routes(routes!(unread_count)).routes(routes!(mark_read))
}

/// Page size of the list when `limit` is absent.
pub const DEFAULT_PAGE_SIZE: u32 = 25;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ListParams {
    /// `true`: only unread notifications; `false` or absent: all
    #[serde(default, deserialize_with = "flag")]
    #[param(value_type = Option<bool>, example = true)]
    unread_only: Option<bool>,
}

fn flag<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<bool>, D::Error> {
    deserialize_str(deserializer, "true or false", |s| match s {
        "true" => Some(Some(true)),
        "false" => Some(Some(false)),
        _ => None,
    })
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct NotificationPath {
    /// Notification id
    #[param(example = "0b7c1a52-4a4e-4f0e-9a57-2f1d2b3c4d5e")]
    id: Uuid,
}

/// One page of notifications.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"items": [{"id": "0b7c1a52-4a4e-4f0e-9a57-2f1d2b3c4d5e", "title": "New comment on #1042",
    "body": "Erika commented on Checkout redesign.", "createdAt": "2026-11-24T09:30:00.000Z",
    "isRead": false, "readAt": null}],
    "nextCursor": null, "unreadCount": 3})))]
pub struct NotificationPage {
    /// Newest first
    pub items: Vec<Notification>,
    /// Pass as `cursor` for the next page; null on the last page
    #[schema(required)]
    pub next_cursor: Option<String>,
    /// All unread notifications of the caller, whatever the page or filter
    pub unread_count: usize,
}

/// The unread count alone.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"unreadCount": 3})))]
pub struct UnreadCount {
    pub unread_count: usize,
}

/// List my notifications
///
/// The caller's notifications, newest first, in pages of `limit` (cursor pagination:
/// pass the page's `nextCursor` as `cursor` for the next one). `unreadOnly=true` lists only
/// unread ones. Every page carries the caller's exact unread count. In imposter mode, the
/// impersonated user's notifications.
#[utoipa::path(get, path = "/account/notifications", operation_id = "listNotifications", tag = "account",
    params(ListParams, PageParams),
    responses((status = 200, description = "One page of notifications, newest first", body = NotificationPage)))]
async fn list_notifications(
    State(state): State<AppState>,
    caller: Caller,
    Query(params): Query<ListParams>,
    paging: Paging,
) -> ApiResult<Response> {
    caller.authorize(Requirement::Member)?;
    let after = match paging.raw_cursor() {
        None => None,
        Some(text) => Some(
            Position::decode(text).ok_or_else(|| ApiError::field("cursor", "cursor is not a cursor of this list"))?,
        ),
    };
    let scope = (caller.keys(), caller.user.id);
    let limit = paging.limit_or(DEFAULT_PAGE_SIZE);
    let store = state.store();
    let (page, unread_count) = tokio::join!(
        notifications::list(store, scope, params.unread_only.unwrap_or(false), limit, after.as_ref()),
        notifications::unread_count(store, scope),
    );
    let page = page?;
    let next_cursor = page.next.as_ref().map(Position::encode);
    let link = next_cursor.as_deref().map(|cursor| paging.next_link(cursor));
    let body = NotificationPage { items: page.items, next_cursor, unread_count: unread_count? };
    Ok(with_link(Json(body).into_response(), link))
}

/// Count my unread notifications
///
/// The number of the caller's unread notifications (the badge), exact: a notification marked
/// read is no longer counted once that request has answered.
#[utoipa::path(get, path = "/account/notifications/unread-count", operation_id = "countUnreadNotifications",
    tag = "account",
    responses((status = 200, description = "The caller's unread notifications", body = UnreadCount)))]
async fn unread_count(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<UnreadCount>> {
    caller.authorize(Requirement::Member)?;
    let unread_count = notifications::unread_count(state.store(), (caller.keys(), caller.user.id)).await?;
    Ok(Json(UnreadCount { unread_count }))
}

/// Mark a notification read
///
/// Marks one of the caller's own notifications read: `isRead` becomes true and it leaves the
/// unread-only list and the unread count. Marking it again changes nothing and answers the
/// same. Another user's notification (or one of another workspace) is 404.
#[utoipa::path(post, path = "/account/notifications/{id}/read", operation_id = "markNotificationRead",
    tag = "account", params(NotificationPath),
    responses((status = 200, description = "The notification is read", body = Success,
        example = json!({"success": true}))))]
async fn mark_read(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<NotificationPath>,
) -> ApiResult<Json<Success>> {
    caller.authorize(Requirement::Member)?;
    let event = |read: &Notification| Event::new(&caller, types::NOTIFICATION_READ, read.id).op(read);
    notifications::mark_read(state.store(), (caller.keys(), caller.user.id), path.id, event).await?;
    Ok(Json(Success { success: true }))
}
