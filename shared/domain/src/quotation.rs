//! Express quotations (spec §2.3): the record, how its items are generated from a task, and the
//! rule of its decisions. Written by the tasks function; billing reads the accepted one.
//!
//! Keys, all in the task's partition `WS#<ws>#TASK#<taskId>` (docs/data-model.md): the
//! quotations (`EQ#<id>`), the counter of their numbers (`SEQ#EQ`) and the guard of the one
//! accepted quotation (`EQACCEPTED`), which an accept writes with `NotExists` in the same
//! transaction as the quotation, so at most one quotation per task is Accepted.

use crate::money;
use crate::pricing::{self, Line, Totals};
use crate::project::Project;
use crate::task::{self, TaskRecord, TaskScope, Unit};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_richtext::{self as richtext, Doc};
use workapi_store::entity::{self, Entity, SEQUENCE, Versioned};
use workapi_store::keys::WsKeys;
use workapi_store::{Key, Query, Store, StoreResult, query_all};
use workapi_wire::order::OrderKey;

/// Where a quotation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub enum QuotationStatus {
    /// Created, undecided
    Pending,
    /// Used for billing (at most one per task)
    Accepted,
    /// Not used
    Rejected,
}

/// A decision on a quotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Accept,
    Reject,
}

/// What a decision does to a quotation in a given status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The quotation is already so (a repeated decision): nothing is written.
    Unchanged,
    /// Pending → Accepted: takes the task's accepted-quotation guard.
    Accept,
    /// Pending → Rejected.
    Reject,
    /// Accepted → Rejected: releases the guard (the acceptance is withdrawn).
    Withdraw,
}

/// The transitions (docs/tasks.md, "Decisions"): Pending → Accepted or Rejected; an accepted
/// quotation can be rejected (withdrawn) until billed; a rejected quotation is final. Repeating
/// a decision changes nothing. The error is the 409's message.
pub fn transition(current: QuotationStatus, decision: Decision) -> Result<Transition, &'static str> {
    use QuotationStatus::*;
    match (current, decision) {
        (Pending, Decision::Accept) => Ok(Transition::Accept),
        (Pending, Decision::Reject) => Ok(Transition::Reject),
        (Accepted, Decision::Accept) | (Rejected, Decision::Reject) => Ok(Transition::Unchanged),
        (Accepted, Decision::Reject) => Ok(Transition::Withdraw),
        (Rejected, Decision::Accept) => Err("A rejected quotation is final; create a new quotation for the task"),
    }
}

/// An option of a quotation item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9", "title": "Express setup", "unitPrice": 120,
    "totalPrice": 120})))]
pub struct QuotationOption {
    pub id: Uuid,
    pub title: String,
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub unit_price: Decimal,
    /// unitPrice × the item's quantity, rounded to the currency's minor unit
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub total_price: Decimal,
}

/// A quotation item as stored: the description as IDoc.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotationItemRecord {
    pub id: Uuid,
    pub order: i64,
    pub title: String,
    pub description: Doc,
    #[serde(with = "money")]
    pub quantity: Decimal,
    pub unit: Unit,
    #[serde(with = "money")]
    pub unit_price: Decimal,
    #[serde(with = "money")]
    pub total_price: Decimal,
    pub options: Vec<QuotationOption>,
}

/// A quotation item as the API returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "order": 1, "title": "Checkout redesign",
    "description": "<p></p>", "quantity": 12.5, "unit": "Hour", "unitPrice": 95, "totalPrice": 1187.5, "options": []})))]
pub struct QuotationItem {
    pub id: Uuid,
    /// Position in the quotation, from 1
    pub order: i64,
    pub title: String,
    /// HTML
    pub description: String,
    /// Hours for time items
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub quantity: Decimal,
    pub unit: Unit,
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub unit_price: Decimal,
    /// quantity × unitPrice (options excluded), rounded to the currency's minor unit
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub total_price: Decimal,
    pub options: Vec<QuotationOption>,
}

