//! Potential invoices (spec §2.7, §4.8; docs/billing.md): what a project could be invoiced for
//! now, computed on every read from its subscription billings and its unbilled time by the
//! business clock, grouped by type and calendar month. What a client sets on one (billed
//! range, recipient, row quantities) is kept in a small record under the same id.
//!
//! Types: `subscription` (due subscription rows, in the month their period ends for arrears
//! or starts for advance, and imported products' charges in the month they are due) and
//! `time` (unbilled time by the month it was booked, a task with an accepted express
//! quotation billed by the quotation instead, and manual positions by the month they were
//! created).
//!
//! Here the routes; the id in `id`, the answer in `model`, the computation in `compute`, its
//! reads in `read`, the client's settings in `record`, the request bodies in `body`.

mod body;
mod compute;
pub(crate) mod id;
pub(crate) mod model;
pub(crate) mod read;
pub(crate) mod record;

pub use record::{PotentialInvoiceRecord, PotentialInvoiceSettings};

use crate::Success;
use axum::Json;
use axum::extract::State;
use body::{DateOrTimestamp, PotentialInvoicePatchBody, QuantityBody};
use id::InvoiceId;
use model::PotentialInvoice;
use read::for_project;
use record::update_record;
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;
use workapi_domain::identity::{self, UserKind};
use workapi_domain::permissions::{Requirement, key};
use workapi_domain::project::Project;
use workapi_kit::conditional::{IfMatch, IfMatchParams};
use workapi_kit::events::{Event, types};
use workapi_kit::input::Patch;
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging};
use workapi_kit::request::{Body, Path, Query};
use workapi_kit::{ApiError, ApiResult, AppState, Caller};
use workapi_store::{Store, read_all};

const MANAGE: Requirement = Requirement::Permission(key::INVOICES_MANAGE);

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct InvoicePath {
    /// `{type}::{projectId}::{dateFrom}::{dateTo}`, URL-encoded
    #[param(inline, example = "subscription::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-03-01::2026-03-31")]
    pub(crate) id: InvoiceId,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
pub struct RowPath {
    /// `{type}::{projectId}::{dateFrom}::{dateTo}`, URL-encoded
    #[param(inline, example = "subscription::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-03-01::2026-03-31")]
    id: InvoiceId,
    /// The billingId of a subscription row of this potential invoice
    #[param(example = "3b2a1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d")]
    item_id: Uuid,
}

pub(crate) fn not_found() -> ApiError {
    ApiError::not_found("Potential invoice not found")
}

/// The potential invoice an id names, with its project: 404 when the project is not in the
/// caller's workspace or the invoice is not (or no longer) due, 403 without project access.
pub(crate) async fn find(store: &dyn Store, caller: &Caller, id: InvoiceId) -> ApiResult<(Project, PotentialInvoice)> {
    let project = crate::project_of(store, caller, id.project_id, not_found).await?;
    let text = id.to_string();
    let invoice = for_project(store, caller, &project).await?.into_iter().find(|i| i.id == text);
    Ok((project, invoice.ok_or_else(not_found)?))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceFilter {
    /// Only this project's potential invoices (404 when it does not exist)
    #[param(example = "5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e")]
    project_id: Option<Uuid>,
}

/// List potential invoices
///
/// What the caller's projects could be invoiced for now (by the business clock:
/// `LT_CUSTOM_NOW` in imposter mode), one potential invoice per project, type and calendar
/// month: due subscription rows (`subscription`; arrears rows once their period has ended,
/// advance rows from its first day) with the imported catalog products' charges (`products`:
/// one-time prices once active, recurring prices from each period's first day), and unbilled
/// time (`time`; a task with an accepted express quotation is billed by the quotation) with the
/// manual positions not yet billed (`positions`, in the month each was created). Every line
/// of a subscription row, position or product has a stable `lineId`; a line an invoice in force
/// lists (`POST …/issue`) no longer appears. Ordered by dateFrom, then type. `projectId` limits
/// the list to one project. Needs `Invoices.manage`.
#[utoipa::path(get, path = "/billing/potential-invoices", operation_id = "listPotentialInvoices", tag = "billing",
    params(InvoiceFilter, PageParams),
    responses((status = 200, description = "The potential invoices, by start date, type and project", body = [PotentialInvoice])))]
pub async fn list_potential_invoices(
    State(state): State<AppState>,
    caller: Caller,
    Query(filter): Query<InvoiceFilter>,
    paging: Paging,
) -> ApiResult<Paged<PotentialInvoice>> {
    caller.authorize(MANAGE)?;
    let store = state.store();
    let projects = crate::listed_projects(store, &caller, filter.project_id).await?;
    let caller = &caller;
    let per_project = read_all(projects, |project| async move { for_project(store, caller, &project).await }).await?;
    let order = |i: &PotentialInvoice| {
        OrderKey::new().text(i.date_from.to_string()).int(i.kind as i64).id(i.project_id).text(i.id.clone())
    };
    paging.window(per_project.into_iter().flatten(), order)?.answer()
}

