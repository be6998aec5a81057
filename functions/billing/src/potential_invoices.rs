//! Potential invoices (spec §2.7, §4.8; docs/billing.md): what a project could be invoiced for
//! now, computed on every read from its subscription billings and its unbilled time by the
//! business clock, grouped by type and calendar month. What a client sets on one (billed
//! range, recipient, row quantities) is kept in a small record under the same id.
//!
//! Types: `subscription` (due subscription rows, in the month their period ends for arrears
//! or starts for advance) and `time` (unbilled time by the month it was booked, a task with an
//! accepted express quotation billed by the quotation instead).

use crate::subscriptions::{BillingTiming, Payment, SubscriptionBilling};
use crate::world::{self, UnbilledEntry};
use crate::{Success, periods};
use axum::Json;
use axum::extract::State;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::str::FromStr;
use time::Date;
use utoipa::IntoParams;
use uuid::Uuid;
use workapi_domain::billing::{self, IssuedInvoiceRecord, day};
use workapi_domain::identity::{self, UserKind};
use workapi_domain::permissions::{Requirement, key};
use workapi_domain::project::{self, AccessError, Project, ProjectScope};
use workapi_domain::quotation::{self as quotation_domain, ExpressQuotationRecord};
use workapi_domain::task::{self, TaskRecord};
use workapi_domain::{money, pricing};
use workapi_kit::entity::{self, Attempt, Entity, Versioned};
use workapi_kit::input::{At, Errors, Field, Input, Integer, Patch, SchemaRef};
use workapi_kit::request::{Body, Path, Query};
use workapi_kit::{ApiError, ApiResult, AppState, Caller};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Key, Store, query_all, read_all};
use workapi_wire::calendar;

/// Largest custom quantity of a row.
pub const MAX_CUSTOM_QUANTITY: i64 = 1_000_000;

const MANAGE: Requirement = Requirement::Permission(key::INVOICES_MANAGE);

/// What a potential invoice bills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum InvoiceType {
    /// Due subscription billing rows
    Subscription,
    /// Unbilled time, or the accepted express quotation that replaces a task's time
    Time,
}

impl InvoiceType {
    fn name(self) -> &'static str {
        match self {
            InvoiceType::Subscription => "subscription",
            InvoiceType::Time => "time",
        }
    }
}

/// The composite id `{type}::{projectId}::{dateFrom}::{dateTo}` (spec §2.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InvoiceId {
    pub kind: InvoiceType,
    pub project_id: Uuid,
    pub from: Date,
    pub to: Date,
}

/// The id's pattern, as documented: what [`InvoiceId::from_str`] accepts (besides the
/// calendar check of the dates and their order). The dates are `workapi_wire::calendar`'s
/// (`DATE_PATTERN`, tested to agree).
pub const ID_PATTERN: &str = "^(subscription|time)::[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}::(19[0-9]{2}|2[0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])::(19[0-9]{2}|2[0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$";

impl FromStr for InvoiceId {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        const INVALID: &str = "must be {type}::{projectId}::{dateFrom}::{dateTo} with type subscription or time, \
                               a project UUID and two dates (YYYY-MM-DD), dateFrom on or before dateTo";
        let parts: Vec<&str> = text.split("::").collect();
        let [kind, project, from, to] = parts[..] else {
            return Err(INVALID);
        };
        let kind = match kind {
            "subscription" => InvoiceType::Subscription,
            "time" => InvoiceType::Time,
            _ => return Err(INVALID),
        };
        if project.len() != 36 {
            return Err(INVALID);
        }
        let project_id = Uuid::parse_str(project).map_err(|_| INVALID)?;
        let (from, to) = (day::parse(from).ok_or(INVALID)?, day::parse(to).ok_or(INVALID)?);
        if to < from {
            return Err(INVALID);
        }
        Ok(InvoiceId { kind, project_id, from, to })
    }
}

