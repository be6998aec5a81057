//! Role administration (spec §2.1, §4.1; docs/administration.md).

pub mod rules;
mod store;

use crate::{EMPLOYEES, MANAGE_ROLES};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use rules::{AllowBody, RoleBody, RolePatchBody, RoleView};
use serde::Deserialize;
use utoipa::IntoParams;
use workapi_domain::event::EventType;
use workapi_domain::permissions::Roles;
use workapi_domain::permissions::catalog::{PermissionKey, PermissionMapSchema};
use workapi_domain::permissions::roles::RoleId;
use workapi_kit::conditional::{IfMatch, IfMatchParams, with_etag};
use workapi_kit::events::{Event, types};
use workapi_kit::http::Success;
use workapi_kit::idempotency::{Answer, Idempotency};
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging};
use workapi_kit::projection::{Compact, Projected, Projection};
use workapi_kit::request::{Body, Path};
use workapi_kit::{ApiResult, AppState, Caller};

impl Compact for RoleView {
    const COMPACT: &'static [&'static str] = &["id", "name"];
}

/// The response of the [P] role endpoints (named, so the document can reference it).
pub type RoleProjection = Projected<RoleView>;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct RolePath {
    /// Role id: a base role (`_staff`; read-only) or a custom role of the workspace
    #[param(value_type = RoleId, example = "_staff")]
    id: RoleId,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
pub struct PermissionPath {
    /// Custom role id
    #[param(value_type = RoleId, example = "_staff")]
    id: RoleId,
    /// A permission key, e.g. Invoices.manage
    #[param(value_type = PermissionKey, example = "Invoices.manage")]
    permission_key: PermissionKey,
}

/// The caller as the editor of roles: the acting user, and the token owner's role.
fn editor(caller: &Caller) -> store::Editor<'_> {
    store::Editor { user: caller.user.id, role: caller.permissions.role_id() }
}

fn respond(caller: &Caller, roles: &Roles, id: &str) -> ApiResult<RoleView> {
    store::view(roles, id, &caller.user.language)
}

/// The event of a change to the role `id`, with the role as `roles` hold it.
fn event(caller: &Caller, event_type: EventType, roles: &Roles, id: &str) -> ApiResult<workapi_store::TxOp> {
    Event::new(caller, event_type, id).op(&respond(caller, roles, id)?)
}

/// List roles
///
/// The base roles, then the workspace's custom roles by creation; base-role names are
/// localized to the caller's language.
#[utoipa::path(get, path = "/administration/roles", operation_id = "listRoles", tag = "administration",
    params(PageParams),
    responses((status = 200, description = "Base roles, then custom roles by creation; names localized", body = [RoleView])))]
pub async fn list_roles(State(state): State<AppState>, caller: Caller, paging: Paging) -> ApiResult<Paged<RoleView>> {
    caller.authorize(EMPLOYEES)?;
    let roles = store::load(state.store(), caller.keys()).await?;
    // Base roles first, in their fixed order, then custom roles by creation.
    let base = workapi_domain::permissions::BASE_ROLES
        .iter()
        .enumerate()
        .map(|(i, r)| (OrderKey::new().int(i as i64).text("").id(r.id), r.id));
    let custom = roles.custom_roles().into_iter().map(|r| {
        let rank = workapi_domain::permissions::BASE_ROLES.len() as i64;
        (OrderKey::new().int(rank).text(r.created_at.clone()).id(&r.id), r.id.as_str())
    });
    let page = paging.window(base.chain(custom), |(key, _)| key.clone())?;
    let views = page.items.iter().map(|(_, id)| store::view(&roles, id, &caller.user.language));
    page.rest.answer(views.collect::<ApiResult<Vec<_>>>()?)
}

/// Get a role
///
/// One role with its explicit, inherited and effective permissions.
#[utoipa::path(get, path = "/administration/roles/{id}", operation_id = "getRole", tag = "administration",
    params(RolePath),
    responses((status = 200, description = "The role", body = RoleView)))]
pub async fn get_role(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<RolePath>,
) -> ApiResult<Json<RoleView>> {
    caller.authorize(EMPLOYEES)?;
    let roles = store::load(state.store(), caller.keys()).await?;
    Ok(Json(respond(&caller, &roles, path.id.as_str())?))
}

/// Create a custom role
///
/// A new custom role, optionally inheriting from a parent role; its permissions must be ones
/// its type may hold.
#[utoipa::path(post, path = "/administration/roles", operation_id = "createRole", tag = "administration",
    request_body = RoleBody,
    responses((status = 201, description = "The new custom role", body = RoleProjection)))]
pub async fn create_role(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    idempotency: Idempotency,
    body: Body<RoleBody>,
) -> ApiResult<Answer> {
    let permit = caller.authorize(MANAGE_ROLES)?;
    let draft = rules::full(&body.parse(&permit)?, None);
    let answer = |roles: &Roles, id: &str| {
        let role = respond(&caller, roles, id)?;
        let answer = idempotency.answer_resource(StatusCode::CREATED, &role, &projection.project(&role)?)?;
        Ok(answer.with_event(Event::new(&caller, types::ROLE_CREATED, id).op(&role)?))
    };
    store::create(state.store(), caller.keys(), editor(&caller), draft, answer).await
}

/// Replace a custom role
///
/// Replaces name, icon, type, description and parent; omitted permissions keep the stored map.
/// Base roles are read-only (403).
#[utoipa::path(put, path = "/administration/roles/{id}", operation_id = "replaceRole", tag = "administration",
    params(RolePath, IfMatchParams), request_body = RoleBody,
    responses((status = 200, description = "The updated role", body = RoleProjection)))]
