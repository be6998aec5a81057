//! The seeded billing world (docs/seed.md, docs/billing.md): time booked on tasks, issued
//! invoices and support contingents. Seeded by the operator; the billing function computes
//! potential invoices and contingent balances from them, and the tasks function reads the
//! issued invoices (an invoiced task's accepted quotation cannot be withdrawn).
//!
//! Keys, all in the project's partition `WS#<ws>#PROJECT#<projectId>` (docs/data-model.md):
//! time entries `TIME#<id>`, issued invoices `INVOICE#<id>`, support contingents
//! `CONTINGENT#<id>`. A project's billing reads are therefore a few queries of one partition.

use crate::money;
use crate::project::{self, ProjectScope};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use time::Date;
use uuid::Uuid;
use workapi_store::entity::{Entity, IndexKey};
use workapi_store::keys::WsKeys;
use workapi_store::{Cursor, Index, Key, Query, SortKey, Store, StoreResult};
use workapi_wire::order::OrderKey;

/// Dates as `YYYY-MM-DD` text (spec §1.2), in records and responses, read by the one date
/// parser (`workapi_wire::calendar`, its range included).
pub mod day {
    use serde::{Deserialize, Deserializer, Serializer, de};
    use time::Date;
    use time::macros::format_description;

    const FORMAT: &[time::format_description::FormatItem<'static>] = format_description!("[year]-[month]-[day]");

    pub fn text(date: Date) -> String {
        date.format(FORMAT).unwrap_or_default()
    }

    pub fn parse(text: &str) -> Option<Date> {
        workapi_wire::calendar::parse_date(text)
    }

    pub fn serialize<S: Serializer>(date: &Date, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&text(*date))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Date, D::Error> {
        let text = String::deserialize(deserializer)?;
        parse(&text).ok_or_else(|| de::Error::custom(format!("{text:?} is not a date (YYYY-MM-DD)")))
    }

    /// The same for optional dates (`null` or absent when none).
    pub mod option {
        use super::*;

        pub fn serialize<S: Serializer>(date: &Option<Date>, serializer: S) -> Result<S::Ok, S::Error> {
            match date {
                Some(date) => super::serialize(date, serializer),
                None => serializer.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Date>, D::Error> {
            match Option::<String>::deserialize(deserializer)? {
                Some(text) => {
                    parse(&text).map(Some).ok_or_else(|| de::Error::custom(format!("{text:?} is not a date")))
                }
                None => Ok(None),
            }
        }
    }
}

/// Time booked on a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeEntryRecord {
    pub id: Uuid,
    pub project_id: Uuid,
    pub task_id: Uuid,
    #[serde(with = "day")]
    pub date: Date,
    #[serde(with = "money")]
    pub hours: Decimal,
    /// Already on an issued invoice.
    pub billed: bool,
}

/// An invoice issued for a project: by this API (`issue` present: issue 36, docs/billing.md
/// "Issued invoices") or outside it (seeded, `issue` absent): its service range, the hours it
/// drew from each support contingent, the tasks whose work it billed and the potential-invoice
/// lines it billed. A credit note is one too (`issue.kind`), cancelling another.
///
/// Only the invoices **in force** ([`IssuedInvoiceRecord::in_force`]: invoices not cancelled,
/// credit notes never) bill anything: the potential invoices, the contingents' balances, the
/// time entries' billed state and the quotation guard are computed from those alone, so a
/// cancellation frees what the cancelled invoice billed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuedInvoiceRecord {
    pub id: Uuid,
    pub project_id: Uuid,
    /// The invoice's number as printed, e.g. `RE-2026-0042` (seeded) or `17` (issued here:
    /// the workspace's sequence).
    pub number: String,
    #[serde(with = "day")]
    pub date_from: Date,
    #[serde(with = "day")]
    pub date_to: Date,
    #[serde(default)]
    pub consumed: Vec<ContingentConsumption>,
    #[serde(default)]
    pub task_ids: Vec<Uuid>,
    /// The potential-invoice lines it billed, by their stable ids (`invoice_lines`:
    /// `position:<id>`, `product:<projectProductId>:…`, `subscription:<rowId>`): a listed line
    /// never appears again while the invoice is in force.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub line_ids: Vec<String>,
    /// What issuing through the API recorded; absent for an invoice issued outside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<Issue>,
    /// The credit note that cancelled it: the one change an issued invoice takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled_by: Option<Uuid>,
}

/// An invoice or a credit note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum DocumentKind {
    /// An invoice: bills its lines
    #[default]
    Invoice,
    /// A credit note: reverses the invoice it cancels (`cancels`) and frees its lines
    CreditNote,
}