impl fmt::Display for InvoiceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{}::{}::{}", self.kind.name(), self.project_id, day::text(self.from), day::text(self.to))
    }
}

impl<'de> Deserialize<'de> for InvoiceId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = InvoiceId;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a potential invoice id")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<InvoiceId, E> {
                text.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

impl utoipa::PartialSchema for InvoiceId {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new().schema_type(Type::String).pattern(Some(ID_PATTERN)).into()
    }
}

impl utoipa::ToSchema for InvoiceId {}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct InvoicePath {
    /// `{type}::{projectId}::{dateFrom}::{dateTo}`, URL-encoded
    #[param(inline, example = "subscription::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-03-01::2026-03-31")]
    id: InvoiceId,
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

/// A subscription row on a potential invoice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionLine {
    /// The row's id (`itemId` of the quantity operation)
    pub billing_id: Uuid,
    pub subscription_billing_id: Uuid,
    pub title: String,
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub period_start: Date,
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub period_end: Date,
    pub payment: Payment,
    pub billing_timing: BillingTiming,
    /// The row's own quantity
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub default_quantity: Decimal,
    /// The quantity billed: the custom one when set, else the default
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub quantity: Decimal,
    /// Whether a custom quantity is set on this potential invoice
    pub custom_quantity: bool,
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub unit_price: Decimal,
    /// unitPrice × quantity × the row's months ÷ frequency, rounded to the minor unit
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub amount: Decimal,
}

/// A task's unbilled time on a potential invoice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimeLine {
    pub task_id: Uuid,
    pub short_number: i64,
    pub title: String,
    /// Unbilled hours booked in the range
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub hours: Decimal,
    /// The task's hour rate (its own, else the project's)
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub hour_rate: Decimal,
    /// hours × hourRate; with an accepted quotation, its subTotal on the month of the task's
    /// first unbilled time and 0 elsewhere (or 0 once an issued invoice billed the task)
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub amount: Decimal,
    /// The accepted express quotation that replaces the time, if any
    #[schema(required)]
    pub express_quotation_id: Option<Uuid>,
}

/// A potential invoice (spec §2.7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "subscription::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-03-01::2026-03-31",
    "type": "subscription", "projectId": "5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e", "dateFrom": "2026-03-01",
    "dateTo": "2026-03-31", "billedFrom": "2026-03-01", "billedTo": "2026-03-31", "contactId": null,
    "currency": "EUR", "subscriptions": [{"billingId": "3b2a1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d",
        "subscriptionBillingId": "7c6b5a49-3827-4165-9a4b-3c2d1e0f9a8b", "title": "Hosting",
        "periodStart": "2026-01-01", "periodEnd": "2026-03-31", "payment": "fixed", "billingTiming": "arrears",
        "defaultQuantity": 1, "quantity": 1, "customQuantity": false, "unitPrice": 300, "amount": 300}],
    "tasks": [], "netTotal": 300})))]
pub struct PotentialInvoice {
    #[schema(value_type = String)]
    pub id: String,
    #[serde(rename = "type")]
    pub kind: InvoiceType,
    pub project_id: Uuid,
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub date_from: Date,
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub date_to: Date,
    /// The service range printed on the invoice: dateFrom unless set
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub billed_from: Date,
    /// dateTo unless set
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub billed_to: Date,
    /// The recipient, a contact of the project's customer; null when none is set
    #[schema(required)]
    pub contact_id: Option<Uuid>,
    pub currency: String,
    /// The due subscription rows (type subscription)
    pub subscriptions: Vec<SubscriptionLine>,
    /// The tasks' unbilled time (type time)
    pub tasks: Vec<TimeLine>,
    /// Sum of the amounts, before tax
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub net_total: Decimal,
}

