//! Issued invoices (docs/billing.md, "Issued invoices"): issuing a potential invoice, reading
//! the workspace's invoices and credit notes, and cancelling an invoice by a credit note.
//!
//! An issued invoice is one item (`INVOICE#<id>` in its project's partition, found by id in
//! the workspace's invoice index, GSI1) holding its lines and totals as issued and what it
//! billed. The potential invoices, the contingents' balances, the time entries' billed state
//! and the quotation guard are computed from the invoices in force, by the same functions as
//! for the seeded ones. Here the routes; the record and its write in `issue`, the answer in
//! `model`.

pub mod issue;
pub mod model;
pub mod page;

use crate::potential_invoices::{self, InvoicePath, read};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use issue::{Issuer, Written};
use model::{Invoice, InvoiceProjection};
use serde::Deserialize;
use std::collections::HashSet;
use time::Date;
use utoipa::IntoParams;
use uuid::Uuid;
use workapi_domain::billing::{self, DocumentKind, IssuedInvoiceRecord, day};
use workapi_domain::event::EventType;
use workapi_domain::identity::{self, UserKind};
use workapi_domain::organization;
use workapi_domain::permissions::{Requirement, key};
use workapi_domain::project::{self, Project};
use workapi_kit::conditional::{IfMatch, IfMatchParams};
use workapi_kit::entity::{self, Attempt};
use workapi_kit::events::{Event, types};
use workapi_kit::idempotency::{Answer, Idempotency};
use workapi_kit::negotiate::{self, Representation};
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging, StoreList};
use workapi_kit::projection::Projection;
use workapi_kit::request::{Path, Query};
use workapi_kit::{ApiError, ApiResult, AppState, Caller};
use workapi_store::{Condition, Query as StoreQuery, SortKey, Store, TxOp, Update};

const MANAGE: Requirement = Requirement::Permission(key::INVOICES_MANAGE);

fn invoice_not_found() -> ApiError {
    ApiError::not_found("Invoice not found")
}

fn issuer(caller: &Caller) -> Issuer {
    Issuer { user_id: caller.user.id, today: crate::business_today(caller), at: workapi_store::clock::now_rfc3339() }
}

/// The 201 of a numbered invoice or credit note, as its read answers it (projected), recorded
/// for its `Idempotency-Key` in the write's transaction.
/// Its event (`invoice.issued`, `invoice.cancelled`) is written in the same transaction.
fn answering<'a>(
    (caller, event_type, project_id): (&'a Caller, EventType, Uuid),
    idempotency: &'a Idempotency,
    projection: &'a Projection,
) -> impl Fn(&IssuedInvoiceRecord) -> ApiResult<Answer> + 'a {
    move |numbered| {
        let invoice = Invoice::from_record(numbered)?;
        let answer = idempotency.answer_resource(StatusCode::CREATED, &invoice, &projection.project(&invoice)?)?;
        let event = Event::new(caller, event_type, numbered.id).in_project(project_id).op(&invoice)?;
        Ok(answer.with_event(event))
    }
}

/// An attempt of a write beside whose conditions a concurrent change landed is re-run on a
/// fresh read.
fn written(outcome: ApiResult<Written<Answer>>) -> ApiResult<Attempt<Answer>> {
    Ok(match outcome? {
        Written::Done(answer) => Attempt::Done(answer),
        Written::Refused(_) => Attempt::Conflict,
    })
}

/// The 409 of a potential invoice issued already, naming the invoice.
fn already_issued(invoice: &IssuedInvoiceRecord) -> ApiError {
    ApiError::conflict(format!(
        "The potential invoice was issued as invoice {}; its lines are billed (cancel that invoice to issue them \
         again)",
        invoice.number
    ))
}

/// Issue a potential invoice
///
/// Freezes the potential invoice's lines and totals (with the project's tax rate) into an
/// invoice numbered by the workspace's sequence (1, 2, …: every number once, none skipped),
/// recording what it bills (its subscription rows, positions and products by line id, its
/// time entries, tasks and the support-contingent hours they draw), and answers it. All in
/// one transaction. Its lines no longer appear on potential invoices. Send the potential
/// invoice's `ETag` as `If-Match`: one changed since it was read is a 412, one issued already
/// a 409 naming the invoice. Needs `Invoices.manage` and access to the project.
#[utoipa::path(post, path = "/billing/potential-invoices/{id}/issue", operation_id = "issuePotentialInvoice",
    tag = "billing", params(InvoicePath, IfMatchParams),
    responses((status = 201, description = "The issued invoice", body = InvoiceProjection)))]
