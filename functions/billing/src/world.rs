//! Reads of a project's billing world that more than one operation needs.

use shared::ApiResult;
use shared::domain::billing::{self, TimeEntryRecord};
use shared::domain::project::ProjectScope;
use shared::domain::quotation::{self, AcceptedQuotationRecord};
use shared::entity;
use shared::store::Store;
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use uuid::Uuid;

/// Unbilled time and, when its task has one, the task's accepted quotation (which replaces
/// time-based billing for the task, spec §2.3).
#[derive(Debug, Clone)]
pub struct UnbilledEntry {
    pub entry: TimeEntryRecord,
    pub quotation: Option<AcceptedQuotationRecord>,
}

/// The project's unbilled time entries: one query, then one read of the accepted-quotation
/// guard per task that has unbilled time.
pub async fn unbilled_time(store: &dyn Store, scope: ProjectScope) -> ApiResult<Vec<UnbilledEntry>> {
    let entries: Vec<TimeEntryRecord> =
        billing::time_entries(store, scope).await?.into_iter().filter(|e| !e.billed).collect();
    let mut accepted: BTreeMap<Uuid, Option<AcceptedQuotationRecord>> = BTreeMap::new();
    for entry in &entries {
        if let Entry::Vacant(slot) = accepted.entry(entry.task_id) {
            slot.insert(entity::get(store, &quotation::accepted_key((scope.0, entry.task_id))).await?);
        }
    }
    Ok(entries
        .into_iter()
        .map(|entry| UnbilledEntry { quotation: accepted.get(&entry.task_id).cloned().flatten(), entry })
        .collect())
}