/// What a client set on a potential invoice, kept under its id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PotentialInvoiceRecord {
    pub project_id: Uuid,
    pub kind: InvoiceType,
    #[serde(with = "day")]
    pub date_from: Date,
    #[serde(with = "day")]
    pub date_to: Date,
    #[serde(with = "day::option", default)]
    pub billed_from: Option<Date>,
    #[serde(with = "day::option", default)]
    pub billed_to: Option<Date>,
    #[serde(default)]
    pub contact_id: Option<Uuid>,
    /// Custom quantities by row id.
    #[serde(default)]
    pub quantities: BTreeMap<Uuid, i64>,
    pub version: i64,
}

impl PotentialInvoiceRecord {
    fn new(id: InvoiceId) -> Self {
        PotentialInvoiceRecord {
            project_id: id.project_id,
            kind: id.kind,
            date_from: id.from,
            date_to: id.to,
            billed_from: None,
            billed_to: None,
            contact_id: None,
            quantities: BTreeMap::new(),
            version: 0,
        }
    }

    fn id(&self) -> InvoiceId {
        InvoiceId { kind: self.kind, project_id: self.project_id, from: self.date_from, to: self.date_to }
    }
}

impl Entity for PotentialInvoiceRecord {
    const TYPE: &'static str = "PotentialInvoice";
    const PREFIX: &'static str = "PINV#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        record_key(keys, self.id())
    }
}

impl Versioned for PotentialInvoiceRecord {
    fn version(&self) -> i64 {
        self.version
    }
    fn set_version(&mut self, version: i64) {
        self.version = version;
    }
}

fn record_key(keys: WsKeys, id: InvoiceId) -> Key {
    project::project_item(
        (keys, id.project_id),
        format!("{}{}#{}#{}", PotentialInvoiceRecord::PREFIX, id.kind.name(), day::text(id.from), day::text(id.to)),
    )
}

/// Everything a project's potential invoices are computed from.
pub struct Inputs<'a> {
    pub project: &'a Project,
    pub today: Date,
    pub billings: &'a [SubscriptionBilling],
    pub unbilled: &'a [UnbilledEntry],
    pub tasks: &'a HashMap<Uuid, TaskRecord>,
    /// Accepted quotations by task.
    pub quotations: &'a HashMap<Uuid, ExpressQuotationRecord>,
    pub invoices: &'a [IssuedInvoiceRecord],
    pub records: &'a HashMap<InvoiceId, PotentialInvoiceRecord>,
}

/// The day a row becomes billable and the month whose invoice carries it.
pub fn due(timing: BillingTiming, period: periods::Period) -> (Date, periods::Period) {
    match timing {
        BillingTiming::Arrears => (period.end.next_day().unwrap_or(period.end), periods::month_of(period.end)),
        BillingTiming::Advance => (period.start, periods::month_of(period.start)),
    }
}