/// An express quotation as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpressQuotationRecord {
    pub id: Uuid,
    pub task_id: Uuid,
    pub short_number: i64,
    pub contact_user_id: Uuid,
    pub comment: Doc,
    pub language: Option<String>,
    pub status: QuotationStatus,
    pub status_changed_by: Option<Uuid>,
    pub sent_at: Option<String>,
    pub currency: String,
    #[serde(with = "money")]
    pub sub_total: Decimal,
    #[serde(with = "money")]
    pub tax: Decimal,
    #[serde(with = "money")]
    pub tax_amount: Decimal,
    #[serde(with = "money")]
    pub total: Decimal,
    pub created_at: String,
    pub updated_at: String,
    pub created_by: Uuid,
    pub items: Vec<QuotationItemRecord>,
    pub version: i64,
}

/// An express quotation as the API returns it (spec §2.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "8e7d6c5b-4a39-4281-9f0e-1d2c3b4a5968", "taskId": "b7e4a0c2-3f1d-4e5a-9b8c-7d6e5f4a3b2c",
    "shortNumber": 1, "contactUserId": "feba6268-1a6d-44ce-bd62-936a18e5d37a", "comment": "<p>As discussed</p>",
    "language": "de", "status": "Pending", "statusChangedBy": null, "sentAt": null, "currency": "EUR",
    "subTotal": 1187.5, "tax": 19, "taxAmount": 225.63, "total": 1413.13,
    "createdAt": "2026-11-24T09:30:00.000Z", "updatedAt": "2026-11-24T09:30:00.000Z",
    "createdBy": "2f6b1c9e-8d4a-4e3b-9c7f-5a1d2e3f4b5c",
    "items": [{"id": "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "order": 1, "title": "Checkout redesign",
        "description": "<p></p>", "quantity": 12.5, "unit": "Hour", "unitPrice": 95, "totalPrice": 1187.5,
        "options": []}]})))]
pub struct ExpressQuotation {
    pub id: Uuid,
    pub task_id: Uuid,
    /// Sequential per task, from 1
    pub short_number: i64,
    /// The recipient
    pub contact_user_id: Uuid,
    /// HTML
    pub comment: String,
    /// ISO 639-1; null means the workspace default applies
    #[schema(required)]
    pub language: Option<String>,
    pub status: QuotationStatus,
    /// Who last accepted or rejected it; null while Pending
    #[schema(required)]
    pub status_changed_by: Option<Uuid>,
    /// Null until sent by e-mail
    #[schema(required, format = DateTime)]
    pub sent_at: Option<String>,
    /// ISO 4217 code of every amount (the project's currency)
    pub currency: String,
    /// Sum of the item totals and option totals, before tax
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub sub_total: Decimal,
    /// Tax rate in percent (the project's)
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub tax: Decimal,
    /// subTotal × tax / 100, rounded to the currency's minor unit
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub tax_amount: Decimal,
    /// subTotal + taxAmount
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub total: Decimal,
    #[schema(format = DateTime)]
    pub created_at: String,
    #[schema(format = DateTime)]
    pub updated_at: String,
    pub created_by: Uuid,
    /// By `order`
    pub items: Vec<QuotationItem>,
}

impl workapi_wire::Compact for ExpressQuotation {
    const COMPACT: &'static [&'static str] = &["id", "shortNumber", "status", "total"];
}

impl ExpressQuotationRecord {
    pub fn to_response(&self) -> ExpressQuotation {
        ExpressQuotation {
            id: self.id,
            task_id: self.task_id,
            short_number: self.short_number,
            contact_user_id: self.contact_user_id,
            comment: richtext::to_html(&self.comment),
            language: self.language.clone(),
            status: self.status,
            status_changed_by: self.status_changed_by,
            sent_at: self.sent_at.clone(),
            currency: self.currency.clone(),
            sub_total: self.sub_total,
            tax: self.tax,
            tax_amount: self.tax_amount,
            total: self.total,
            created_at: self.created_at.clone(),
            updated_at: self.updated_at.clone(),
            created_by: self.created_by,
            items: self
                .items
                .iter()
                .map(|i| QuotationItem {
                    id: i.id,
                    order: i.order,
                    title: i.title.clone(),
                    description: richtext::to_html(&i.description),
                    quantity: i.quantity,
                    unit: i.unit,
                    unit_price: i.unit_price,
                    total_price: i.total_price,
                    options: i.options.clone(),
                })
                .collect(),
        }
    }
}

