//! An issued invoice or credit note as the API returns it, and the document an issue freezes.

use crate::potential_invoices::model::{PositionLine, ProductLine, SubscriptionLine, TimeLine};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use time::Date;
use uuid::Uuid;
use workapi_domain::billing::{DocumentKind, IssuedInvoiceRecord, day};
use workapi_domain::money;
use workapi_kit::{ApiError, ApiResult};

/// The potential invoice as issued (its lines and totals), frozen in the invoice record
/// (`Issue::document`): a credit note holds no lines and the negated totals of the invoice it
/// cancels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuedDocument {
    #[serde(with = "day")]
    pub billed_from: Date,
    #[serde(with = "day")]
    pub billed_to: Date,
    pub contact_id: Option<Uuid>,
    pub currency: String,
    pub subscriptions: Vec<SubscriptionLine>,
    pub tasks: Vec<TimeLine>,
    pub positions: Vec<PositionLine>,
    pub products: Vec<ProductLine>,
    #[serde(with = "money")]
    pub net_total: Decimal,
    #[serde(with = "money")]
    pub tax_rate: Decimal,
    #[serde(with = "money")]
    pub tax: Decimal,
    #[serde(with = "money")]
    pub total: Decimal,
}

/// Hours an invoice drew from a support contingent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Consumption {
    pub contingent_id: Uuid,
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub hours: Decimal,
    /// The day the hours count on in the contingent's periods
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub date: Date,
}

/// An issued invoice or credit note (docs/billing.md, "Issued invoices"). Immutable once
/// issued, except `cancelledBy`. One issued outside the API (seeded) has no lines, totals or
/// recipient here: only its number, range and what it billed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "4f1e2d3c-4b5a-4697-8877-665544332211", "type": "invoice", "number": "17",
    "projectId": "5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e",
    "potentialInvoiceId": "subscription::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-03-01::2026-03-31",
    "dateFrom": "2026-03-01", "dateTo": "2026-03-31", "billedFrom": "2026-03-01", "billedTo": "2026-03-31",
    "contactId": null, "currency": "EUR", "subscriptions": [{"lineId": "subscription:3b2a1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d",
        "billingId": "3b2a1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d", "subscriptionBillingId": "7c6b5a49-3827-4165-9a4b-3c2d1e0f9a8b",
        "title": "Hosting", "periodStart": "2026-01-01", "periodEnd": "2026-03-31", "payment": "fixed",
        "billingTiming": "arrears", "defaultQuantity": 1, "quantity": 1, "customQuantity": false, "unitPrice": 300,
        "amount": 300}],
    "tasks": [], "positions": [], "products": [], "netTotal": 300, "taxRate": 19, "tax": 57, "total": 357,
    "lineIds": ["subscription:3b2a1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d"], "timeEntryIds": [], "taskIds": [],
    "consumed": [], "cancels": null, "cancelledBy": null, "issuedOn": "2026-04-02",
    "issuedAt": "2026-04-02T12:00:00.000Z"})))]