/// The project's potential invoices on `today`, by dateFrom then type: only non-empty ones.
pub fn compute(inputs: &Inputs) -> Vec<PotentialInvoice> {
    let minor = pricing::minor_units(&inputs.project.currency);
    let mut subscriptions: BTreeMap<(Date, Date), Vec<SubscriptionLine>> = BTreeMap::new();
    for billing in inputs.billings {
        for row in &billing.rows {
            let (due_on, month) =
                due(billing.billing_timing, periods::Period { start: row.period_start, end: row.period_end });
            let settled = inputs.invoices.iter().any(|i| i.date_from <= month.start && month.end <= i.date_to);
            if inputs.today < due_on || settled {
                continue;
            }
            let id = InvoiceId {
                kind: InvoiceType::Subscription,
                project_id: inputs.project.id,
                from: month.start,
                to: month.end,
            };
            let custom = inputs.records.get(&id).and_then(|r| r.quantities.get(&row.billing_id)).copied();
            let quantity = custom.map(Decimal::from).unwrap_or(row.quantity);
            let amount = crate::subscriptions::row_amount(
                row.unit_price,
                quantity,
                row.months,
                billing.frequency,
                billing.payment,
            );
            subscriptions.entry((month.start, month.end)).or_default().push(SubscriptionLine {
                billing_id: row.billing_id,
                subscription_billing_id: billing.id,
                title: billing.manual_title.clone(),
                period_start: row.period_start,
                period_end: row.period_end,
                payment: billing.payment,
                billing_timing: billing.billing_timing,
                default_quantity: row.quantity,
                quantity,
                custom_quantity: custom.is_some(),
                unit_price: row.unit_price,
                amount: pricing::round_amount(amount, minor),
            });
        }
    }
    // Time: hours per (month, task); a quotation's amount goes on the task's first month.
    let mut hours: BTreeMap<(Date, Uuid), Decimal> = BTreeMap::new();
    let mut first_month: HashMap<Uuid, Date> = HashMap::new();
    for u in inputs.unbilled.iter().filter(|u| u.entry.date <= inputs.today) {
        let month = periods::month_start(u.entry.date);
        *hours.entry((month, u.entry.task_id)).or_default() += u.entry.hours;
        let first = first_month.entry(u.entry.task_id).or_insert(month);
        *first = (*first).min(month);
    }
    let mut time: BTreeMap<Date, Vec<TimeLine>> = BTreeMap::new();
    for ((month, task_id), hours) in hours {
        let task = inputs.tasks.get(&task_id);
        let rate = task.map(|t| t.effective_hour_rate(inputs.project)).unwrap_or(inputs.project.hour_rate);
        let quotation = inputs.quotations.get(&task_id);
        let amount = match quotation {
            None => pricing::round_amount(hours * rate, minor),
            Some(q) => {
                let invoiced = inputs.invoices.iter().any(|i| i.task_ids.contains(&task_id));
                if !invoiced && first_month.get(&task_id) == Some(&month) { q.sub_total } else { Decimal::ZERO }
            }
        };
        time.entry(month).or_default().push(TimeLine {
            task_id,
            short_number: task.map(|t| t.short_number).unwrap_or_default(),
            title: task.map(|t| t.title.clone()).unwrap_or_default(),
            hours: hours.normalize(),
            hour_rate: rate,
            amount,
            express_quotation_id: quotation.map(|q| q.id),
        });
    }
    let mut all = Vec::new();
    for ((from, to), mut lines) in subscriptions {
        lines.sort_by(|a, b| (a.period_start, &a.title, a.billing_id).cmp(&(b.period_start, &b.title, b.billing_id)));
        let id = InvoiceId { kind: InvoiceType::Subscription, project_id: inputs.project.id, from, to };
        all.push(assemble(inputs, id, lines, Vec::new()));
    }
    for (from, mut lines) in time {
        lines.sort_by_key(|l| (l.short_number, l.task_id));
        let id =
            InvoiceId { kind: InvoiceType::Time, project_id: inputs.project.id, from, to: periods::month_end(from) };
        all.push(assemble(inputs, id, Vec::new(), lines));
    }
    all.sort_by_key(|i| (i.date_from, i.kind));
    all
}

fn assemble(
    inputs: &Inputs,
    id: InvoiceId,
    subscriptions: Vec<SubscriptionLine>,
    tasks: Vec<TimeLine>,
) -> PotentialInvoice {
    let record = inputs.records.get(&id);
    let net_total: Decimal =
        subscriptions.iter().map(|l| l.amount).sum::<Decimal>() + tasks.iter().map(|l| l.amount).sum::<Decimal>();
    PotentialInvoice {
        id: id.to_string(),
        kind: id.kind,
        project_id: id.project_id,
        date_from: id.from,
        date_to: id.to,
        billed_from: record.and_then(|r| r.billed_from).unwrap_or(id.from),
        billed_to: record.and_then(|r| r.billed_to).unwrap_or(id.to),
        contact_id: record.and_then(|r| r.contact_id),
        currency: inputs.project.currency.clone(),
        subscriptions,
        tasks,
        net_total: net_total.normalize(),
    }
}