/// What an invoice issued through the API keeps beside what every issued invoice has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Issue {
    pub kind: DocumentKind,
    /// Its place in the workspace's sequence (`number` is its text).
    pub sequence: i64,
    /// The potential invoice it was issued from (`{type}::{projectId}::{dateFrom}::{dateTo}`);
    /// a credit note: its invoice's (none for an invoice issued outside the API).
    #[serde(default)]
    pub potential_invoice_id: Option<String>,
    /// The time entries it billed.
    #[serde(default)]
    pub time_entry_ids: Vec<Uuid>,
    /// The accepted express quotations whose subTotal it billed.
    #[serde(default)]
    pub quotation_ids: Vec<Uuid>,
    /// A credit note: the invoice it cancels.
    #[serde(default)]
    pub cancels: Option<Uuid>,
    /// The business date it was issued on (`LT_CUSTOM_NOW` in imposter mode).
    #[serde(with = "day")]
    pub issued_on: Date,
    pub issued_at: String,
    pub issued_by: Uuid,
    /// The potential invoice as issued: lines, totals, recipient, billed range (the billing
    /// function's shape, frozen).
    pub document: serde_json::Value,
}

impl IssuedInvoiceRecord {
    /// Whether it bills what it lists: an invoice not cancelled (a credit note never does).
    pub fn in_force(&self) -> bool {
        self.cancelled_by.is_none() && self.issue.as_ref().is_none_or(|i| i.kind == DocumentKind::Invoice)
    }

    /// Whether it was issued outside the API (seeded): such an invoice settles the months its
    /// range covers whole; one issued here lists what it billed instead.
    pub fn issued_outside(&self) -> bool {
        self.issue.is_none()
    }

    /// The day the invoice list filters and orders by: issued on, or (issued outside the API)
    /// the end of the range it bills.
    pub fn listed_on(&self) -> Date {
        self.issue.as_ref().map_or(self.date_to, |issue| issue.issued_on)
    }
}

/// An invoice's place in the invoice list: by day ([`IssuedInvoiceRecord::listed_on`]), then
/// number (the workspace's sequence; a seeded number that is not one sorts first, by its text),
/// then project and id. The project is part of the place so that a cursor names the item's
/// table key ([`invoice_list_start`]).
pub fn invoice_order(record: &IssuedInvoiceRecord) -> OrderKey {
    let sequence = record.issue.as_ref().map_or_else(|| record.number.parse().unwrap_or(0), |issue| issue.sequence);
    OrderKey::new()
        .text(day::text(record.listed_on()))
        .int(sequence)
        .text(record.number.clone())
        .id(record.project_id)
        .id(record.id)
}

/// The invoice list of a workspace (GSI2), from `from` to `to` (days, inclusive): a range of
/// the list's keys, which begin with the day.
pub fn invoice_list_query(keys: WsKeys, from: Option<Date>, to: Option<Date>) -> Query {
    let query = Query::gsi2(invoice_list(keys));
    if from.is_none() && to.is_none() {
        return query;
    }
    // Every key of a day d begins with d's text and is longer, so it sorts after d's text and
    // before the next day's: the range [from, to + 1 day] holds exactly the days from..=to.
    // DynamoDB refuses an empty key value; every key begins with a digit.
    let low = from.map_or_else(|| "0".to_owned(), day::text);
    let high =
        to.map_or_else(|| char::MAX.to_string(), |to| to.next_day().map_or_else(|| char::MAX.to_string(), day::text));
    query.sk(SortKey::Between(low, high))
}

