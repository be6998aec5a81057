//! Express quotations of a task (spec §2.3, §4.3; docs/tasks.md): create (items generated from
//! the task, amounts exact), list, get, and the decisions accept and reject.

use crate::TaskPath;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;
use workapi_domain::billing;
use workapi_domain::identity::{self, User, UserKind};
use workapi_domain::permissions::Requirement;
use workapi_domain::project::{Project, ProjectScope};
use workapi_domain::quotation::{
    self, AcceptedQuotationRecord, Decision, ExpressQuotation, ExpressQuotationRecord, QuotationStatus, Transition,
};
use workapi_domain::task::{self, TaskIdentifier, TaskScope};
use workapi_kit::entity::{self, Attempt};
use workapi_kit::events::{Event, types};
use workapi_kit::idempotency::{Answer, Idempotency};
use workapi_kit::input::{EditorText, Input, Language, Patch};
use workapi_kit::paging::{PageParams, Paged, Paging};
use workapi_kit::projection::{Projected, Projection};
use workapi_kit::request::{Body, Path};
use workapi_kit::{ApiError, ApiResult, AppState, Caller};
use workapi_richtext::Doc;
use workapi_store::clock;
use workapi_store::{Condition, Store, StoreError, TxOp};

/// The response of the [P] quotation operations (named, so the document can reference it).
pub type ExpressQuotationProjection = Projected<ExpressQuotation>;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
pub struct QuotationPath {
    /// The task's UUID (hyphenated) or its numeric shortNumber
    #[param(inline, example = "1042")]
    identifier: TaskIdentifier,
    /// The quotation's id (named for its resource, so link inference pairs it with the
    /// quotation's `id`, not an item's)
    #[param(example = "8e7d6c5b-4a39-4281-9f0e-1d2c3b4a5968")]
    express_quotation_id: Uuid,
}

/// A new express quotation (spec §4.3).
#[derive(Input)]
#[input(example = serde_json::json!({"contactUserId": "feba6268-1a6d-44ce-bd62-936a18e5d37a",
    "includeEstimate": true, "comment": "As discussed, the **fixed price** for the checkout.", "language": "de"}))]
pub struct NewExpressQuotationBody {
    /// The recipient: an active user of this workspace; a contact (organization member) must
    /// belong to the project's customer organization
    contact_user_id: Uuid,
    /// true adds the task's estimated work time as the first item, at the task's hour rate
    include_estimate: bool,
    /// HTML or Markdown; absent or null is empty
    comment: Patch<EditorText>,
    /// ISO 639-1; absent or null means the workspace default
    language: Patch<Language>,
}

/// Why a recipient cannot receive a quotation of this project (the 400's message).
pub fn check_contact(user: Option<&User>, project: &Project) -> Result<(), &'static str> {
    let Some(user) = user else {
        return Err("contactUserId: no such user in this workspace");
    };
    if !user.is_active {
        return Err("contactUserId: the user is deactivated");
    }
    if user.kind == UserKind::OrganizationMember && user.organization_id != project.customer_organization_id {
        return Err("contactUserId: the contact belongs to another organization than the project's customer");
    }
    Ok(())
}