/// Reads what a project's potential invoices are computed from, and computes them.
pub async fn for_project(store: &dyn Store, caller: &Caller, project: &Project) -> ApiResult<Vec<PotentialInvoice>> {
    let scope: ProjectScope = (caller.keys(), project.id);
    let (billings, unbilled, invoices, records) = tokio::join!(
        crate::subscriptions::list(store, scope),
        world::unbilled_time(store, scope),
        billing::issued_invoices(store, scope),
        records(store, scope),
    );
    let (billings, unbilled, invoices, records) = (billings?, unbilled?, invoices?, records?);
    // Each task of the unbilled time once, with its quotation: all read in one round trip.
    let mut guarded: BTreeMap<Uuid, Option<(Uuid, Uuid)>> = BTreeMap::new();
    for u in &unbilled {
        guarded.entry(u.entry.task_id).or_insert(u.quotation.as_ref().map(|g| (g.task_id, g.quotation_id)));
    }
    let mut tasks = HashMap::new();
    let mut quotations = HashMap::new();
    let reads = read_all(guarded, |(task_id, guard)| task_and_quotation(store, scope.0, task_id, guard)).await?;
    for (task, quotation) in reads {
        tasks.extend(task.map(|t| (t.id, t)));
        quotations.extend(quotation);
    }
    let inputs = Inputs {
        project,
        today: crate::business_today(caller),
        billings: &billings,
        unbilled: &unbilled,
        tasks: &tasks,
        quotations: &quotations,
        invoices: &invoices,
        records: &records,
    };
    Ok(compute(&inputs))
}

/// A task with unbilled time and, when its time is guarded by an accepted express quotation
/// (`(task, quotation)` ids), that quotation keyed by its task: read concurrently.
async fn task_and_quotation(
    store: &dyn Store,
    keys: WsKeys,
    task_id: Uuid,
    guard: Option<(Uuid, Uuid)>,
) -> ApiResult<(Option<TaskRecord>, Option<(Uuid, ExpressQuotationRecord)>)> {
    let quotation = async {
        match guard {
            Some((task_id, quotation_id)) => {
                let found = quotation_domain::get(store, (keys, task_id), quotation_id).await?;
                Ok::<_, ApiError>(found.map(|q| (task_id, q)))
            }
            None => Ok(None),
        }
    };
    let (task, quotation) = tokio::join!(task::get(store, keys, task_id), quotation);
    Ok((task?, quotation?))
}

async fn records(store: &dyn Store, scope: ProjectScope) -> ApiResult<HashMap<InvoiceId, PotentialInvoiceRecord>> {
    let query = workapi_store::Query::table(project::partition(scope)).begins_with(PotentialInvoiceRecord::PREFIX);
    let mut all = HashMap::new();
    for item in query_all(store, query).await? {
        let record: PotentialInvoiceRecord = entity::from_item(item)?;
        all.insert(record.id(), record);
    }
    Ok(all)
}

fn not_found() -> ApiError {
    ApiError::not_found("Potential invoice not found")
}

/// The potential invoice an id names, with its project: 404 when the project is not in the
/// caller's workspace or the invoice is not (or no longer) due, 403 without project access.
async fn find(store: &dyn Store, caller: &Caller, id: InvoiceId) -> ApiResult<(Project, PotentialInvoice)> {
    let project = match project::accessible(store, caller.viewer(), id.project_id).await {
        Ok(record) => record.project,
        Err(AccessError::NotFound(_)) => return Err(not_found()),
        Err(e) => return Err(e.into()),
    };
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
/// advance rows from its first day) and unbilled time (`time`; a task with an accepted express
/// quotation is billed by the quotation). Ordered by dateFrom, then type. `projectId` limits
/// the list to one project. Needs `Invoices.manage`.
#[utoipa::path(get, path = "/billing/potential-invoices", operation_id = "listPotentialInvoices", tag = "billing",
    params(InvoiceFilter),
    responses((status = 200, description = "The potential invoices", body = [PotentialInvoice])))]