/// Where the invoice list continues after a cursor's place (`None`: not an invoice's place).
pub fn invoice_list_start(keys: WsKeys, after: &OrderKey) -> Option<Cursor> {
    let (project_id, id) = (after.text_at(3)?.parse().ok()?, after.last_text()?);
    let table = project::project_item((keys, project_id), format!("{}{id}", IssuedInvoiceRecord::PREFIX));
    let at = IndexKey { pk: invoice_list(keys), sk: after.sort_text() };
    Some(workapi_store::entity::index_start(Index::Gsi2, &table, at))
}

/// The GSI2 partition of a workspace's invoice list, by day and number.
fn invoice_list(keys: WsKeys) -> String {
    keys.partition("INVOICE_LIST")
}

/// Hours an invoice drew from one support contingent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContingentConsumption {
    pub contingent_id: Uuid,
    #[serde(with = "money")]
    pub hours: Decimal,
    /// The day the hours count on (the last day of the time they were booked in that period);
    /// absent: the invoice's `dateTo`.
    #[serde(with = "day::option", default, skip_serializing_if = "Option::is_none")]
    pub date: Option<Date>,
}

impl ContingentConsumption {
    /// The day the hours count on.
    pub fn day(&self, invoice: &IssuedInvoiceRecord) -> Date {
        self.date.unwrap_or(invoice.date_to)
    }
}

/// A support contingent (retainer plan, spec §2.5a) as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SupportContingentRecord {
    pub id: Uuid,
    pub project_id: Uuid,
    pub title: String,
    #[serde(with = "day")]
    pub from_date: Date,
    /// None: active forever.
    #[serde(with = "day::option", default)]
    pub to_date: Option<Date>,
    /// Months per period, 1 to 12; 0 is one open period from `fromDate` (no end date).
    pub frequency: u32,
    /// Hours per period.
    #[serde(with = "money")]
    pub hours: Decimal,
    /// Whether unused hours carry over to the next period.
    pub transferable: bool,
    pub created_at: String,
    pub updated_at: String,
}

crate::project::project_entity!(TimeEntryRecord, "TimeEntry", "TIME#");
crate::project::project_entity!(SupportContingentRecord, "SupportContingent", "CONTINGENT#");

impl workapi_store::entity::Entity for IssuedInvoiceRecord {
    const TYPE: &'static str = "IssuedInvoice";
    const PREFIX: &'static str = "INVOICE#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        project::project_item((keys, self.project_id), format!("{}{}", Self::PREFIX, self.id))
    }

    /// Found by id in the workspace's invoice index (`GET /billing/invoices/{id}`).
    fn gsi1(&self, keys: WsKeys) -> Option<IndexKey> {
        Some(IndexKey { pk: invoice_index(keys), sk: self.id.to_string() })
    }

    /// Listed by day and number in the invoice list (`GET /billing/invoices`).
    fn gsi2(&self, keys: WsKeys) -> Option<IndexKey> {
        Some(IndexKey { pk: invoice_list(keys), sk: invoice_order(self).sort_text() })
    }
}

/// The GSI1 partition holding every invoice of a workspace, by id.
pub fn invoice_index(keys: WsKeys) -> String {
    keys.partition("INVOICES")
}

/// The workspace's invoice-number sequence: one item whose `version` is the last number
/// taken, moved on in each issue's transaction on the condition that it still holds the
/// number read (docs/billing.md, "Numbering").
pub fn invoice_sequence(keys: WsKeys) -> Key {
    keys.root(format!("{}INVOICE", workapi_store::entity::SEQUENCE.prefix))
}

pub async fn time_entries(store: &dyn Store, scope: ProjectScope) -> StoreResult<Vec<TimeEntryRecord>> {
    project::items(store, scope).await
}

/// Every invoice and credit note of the project, in force or not (the invoice list).
pub async fn all_invoices(store: &dyn Store, scope: ProjectScope) -> StoreResult<Vec<IssuedInvoiceRecord>> {
    project::items(store, scope).await
}

/// The project's invoices in force ([`IssuedInvoiceRecord::in_force`]): what is billed.
pub async fn issued_invoices(store: &dyn Store, scope: ProjectScope) -> StoreResult<Vec<IssuedInvoiceRecord>> {
    Ok(all_invoices(store, scope).await?.into_iter().filter(IssuedInvoiceRecord::in_force).collect())
}