impl Entity for ExpressQuotationRecord {
    const TYPE: &'static str = "ExpressQuotation";
    const PREFIX: &'static str = "EQ#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        key((keys, self.task_id), self.id)
    }
}

impl Versioned for ExpressQuotationRecord {
    fn version(&self) -> i64 {
        self.version
    }
    fn set_version(&mut self, version: i64) {
        self.version = version;
    }
}

pub fn key(scope: TaskScope, id: Uuid) -> Key {
    task::task_item(scope, format!("{}{id}", ExpressQuotationRecord::PREFIX))
}

/// The counter behind a task's quotation numbers.
pub fn number_counter(scope: TaskScope) -> Key {
    task::task_item(scope, format!("{}EQ", SEQUENCE.prefix))
}

/// The guard naming a task's accepted quotation; present only while one is Accepted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AcceptedQuotationRecord {
    pub task_id: Uuid,
    pub quotation_id: Uuid,
    pub short_number: i64,
}

impl Entity for AcceptedQuotationRecord {
    const TYPE: &'static str = "AcceptedQuotation";
    const PREFIX: &'static str = "EQACCEPTED";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        accepted_key((keys, self.task_id))
    }
}

pub fn accepted_key(scope: TaskScope) -> Key {
    task::task_item(scope, AcceptedQuotationRecord::PREFIX)
}

pub async fn get(store: &dyn Store, scope: TaskScope, id: Uuid) -> StoreResult<Option<ExpressQuotationRecord>> {
    entity::get(store, &key(scope, id)).await
}

/// A quotation's place in its task's list: by number, then id.
pub fn order(quotation: &ExpressQuotationRecord) -> OrderKey {
    OrderKey::new().int(quotation.short_number).id(quotation.id)
}

/// A task's quotations, by number.
pub async fn list(store: &dyn Store, scope: TaskScope) -> StoreResult<Vec<ExpressQuotationRecord>> {
    let query = Query::table(task::partition(scope)).begins_with(ExpressQuotationRecord::PREFIX);
    let mut all = query_all(store, query)
        .await?
        .into_iter()
        .map(entity::from_item)
        .collect::<StoreResult<Vec<ExpressQuotationRecord>>>()?;
    all.sort_by_cached_key(order);
    Ok(all)
}