pub struct Invoice {
    pub id: Uuid,
    #[serde(rename = "type")]
    pub kind: DocumentKind,
    /// The workspace's next number when issued (1, 2, …; credit notes from the same sequence);
    /// an invoice issued outside the API keeps its own
    pub number: String,
    pub project_id: Uuid,
    /// The potential invoice it was issued from (a credit note: its invoice's); null when issued
    /// outside the API
    #[schema(required)]
    pub potential_invoice_id: Option<String>,
    /// The month (service range) it bills
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub date_from: Date,
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub date_to: Date,
    /// The service range printed on it (the potential invoice's billedFrom/billedTo)
    #[serde(with = "day::option")]
    #[schema(value_type = Option<String>, format = Date, required)]
    pub billed_from: Option<Date>,
    #[serde(with = "day::option")]
    #[schema(value_type = Option<String>, format = Date, required)]
    pub billed_to: Option<Date>,
    /// The recipient (spec §4.8's contactId): a contact of the project's customer, or null
    #[schema(required)]
    pub contact_id: Option<Uuid>,
    #[schema(required)]
    pub currency: Option<String>,
    pub subscriptions: Vec<SubscriptionLine>,
    pub tasks: Vec<TimeLine>,
    pub positions: Vec<PositionLine>,
    pub products: Vec<ProductLine>,
    /// Sum of the lines' amounts before tax (a credit note: the cancelled invoice's, negated)
    #[serde(with = "money::option")]
    #[schema(value_type = Option<f64>, required)]
    pub net_total: Option<Decimal>,
    /// The project's tax rate in percent when issued
    #[serde(with = "money::option")]
    #[schema(value_type = Option<f64>, required)]
    pub tax_rate: Option<Decimal>,
    /// netTotal × taxRate ÷ 100, rounded to the currency's minor unit
    #[serde(with = "money::option")]
    #[schema(value_type = Option<f64>, required)]
    pub tax: Option<Decimal>,
    /// netTotal + tax
    #[serde(with = "money::option")]
    #[schema(value_type = Option<f64>, required)]
    pub total: Option<Decimal>,
    /// The potential-invoice lines it billed (subscription rows, positions, products)
    pub line_ids: Vec<String>,
    /// The time entries it billed
    pub time_entry_ids: Vec<Uuid>,
    /// The tasks whose time it billed
    pub task_ids: Vec<Uuid>,
    /// The support-contingent hours it drew
    pub consumed: Vec<Consumption>,
    /// A credit note: the invoice it cancels
    #[schema(required)]
    pub cancels: Option<Uuid>,
    /// The credit note that cancelled it; a cancelled invoice bills nothing
    #[schema(required)]
    pub cancelled_by: Option<Uuid>,
    /// The business date it was issued on; null when issued outside the API
    #[serde(with = "day::option")]
    #[schema(value_type = Option<String>, format = Date, required)]
    pub issued_on: Option<Date>,
    #[schema(format = DateTime, required)]
    pub issued_at: Option<String>,
}

impl workapi_kit::projection::Compact for Invoice {
    const COMPACT: &'static [&'static str] = &["id", "type", "number", "projectId", "issuedOn", "total"];
}

pub type InvoiceProjection = workapi_kit::projection::Projected<Invoice>;

impl Invoice {
    pub fn from_record(record: &IssuedInvoiceRecord) -> ApiResult<Invoice> {
        let document = match &record.issue {
            Some(issue) => {
                Some(serde_json::from_value::<IssuedDocument>(issue.document.clone()).map_err(ApiError::internal)?)
            }
            None => None,
        };
        let issue = record.issue.as_ref();
        let d = document.as_ref();
        Ok(Invoice {
            id: record.id,
            kind: issue.map_or(DocumentKind::Invoice, |i| i.kind),
            number: record.number.clone(),
            project_id: record.project_id,
            potential_invoice_id: issue.and_then(|i| i.potential_invoice_id.clone()),
            date_from: record.date_from,
            date_to: record.date_to,
            billed_from: d.map(|d| d.billed_from),
            billed_to: d.map(|d| d.billed_to),
            contact_id: d.and_then(|d| d.contact_id),
            currency: d.map(|d| d.currency.clone()),
            subscriptions: d.map(|d| d.subscriptions.clone()).unwrap_or_default(),
            tasks: d.map(|d| d.tasks.clone()).unwrap_or_default(),
            positions: d.map(|d| d.positions.clone()).unwrap_or_default(),
            products: d.map(|d| d.products.clone()).unwrap_or_default(),
            net_total: d.map(|d| d.net_total),
            tax_rate: d.map(|d| d.tax_rate),
            tax: d.map(|d| d.tax),
            total: d.map(|d| d.total),
            line_ids: record.line_ids.clone(),
            time_entry_ids: issue.map(|i| i.time_entry_ids.clone()).unwrap_or_default(),
            task_ids: record.task_ids.clone(),
            consumed: record
                .consumed
                .iter()
                .map(|c| Consumption { contingent_id: c.contingent_id, hours: c.hours, date: c.day(record) })
                .collect(),
            cancels: issue.and_then(|i| i.cancels),
            cancelled_by: record.cancelled_by,
            issued_on: issue.map(|i| i.issued_on),
            issued_at: issue.map(|i| i.issued_at.clone()),
        })
    }
}
