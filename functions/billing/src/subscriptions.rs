//! Subscription billings (spec §4.8, docs/billing.md): a recurring charge of a project and its
//! billing rows, one per period (`periods::billing_periods`). The billing and all its rows are
//! one item, written once with `NotExists`: a failure leaves nothing, a retry with the same
//! `Idempotency-Key` replays the first answer.

use crate::ProjectPath;
use crate::periods::{self, BillingPeriod, MAX_BILLING_MONTHS};
use axum::extract::State;
use axum::http::StatusCode;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use time::Date;
use uuid::Uuid;
use workapi_domain::billing::day;
use workapi_domain::money;
use workapi_domain::permissions::{Requirement, key};
use workapi_domain::pricing;
use workapi_domain::project::{self, ProjectScope};
use workapi_kit::entity::{self, Entity};
use workapi_kit::events::{Event, types};
use workapi_kit::idempotency::{Answer, Idempotency};
use workapi_kit::input::{self, At, DateOnly, Errors, Input, Integer, Text};
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging};
use workapi_kit::request::{Body, Path};
use workapi_kit::{ApiResult, AppState, Caller};
use workapi_store::clock;
use workapi_store::keys::WsKeys;
use workapi_store::{Key, Query, Store, query_all};

/// Largest price per unit and largest quantity.
pub const MAX_PRICE: i64 = 1_000_000_000;
pub const MAX_QUANTITY: i64 = 1_000_000;

/// How a subscription is charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Payment {
    /// A fixed amount per period: price × quantity (quantity default 1)
    Fixed,
    /// Per unit and period: price × quantity, the quantity adjustable per potential invoice
    PerUnit,
    /// Once: one row, for the first period, price × quantity
    OneTime,
}
workapi_wire::closed_enum!(Payment);

/// When a row becomes billable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum BillingTiming {
    /// After its period ends (the default)
    #[default]
    Arrears,
    /// From the first day of its period
    Advance,
}
workapi_wire::closed_enum!(BillingTiming);

/// Where the billing comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum SubscriptionType {
    /// Entered by hand (the default)
    #[default]
    Manual,
    /// Linked to a catalog item
    Product,
}
workapi_wire::closed_enum!(SubscriptionType);

/// One billing row: one period of the subscription.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"billingId": "3b2a1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d", "periodStart": "2026-01-01",
    "periodEnd": "2026-03-31", "months": 3, "quantity": 1, "unitPrice": 300, "amount": 300})))]
pub struct BillingRow {
    /// The row's id (`itemId` of the potential-invoice quantity operation)
    pub billing_id: Uuid,
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub period_start: Date,
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub period_end: Date,
    /// Whole months of the period: the frequency, fewer for a shorter last period
    pub months: u32,
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub quantity: Decimal,
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub unit_price: Decimal,
    /// unitPrice × quantity × months ÷ frequency, rounded to the currency's minor unit
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub amount: Decimal,
}

/// A subscription billing with its rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "7c6b5a49-3827-4165-9a4b-3c2d1e0f9a8b", "projectId": "5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e",
    "manualTitle": "Hosting", "fromDate": "2026-01-15", "toDate": "2026-06-30", "frequency": 3, "payment": "fixed",
    "price": 300, "quantity": 1, "billingTiming": "arrears", "type": "manual", "currency": "EUR",
    "createdAt": "2026-01-10T09:00:00.000Z", "createdBy": "2f6b1c9e-8d4a-4e3b-9c7f-5a1d2e3f4b5c",
    "rows": [{"billingId": "3b2a1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d", "periodStart": "2026-01-01",
        "periodEnd": "2026-03-31", "months": 3, "quantity": 1, "unitPrice": 300, "amount": 300},
        {"billingId": "4c3b2a1d-0f9e-4b8a-9d7c-6f5e4d3c2b1a", "periodStart": "2026-04-01",
        "periodEnd": "2026-06-30", "months": 3, "quantity": 1, "unitPrice": 300, "amount": 300}]})))]
pub struct SubscriptionBilling {
    pub id: Uuid,
    pub project_id: Uuid,
    pub manual_title: String,
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub from_date: Date,
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub to_date: Date,
    /// Months per period, 1 to 12
    pub frequency: u32,
    pub payment: Payment,
    /// Price per unit and period
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub price: Decimal,
    /// The quantity given, 1 when none was
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub quantity: Decimal,
    pub billing_timing: BillingTiming,
    #[serde(rename = "type")]
    pub subscription_type: SubscriptionType,
    /// The project's currency
    pub currency: String,
    #[schema(format = DateTime)]
    pub created_at: String,
    pub created_by: Uuid,
    /// By period
    pub rows: Vec<BillingRow>,
}

