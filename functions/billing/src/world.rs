//! Reads of a project's billing world that more than one operation needs.

use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;
use workapi_domain::billing::{self, IssuedInvoiceRecord, TimeEntryRecord};
use workapi_domain::project::ProjectScope;
use workapi_domain::quotation::{self, AcceptedQuotationRecord};
use workapi_kit::ApiResult;
use workapi_kit::entity;
use workapi_store::{Store, read_all};

/// Unbilled time and, when its task has one, the task's accepted quotation (which replaces
/// time-based billing for the task, spec §2.3).
#[derive(Debug, Clone)]
pub struct UnbilledEntry {
    pub entry: TimeEntryRecord,
    pub quotation: Option<AcceptedQuotationRecord>,
}

/// The project's invoices in force and its unbilled time entries (`billing::unbilled`: not
/// seeded as billed, listed by no invoice in force): two concurrent queries, then one read of
/// the accepted-quotation guard per task that has unbilled time, all at once.
pub async fn invoices_and_unbilled_time(
    store: &dyn Store,
    scope: ProjectScope,
) -> ApiResult<(Vec<IssuedInvoiceRecord>, Vec<UnbilledEntry>)> {
    let (entries, invoices) = tokio::join!(billing::time_entries(store, scope), billing::issued_invoices(store, scope));
    let invoices = invoices?;
    let entries = billing::unbilled(entries?, &invoices);
    let task_ids: BTreeSet<Uuid> = entries.iter().map(|e| e.task_id).collect();
    let guards = read_all(task_ids, |task_id| async move {
        let guard = entity::get::<AcceptedQuotationRecord>(store, &quotation::accepted_key((scope.0, task_id))).await;
        guard.map(|guard| (task_id, guard))
    })
    .await?;
    let accepted: BTreeMap<Uuid, Option<AcceptedQuotationRecord>> = guards.into_iter().collect();
    let unbilled = entries
        .into_iter()
        .map(|entry| UnbilledEntry { quotation: accepted.get(&entry.task_id).cloned().flatten(), entry })
        .collect();
    Ok((invoices, unbilled))
}