/// Creates a quotation: numbered from the task's counter, its items generated and priced from
/// the task (`quotation::items_for`). Round trips: docs/tasks.md. `respond` turns the quotation
/// into the answer, which the quotation's put records (the idempotency completion; the number
/// counter's increment before it is an allocator, as ever).
async fn create(
    store: &dyn Store,
    caller: &Caller,
    identifier: TaskIdentifier,
    body: Body<NewExpressQuotationBody>,
    respond: impl FnOnce(&ExpressQuotation) -> ApiResult<Answer>,
) -> ApiResult<Answer> {
    // Quotations are the provider's offers: its employees make them, contacts receive them.
    let permit = caller.authorize(Requirement::Employee)?;
    let (task, project) = task::accessible(store, caller.viewer(), identifier).await?;
    let project = project.project;
    if !project.express_quotations_enabled {
        return Err(ApiError::forbidden(format!("Express quotations are disabled in the project {}", project.name)));
    }
    let mut body = body.check(&permit)?;
    if let Some(contact_user_id) = body.fields.contact_user_id {
        let contact = identity::get_user(store, caller.workspace_id, contact_user_id).await?;
        if let Err(message) = check_contact(contact.as_ref(), &project) {
            body.fail("contactUserId", message);
        }
    }
    if let Some(include) = body.fields.include_estimate
        && quotation::items_for(&task, &project, include).is_none()
    {
        body.fail("includeEstimate", "includeEstimate: the task has no estimated work time to include");
    }
    let body = body.finish()?;
    let (items, totals) = quotation::items_for(&task, &project, body.include_estimate)
        .ok_or_else(|| ApiError::internal("a checked quotation body without its items"))?;
    let scope: TaskScope = (caller.keys(), task.id);
    let last = async { Ok(quotation::list(store, scope).await?.iter().map(|q| q.short_number).max().unwrap_or(0)) };
    let short_number = entity::append_at_end(store, &quotation::number_counter(scope), last).await?;
    let now = clock::now_rfc3339();
    let record = ExpressQuotationRecord {
        id: Uuid::new_v4(),
        task_id: task.id,
        short_number,
        contact_user_id: body.contact_user_id,
        comment: body.comment.into_option().map(EditorText::into_doc).unwrap_or_else(Doc::empty),
        language: body.language.into_option().map(|l| l.code().to_owned()),
        status: QuotationStatus::Pending,
        status_changed_by: None,
        sent_at: None,
        currency: project.currency.clone(),
        sub_total: totals.sub_total,
        tax: project.tax_rate,
        tax_amount: totals.tax_amount,
        total: totals.total,
        created_at: now.clone(),
        updated_at: now,
        created_by: caller.user.id,
        items,
        version: 1,
    };
    let created = record.to_response();
    let event = Event::new(caller, types::EXPRESS_QUOTATION_CREATED, record.id).in_project(project.id);
    let answer = respond(&created)?.with_event(event.op(&created)?);
    entity::create(store, &record, caller.keys(), "Express quotation exists", answer.completion()).await?;
    Ok(answer)
}

/// Create an express quotation
///
/// Creates a Pending quotation for the task (`identifier`: its UUID or numeric shortNumber),
/// numbered sequentially per task from 1. Its items are generated from the task: with
/// `includeEstimate`, first the estimated work time (unit Hour) at the task's hour rate (else
/// the project's), then each task product with its options. Amounts are exact decimals, each
/// line and the tax rounded once to the currency's minor unit (docs/tasks.md). Needs an
/// employee of the workspace with access to the task's project, and express quotations
/// enabled in it.
#[utoipa::path(post, path = "/tasks/{identifier}/express-quotations", operation_id = "createExpressQuotation",
    tag = "tasks", params(TaskPath), request_body = NewExpressQuotationBody,
    responses((status = 201, description = "The new quotation, Pending", body = ExpressQuotationProjection)))]
pub async fn create_quotation(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<TaskPath>,
    idempotency: Idempotency,
    body: Body<NewExpressQuotationBody>,
) -> ApiResult<Answer> {
    let respond = |created: &ExpressQuotation| {
        idempotency.answer_resource(StatusCode::CREATED, created, &projection.project(created)?)
    };
    create(state.store(), &caller, path.identifier, body, respond).await
}

/// List a task's express quotations
///
/// Every quotation of the task, by shortNumber.
#[utoipa::path(get, path = "/tasks/{identifier}/express-quotations", operation_id = "listExpressQuotations",
    tag = "tasks", params(TaskPath, PageParams),
    responses((status = 200, description = "The task's quotations, by shortNumber", body = [ExpressQuotation])))]
pub async fn list_quotations(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<TaskPath>,
    paging: Paging,
) -> ApiResult<Paged<ExpressQuotation>> {
    caller.authorize(Requirement::Member)?;
    let (task, _) = task::accessible(state.store(), caller.viewer(), path.identifier).await?;
    let all = quotation::list(state.store(), (caller.keys(), task.id)).await?;
    paging.window(all, quotation::order)?.map(|q| q.to_response()).answer()
}

