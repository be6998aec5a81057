//! Role administration (spec §2.1, §4.1; docs/administration.md).

pub mod rules;
mod store;

use crate::{EmployeesOnly, ManageRoles};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use rules::RoleView;
use serde_json::{Value, json};
use shared::auth::Authorized;
use shared::http::{JsonObject, Success};
use shared::openapi::Projected;
use shared::permissions::catalog::{PermissionKeySchema, PermissionMapSchema};
use shared::projection::Projection;
use shared::{ApiResult, AppState, Caller};

const ROLE_COMPACT: Option<&[&str]> = Some(&["id", "name"]);
pub const CREATE_ROLE: Projected = Projected { operation_id: "createRole", compact: ROLE_COMPACT };
pub const REPLACE_ROLE: Projected = Projected { operation_id: "replaceRole", compact: ROLE_COMPACT };
pub const UPDATE_ROLE: Projected = Projected { operation_id: "updateRole", compact: ROLE_COMPACT };
pub const PROJECTED: &[Projected] = &[CREATE_ROLE, REPLACE_ROLE, UPDATE_ROLE];

/// Request body of create and full replacement.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct RoleBody {
    /// Not only whitespace, no control characters
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\x00-\x1F\x7F-\x9F]*[^\s\x00-\x1F\x7F-\x9F][^\x00-\x1F\x7F-\x9F]*$"
    )]
    name: String,
    /// An icon-set class name or an emoji shortcode
    #[schema(min_length = 1, max_length = 64, pattern = r"^[A-Za-z0-9 _:+-]+$")]
    icon: String,
    r#type: shared::permissions::RoleType,
    /// May be empty; omitted means empty
    #[schema(max_length = 400, nullable = false, pattern = r"^[^\x00-\x09\x0B-\x1F\x7F-\x9F]*$")]
    description: Option<String>,
    /// A base role id or a custom role of the workspace; omitted or null means no parent
    #[schema(
        nullable,
        pattern = r"^(_root|_ceo|_team_leader|_staff|_guest|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}_[0-9a-f]{32})$"
    )]
    parent_id: Option<String>,
    /// Omitted keeps the stored map (empty on create)
    #[schema(value_type = Option<PermissionMapSchema>, nullable = false)]
    permissions: Option<std::collections::BTreeMap<String, bool>>,
}

/// Request body of the partial update: every field optional, permissions refused.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct RolePatchBody {
    #[schema(
        min_length = 1,
        max_length = 100,
        nullable = false,
        pattern = r"^[^\x00-\x1F\x7F-\x9F]*[^\s\x00-\x1F\x7F-\x9F][^\x00-\x1F\x7F-\x9F]*$"
    )]
    name: Option<String>,
    #[schema(max_length = 400, nullable = false, pattern = r"^[^\x00-\x09\x0B-\x1F\x7F-\x9F]*$")]
    description: Option<String>,
    #[schema(min_length = 1, max_length = 64, pattern = r"^[A-Za-z0-9 _:+-]+$", nullable = false)]
    icon: Option<String>,
    /// null removes the parent
    #[schema(
        nullable,
        pattern = r"^(_root|_ceo|_team_leader|_staff|_guest|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}_[0-9a-f]{32})$"
    )]
    parent_id: Option<String>,
    #[schema(nullable = false)]
    r#type: Option<shared::permissions::RoleType>,
}

/// Request body of the single-permission toggle.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct AllowBody {
    /// true grants, false revokes (both override inheritance); null returns to inheritance
    #[schema(required, nullable)]
    allow: Option<bool>,
}

fn respond(caller: &Caller, roles: &shared::permissions::Roles, id: &str) -> ApiResult<Value> {
    Ok(json!(store::view(roles, id, &caller.user.language)?))
}

#[utoipa::path(get, path = "/administration/roles", operation_id = "listRoles", tag = "administration",
    responses((status = 200, description = "Base roles, then custom roles by creation; names localized", body = [RoleView])))]
pub async fn list_roles(
    State(state): State<AppState>,
    Authorized(caller, _): Authorized<EmployeesOnly>,
) -> ApiResult<Json<Value>> {
    let roles = store::load(state.store(), caller.keys()).await?;
    let ids = shared::permissions::BASE_ROLES
        .iter()
        .map(|r| r.id)
        .chain(roles.custom_roles().into_iter().map(|r| r.id.as_str()));
    let views = ids.map(|id| store::view(&roles, id, &caller.user.language)).collect::<ApiResult<Vec<_>>>()?;
    Ok(Json(json!(views)))
}

#[utoipa::path(get, path = "/administration/roles/{id}", operation_id = "getRole", tag = "administration",
    params(("id" = String, Path, description = "Role id")),
    responses((status = 200, description = "The role", body = RoleView)))]
pub async fn get_role(
    State(state): State<AppState>,
    Authorized(caller, _): Authorized<EmployeesOnly>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let roles = store::load(state.store(), caller.keys()).await?;
    Ok(Json(respond(&caller, &roles, &id)?))
}