pub async fn list_potential_invoices(
    State(state): State<AppState>,
    caller: Caller,
    Query(filter): Query<InvoiceFilter>,
) -> ApiResult<Json<Vec<PotentialInvoice>>> {
    caller.authorize(MANAGE)?;
    let store = state.store();
    let projects = match filter.project_id {
        Some(id) => vec![project::accessible(store, caller.viewer(), id).await?.project],
        None => project::list_accessible(store, caller.viewer()).await?,
    };
    let caller = &caller;
    let per_project = read_all(projects, |project| async move { for_project(store, caller, &project).await }).await?;
    let mut all: Vec<_> = per_project.into_iter().flatten().collect();
    all.sort_by_key(|i| (i.date_from, i.kind, i.project_id));
    Ok(Json(all))
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

/// A date, or an ISO 8601 timestamp whose calendar date (in its own offset) is taken; both in
/// the accepted range (`workapi_wire::calendar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateOrTimestamp(pub Date);

impl Field for DateOrTimestamp {
    fn read(value: &serde_json::Value, at: &At, errors: &mut Errors) -> Option<Self> {
        // A date alone is its midnight UTC, whose date is the date as written.
        let parsed = value.as_str().and_then(calendar::parse_instant).map(|t| DateOrTimestamp(t.date()));
        if parsed.is_none() {
            errors.add(at, format!("{} must be {}", at.name(), calendar::INSTANT_RANGE_TEXT));
        }
        parsed
    }

    fn schema() -> SchemaRef {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("A date (YYYY-MM-DD) or an ISO 8601 date-time, from 1900-01-01 to 2999-12-31"))
            .into()
    }
}

/// A partial update of a potential invoice (spec §4.8).
#[derive(Input)]
#[input(rules = patch_rules)]
#[input(example = serde_json::json!({"billedFrom": "2026-03-01", "billedTo": "2026-03-31T23:59:59Z",
    "contactId": "feba6268-1a6d-44ce-bd62-936a18e5d37a"}))]
pub struct PotentialInvoicePatchBody {
    /// Start of the billed range; null restores dateFrom
    billed_from: Patch<DateOrTimestamp>,
    /// End of the billed range, on or after billedFrom; null restores dateTo
    billed_to: Patch<DateOrTimestamp>,
    /// An active contact of the project's customer organization; null clears the recipient
    contact_id: Patch<Uuid>,
}

/// Both ends of the billed range given: billedTo on or after billedFrom (an end given alone is
/// checked against the stored one when written).
fn patch_rules(body: &PotentialInvoicePatchBodyFields, _at: &At, errors: &mut Errors) {
    if let (Some(Patch::Value(from)), Some(Patch::Value(to))) = (&body.billed_from, &body.billed_to)
        && to.0 < from.0
    {
        errors.fail("billedTo", "billedTo must be on or after billedFrom");
    }
}

