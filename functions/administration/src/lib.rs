//! The `administration` function: roles and permissions, and the work activities of the task
//! settings (spec §2.1, §2.2, §4.1, §4.2; docs/administration.md).

pub mod activities;
pub mod catalog;
pub mod roles;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use workapi_domain::permissions::{Requirement, key};
use workapi_kit::AppState;
use workapi_kit::entity::{Entity, SEQUENCE};
use workapi_kit::events::{Emits, types};
use workapi_kit::function::{Function, Grant, Needs, Resource, Route};
use workapi_kit::idempotency::idempotent;
use workapi_kit::openapi::ApiTag;

pub const FUNCTION: Function = Function {
    name: "administration",
    prefixes: &["/administration"],
    tags: &[ApiTag {
        name: "administration",
        description: "Roles and their permissions (base and custom roles with inheritance), the work \
                      activities of the task settings, and the product catalog",
    }],
    api,
    entities: &[
        workapi_domain::permissions::roles::CustomRole::KIND,
        activities::store::ActivityRecord::KIND,
        SEQUENCE,
        workapi_domain::catalog::CatalogCategory::KIND,
        workapi_domain::catalog::ProductRecord::KIND,
    ],
    emits: &[
        Emits { operation: "createRole", events: &[types::ROLE_CREATED] },
        Emits { operation: "replaceRole", events: &[types::ROLE_UPDATED] },
        Emits { operation: "updateRole", events: &[types::ROLE_UPDATED] },
        Emits { operation: "replaceRolePermissions", events: &[types::ROLE_PERMISSIONS_CHANGED] },
        Emits { operation: "setRolePermission", events: &[types::ROLE_PERMISSIONS_CHANGED] },
        Emits { operation: "deleteRole", events: &[types::ROLE_DELETED] },
        Emits { operation: "createWorkActivity", events: &[types::WORK_ACTIVITY_CREATED] },
        Emits { operation: "replaceWorkActivity", events: &[types::WORK_ACTIVITY_UPDATED] },
        Emits { operation: "createCatalogProduct", events: &[types::CATALOG_PRODUCT_CREATED] },
    ],
    needs: Needs {
        summary: "roles and permissions, work activities",
        routes: &[Route::new("Administration", "/administration/{proxy+}")],
        grants: &[Grant {
            sid: "PresignUploadedFiles",
            actions: &["s3:GetObject"],
            on: Resource::UploadedFiles,
            note: "Presigns the URLs of catalog logos (workapi_kit::files).",
        }],
        ..Needs::DATA
    },
};

/// Role administration.
const MANAGE_ROLES: Requirement = Requirement::Permission(key::WS_SETTINGS_MANAGE_ROLES);
/// Reading roles: the workspace's own people, not customer-organization members.
const EMPLOYEES: Requirement = Requirement::Employee;
/// Changing the task settings (work activities).
const MANAGE_TASK_SETTINGS: Requirement = Requirement::Permission(key::WS_SETTINGS_MANAGE_TASK_SETTINGS);

/// Schemas used only as path parameters, which `routes!` does not collect by itself.
#[derive(utoipa::OpenApi)]
#[openapi(components(schemas(
    workapi_domain::permissions::roles::RoleId,
    workapi_domain::permissions::catalog::PermissionKeySchema
)))]
struct PathSchemas;

/// `idempotent(…)`: the group's POST creates (Idempotency-Key, docs/conventions.md).
fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(<PathSchemas as utoipa::OpenApi>::openapi())
        .routes(idempotent(routes!(roles::list_roles, roles::create_role)))
        .routes(routes!(roles::get_role, roles::replace_role, roles::update_role, roles::delete_role))
        .routes(routes!(roles::replace_permissions))
        .routes(routes!(roles::set_permission))
        .routes(idempotent(routes!(activities::list_activities, activities::create_activity)))
        .routes(routes!(activities::replace_activity))
        .routes(routes!(catalog::list_categories))
        .routes(idempotent(routes!(catalog::list_products, catalog::create_product)))
        .routes(routes!(catalog::get_product))
}
