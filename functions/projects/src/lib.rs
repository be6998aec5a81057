//! The `projects` function: the projects a caller may access, their tasks, their
//! manual-position categories, manual positions, and catalog products imported into a project (spec §2.4,
//! §4.4, §4.5; docs/projects.md).
//!
//! Every operation on one project applies the access rule of `workapi_domain::project`: a
//! member of the project or a holder of `Projects.viewAll`; a project that does not exist in the
//! caller's workspace is a 404, one the caller may not access a 403.

pub mod manual_positions;
pub mod products;

use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;
use workapi_domain::permissions::Requirement;
use workapi_domain::project::{self, ManualPositionCategory, Project, ProjectRecord};
use workapi_domain::task::{self, Task};
use workapi_kit::entity::{self, Entity, SEQUENCE};
use workapi_kit::events::{Emits, types};
use workapi_kit::function::{Function, Needs, Route};
use workapi_kit::idempotency::idempotent;
use workapi_kit::openapi::ApiTag;
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging, StoreList};
use workapi_kit::request::Path;
use workapi_kit::{ApiResult, AppState, Caller};

pub const FUNCTION: Function = Function {
    name: "projects",
    // Under a project id, so API Gateway's `{projectId}` resource can also hold the billing
    // function's more specific children (docs/billing.md, "Routing"); `/projects` itself and
    // `/projects/{projectId}` are events of their own in template.yaml.
    prefixes: &["/projects/{projectId}"],
    tags: &[ApiTag {
        name: "projects",
        description: "Projects the caller may access, their tasks, their manual-position categories and manual positions, \
                      and catalog products imported into a project",
    }],
    api,
    entities: &[
        ProjectRecord::KIND,
        project::ManualPositionCategoryRecord::KIND,
        manual_positions::ManualPositionRecord::KIND,
        products::ProjectProductRecord::KIND,
        SEQUENCE,
    ],
    emits: &[
        Emits { operation: "createManualPosition", events: &[types::MANUAL_POSITION_CREATED] },
        Emits { operation: "importProjectProduct", events: &[types::PROJECT_PRODUCT_IMPORTED] },
    ],
    needs: Needs {
        summary: "projects, manual positions, imported products",
        routes: &[
            Route::new("ProjectsRoot", "/projects"),
            Route {
                event: "ProjectsOne",
                path: "/projects/{projectId}",
                note: "One project and everything under it, by {projectId} (not /projects/{proxy+}): API\n\
                       Gateway allows one variable child per resource, and the billing function's\n\
                       subscription-billings and support-contingents are static children of {projectId}.",
            },
            Route::new("Projects", "/projects/{projectId}/{proxy+}"),
        ],
        ..Needs::DATA
    },
};

/// `idempotent(…)`: the group's POST creates (Idempotency-Key, docs/conventions.md).
fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_projects))
        .routes(routes!(get_project))
        .routes(routes!(list_manual_position_categories))
        .routes(routes!(list_tasks))
        .routes(idempotent(routes!(manual_positions::list_manual_positions, manual_positions::create_manual_position)))
        .routes(idempotent(routes!(products::list_products, products::import_product)))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
pub struct ProjectPath {
    /// Project id
    #[param(example = "5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e")]
    project_id: Uuid,
}

/// List projects
///
/// The projects the caller may access (a member of, or every project with `Projects.viewAll`),
/// ordered by name.
#[utoipa::path(get, path = "/projects", operation_id = "listProjects", tag = "projects", params(PageParams),
    responses((status = 200, description = "The projects the caller may access, by name", body = [Project])))]
async fn list_projects(State(state): State<AppState>, caller: Caller, paging: Paging) -> ApiResult<Paged<Project>> {
    caller.authorize(Requirement::Member)?;
    let (viewer, keys) = (caller.viewer(), caller.keys());
    // A member sees the projects they belong to: the list index is read until a page of them.
    let list = StoreList {
        query: project::list_query(keys),
        start_after: |after: &OrderKey| project::list_start(keys, after),
        key: project::order,
        // Members' ids (up to 1,000) make the largest.
        largest_item: 40 * 1024,
    };
    let decode = |item| Ok(project::visible_to(viewer, entity::from_item(item)?));
    paging.window_from_store(state.store(), list, decode).await?.answer()
}

/// Get a project
///
/// One project the caller may access.
#[utoipa::path(get, path = "/projects/{projectId}", operation_id = "getProject", tag = "projects",
    params(ProjectPath),
    responses((status = 200, description = "The project", body = Project)))]
async fn get_project(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<ProjectPath>,
) -> ApiResult<Json<Project>> {
    caller.authorize(Requirement::Member)?;
    Ok(Json(project::accessible(state.store(), caller.viewer(), path.project_id).await?.project))
}

/// List manual-position categories
///
/// The categories a manual position of the project may name, ordered by name.
#[utoipa::path(get, path = "/projects/{projectId}/manual-position-categories",
    operation_id = "listManualPositionCategories", tag = "projects", params(ProjectPath, PageParams),
    responses((status = 200, description = "The project's manual-position categories, by name",
        body = [ManualPositionCategory])))]
async fn list_manual_position_categories(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<ProjectPath>,
    paging: Paging,
) -> ApiResult<Paged<ManualPositionCategory>> {
    caller.authorize(Requirement::Member)?;
    let record = project::accessible(state.store(), caller.viewer(), path.project_id).await?;
    let categories = project::list_categories(state.store(), (caller.keys(), record.project.id)).await?;
    paging.window(categories, project::category_order)?.answer()
}

/// List a project's tasks
///
/// The project's tasks, by shortNumber, with their estimates, hour rates and products. Tasks
/// are read through an index: one seeded a moment ago may take a moment to appear.
#[utoipa::path(get, path = "/projects/{projectId}/tasks", operation_id = "listProjectTasks", tag = "projects",
    params(ProjectPath, PageParams),
    responses((status = 200, description = "The project's tasks, by shortNumber", body = [Task])))]
async fn list_tasks(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<ProjectPath>,
    paging: Paging,
) -> ApiResult<Paged<Task>> {
    caller.authorize(Requirement::Member)?;
    let record = project::accessible(state.store(), caller.viewer(), path.project_id).await?;
    let tasks = task::list_for_project(state.store(), caller.keys(), record.project.id).await?;
    paging.window(tasks, task::order)?.map(|t| t.to_response(&record.project)).answer()
}
