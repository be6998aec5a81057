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
use time::Date;
use uuid::Uuid;
use workapi_store::{Store, StoreResult};

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

/// An invoice already issued for a project (outside this API): its service range, the hours
/// it drew from each support contingent, and the tasks whose work it billed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuedInvoiceRecord {
    pub id: Uuid,
    pub project_id: Uuid,
    /// The invoice's number as printed, e.g. `RE-2026-0042`.
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
    /// `position:<id>`, `product:<projectProductId>:…`): a listed line never appears again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub line_ids: Vec<String>,
}

/// Hours an invoice drew from one support contingent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContingentConsumption {
    pub contingent_id: Uuid,
    #[serde(with = "money")]
    pub hours: Decimal,
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
crate::project::project_entity!(IssuedInvoiceRecord, "IssuedInvoice", "INVOICE#");
crate::project::project_entity!(SupportContingentRecord, "SupportContingent", "CONTINGENT#");

pub async fn time_entries(store: &dyn Store, scope: ProjectScope) -> StoreResult<Vec<TimeEntryRecord>> {
    project::items(store, scope).await
}

pub async fn issued_invoices(store: &dyn Store, scope: ProjectScope) -> StoreResult<Vec<IssuedInvoiceRecord>> {
    project::items(store, scope).await
}

pub async fn support_contingents(store: &dyn Store, scope: ProjectScope) -> StoreResult<Vec<SupportContingentRecord>> {
    project::items(store, scope).await
}

/// The first issued invoice of the project that billed the task (by number), if any.
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
}
