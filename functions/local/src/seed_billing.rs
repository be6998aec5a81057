//! The billing sections of a seed file (docs/seed.md): support contingents, time booked on
//! tasks, and issued invoices. Validated with the rest of the file before anything is
//! written; each entry is one item in its project's partition, written unless stored so.

use crate::seed::{SeedFile, SeedResult};
use rust_decimal::Decimal;
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use uuid::Uuid;
use workapi_domain::billing::{
    ContingentConsumption, IssuedInvoiceRecord, SupportContingentRecord, TimeEntryRecord, day,
};
use workapi_domain::{money, project, task};
use workapi_kit::entity::{self, Entity};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Store};

/// Largest hours of a contingent period, a time entry or a consumption.
pub const MAX_HOURS: i64 = 100_000;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SupportContingentEntry {
    pub id: Uuid,
    pub project_id: Uuid,
    pub title: String,
    pub from_date: String,
    #[serde(default)]
    pub to_date: Option<String>,
    /// Months per period, 1 to 12; 0 is one open period.
    pub frequency: u32,
    #[serde(with = "money")]
    pub hours: Decimal,
    #[serde(default)]
    pub transferable: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimeEntryEntry {
    pub id: Uuid,
    /// A task of the file or of the workspace; the entry belongs to its project.
    pub task_id: Uuid,
    pub date: String,
    #[serde(with = "money")]
    pub hours: Decimal,
    #[serde(default)]
    pub billed: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IssuedInvoiceEntry {
    pub id: Uuid,
    pub project_id: Uuid,
    pub number: String,
    pub date_from: String,
    pub date_to: String,
    #[serde(default)]
    pub consumed: Vec<ConsumptionEntry>,
    #[serde(default)]
    pub task_ids: Vec<Uuid>,
    /// Potential-invoice lines it billed, by their ids (`position:<id>`, `product:…`).
    #[serde(default)]
    pub line_ids: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConsumptionEntry {
    pub contingent_id: Uuid,
    #[serde(with = "money")]
    pub hours: Decimal,
}

/// The records a valid file's billing sections write.
#[derive(Debug, Default)]
pub struct Records {
    pub contingents: Vec<SupportContingentRecord>,
    pub time_entries: Vec<TimeEntryRecord>,
    pub invoices: Vec<IssuedInvoiceRecord>,
}

fn hours(problems: &mut Vec<String>, at: &str, value: Decimal) {
    if value < Decimal::ZERO || value > Decimal::from(MAX_HOURS) || value.normalize().scale() > 2 {
        problems.push(format!("{at}: must be 0 to {MAX_HOURS} hours with at most two decimals"));
    }
}

fn date(problems: &mut Vec<String>, at: &str, text: &str) -> time::Date {
    day::parse(text).unwrap_or_else(|| {
        problems.push(format!("{at}: {text:?} is not a date (YYYY-MM-DD)"));
        time::Date::MIN
    })
}

/// Every problem of the billing sections, each naming its entry, or the records to write.
/// `tasks` maps the file's task ids to their projects.
pub async fn validate(
    store: &dyn Store,
    keys: WsKeys,
    file: &SeedFile,
    tasks: &HashMap<Uuid, Uuid>,
    problems: &mut Vec<String>,
) -> SeedResult<Records> {
    let projects: HashSet<Uuid> = file.projects.iter().map(|p| p.id).collect();
    let mut project_known = HashMap::new();
    let mut records = Records::default();
    let mut ids = HashSet::new();
    let mut contingent_projects: HashMap<Uuid, Uuid> = HashMap::new();
    for (i, e) in file.support_contingents.iter().enumerate() {
        let at = format!("supportContingents[{i}]");
        if !ids.insert(e.id) {
            problems.push(format!("{at}.id: {} appears twice", e.id));
        }
        if !known_project(store, keys, &projects, &mut project_known, e.project_id).await? {
            problems.push(format!("{at}.projectId: no such project"));
        }
        let title = e.title.trim();
        if title.is_empty() || title.chars().count() > 200 {
            problems.push(format!("{at}.title: must hold 1 to 200 characters"));
        }
        let from = date(problems, &format!("{at}.fromDate"), &e.from_date);
        let to = e.to_date.as_deref().map(|t| date(problems, &format!("{at}.toDate"), t));
        if to.is_some_and(|to| to < from) {
            problems.push(format!("{at}.toDate: must be on or after fromDate"));
        }
        if e.frequency > 12 {
            problems.push(format!("{at}.frequency: must be 0 (one open period) to 12 months"));
        }
        hours(problems, &format!("{at}.hours"), e.hours);
        contingent_projects.insert(e.id, e.project_id);
        records.contingents.push(SupportContingentRecord {
            id: e.id,
            project_id: e.project_id,
            title: title.to_owned(),
            from_date: from,
            to_date: to,
            frequency: e.frequency,
            hours: e.hours.normalize(),
            transferable: e.transferable,
            created_at: String::new(),
            updated_at: String::new(),
        });
    }
    let mut ids = HashSet::new();
    for (i, e) in file.time_entries.iter().enumerate() {
        let at = format!("timeEntries[{i}]");
        if !ids.insert(e.id) {
            problems.push(format!("{at}.id: {} appears twice", e.id));
        }
        let project_id = match tasks.get(&e.task_id) {
            Some(project) => Some(*project),
            None => task::get(store, keys, e.task_id).await?.map(|t| t.project_id),
        };
        if project_id.is_none() {
            problems.push(format!("{at}.taskId: no such task"));
        }
        let day = date(problems, &format!("{at}.date"), &e.date);
        hours(problems, &format!("{at}.hours"), e.hours);
        records.time_entries.push(TimeEntryRecord {
            id: e.id,
            project_id: project_id.unwrap_or_default(),
            task_id: e.task_id,
            date: day,
            hours: e.hours.normalize(),
            billed: e.billed,
        });
    }
    let mut ids = HashSet::new();
    for (i, e) in file.issued_invoices.iter().enumerate() {
        let at = format!("issuedInvoices[{i}]");
        if !ids.insert(e.id) {
            problems.push(format!("{at}.id: {} appears twice", e.id));
        }
        if !known_project(store, keys, &projects, &mut project_known, e.project_id).await? {
            problems.push(format!("{at}.projectId: no such project"));
        }
        if e.number.trim().is_empty() || e.number.trim().chars().count() > 50 {
            problems.push(format!("{at}.number: must hold 1 to 50 characters"));
        }
        let from = date(problems, &format!("{at}.dateFrom"), &e.date_from);
        let to = date(problems, &format!("{at}.dateTo"), &e.date_to);
        if to < from {
            problems.push(format!("{at}.dateTo: must be on or after dateFrom"));
        }
        for (j, c) in e.consumed.iter().enumerate() {
            let owner = match contingent_projects.get(&c.contingent_id) {
                Some(project) => Some(*project),
                None => {
                    let key = project::project_item(
                        (keys, e.project_id),
                        format!("{}{}", SupportContingentRecord::PREFIX, c.contingent_id),
                    );
                    entity::get::<SupportContingentRecord>(store, &key).await?.map(|r| r.project_id)
                }
            };
            if owner != Some(e.project_id) {
                problems.push(format!("{at}.consumed[{j}].contingentId: no such support contingent in the project"));
            }
            hours(problems, &format!("{at}.consumed[{j}].hours"), c.hours);
        }
        for (j, task_id) in e.task_ids.iter().enumerate() {
            let owner = match tasks.get(task_id) {
                Some(project) => Some(*project),
                None => task::get(store, keys, *task_id).await?.map(|t| t.project_id),
            };
            if owner != Some(e.project_id) {
                problems.push(format!("{at}.taskIds[{j}]: no such task in the project"));
            }
        }
        for (j, line_id) in e.line_ids.iter().enumerate() {
            if !workapi_domain::invoice_lines::is_line_id(line_id) {
                problems.push(format!(
                    "{at}.lineIds[{j}]: not a line id (position:<id>, subscription:<billingId> or product:<id>:…)"
                ));
            }
        }
        records.invoices.push(IssuedInvoiceRecord {
            id: e.id,
            project_id: e.project_id,
            number: e.number.trim().to_owned(),
            date_from: from,
            date_to: to,
            consumed: e
                .consumed
                .iter()
                .map(|c| ContingentConsumption {
                    contingent_id: c.contingent_id,
                    hours: c.hours.normalize(),
                    date: None,
                })
                .collect(),
            task_ids: e.task_ids.clone(),
            line_ids: e.line_ids.clone(),
            issue: None,
            cancelled_by: None,
        });
    }
    Ok(records)
}

/// Whether the project is in the file or stored (each stored one asked once).
pub(crate) async fn known_project(
    store: &dyn Store,
    keys: WsKeys,
    in_file: &HashSet<Uuid>,
    cache: &mut HashMap<Uuid, bool>,
    id: Uuid,
) -> SeedResult<bool> {
    if in_file.contains(&id) {
        return Ok(true);
    }
    if let Some(known) = cache.get(&id) {
        return Ok(*known);
    }
    let known = project::get(store, keys, id).await?.is_some();
    cache.insert(id, known);
    Ok(known)
}

/// Writes a contingent unless stored so; its createdAt is kept, updatedAt moves on a change.
pub async fn write_contingent(store: &dyn Store, keys: WsKeys, record: &SupportContingentRecord) -> SeedResult<bool> {
    let stored: Option<SupportContingentRecord> = entity::get(store, &record.key(keys)).await?;
    let mut candidate = record.clone();
    if let Some(stored) = &stored {
        candidate.created_at = stored.created_at.clone();
        candidate.updated_at = stored.updated_at.clone();
        if *stored == candidate {
            return Ok(false);
        }
    }
    let now = workapi_store::clock::now_rfc3339();
    if stored.is_none() {
        candidate.created_at = now.clone();
    }
    candidate.updated_at = now;
    store.put(entity::to_item(&candidate, keys)?, Condition::None).await?;
    Ok(true)
}

/// Writes a seeded invoice unless stored so. What the API did to it stays: a cancellation
/// (`cancelledBy`, its credit note stands) is kept, and an invoice issued through the API under
/// the same id is never overwritten. Whether it wrote.
pub async fn write_invoice(store: &dyn Store, keys: WsKeys, record: &IssuedInvoiceRecord) -> SeedResult<bool> {
    let stored: Option<IssuedInvoiceRecord> = entity::get(store, &record.key(keys)).await?;
    let mut candidate = record.clone();
    if let Some(stored) = &stored {
        if stored.issue.is_some() {
            return Ok(false);
        }
        candidate.cancelled_by = stored.cancelled_by;
        if *stored == candidate {
            return Ok(false);
        }
    }
    store.put(entity::to_item(&candidate, keys)?, Condition::None).await?;
    Ok(true)
}
