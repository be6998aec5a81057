//! A potential invoice as the API returns it: its subscription rows, its tasks' time, its
//! manual positions and its imported products' charges (`workapi_domain::invoice_lines`).

use super::id::InvoiceType;
use crate::subscriptions::{BillingTiming, Payment};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use time::Date;
use uuid::Uuid;
use workapi_domain::billing::day;
pub use workapi_domain::invoice_lines::{PositionLine, ProductLine};
use workapi_domain::money;

/// A subscription row on a potential invoice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionLine {
    /// `subscription:<billingId>`: the same on every read; an issued invoice lists it
    pub line_id: String,
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
    "currency": "EUR", "subscriptions": [{"lineId": "subscription:3b2a1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d", "billingId": "3b2a1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d",
        "subscriptionBillingId": "7c6b5a49-3827-4165-9a4b-3c2d1e0f9a8b", "title": "Hosting",
        "periodStart": "2026-01-01", "periodEnd": "2026-03-31", "payment": "fixed", "billingTiming": "arrears",
        "defaultQuantity": 1, "quantity": 1, "customQuantity": false, "unitPrice": 300, "amount": 300}],
    "tasks": [], "positions": [], "products": [], "netTotal": 300})))]
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
    /// The project's manual positions not yet billed, in the month each was created (type
    /// time), by sort
    pub positions: Vec<PositionLine>,
    /// The imported catalog products' charges due in the month (type subscription): one-time
    /// prices in the month the product becomes active, recurring prices per period in the
    /// month the period starts
    pub products: Vec<ProductLine>,
    /// Sum of the amounts, before tax
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub net_total: Decimal,
    /// The version of the stored adjustments it was computed with (0: none stored): an
    /// `If-Match` write is conditioned on it, since the invoice itself is computed, not stored.
    #[serde(skip)]
    pub record_version: i64,
}