#[utoipa::path(post, path = "/administration/roles", operation_id = "createRole", tag = "administration",
    request_body = RoleBody,
    responses((status = 201, description = "The new custom role", body = RoleView)))]
pub async fn create_role(
    State(state): State<AppState>,
    Authorized(caller, _): Authorized<ManageRoles>,
    projection: Projection,
    JsonObject(body): JsonObject,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let draft = rules::full(&body, None)?;
    let (roles, id) = store::create(state.store(), caller.keys(), caller.user.id, draft).await?;
    Ok((StatusCode::CREATED, Json(CREATE_ROLE.apply(&projection, respond(&caller, &roles, &id)?))))
}

#[utoipa::path(put, path = "/administration/roles/{id}", operation_id = "replaceRole", tag = "administration",
    params(("id" = String, Path, description = "Custom role id (base roles are read-only: 403)")),
    request_body = RoleBody,
    responses((status = 200, description = "The updated role", body = RoleView)))]
pub async fn replace_role(
    State(state): State<AppState>,
    Authorized(caller, _): Authorized<ManageRoles>,
    projection: Projection,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> ApiResult<Json<Value>> {
    let blame = if body.contains_key("permissions") { "permissions" } else { "type" };
    let roles =
        store::update(state.store(), caller.keys(), &id, &|current| Ok((rules::full(&body, Some(current))?, blame)))
            .await?;
    Ok(Json(REPLACE_ROLE.apply(&projection, respond(&caller, &roles, &id)?)))
}

#[utoipa::path(patch, path = "/administration/roles/{id}", operation_id = "updateRole", tag = "administration",
    params(("id" = String, Path, description = "Custom role id (base roles are read-only: 403)")),
    request_body = RolePatchBody,
    responses((status = 200, description = "The updated role", body = RoleView)))]
pub async fn update_role(
    State(state): State<AppState>,
    Authorized(caller, _): Authorized<ManageRoles>,
    projection: Projection,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> ApiResult<Json<Value>> {
    let roles =
        store::update(state.store(), caller.keys(), &id, &|current| Ok((rules::partial(&body, current)?, "type")))
            .await?;
    Ok(Json(UPDATE_ROLE.apply(&projection, respond(&caller, &roles, &id)?)))
}

#[utoipa::path(put, path = "/administration/roles/{id}/permissions", operation_id = "replaceRolePermissions", tag = "administration",
    params(("id" = String, Path, description = "Custom role id")),
    request_body(content = PermissionMapSchema, description = "The complete map of explicit entries (also accepted wrapped as {\"permissions\": {…}})"),
    responses((status = 200, description = "The role with its new permissions", body = RoleView)))]
pub async fn replace_permissions(
    State(state): State<AppState>,
    Authorized(caller, _): Authorized<ManageRoles>,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> ApiResult<Json<Value>> {
    let raw = rules::permission_map(&body)?;
    let roles = store::update(state.store(), caller.keys(), &id, &|current| {
        Ok((rules::Draft { raw: raw.clone(), ..rules::Draft::of(current) }, "permissions"))
    })
    .await?;
    Ok(Json(respond(&caller, &roles, &id)?))
}

#[utoipa::path(patch, path = "/administration/roles/{id}/permissions/{permissionKey}", operation_id = "setRolePermission", tag = "administration",
    params(("id" = String, Path, description = "Custom role id"), ("permissionKey" = PermissionKeySchema, Path, description = "A permission key, e.g. Invoices.manage")),
    request_body = AllowBody,
    responses((status = 200, description = "The role with its updated permissions", body = RoleView)))]
pub async fn set_permission(
    State(state): State<AppState>,
    Authorized(caller, _): Authorized<ManageRoles>,
    Path((id, permission_key)): Path<(String, String)>,
    JsonObject(body): JsonObject,
) -> ApiResult<Json<Value>> {
    // Validate once up front so a bad request fails before any store read.
    rules::set_permission(&body, &mut Default::default(), &permission_key)?;
    let roles = store::update(state.store(), caller.keys(), &id, &|current| {
        let mut draft = rules::Draft::of(current);
        rules::set_permission(&body, &mut draft.raw, &permission_key)?;
        Ok((draft, "allow"))
    })
    .await?;
    Ok(Json(respond(&caller, &roles, &id)?))
}

#[utoipa::path(delete, path = "/administration/roles/{id}", operation_id = "deleteRole", tag = "administration",
    params(("id" = String, Path, description = "Custom role id")),
    responses((status = 200, description = "Deleted; 409 while users hold the role or roles inherit from it", body = Success)))]
pub async fn delete_role(
    State(state): State<AppState>,
    Authorized(caller, _): Authorized<ManageRoles>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    store::delete(state.store(), caller.keys(), &id).await?;
    Ok(Json(json!(Success { success: true })))
}