pub async fn issue_potential_invoice(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<InvoicePath>,
    if_match: IfMatch,
    idempotency: Idempotency,
) -> ApiResult<Answer> {
    caller.authorize(MANAGE)?;
    let store = state.store();
    let id = path.id;
    let project = crate::project_of(store, &caller, id.project_id, potential_invoices::not_found).await?;
    let scope = (caller.keys(), project.id);
    let issuer = issuer(&caller);
    let text = id.to_string();
    let busy = "The potential invoice is being issued concurrently; retry";
    entity::retry_on_conflict(busy, |_| async {
        let (world, contingents) =
            tokio::join!(read::world(store, &caller, &project), billing::support_contingents(store, scope));
        let (world, contingents) = (world?, contingents?);
        let issued = world
            .invoices
            .iter()
            .filter(|i| i.issue.as_ref().is_some_and(|x| x.potential_invoice_id.as_deref() == Some(text.as_str())))
            .max_by_key(|i| i.issue.as_ref().map(|x| x.sequence));
        let Some(potential) = world.potential.iter().find(|p| p.id == text) else {
            return Err(issued.map_or_else(potential_invoices::not_found, already_issued));
        };
        // A stale If-Match is the 412 of every conditional write, unless the change was this
        // potential invoice's issue: then the 409 naming the invoice.
        if let Err(changed) = if_match.check(potential) {
            return Err(issued.map_or(changed, already_issued));
        }
        let record = issue::record(&project, potential, &world.unbilled, &contingents, &issuer)?;
        let guard = issue::settings_guard(caller.keys(), id, world.records.get(&id), potential.record_version)?;
        // Issued or changed meanwhile: read again (then 409 or the changed invoice).
        let respond = answering((&caller, types::INVOICE_ISSUED, project.id), &idempotency, &projection);
        written(issue::write(store, caller.keys(), &record, vec![guard], respond).await)
    })
    .await
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceFilter {
    /// Only this project's invoices (404 when it does not exist)
    #[param(example = "5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e")]
    project_id: Option<Uuid>,
    /// Only invoices dated on or after this day (issuedOn; an invoice issued outside the API:
    /// its dateTo)
    #[serde(with = "day::option", default)]
    #[param(value_type = Option<String>, format = Date, example = "2026-04-01")]
    from: Option<Date>,
    /// Only invoices dated on or before this day
    #[serde(with = "day::option", default)]
    #[param(value_type = Option<String>, format = Date, example = "2026-04-30")]
    to: Option<Date>,
}

/// List invoices
///
/// The invoices and credit notes of the caller's projects (or of `projectId`), dated from
/// `from` to `to` (issuedOn), ordered by date, then number. Needs `Invoices.manage`.
#[utoipa::path(get, path = "/billing/invoices", operation_id = "listInvoices", tag = "billing",
    params(InvoiceFilter, PageParams),
    responses((status = 200, description = "The invoices, by date and number", body = [InvoiceProjection])))]