/// The stored billing: the response's fields (rows inside, so it is written whole).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionBillingRecord {
    #[serde(flatten)]
    pub billing: SubscriptionBilling,
}

impl Entity for SubscriptionBillingRecord {
    const TYPE: &'static str = "SubscriptionBilling";
    const PREFIX: &'static str = "SUBBILL#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        project::project_item((keys, self.billing.project_id), format!("{}{}", Self::PREFIX, self.billing.id))
    }
}

/// A billing's place in the project's list: by creation, then id.
pub fn order(billing: &SubscriptionBilling) -> OrderKey {
    OrderKey::new().text(billing.created_at.clone()).id(billing.id)
}

/// A project's subscription billings, by creation (then id).
pub async fn list(store: &dyn Store, scope: ProjectScope) -> ApiResult<Vec<SubscriptionBilling>> {
    let query = Query::table(project::partition(scope)).begins_with(SubscriptionBillingRecord::PREFIX);
    let mut all = query_all(store, query)
        .await?
        .into_iter()
        .map(|i| entity::from_item::<SubscriptionBillingRecord>(i).map(|r| r.billing))
        .collect::<Result<Vec<_>, _>>()?;
    all.sort_by_cached_key(order);
    Ok(all)
}

/// A new subscription billing (spec §4.8).
#[derive(Input)]
#[input(rules = billing_rules)]
#[input(example = serde_json::json!({"manualTitle": "Hosting", "fromDate": "2026-01-15", "toDate": "2026-12-31",
    "frequency": 3, "payment": "fixed", "price": 300, "billingTiming": "arrears", "type": "manual"}))]
pub struct NewSubscriptionBillingBody {
    /// Shown on invoices
    manual_title: Text<1, 200>,
    /// Rows start on the first day of this month
    from_date: DateOnly,
    /// On or after fromDate, at most 120 months spanned; rows run to the last day of this month
    to_date: DateOnly,
    /// Months per period: 1 monthly, 3 quarterly, 6 semi-annual, 12 yearly
    frequency: Integer<1, 12>,
    payment: Payment,
    /// Above 0, at most two decimal places
    price: input::PositiveDecimal<MAX_PRICE, 2>,
    /// Above 0; required for oneTime, default 1 otherwise
    quantity: Option<input::PositiveDecimal<MAX_QUANTITY, 2>>,
    /// Default arrears
    billing_timing: Option<BillingTiming>,
    /// Default manual
    #[input(rename = "type")]
    subscription_type: Option<SubscriptionType>,
}

/// What a create stores, validated: the rules the fields cannot check alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub manual_title: String,
    pub from_date: Date,
    pub to_date: Date,
    pub frequency: u32,
    pub payment: Payment,
    pub price: Decimal,
    pub quantity: Decimal,
    pub billing_timing: BillingTiming,
    pub subscription_type: SubscriptionType,
}

/// The rules the fields cannot check alone, on the fields that parsed (a field that failed is
/// reported once, as malformed): reported with every other failing field in one 400.
fn billing_rules(body: &NewSubscriptionBillingBodyFields, _at: &At, errors: &mut Errors) {
    if let (Some(from), Some(to)) = (&body.from_date, &body.to_date) {
        if to.0 < from.0 {
            errors.fail("toDate", "toDate must be on or after fromDate");
        } else if periods::months_spanned(from.0, to.0) > MAX_BILLING_MONTHS {
            errors.fail("toDate", format!("toDate: the range may span at most {MAX_BILLING_MONTHS} months"));
        }
    }
    if let (Some(None), Some(Payment::OneTime)) = (&body.quantity, &body.payment) {
        errors.fail("quantity", "quantity is required for a oneTime payment");
    }
}

/// What a valid body stores, defaults applied.
pub fn draft(body: NewSubscriptionBillingBody) -> Draft {
    Draft {
        manual_title: body.manual_title.into_string(),
        from_date: body.from_date.0,
        to_date: body.to_date.0,
        frequency: body.frequency.0 as u32,
        payment: body.payment,
        price: body.price.0,
        quantity: body.quantity.map_or(Decimal::ONE, |q| q.0),
        billing_timing: body.billing_timing.unwrap_or_default(),
        subscription_type: body.subscription_type.unwrap_or_default(),
    }
}