/// Get an express quotation
///
/// One quotation of the task.
#[utoipa::path(get, path = "/tasks/{identifier}/express-quotations/{expressQuotationId}",
    operation_id = "getExpressQuotation", tag = "tasks", params(QuotationPath),
    responses((status = 200, description = "The quotation", body = ExpressQuotation)))]
pub async fn get_quotation(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<QuotationPath>,
) -> ApiResult<Json<ExpressQuotation>> {
    caller.authorize(Requirement::Member)?;
    let (task, _) = task::accessible(state.store(), caller.viewer(), path.identifier).await?;
    let record = quotation::get(state.store(), (caller.keys(), task.id), path.express_quotation_id).await?;
    Ok(Json(record.ok_or_else(not_found)?.to_response()))
}

fn not_found() -> ApiError {
    ApiError::not_found("Express quotation not found")
}

/// Accept an express quotation
///
/// Pending → Accepted: the quotation replaces time-based billing for the task. At most one
/// quotation per task is Accepted: accepting another while one is gives 409 (reject that one
/// first). Accepting an Accepted quotation changes nothing; a Rejected one is final (409).
/// Needs access to the task's project; a contact (organization member) may decide only on
/// quotations addressed to them.
#[utoipa::path(post, path = "/tasks/{identifier}/express-quotations/{expressQuotationId}/accept",
    operation_id = "acceptExpressQuotation", tag = "tasks", params(QuotationPath),
    responses((status = 200, description = "The quotation, Accepted", body = ExpressQuotationProjection)))]
pub async fn accept_quotation(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<QuotationPath>,
) -> ApiResult<ExpressQuotationProjection> {
    projection.project(&decide(state.store(), &caller, path, Decision::Accept).await?)
}

/// Reject an express quotation
///
/// Pending → Rejected, or Accepted → Rejected (the acceptance is withdrawn, and another
/// quotation of the task may then be accepted). Rejecting a Rejected quotation changes nothing.
/// Needs access to the task's project; a contact (organization member) may decide only on
/// quotations addressed to them.
#[utoipa::path(post, path = "/tasks/{identifier}/express-quotations/{expressQuotationId}/reject",
    operation_id = "rejectExpressQuotation", tag = "tasks", params(QuotationPath),
    responses((status = 200, description = "The quotation, Rejected", body = ExpressQuotationProjection)))]
pub async fn reject_quotation(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<QuotationPath>,
) -> ApiResult<ExpressQuotationProjection> {
    projection.project(&decide(state.store(), &caller, path, Decision::Reject).await?)
}

/// Applies a decision: one transaction per change, retried after a lost race; the accept takes
/// the task's accepted-quotation guard (`NotExists`), the withdrawal releases it.
async fn decide(
    store: &dyn Store,
    caller: &Caller,
    path: QuotationPath,
    decision: Decision,
) -> ApiResult<ExpressQuotation> {
    caller.authorize(Requirement::Member)?;
    let (task, _) = task::accessible(store, caller.viewer(), path.identifier).await?;
    let scope: TaskScope = (caller.keys(), task.id);
    let quotation_id = path.express_quotation_id;
    let project_id = task.project_id;
    let busy = "The quotation is being decided concurrently; read it again and retry";
    let decided = entity::retry_on_conflict(busy, |_| async move {
        let mut record = quotation::get(store, scope, quotation_id).await?.ok_or_else(not_found)?;
        if caller.user.kind == UserKind::OrganizationMember && record.contact_user_id != caller.user.id {
            return Err(ApiError::forbidden("A contact may decide only on quotations addressed to them"));
        }
        let change = quotation::transition(record.status, decision).map_err(ApiError::conflict)?;
        if change == Transition::Unchanged {
            return Ok(Attempt::Done(record));
        }
        if change == Transition::Withdraw {
            refuse_if_invoiced(store, (scope.0, project_id), scope.1).await?;
        }
        let read = record.version;
        record.status =
            if decision == Decision::Accept { QuotationStatus::Accepted } else { QuotationStatus::Rejected };
        record.status_changed_by = Some(caller.user.id);
        record.updated_at = clock::now_rfc3339();
        record.version = read + 1;
        let write = TxOp::Put { item: entity::to_item(&record, caller.keys())?, cond: Condition::VersionEquals(read) };
        let guard =
            AcceptedQuotationRecord { task_id: scope.1, quotation_id: record.id, short_number: record.short_number };
        let event_type = match change {
            Transition::Accept => types::EXPRESS_QUOTATION_ACCEPTED,
            _ => types::EXPRESS_QUOTATION_REJECTED,
        };
        let event = Event::new(caller, event_type, record.id).in_project(project_id).op(&record.to_response())?;
        let mut ops = match change {
            Transition::Accept => {
                vec![write, TxOp::Put { item: entity::to_item(&guard, caller.keys())?, cond: Condition::NotExists }]
            }
            Transition::Withdraw => {
                vec![write, TxOp::Delete { key: quotation::accepted_key(scope), cond: Condition::Exists }]
            }
            Transition::Reject | Transition::Unchanged => vec![write],
        };
        ops.push(event);
        match store.transact(ops).await {
            Ok(()) => Ok(Attempt::Done(record)),
            // Only the guard failed: another quotation of the task is Accepted.
            Err(StoreError::TransactionCancelled { failed }) if failed == [1] && change == Transition::Accept => {
                Err(already_accepted(store, scope).await)
            }
            Err(e) if entity::is_conflict(&e) => Ok(Attempt::Conflict),
            Err(e) => Err(e.into()),
        }
    })
    .await?;
    Ok(decided.to_response())
}