/// The items of a quotation for a task, priced, and its totals: the estimate first when asked
/// for (unit Hour, the estimated hours at the task's effective hour rate, titled with the
/// task), then each task product with its options, in the task's order. `None` when the
/// estimate is asked for and the task has none.
pub fn items_for(
    task: &TaskRecord,
    project: &Project,
    include_estimate: bool,
) -> Option<(Vec<QuotationItemRecord>, Totals)> {
    struct Draft {
        title: String,
        description: Doc,
        unit: Unit,
        line: Line,
        option_titles: Vec<String>,
    }
    let mut drafts = Vec::new();
    if include_estimate {
        drafts.push(Draft {
            title: task.title.clone(),
            description: Doc::empty(),
            unit: Unit::Hour,
            line: Line {
                quantity: task.estimated_hours?,
                unit_price: task.effective_hour_rate(project),
                option_prices: vec![],
            },
            option_titles: vec![],
        });
    }
    for product in &task.products {
        drafts.push(Draft {
            title: product.title.clone(),
            description: product.description.clone(),
            unit: product.unit,
            line: Line {
                quantity: product.quantity,
                unit_price: product.unit_price,
                option_prices: product.options.iter().map(|o| o.unit_price).collect(),
            },
            option_titles: product.options.iter().map(|o| o.title.clone()).collect(),
        });
    }
    let lines: Vec<Line> = drafts.iter().map(|d| d.line.clone()).collect();
    let (priced, totals) = pricing::price(&lines, project.tax_rate, pricing::minor_units(&project.currency));
    let items = drafts
        .into_iter()
        .zip(priced)
        .enumerate()
        .map(|(i, (draft, priced))| QuotationItemRecord {
            id: Uuid::new_v4(),
            order: i as i64 + 1,
            title: draft.title,
            description: draft.description,
            quantity: draft.line.quantity,
            unit: draft.unit,
            unit_price: draft.line.unit_price,
            total_price: priced.total,
            options: draft
                .option_titles
                .into_iter()
                .zip(draft.line.option_prices)
                .zip(priced.option_totals)
                .map(|((title, unit_price), total_price)| QuotationOption {
                    id: Uuid::new_v4(),
                    title,
                    unit_price,
                    total_price,
                })
                .collect(),
        })
        .collect();
    Some((items, totals))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{TaskProductOption, TaskProductRecord};
    use std::str::FromStr;

    fn d(text: &str) -> Decimal {
        Decimal::from_str(text).unwrap()
    }

    fn project() -> Project {
        Project {
            id: Uuid::new_v4(),
            name: "P".into(),
            customer_organization_id: None,
            express_quotations_enabled: true,
            hour_rate: d("95"),
            currency: "EUR".into(),
            tax_rate: d("19"),
        }
    }

    fn task(estimate: Option<&str>, rate: Option<&str>) -> TaskRecord {
        TaskRecord {
            id: Uuid::new_v4(),
            short_number: 7,
            project_id: Uuid::new_v4(),
            title: "Checkout".into(),
            description: Doc::empty(),
            estimated_hours: estimate.map(d),
            hour_rate: rate.map(d),
            products: vec![TaskProductRecord {
                id: Uuid::new_v4(),
                title: "Setup".into(),
                description: Doc::empty(),
                quantity: d("2"),
                unit: Unit::Piece,
                unit_price: d("450"),
                options: vec![TaskProductOption { id: Uuid::new_v4(), title: "Express".into(), unit_price: d("60") }],
            }],
        }
    }

    #[test]
    fn the_estimate_comes_first_at_the_effective_rate_then_the_products() {
        let (items, totals) = items_for(&task(Some("1.5"), Some("110")), &project(), true).unwrap();
        let summary: Vec<_> =
            items.iter().map(|i| (i.order, i.unit, i.quantity, i.unit_price, i.total_price)).collect();
        assert_eq!(
            summary,
            [(1, Unit::Hour, d("1.5"), d("110"), d("165")), (2, Unit::Piece, d("2"), d("450"), d("900"))]
        );
        assert_eq!(items[0].title, "Checkout");
        assert_eq!((items[1].options[0].unit_price, items[1].options[0].total_price), (d("60"), d("120")));
        // 165 + 900 + 120 = 1185; 19 % = 225.15.
        assert_eq!((totals.sub_total, totals.tax_amount, totals.total), (d("1185"), d("225.15"), d("1410.15")));

        let (items, totals) = items_for(&task(Some("1.5"), None), &project(), false).unwrap();
        assert_eq!((items.len(), items[0].order, totals.sub_total), (1, 1, d("1020")));
        let (items, _) = items_for(&task(Some("2"), None), &project(), true).unwrap();
        assert_eq!(items[0].unit_price, d("95"), "the project's rate when the task has none");
    }

    #[test]
    fn an_estimate_is_needed_to_include_it() {
        assert!(items_for(&task(None, None), &project(), true).is_none());
        assert!(items_for(&task(None, None), &project(), false).is_some());
    }

    #[test]
    fn decisions_follow_the_documented_transitions() {
        use Decision::*;
        use QuotationStatus::*;
        let table = [
            (Pending, Accept, Ok(Transition::Accept)),
            (Pending, Reject, Ok(Transition::Reject)),
            (Accepted, Accept, Ok(Transition::Unchanged)),
            (Accepted, Reject, Ok(Transition::Withdraw)),
            (Rejected, Reject, Ok(Transition::Unchanged)),
        ];
        for (from, decision, expected) in table {
            assert_eq!(transition(from, decision), expected, "{from:?} {decision:?}");
        }
        assert!(transition(Rejected, Accept).is_err());
    }
}
