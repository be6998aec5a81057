//! The `administration` function: roles and permissions, and the work activities of the task
//! settings (docs/administration.md).
//!
//! Routes:
//! - `GET    /administration/roles`                                     list (base, then custom)
//! - `GET    /administration/roles/{id}`                                one role
//! - `POST   /administration/roles`                                [P]  create a custom role
//! - `PUT    /administration/roles/{id}`                           [P]  full replacement
//! - `PATCH  /administration/roles/{id}`                           [P]  partial update
//! - `PUT    /administration/roles/{id}/permissions`                    the complete map
//! - `PATCH  /administration/roles/{id}/permissions/{permissionKey}`    one permission
//! - `DELETE /administration/roles/{id}`                                unused custom role
//! - `GET    /administration/task-settings/activities`                  list
//! - `POST   /administration/task-settings/activities`             [P]  create
//! - `PUT    /administration/task-settings/activities/{id}`        [P]  full update

pub mod activities;
pub mod roles;

use axum::Router;
use shared::AppState;
use shared::openapi::Projected;
use shared::permissions::{Requirement, key};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

shared::policy!(
    /// Role administration.
    ManageRoles = Requirement::Permission(key::WS_SETTINGS_MANAGE_ROLES)
);
shared::policy!(
    /// Reading roles: the workspace's own people, not customer-organization members.
    EmployeesOnly = Requirement::Employee
);
shared::policy!(
    /// Changing the task settings (work activities).
    ManageTaskSettings = Requirement::Permission(key::WS_SETTINGS_MANAGE_TASK_SETTINGS)
);

/// Every [P] endpoint of this function (feeds the OpenAPI document).
pub fn projected() -> Vec<Projected> {
    [roles::PROJECTED, activities::PROJECTED].concat()
}

/// Schemas used only as path parameters, which `routes!` does not collect by itself.
#[derive(utoipa::OpenApi)]
#[openapi(components(schemas(shared::permissions::catalog::PermissionKeySchema)))]
struct PathSchemas;

/// The routes with their OpenAPI declarations: one registration for both.
pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(<PathSchemas as utoipa::OpenApi>::openapi())
        .routes(routes!(roles::list_roles, roles::create_role))
        .routes(routes!(roles::get_role, roles::replace_role, roles::update_role, roles::delete_role))
        .routes(routes!(roles::replace_permissions))
        .routes(routes!(roles::set_permission))
        .routes(routes!(activities::list_activities, activities::create_activity))
        .routes(routes!(activities::replace_activity))
}

/// The routes, without the shared layers (the local server merges several of these).
pub fn routes() -> Router<AppState> {
    api().split_for_parts().0
}

/// The finished service for Lambda and `cargo lambda watch`.
pub fn router(state: AppState) -> Router {
    shared::http::service(routes(), state)
}