/// Reads, changes and writes a potential invoice's record under optimistic concurrency.
async fn update_record(
    store: &dyn Store,
    keys: WsKeys,
    id: InvoiceId,
    change: impl Fn(&mut PotentialInvoiceRecord) -> ApiResult<()>,
) -> ApiResult<()> {
    let change = &change;
    entity::retry_on_conflict("The potential invoice is being changed concurrently; retry", |_| async move {
        let stored: Option<PotentialInvoiceRecord> = entity::get(store, &record_key(keys, id)).await?;
        let mut record = stored.unwrap_or_else(|| PotentialInvoiceRecord::new(id));
        change(&mut record)?;
        let read = record.version;
        record.version = read + 1;
        let cond = if read == 0 { Condition::NotExists } else { Condition::VersionEquals(read) };
        match store.put(entity::to_item(&record, keys)?, cond).await {
            Ok(()) => Ok(Attempt::Done(())),
            Err(e) if entity::is_conflict(&e) => Ok(Attempt::Conflict),
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// Update a potential invoice
///
/// Sets the billed range (`billedFrom`, `billedTo`: a date or an ISO timestamp) and the
/// recipient (`contactId`: an active contact of the project's customer organization, or null
/// to clear it; any other id is a 404). Omitted fields stay unchanged; null restores a date's
/// default (the invoice's own range). Needs `Invoices.manage` and access to the project.
#[utoipa::path(patch, path = "/billing/potential-invoices/{id}", operation_id = "updatePotentialInvoice",
    tag = "billing", params(InvoicePath), request_body = PotentialInvoicePatchBody,
    responses((status = 200, description = "Updated", body = Success,
        example = json!({"success": true}))))]
pub async fn update_potential_invoice(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<InvoicePath>,
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
    let (project, _) = found?;
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
    update_record(store, caller.keys(), path.id, |record| {
        record.billed_from = from.clone().apply(record.billed_from.map(DateOrTimestamp)).map(|d| d.0);
        record.billed_to = to.clone().apply(record.billed_to.map(DateOrTimestamp)).map(|d| d.0);
        record.contact_id = contact.clone().apply(record.contact_id);
        let (start, end) = (record.billed_from.unwrap_or(record.date_from), record.billed_to.unwrap_or(record.date_to));
        if end < start {
            return Err(ApiError::field("billedTo", "billedTo must be on or after billedFrom"));
        }
        Ok(())
    })
    .await?;
    Ok(Json(Success { success: true }))
}

/// A row's custom quantity (spec §4.8).
#[derive(Input)]
#[input(example = serde_json::json!({"value": 3}))]
pub struct QuantityBody {
    /// A non-negative integer; null or absent restores the row's own quantity
    value: Patch<Integer<0, MAX_CUSTOM_QUANTITY>>,
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
    update_record(store, caller.keys(), path.id, |record| {
        match value {
            Some(v) => record.quantities.insert(path.item_id, v),
            None => record.quantities.remove(&path.item_id),
        };
        Ok(())
    })
    .await?;
    Ok(Json(Success { success: true }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    #[test]
    fn ids_round_trip_and_malformed_ones_are_refused() {
        let text = "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-03-01::2026-03-31";
        let id: InvoiceId = text.parse().unwrap();
        assert_eq!((id.kind, id.from, id.to), (InvoiceType::Time, date!(2026 - 03 - 01), date!(2026 - 03 - 31)));
        assert_eq!(id.to_string(), text);
        for bad in [
            "",
            "time",
            "invoice::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-03-01::2026-03-31",
            "time::5d8e4c1a6b2f4e7a9c3d1f2a3b4c5d6e::2026-03-01::2026-03-31",
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-02-30::2026-03-31",
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-04-01::2026-03-31",
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-03-01::2026-03-31::x",
            "time:5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e:2026-03-01:2026-03-31",
            // Only the plain form in the calendar's range: no aliases of a valid id.
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::+2026-03-01::2026-03-31",
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::-0001-03-01::2026-03-31",
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::0000-03-01::2026-03-31",
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-03-01::3000-03-31",
        ] {
            assert!(bad.parse::<InvoiceId>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_documented_id_pattern_carries_the_calendar_date_pattern() {
        let date = workapi_wire::calendar::DATE_PATTERN.trim_start_matches('^').trim_end_matches('$');
        assert!(ID_PATTERN.ends_with(&format!("::{date}::{date}$")), "{ID_PATTERN}");
    }

    #[test]
    fn arrears_rows_are_due_after_their_period_and_advance_rows_from_its_first_day() {
        let q1 = periods::Period { start: date!(2026 - 01 - 01), end: date!(2026 - 03 - 31) };
        assert_eq!(due(BillingTiming::Arrears, q1), (date!(2026 - 04 - 01), periods::month_of(date!(2026 - 03 - 01))));
        assert_eq!(due(BillingTiming::Advance, q1), (date!(2026 - 01 - 01), periods::month_of(date!(2026 - 01 - 01))));
    }
}
