//! Reading what a project's potential invoices are computed from, in as few round trips as
//! the store allows, and computing them.

use super::compute::{Inputs, compute};
use super::id::InvoiceId;
use super::model::PotentialInvoice;
use super::record::{PotentialInvoiceRecord, records};
use crate::world;
use crate::world::UnbilledEntry;
use std::collections::{BTreeMap, HashMap};
use uuid::Uuid;
use workapi_domain::billing::IssuedInvoiceRecord;
use workapi_domain::catalog;
use workapi_domain::position;
use workapi_domain::project::{Project, ProjectScope};
use workapi_domain::quotation::{self as quotation_domain, ExpressQuotationRecord};
use workapi_domain::task::{self, TaskRecord};
use workapi_kit::{ApiError, ApiResult, Caller};
use workapi_store::keys::WsKeys;
use workapi_store::{Store, read_all};

/// What a project's potential invoices were computed from, beside them: what issuing one
/// records (its time entries, the contingents its hours draw on) comes from the same read.
pub struct World {
    pub potential: Vec<PotentialInvoice>,
    pub unbilled: Vec<UnbilledEntry>,
    pub invoices: Vec<IssuedInvoiceRecord>,
    pub records: HashMap<InvoiceId, PotentialInvoiceRecord>,
}

/// Reads what a project's potential invoices are computed from, and computes them.
pub async fn for_project(store: &dyn Store, caller: &Caller, project: &Project) -> ApiResult<Vec<PotentialInvoice>> {
    Ok(world(store, caller, project).await?.potential)
}

/// [`for_project`], keeping what it read.
pub async fn world(store: &dyn Store, caller: &Caller, project: &Project) -> ApiResult<World> {
    let scope: ProjectScope = (caller.keys(), project.id);
    let (billings, billed, records, positions, products) = tokio::join!(
        crate::subscriptions::list(store, scope),
        world::invoices_and_unbilled_time(store, scope),
        records(store, scope),
        position::list(store, scope),
        catalog::project_products(store, scope),
    );
    let (billings, (invoices, unbilled), records) = (billings?, billed?, records?);
    let (positions, products) = (positions?, products?);
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
        positions: &positions,
        products: &products,
        records: &records,
    };
    let potential = compute(&inputs);
    Ok(World { potential, unbilled, invoices, records })
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