pub async fn list_invoices(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Query(filter): Query<InvoiceFilter>,
    paging: Paging,
) -> ApiResult<Paged<InvoiceProjection>> {
    caller.authorize(MANAGE)?;
    if let (Some(from), Some(to)) = (filter.from, filter.to)
        && from > to
    {
        return Err(ApiError::field("from", "from must not be after to"));
    }
    let store = state.store();
    let keys = caller.keys();
    // The projects whose invoices the caller sees: one (404 when absent), or, for a caller who
    // does not see every project, theirs; `None`: every project.
    let visible: Option<HashSet<Uuid>> = match filter.project_id {
        Some(id) => Some(HashSet::from([project::accessible(store, caller.viewer(), id).await?.project.id])),
        None => project::accessible_ids(store, caller.viewer()).await?,
    };
    // The workspace's invoice list (GSI2), read from the cursor on, skipping the projects not
    // listed (docs/billing.md, "Reading invoices").
    let list = StoreList {
        query: billing::invoice_list_query(keys, filter.from, filter.to),
        start_after: |after: &OrderKey| billing::invoice_list_start(keys, after),
        key: billing::invoice_order,
        // The frozen document of an invoice with many lines.
        largest_item: 64 * 1024,
    };
    let decode = |item| {
        let record: IssuedInvoiceRecord = entity::from_item(item)?;
        Ok(visible.as_ref().is_none_or(|ids| ids.contains(&record.project_id)).then_some(record))
    };
    let window = paging.window_from_store(store, list, decode).await?;
    let items =
        window.items.iter().map(|r| projection.project(&Invoice::from_record(r)?)).collect::<ApiResult<Vec<_>>>()?;
    window.rest.answer(items)
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct IssuedInvoicePath {
    /// Invoice (or credit note) id
    #[param(example = "4f1e2d3c-4b5a-4697-8877-665544332211")]
    id: Uuid,
}

/// An invoice of the caller's workspace by id, with its project: 404 when there is none (or
/// its project is not in the workspace), 403 without access to its project.
async fn find(store: &dyn Store, caller: &Caller, id: Uuid) -> ApiResult<(Project, IssuedInvoiceRecord)> {
    let query = StoreQuery::gsi1(billing::invoice_index(caller.keys())).sk(SortKey::Equals(id.to_string())).limit(1);
    let item = store.query(query).await?.items.into_iter().next().ok_or_else(invoice_not_found)?;
    let indexed: IssuedInvoiceRecord = entity::from_item(item)?;
    let project = crate::project_of(store, caller, indexed.project_id, invoice_not_found).await?;
    // The table's item, read strongly (the index is eventually consistent).
    let key = workapi_store::entity::Entity::key(&indexed, caller.keys());
    let record = entity::get::<IssuedInvoiceRecord>(store, &key).await?.ok_or_else(invoice_not_found)?;
    Ok((project, record))
}

/// Get an invoice
///
/// One invoice or credit note by id, with its lines and totals as issued, its recipient
/// (`contactId`) and what it billed. Needs `Invoices.manage` and access to the project.
///
/// Asked for HTML (an `Accept` that ranks `text/html` above `application/json`, a browser's),
/// the invoice as a page for a person: its number and dates, the recipient, the lines with
/// their discounts, net, tax and total in its currency; self-contained (no script, no request
/// elsewhere), `Cache-Control: private`. An `Accept` that takes neither JSON nor HTML is a 406.
#[utoipa::path(get, path = "/billing/invoices/{id}", operation_id = "getInvoice", tag = "billing",
    params(IssuedInvoicePath),
    responses(
        (status = 200, description = "The invoice; or, asked for HTML, its page", content(
            (InvoiceProjection = "application/json"),
            (String = "text/html", example = json!("<!doctype html>\n<html lang=\"en\">…<h1>Invoice <bdi>17</bdi></h1>…</html>\n")))),
        (status = 406, description = "The Accept header takes neither application/json nor text/html (the error body, {statusCode, message})",
            content_type = "application/json", body = Object)))]
pub async fn get_invoice(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<IssuedInvoicePath>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    caller.authorize(MANAGE)?;
    let representation = negotiate::json_or_html(&headers)?;
    let store = state.store();
    let (project, record) = find(store, &caller, path.id).await?;
    let invoice = Invoice::from_record(&record)?;
    let mut response = match representation {
        Representation::Json => projection.project(&invoice)?.into_response(),
        Representation::Html => invoice_page(store, &caller, &project, &record, &invoice).await?,
    };
    response.headers_mut().insert(header::VARY, HeaderValue::from_static("Accept"));
    Ok(response)
}