/// An accepted quotation that an issued invoice has billed (the invoice lists its task) stays
/// Accepted: withdrawing it would un-bill what the customer was invoiced for (docs/tasks.md).
async fn refuse_if_invoiced(store: &dyn Store, project: ProjectScope, task_id: Uuid) -> ApiResult<()> {
    match billing::invoice_billing_task(store, project, task_id).await? {
        Some(invoice) => Err(ApiError::conflict(format!(
            "The quotation is billed by invoice {}; its acceptance cannot be withdrawn",
            invoice.number
        ))),
        None => Ok(()),
    }
}

/// The 409 of an accept while another quotation of the task is Accepted, naming it.
async fn already_accepted(store: &dyn Store, scope: TaskScope) -> ApiError {
    let holder = entity::get::<AcceptedQuotationRecord>(store, &quotation::accepted_key(scope)).await;
    match holder {
        Ok(Some(holder)) => ApiError::conflict(format!(
            "Quotation {} of this task is already accepted; reject it first",
            holder.short_number
        )),
        _ => ApiError::conflict("Another quotation of this task is already accepted; reject it first"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(customer: Option<Uuid>) -> Project {
        Project {
            id: Uuid::new_v4(),
            name: "P".into(),
            customer_organization_id: customer,
            express_quotations_enabled: true,
            hour_rate: Default::default(),
            currency: "EUR".into(),
            tax_rate: Default::default(),
        }
    }

    fn user(kind: UserKind, organization: Option<Uuid>, active: bool) -> User {
        User {
            id: Uuid::new_v4(),
            workspace_id: Uuid::new_v4(),
            email: "a@b.example".into(),
            name: "A".into(),
            role_id: "_staff".into(),
            kind,
            language: "en".into(),
            is_active: active,
            created_at: String::new(),
            organization_id: organization,
        }
    }

    #[test]
    fn recipients_are_active_users_and_contacts_of_the_projects_customer() {
        let customer = Uuid::new_v4();
        let p = project(Some(customer));
        assert!(check_contact(Some(&user(UserKind::OrganizationMember, Some(customer), true)), &p).is_ok());
        assert!(check_contact(Some(&user(UserKind::Employee, None, true)), &p).is_ok());
        let refused = [
            None,
            Some(user(UserKind::OrganizationMember, Some(customer), false)),
            Some(user(UserKind::OrganizationMember, Some(Uuid::new_v4()), true)),
            Some(user(UserKind::Employee, None, false)),
        ];
        for u in refused {
            assert!(check_contact(u.as_ref(), &p).unwrap_err().starts_with("contactUserId: "));
        }
        // An internal project has no customer: no contact is its customer's.
        let internal = project(None);
        assert!(check_contact(Some(&user(UserKind::OrganizationMember, Some(customer), true)), &internal).is_err());
    }
}