/// Get a potential invoice
///
/// One potential invoice by its id `{type}::{projectId}::{dateFrom}::{dateTo}` (URL-encoded).
/// A malformed id is a 400; one that names nothing due now is a 404. Needs `Invoices.manage`
/// and access to the project.
#[utoipa::path(get, path = "/billing/potential-invoices/{id}", operation_id = "getPotentialInvoice", tag = "billing",
    params(InvoicePath),
    responses((status = 200, description = "The potential invoice", body = PotentialInvoice)))]
pub async fn get_potential_invoice(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<InvoicePath>,
) -> ApiResult<Json<PotentialInvoice>> {
    caller.authorize(MANAGE)?;
    Ok(Json(find(state.store(), &caller, path.id).await?.1))
}

/// Update a potential invoice
///
/// Sets the billed range (`billedFrom`, `billedTo`: a date or an ISO timestamp) and the
/// recipient (`contactId`: an active contact of the project's customer organization, or null
/// to clear it; any other id is a 404). Omitted fields stay unchanged; null restores a date's
/// default (the invoice's own range). Needs `Invoices.manage` and access to the project.
#[utoipa::path(patch, path = "/billing/potential-invoices/{id}", operation_id = "updatePotentialInvoice",
    tag = "billing", params(InvoicePath, IfMatchParams), request_body = PotentialInvoicePatchBody,
    responses((status = 200, description = "Updated", body = Success,
        example = json!({"success": true}))))]
pub async fn update_potential_invoice(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<InvoicePath>,
    if_match: IfMatch,
    body: Body<PotentialInvoicePatchBody>,
) -> ApiResult<Json<Success>> {
    let permit = caller.authorize(MANAGE)?;
    let store = state.store();
    // The body first (docs/billing.md: 400 before the lookups' 404s); then the recipient's read
    // beside the invoice's.
    let body = body.parse(&permit)?;
    let contact_read = async {
        match body.contact_id {
            Patch::Value(id) => identity::get_user(store, caller.workspace_id, id).await.map(Some),
            Patch::Absent | Patch::Null => Ok(None),
        }
    };
    let (found, contact) = tokio::join!(find(store, &caller, path.id), contact_read);
    let (project, invoice) = found?;
    if_match.check(&invoice)?;
    if let Some(user) = contact? {
        let valid = user.is_some_and(|u| {
            u.is_active
                && u.kind == UserKind::OrganizationMember
                && u.organization_id.is_some()
                && u.organization_id == project.customer_organization_id
        });
        if !valid {
            return Err(ApiError::not_found("Contact not found among the active contacts of the project's customer"));
        }
    }
    let (from, to, contact) = (body.billed_from, body.billed_to, body.contact_id);
    let change = |record: &mut PotentialInvoiceRecord| {
        if_match.check_version(invoice.record_version, record.version)?;
        record.billed_from = from.clone().apply(record.billed_from.map(DateOrTimestamp)).map(|d| d.0);
        record.billed_to = to.clone().apply(record.billed_to.map(DateOrTimestamp)).map(|d| d.0);
        record.contact_id = contact.clone().apply(record.contact_id);
        let (start, end) = (record.billed_from.unwrap_or(record.date_from), record.billed_to.unwrap_or(record.date_to));
        if end < start {
            return Err(ApiError::field("billedTo", "billedTo must be on or after billedFrom"));
        }
        Ok(())
    };
    update_record(store, caller.keys(), path.id, change, |settings| event(&caller, settings)).await?;
    Ok(Json(Success { success: true }))
}

/// The event of a change of a potential invoice's settings.
fn event(caller: &Caller, settings: &PotentialInvoiceSettings) -> ApiResult<workapi_kit::entity::Completion> {
    Event::new(caller, types::POTENTIAL_INVOICE_UPDATED, &settings.id)
        .in_project(settings.project_id)
        .completion(settings)
}

/// Set a subscription row's quantity
///
/// Sets the quantity billed for one subscription row (`itemId`, its billingId) on this
/// potential invoice only: the subscription billing keeps its own quantity. `value` null or
/// absent restores the row's quantity. A row that is not on this potential invoice is a 404.
/// Needs `Invoices.manage` and access to the project.
#[utoipa::path(post, path = "/billing/potential-invoices/{id}/subscriptions/{itemId}/quantity",
    operation_id = "setPotentialInvoiceQuantity", tag = "billing", params(RowPath), request_body = QuantityBody,
    responses((status = 200, description = "Updated", body = Success,
        example = json!({"success": true}))))]
pub async fn set_quantity(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<RowPath>,
    body: Body<QuantityBody>,
) -> ApiResult<Json<Success>> {
    let permit = caller.authorize(MANAGE)?;
    let store = state.store();
    // The body before the invoice and its row are looked up: 400 before 404 (docs/billing.md).
    let value = body.parse(&permit)?.value.into_option().map(|v| v.0);
    let (_, invoice) = find(store, &caller, path.id).await?;
    if !invoice.subscriptions.iter().any(|l| l.billing_id == path.item_id) {
        return Err(ApiError::not_found("Billing row not found on this potential invoice"));
    }
    let change = |record: &mut PotentialInvoiceRecord| {
        match value {
            Some(v) => record.quantities.insert(path.item_id, v),
            None => record.quantities.remove(&path.item_id),
        };
        Ok(())
    };
    update_record(store, caller.keys(), path.id, change, |settings| event(&caller, settings)).await?;
    Ok(Json(Success { success: true }))
}