/// A row's amount: unit price × quantity, prorated by the months of a shorter last period
/// (a oneTime row is never prorated), rounded once to the currency's minor unit.
pub fn row_amount(price: Decimal, quantity: Decimal, months: u32, frequency: u32, payment: Payment) -> Decimal {
    let full = price * quantity;
    if payment == Payment::OneTime { full } else { pricing::prorate(full, months, frequency) }
}

/// The rows of a draft: one per period, or one for the first period of a oneTime payment.
pub fn rows(draft: &Draft, minor_units: u32) -> Vec<BillingRow> {
    let mut periods: Vec<BillingPeriod> = periods::billing_periods(draft.from_date, draft.to_date, draft.frequency);
    if draft.payment == Payment::OneTime {
        periods.truncate(1);
    }
    periods
        .into_iter()
        .map(|p| BillingRow {
            billing_id: Uuid::new_v4(),
            period_start: p.period.start,
            period_end: p.period.end,
            months: p.months,
            quantity: draft.quantity,
            unit_price: draft.price,
            amount: pricing::round_amount(
                row_amount(draft.price, draft.quantity, p.months, draft.frequency, draft.payment),
                minor_units,
            ),
        })
        .collect()
}

/// Create a subscription billing
///
/// Creates a recurring billing item of the project and its billing rows: one per period of
/// `frequency` months from the first day of `fromDate`'s month to the last day of `toDate`'s
/// month (a shorter last period is prorated by its months; a oneTime payment has one row, for
/// the first period). The billing and its rows are written together or not at all. Needs
/// `Projects.edit`, `Invoices.manage` and access to the project (a project the caller cannot
/// access is a 404).
#[utoipa::path(post, path = "/projects/{projectId}/subscription-billings", operation_id = "createSubscriptionBilling",
    tag = "billing", params(ProjectPath), request_body = NewSubscriptionBillingBody,
    responses((status = 201, description = "Created", body = crate::Success,
        example = json!({"success": true}))))]
pub async fn create_subscription_billing(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<ProjectPath>,
    idempotency: Idempotency,
    body: Body<NewSubscriptionBillingBody>,
) -> ApiResult<Answer> {
    caller.authorize(Requirement::Permission(key::PROJECTS_EDIT))?;
    let permit = caller.authorize(Requirement::Permission(key::INVOICES_MANAGE))?;
    let store = state.store();
    // The body before the project's read: a malformed body is a 400 whatever the project.
    let draft = draft(body.parse(&permit)?);
    let project = crate::project_or_404(store, &caller, path.project_id).await?;
    let rows = rows(&draft, pricing::minor_units(&project.currency));
    let record = SubscriptionBillingRecord {
        billing: SubscriptionBilling {
            id: Uuid::new_v4(),
            project_id: project.id,
            manual_title: draft.manual_title,
            from_date: draft.from_date,
            to_date: draft.to_date,
            frequency: draft.frequency,
            payment: draft.payment,
            price: draft.price,
            quantity: draft.quantity,
            billing_timing: draft.billing_timing,
            subscription_type: draft.subscription_type,
            currency: project.currency.clone(),
            created_at: clock::now_rfc3339(),
            created_by: caller.user.id,
            rows,
        },
    };
    let event = Event::new(&caller, types::SUBSCRIPTION_BILLING_CREATED, record.billing.id).in_project(project.id);
    let answer = idempotency.answer(StatusCode::CREATED, None, &crate::Success { success: true })?;
    let answer = answer.with_event(event.op(&record.billing)?);
    entity::create(store, &record, caller.keys(), "Subscription billing exists", answer.completion()).await?;
    Ok(answer)
}

/// List a project's subscription billings
///
/// Every subscription billing of the project with its rows, oldest first.
#[utoipa::path(get, path = "/projects/{projectId}/subscription-billings", operation_id = "listSubscriptionBillings",
    tag = "billing", params(ProjectPath, PageParams),
    responses((status = 200, description = "The project's subscription billings, by creation", body = [SubscriptionBilling])))]