/// The invoice's page: what it shows beside the invoice (the workspace, the recipient, the
/// number of the invoice it cancels or of its credit note), read at once, then rendered.
async fn invoice_page(
    store: &dyn Store,
    caller: &Caller,
    project: &Project,
    record: &IssuedInvoiceRecord,
    invoice: &Invoice,
) -> ApiResult<Response> {
    let number_of = |id: Option<Uuid>| async move {
        match id {
            Some(id) => {
                Ok(entity::get::<IssuedInvoiceRecord>(store, &key_beside(caller, record, id)).await?.map(|i| i.number))
            }
            None => ApiResult::Ok(None),
        }
    };
    let (workspace, recipient, cancels, cancelled_by) = tokio::join!(
        identity::get_workspace(store, caller.workspace_id),
        recipient(store, caller, invoice.contact_id),
        number_of(invoice.cancels),
        number_of(invoice.cancelled_by),
    );
    let (workspace, recipient, cancels, cancelled_by) = (workspace?, recipient?, cancels?, cancelled_by?);
    let html = page::render(&page::InvoicePage {
        invoice,
        issuer: workspace.as_ref().map_or("", |w| w.name.as_str()),
        project: &project.name,
        recipient: recipient.as_ref(),
        cancels: cancels.as_deref(),
        cancelled_by: cancelled_by.as_deref(),
    });
    Ok(page::response(html))
}

/// The invoice's recipient as its contact reads now, with the contact's organization: the
/// invoice holds the contact by id (spec §4.8's `contactId`). None when it names none or the
/// contact is gone (or no longer a contact).
async fn recipient(store: &dyn Store, caller: &Caller, contact: Option<Uuid>) -> ApiResult<Option<page::Recipient>> {
    let Some(id) = contact else { return Ok(None) };
    let Some(user) = identity::get_user(store, caller.workspace_id, id).await? else { return Ok(None) };
    if user.kind != UserKind::OrganizationMember {
        return Ok(None);
    }
    let organization = match user.organization_id {
        Some(id) => organization::get(store, caller.keys(), id).await?.map(|o| o.name),
        None => None,
    };
    Ok(Some(page::Recipient { name: user.name, email: user.email, organization }))
}

/// Cancel an invoice
///
/// Issues a credit note that reverses the invoice (its totals negated) with the next number of
/// the workspace's sequence, and marks the invoice cancelled, in one transaction: what the
/// invoice billed (its lines, time entries and contingent hours) is free again and appears on
/// potential invoices. An invoice is cancelled once; a credit note cannot be cancelled (409).
/// Needs `Invoices.manage` and access to the project.
#[utoipa::path(post, path = "/billing/invoices/{id}/cancel", operation_id = "cancelInvoice", tag = "billing",
    params(IssuedInvoicePath),
    responses((status = 201, description = "The credit note", body = InvoiceProjection)))]
pub async fn cancel_invoice(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<IssuedInvoicePath>,
    idempotency: Idempotency,
) -> ApiResult<Answer> {
    caller.authorize(MANAGE)?;
    let store = state.store();
    let issuer = issuer(&caller);
    let busy = "The invoice is being cancelled concurrently; retry";
    entity::retry_on_conflict(busy, |_| async {
        let (project, invoice) = find(store, &caller, path.id).await?;
        if invoice.issue.as_ref().is_some_and(|i| i.kind == DocumentKind::CreditNote) {
            return Err(ApiError::conflict("A credit note cannot be cancelled"));
        }
        if let Some(note) = invoice.cancelled_by {
            let note = entity::get::<IssuedInvoiceRecord>(store, &key_beside(&caller, &invoice, note)).await?;
            let number = note.map(|n| n.number).unwrap_or_default();
            return Err(ApiError::conflict(format!("The invoice is cancelled already, by credit note {number}")));
        }
        let note = issue::credit_note(&invoice, &project.currency, &issuer)?;
        let mark = TxOp::Update {
            key: workapi_store::entity::Entity::key(&invoice, caller.keys()),
            update: Update::default().set("cancelledBy", note.id.to_string()),
            cond: Condition::All(vec![Condition::Exists, Condition::Lacks("cancelledBy".into())]),
        };
        // Cancelled meanwhile: read again (then 409).
        let respond = answering((&caller, types::INVOICE_CANCELLED, project.id), &idempotency, &projection);
        written(issue::write(store, caller.keys(), &note, vec![mark], respond).await)
    })
    .await
}

/// The key of the invoice or credit note `id` beside `invoice` (same project: a credit note
/// and the invoice it cancels).
fn key_beside(caller: &Caller, invoice: &IssuedInvoiceRecord, id: Uuid) -> workapi_store::Key {
    project::project_item(
        (caller.keys(), invoice.project_id),
        format!("{}{id}", <IssuedInvoiceRecord as workapi_store::entity::Entity>::PREFIX),
    )
}
