//! The `tasks` function: tasks (seeded, read here) and their express quotations (spec §2.3,
//! §3, §4.3; docs/tasks.md).
//!
//! A task is named by its UUID or its numeric `shortNumber`. Every operation applies the access
//! rule of the task's project (`workapi_domain::task::accessible`, answered by the kit): a task that does not exist
//! in the caller's workspace is a 404, one whose project the caller may not access a 403.

pub mod quotations;

use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use workapi_domain::permissions::Requirement;
use workapi_domain::quotation::{AcceptedQuotationRecord, ExpressQuotationRecord};
use workapi_domain::task::{self, Task, TaskIdentifier, TaskNumberRecord, TaskRecord};
use workapi_kit::entity::{Entity, SEQUENCE};
use workapi_kit::events::{Emits, types};
use workapi_kit::function::{Function, Needs, Route};
use workapi_kit::idempotency::idempotent;
use workapi_kit::openapi::ApiTag;
use workapi_kit::request::Path;
use workapi_kit::{ApiResult, AppState, Caller};

pub const FUNCTION: Function = Function {
    name: "tasks",
    prefixes: &["/tasks"],
    tags: &[ApiTag {
        name: "tasks",
        description: "Tasks, named by UUID or shortNumber, and their express quotations: created from the task's \
                      estimate and products with exact amounts, then accepted or rejected",
    }],
    api,
    entities: &[
        TaskRecord::KIND,
        TaskNumberRecord::KIND,
        ExpressQuotationRecord::KIND,
        AcceptedQuotationRecord::KIND,
        SEQUENCE,
    ],
    emits: &[
        Emits { operation: "createExpressQuotation", events: &[types::EXPRESS_QUOTATION_CREATED] },
        Emits { operation: "acceptExpressQuotation", events: &[types::EXPRESS_QUOTATION_ACCEPTED] },
        Emits { operation: "rejectExpressQuotation", events: &[types::EXPRESS_QUOTATION_REJECTED] },
    ],
    needs: Needs {
        summary: "tasks and their express quotations",
        routes: &[Route::new("Tasks", "/tasks/{proxy+}")],
        ..Needs::DATA
    },
};

/// `idempotent(…)`: the quotation create (Idempotency-Key, docs/conventions.md).
fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_task))
        .routes(idempotent(routes!(quotations::list_quotations, quotations::create_quotation)))
        .routes(routes!(quotations::get_quotation))
        .routes(routes!(quotations::accept_quotation))
        .routes(routes!(quotations::reject_quotation))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TaskPath {
    /// The task's UUID (hyphenated) or its numeric shortNumber
    #[param(inline, example = "1042")]
    identifier: TaskIdentifier,
}

/// Get a task
///
/// One task of a project the caller may access, with its estimate, hour rate and products.
/// `identifier` is the task's UUID or its numeric shortNumber.
#[utoipa::path(get, path = "/tasks/{identifier}", operation_id = "getTask", tag = "tasks", params(TaskPath),
    responses((status = 200, description = "The task", body = Task)))]
async fn get_task(State(state): State<AppState>, caller: Caller, Path(path): Path<TaskPath>) -> ApiResult<Json<Task>> {
    caller.authorize(Requirement::Member)?;
    let (task, project) = task::accessible(state.store(), caller.viewer(), path.identifier).await?;
    Ok(Json(task.to_response(&project.project)))
}