pub async fn replace_role(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<RolePath>,
    if_match: IfMatch,
    body: Body<RoleBody>,
) -> ApiResult<Response> {
    let permit = caller.authorize(MANAGE_ROLES)?;
    let body = body.parse(&permit)?;
    let blame = rules::full_blame(&body);
    let id = path.id.as_str();
    let roles = store::update(
        state.store(),
        caller.keys(),
        editor(&caller),
        id,
        (&if_match, &caller.user.language),
        &|current| Ok((rules::full(&body, Some(current)), blame)),
        &|roles| event(&caller, types::ROLE_UPDATED, roles, id),
    )
    .await?;
    let role = respond(&caller, &roles, id)?;
    with_etag(&role, projection.project(&role)?)
}

/// Update a custom role
///
/// Changes the fields the body carries; `parentId: null` removes the parent. Permissions have
/// their own endpoints.
#[utoipa::path(patch, path = "/administration/roles/{id}", operation_id = "updateRole", tag = "administration",
    params(RolePath, IfMatchParams), request_body = RolePatchBody,
    responses((status = 200, description = "The updated role", body = RoleProjection)))]
pub async fn update_role(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<RolePath>,
    if_match: IfMatch,
    body: Body<RolePatchBody>,
) -> ApiResult<Response> {
    let permit = caller.authorize(MANAGE_ROLES)?;
    let body = body.parse(&permit)?;
    let id = path.id.as_str();
    let roles = store::update(
        state.store(),
        caller.keys(),
        editor(&caller),
        id,
        (&if_match, &caller.user.language),
        &|current| Ok((rules::partial(&body, current), "type")),
        &|roles| event(&caller, types::ROLE_UPDATED, roles, id),
    )
    .await?;
    let role = respond(&caller, &roles, id)?;
    with_etag(&role, projection.project(&role)?)
}

/// Replace a role's permissions
///
/// The complete map of explicit entries; keys left out are inherited again.
#[utoipa::path(put, path = "/administration/roles/{id}/permissions", operation_id = "replaceRolePermissions", tag = "administration",
    params(RolePath, IfMatchParams),
    request_body(content = PermissionMapSchema, description = "The complete map of explicit entries (also accepted wrapped as {\"permissions\": {…}})",
        example = json!({"Invoices.manage": true, "Projects.edit": false})),
    responses((status = 200, description = "The role with its new permissions", body = RoleView)))]
pub async fn replace_permissions(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<RolePath>,
    if_match: IfMatch,
    body: Body<PermissionMapSchema>,
) -> ApiResult<Response> {
    let permit = caller.authorize(MANAGE_ROLES)?;
    let raw = rules::permission_map(body.json(&permit)?)?;
    let id = path.id.as_str();
    let roles = store::update(
        state.store(),
        caller.keys(),
        editor(&caller),
        id,
        (&if_match, &caller.user.language),
        &|current| Ok((rules::Draft { raw: raw.clone(), ..rules::Draft::of(current) }, "permissions")),
        &|roles| event(&caller, types::ROLE_PERMISSIONS_CHANGED, roles, id),
    )
    .await?;
    let role = respond(&caller, &roles, id)?;
    with_etag(&role, Json(&role))
}

/// Set one permission of a role
///
/// `allow` true grants, false revokes (both override inheritance), null returns the key to
/// inheritance.
#[utoipa::path(patch, path = "/administration/roles/{id}/permissions/{permissionKey}", operation_id = "setRolePermission", tag = "administration",
    params(PermissionPath, IfMatchParams), request_body = AllowBody,
    responses((status = 200, description = "The role with its updated permissions", body = RoleView)))]
pub async fn set_permission(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<PermissionPath>,
    if_match: IfMatch,
    body: Body<AllowBody>,
) -> ApiResult<Response> {
    let permit = caller.authorize(MANAGE_ROLES)?;
    let allow = body.parse(&permit)?.allow.0;
    let id = path.id.as_str();
    let roles = store::update(
        state.store(),
        caller.keys(),
        editor(&caller),
        id,
        (&if_match, &caller.user.language),
        &|current| {
            let mut draft = rules::Draft::of(current);
            rules::set_permission(&mut draft.raw, path.permission_key, allow);
            Ok((draft, "allow"))
        },
        &|roles| event(&caller, types::ROLE_PERMISSIONS_CHANGED, roles, id),
    )
    .await?;
    let role = respond(&caller, &roles, id)?;
    with_etag(&role, Json(&role))
}

/// Delete a custom role
///
/// Only a role that no user holds and no role inherits from (409 otherwise).
#[utoipa::path(delete, path = "/administration/roles/{id}", operation_id = "deleteRole", tag = "administration",
    params(RolePath, IfMatchParams),
    responses((status = 200, description = "Deleted; 409 while users hold the role or roles inherit from it", body = Success,
        example = json!({"success": true}))))]
pub async fn delete_role(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<RolePath>,
    if_match: IfMatch,
) -> ApiResult<Json<Success>> {
    caller.authorize(MANAGE_ROLES)?;
    let id = path.id.as_str();
    let event = |roles: &Roles| event(&caller, types::ROLE_DELETED, roles, id);
    store::delete(state.store(), caller.keys(), id, (&if_match, &caller.user.language), &event).await?;
    Ok(Json(Success { success: true }))
}