/// The time entries' billed state: billed when seeded so, or listed by an invoice in force.
pub fn unbilled(entries: Vec<TimeEntryRecord>, invoices: &[IssuedInvoiceRecord]) -> Vec<TimeEntryRecord> {
    let listed: HashSet<Uuid> =
        invoices.iter().filter_map(|i| i.issue.as_ref()).flat_map(|i| i.time_entry_ids.iter().copied()).collect();
    entries.into_iter().filter(|e| !e.billed && !listed.contains(&e.id)).collect()
}

pub async fn support_contingents(store: &dyn Store, scope: ProjectScope) -> StoreResult<Vec<SupportContingentRecord>> {
    project::items(store, scope).await
}

/// The first invoice in force of the project that billed the task (by number), if any.
pub async fn invoice_billing_task(
    store: &dyn Store,
    scope: ProjectScope,
    task_id: Uuid,
) -> StoreResult<Option<IssuedInvoiceRecord>> {
    let mut invoices = issued_invoices(store, scope).await?;
    invoices.sort_by(|a, b| a.number.cmp(&b.number));
    Ok(invoices.into_iter().find(|i| i.task_ids.contains(&task_id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;
    use workapi_store::entity;
    use workapi_store::keys::WsKeys;

    #[test]
    fn records_keep_dates_as_text_and_hours_exact() {
        let entry = TimeEntryRecord {
            id: Uuid::new_v4(),
            project_id: Uuid::new_v4(),
            task_id: Uuid::new_v4(),
            date: date!(2026 - 02 - 28),
            hours: Decimal::new(125, 2),
            billed: false,
        };
        let item = entity::to_item(&entry, WsKeys::new(Uuid::nil())).unwrap();
        assert_eq!(item["date"], "2026-02-28");
        assert_eq!(item["hours"], serde_json::json!(1.25));
        assert!(item["SK"].as_str().unwrap().starts_with("TIME#"));
        assert_eq!(entity::from_item::<TimeEntryRecord>(item).unwrap(), entry);
    }

    fn invoice(issue: Option<(DocumentKind, Vec<Uuid>)>, cancelled_by: Option<Uuid>) -> IssuedInvoiceRecord {
        IssuedInvoiceRecord {
            id: Uuid::new_v4(),
            project_id: Uuid::nil(),
            number: "1".into(),
            date_from: date!(2026 - 03 - 01),
            date_to: date!(2026 - 03 - 31),
            consumed: vec![],
            task_ids: vec![],
            line_ids: vec![],
            issue: issue.map(|(kind, time_entry_ids)| Issue {
                kind,
                sequence: 1,
                potential_invoice_id: None,
                time_entry_ids,
                quotation_ids: vec![],
                cancels: None,
                issued_on: date!(2026 - 04 - 02),
                issued_at: String::new(),
                issued_by: Uuid::nil(),
                document: serde_json::Value::Null,
            }),
            cancelled_by,
        }
    }

    /// Only invoices not cancelled bill (a credit note never); a time entry is billed when
    /// seeded so or listed by one of them.
    #[test]
    fn time_is_billed_by_the_invoices_in_force_only() {
        let entry = |billed: bool| TimeEntryRecord {
            id: Uuid::new_v4(),
            project_id: Uuid::nil(),
            task_id: Uuid::nil(),
            date: date!(2026 - 03 - 02),
            hours: Decimal::ONE,
            billed,
        };
        let (seeded_billed, listed, free) = (entry(true), entry(false), entry(false));
        let issued = invoice(Some((DocumentKind::Invoice, vec![listed.id])), None);
        let cancelled = invoice(Some((DocumentKind::Invoice, vec![free.id])), Some(Uuid::new_v4()));
        let note = invoice(Some((DocumentKind::CreditNote, vec![])), None);
        assert!(issued.in_force() && invoice(None, None).in_force());
        assert!(!cancelled.in_force() && !note.in_force());
        let in_force: Vec<IssuedInvoiceRecord> =
            [issued, cancelled, note].into_iter().filter(IssuedInvoiceRecord::in_force).collect();
        let entries = vec![seeded_billed, listed, free.clone()];
        assert_eq!(unbilled(entries, &in_force), [free]);
    }
}
