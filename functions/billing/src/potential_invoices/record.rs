//! What a client set on a potential invoice (billed range, recipient, row quantities): a small
//! record under the invoice's id, in the project's partition (docs/data-model.md).

use super::id::{InvoiceId, InvoiceType};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use time::Date;
use uuid::Uuid;
use workapi_domain::billing::day;
use workapi_domain::project::{self, ProjectScope};
use workapi_kit::ApiResult;
use workapi_kit::entity::{self, Change, Entity, Versioned};
use workapi_store::keys::WsKeys;
use workapi_store::{Key, Store, query_all};

/// What a change of a potential invoice set, as its event carries it: a potential invoice is
/// computed on every read, not stored, so its event names it and the settings its change left
/// (docs/events.md); its lines and totals are a read away.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PotentialInvoiceSettings {
    /// The potential invoice's id (`{type}::{projectId}::{dateFrom}::{dateTo}`)
    pub id: String,
    pub project_id: Uuid,
    /// The billed range's first day, when set (else the invoice's own)
    #[serde(with = "day::option")]
    #[schema(value_type = Option<String>, format = Date)]
    pub billed_from: Option<Date>,
    /// The billed range's last day, when set (else the invoice's own)
    #[serde(with = "day::option")]
    #[schema(value_type = Option<String>, format = Date)]
    pub billed_to: Option<Date>,
    /// The recipient, when set
    pub contact_id: Option<Uuid>,
    /// Custom quantities of subscription rows, by the row's billingId
    pub quantities: BTreeMap<Uuid, i64>,
}

impl From<&PotentialInvoiceRecord> for PotentialInvoiceSettings {
    fn from(record: &PotentialInvoiceRecord) -> Self {
        PotentialInvoiceSettings {
            id: record.id().to_string(),
            project_id: record.project_id,
            billed_from: record.billed_from,
            billed_to: record.billed_to,
            contact_id: record.contact_id,
            quantities: record.quantities.clone(),
        }
    }
}

/// What a client set on a potential invoice, kept under its id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PotentialInvoiceRecord {
    pub project_id: Uuid,
    pub kind: InvoiceType,
    #[serde(with = "day")]
    pub date_from: Date,
    #[serde(with = "day")]
    pub date_to: Date,
    #[serde(with = "day::option", default)]
    pub billed_from: Option<Date>,
    #[serde(with = "day::option", default)]
    pub billed_to: Option<Date>,
    #[serde(default)]
    pub contact_id: Option<Uuid>,
    /// Custom quantities by row id.
    #[serde(default)]
    pub quantities: BTreeMap<Uuid, i64>,
    pub version: i64,
}

impl PotentialInvoiceRecord {
    pub(crate) fn new(id: InvoiceId) -> Self {
        PotentialInvoiceRecord {
            project_id: id.project_id,
            kind: id.kind,
            date_from: id.from,
            date_to: id.to,
            billed_from: None,
            billed_to: None,
            contact_id: None,
            quantities: BTreeMap::new(),
            version: 0,
        }
    }

    fn id(&self) -> InvoiceId {
        InvoiceId { kind: self.kind, project_id: self.project_id, from: self.date_from, to: self.date_to }
    }
}

impl Entity for PotentialInvoiceRecord {
    const TYPE: &'static str = "PotentialInvoice";
    const PREFIX: &'static str = "PINV#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        record_key(keys, self.id())
    }
}

impl Versioned for PotentialInvoiceRecord {
    fn version(&self) -> i64 {
        self.version
    }
    fn set_version(&mut self, version: i64) {
        self.version = version;
    }
}

fn record_key(keys: WsKeys, id: InvoiceId) -> Key {
    project::project_item(
        (keys, id.project_id),
        format!("{}{}#{}#{}", PotentialInvoiceRecord::PREFIX, id.kind.name(), day::text(id.from), day::text(id.to)),
    )
}

/// The records of a project's potential invoices, by id.
pub async fn records(store: &dyn Store, scope: ProjectScope) -> ApiResult<HashMap<InvoiceId, PotentialInvoiceRecord>> {
    let query = workapi_store::Query::table(project::partition(scope)).begins_with(PotentialInvoiceRecord::PREFIX);
    let mut all = HashMap::new();
    for item in query_all(store, query).await? {
        let record: PotentialInvoiceRecord = entity::from_item(item)?;
        all.insert(record.id(), record);
    }
    Ok(all)
}

/// Changes a potential invoice's record, a new one when none is stored yet, and writes it as
/// its next version (`entity::modify`: re-run on a fresh read after a lost race).
pub async fn update_record(
    store: &dyn Store,
    keys: WsKeys,
    id: InvoiceId,
    change: impl Fn(&mut PotentialInvoiceRecord) -> ApiResult<()>,
    event: impl Fn(&PotentialInvoiceSettings) -> ApiResult<entity::Completion>,
) -> ApiResult<()> {
    let busy = "The potential invoice is being changed concurrently; retry";
    let changed = |stored: Option<PotentialInvoiceRecord>| {
        let mut record = stored.unwrap_or_else(|| PotentialInvoiceRecord::new(id));
        change(&mut record)?;
        Ok(Change::Write(record))
    };
    let beside = |record: &PotentialInvoiceRecord| event(&PotentialInvoiceSettings::from(record));
    entity::modify_with(store, &record_key(keys, id), keys, busy, changed, beside).await?;
    Ok(())
}