pub async fn list_subscription_billings(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<ProjectPath>,
    paging: Paging,
) -> ApiResult<Paged<SubscriptionBilling>> {
    caller.authorize(Requirement::Member)?;
    let record = project::accessible(state.store(), caller.viewer(), path.project_id).await?;
    paging.window(list(state.store(), (caller.keys(), record.project.id)).await?, order)?.answer()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use time::macros::date;

    fn parse(v: serde_json::Value) -> ApiResult<Draft> {
        workapi_kit::input::parse::<NewSubscriptionBillingBody>(&v).map(draft)
    }

    fn failing(v: serde_json::Value) -> Vec<String> {
        parse(v).unwrap_err().errors.unwrap().into_keys().collect()
    }

    fn body() -> serde_json::Value {
        json!({"manualTitle": "Hosting", "fromDate": "2026-01-15", "toDate": "2026-07-10", "frequency": 3,
               "payment": "fixed", "price": 300})
    }

    #[test]
    fn defaults_and_every_rule_naming_its_field() {
        let d = parse(body()).unwrap();
        assert_eq!(
            (d.quantity, d.billing_timing, d.subscription_type),
            (Decimal::ONE, BillingTiming::Arrears, SubscriptionType::Manual)
        );
        let with = |k: &str, v: serde_json::Value| {
            let mut b = body();
            b[k] = v;
            b
        };
        assert_eq!(failing(with("toDate", json!("2026-01-14"))), ["toDate"]);
        assert_eq!(failing(with("toDate", json!("2036-01-01"))), ["toDate"], "121 months");
        assert!(parse(with("toDate", json!("2035-12-31"))).is_ok(), "120 months");
        assert_eq!(failing(with("frequency", json!(0))), ["frequency"]);
        assert_eq!(failing(with("frequency", json!(13))), ["frequency"]);
        assert_eq!(failing(with("price", json!(0))), ["price"]);
        assert_eq!(failing(with("price", json!(-1))), ["price"]);
        assert_eq!(failing(with("payment", json!("monthly"))), ["payment"]);
        assert_eq!(failing(with("payment", json!("oneTime"))), ["quantity"]);
        assert_eq!(failing(with("quantity", json!(0))), ["quantity"]);
        assert_eq!(failing(with("billingTiming", json!("later"))), ["billingTiming"]);
        assert_eq!(failing(with("type", json!("service"))), ["type"]);
        assert_eq!(failing(with("fromDate", json!("2026-02-30"))), ["fromDate"]);
        assert_eq!(failing(json!({})).len(), 6, "manualTitle, fromDate, toDate, frequency, payment, price");
        // Type errors and the rules across fields in one 400 (issue 31).
        let mut broken = with("frequency", json!(13));
        broken["price"] = json!(0);
        broken["toDate"] = json!("2026-01-01");
        assert_eq!(failing(broken.clone()), ["frequency", "price", "toDate"]);
        broken["price"] = json!(-5);
        assert_eq!(failing(broken), ["frequency", "price", "toDate"]);
        // A date outside the calendar's range fails as a date; the range rule then stays silent.
        assert_eq!(failing(with("toDate", json!("+2026-07-10"))), ["toDate"]);
        assert_eq!(failing(with("fromDate", json!("0000-01-01"))), ["fromDate"]);
        let mut one_time = with("payment", json!("oneTime"));
        one_time["quantity"] = json!(-1);
        assert_eq!(failing(one_time), ["quantity"]);
    }

    #[test]
    fn rows_cover_the_months_and_prorate_a_shorter_last_period() {
        let d = parse(body()).unwrap();
        let rows = rows(&d, 2);
        let summary: Vec<_> = rows.iter().map(|r| (r.period_start, r.period_end, r.months, r.amount)).collect();
        assert_eq!(
            summary,
            [
                (date!(2026 - 01 - 01), date!(2026 - 03 - 31), 3, Decimal::from(300)),
                (date!(2026 - 04 - 01), date!(2026 - 06 - 30), 3, Decimal::from(300)),
                (date!(2026 - 07 - 01), date!(2026 - 07 - 31), 1, Decimal::from(100)),
            ]
        );
        // 99.99 × 2.5 × 2/3 = 166.65
        assert_eq!(
            row_amount(Decimal::new(9999, 2), Decimal::new(25, 1), 2, 3, Payment::PerUnit).round_dp(2),
            Decimal::new(16665, 2)
        );
        // 100 × 1 / 3 = 33.333… → 33.33 once rounded
        let third = pricing::round_amount(row_amount(Decimal::from(100), Decimal::ONE, 1, 3, Payment::Fixed), 2);
        assert_eq!(third, Decimal::new(3333, 2));
        let mut one = d.clone();
        one.payment = Payment::OneTime;
        one.quantity = Decimal::from(4);
        let rows = super::rows(&one, 2);
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].months, rows[0].amount), (3, Decimal::from(1200)));
    }
}
