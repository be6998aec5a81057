//! Work-activity persistence: one item per activity in the workspace partition, appended at the
//! end through the workspace's activity counter. Updates are conditioned on the version they
//! read (`entity::modify`), so two concurrent full updates cannot interleave.

use super::rules::{Activity, Draft};
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_kit::conditional::IfMatch;
use workapi_kit::entity::{self, Change, Entity, Versioned};
use workapi_kit::paging::OrderKey;
use workapi_kit::{ApiError, ApiResult};
use workapi_store::clock;
use workapi_store::keys::WsKeys;
use workapi_store::{Key, Query, Store, query_all};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivityRecord {
    #[serde(flatten)]
    activity: Activity,
    created_at: String,
    updated_at: String,
    version: i64,
}

impl Entity for ActivityRecord {
    const TYPE: &'static str = "WorkActivity";
    const PREFIX: &'static str = "ACTIVITY#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        activity_key(keys, self.activity.id)
    }
}

impl Versioned for ActivityRecord {
    fn version(&self) -> i64 {
        self.version
    }
    fn set_version(&mut self, version: i64) {
        self.version = version;
    }
}

fn activity_key(keys: WsKeys, id: Uuid) -> Key {
    keys.root(format!("{}{id}", ActivityRecord::PREFIX))
}

/// The counter behind the activities' sort order.
fn sort_counter(keys: WsKeys) -> Key {
    keys.root(format!("{}ACTIVITY", entity::SEQUENCE.prefix))
}

/// An activity's place in the list: by sort order, then name, then id.
pub fn order(activity: &Activity) -> OrderKey {
    OrderKey::new().int(activity.sort).text(&activity.name).id(activity.id)
}

/// Every activity of the workspace, by sort order then name.
pub async fn list(store: &dyn Store, keys: WsKeys) -> ApiResult<Vec<Activity>> {
    let items = query_all(store, Query::table(keys.root_pk()).begins_with(ActivityRecord::PREFIX)).await?;
    let mut all = items
        .into_iter()
        .map(|i| entity::from_item::<ActivityRecord>(i).map(|r| r.activity))
        .collect::<Result<Vec<_>, _>>()?;
    all.sort_by_cached_key(order);
    Ok(all)
}

/// A new activity after the last one, not written yet: its sort comes from the workspace's
/// atomic counter, so concurrent creates get distinct consecutive values (a sort taken by a
/// create that then fails is a gap, as with any sequence).
pub async fn prepare(store: &dyn Store, keys: WsKeys, draft: Draft) -> ApiResult<ActivityRecord> {
    let last = async { Ok(list(store, keys).await?.iter().map(|a| a.sort).max().unwrap_or(0)) };
    let sort = entity::append_at_end(store, &sort_counter(keys), last).await?;
    let now = clock::now_rfc3339();
    let activity = Activity { id: Uuid::new_v4(), name: draft.name, sort, translations: draft.translations };
    Ok(ActivityRecord { activity, created_at: now.clone(), updated_at: now, version: 1 })
}

/// Writes a prepared activity, with the request's idempotency completion when there is one.
pub async fn create(
    store: &dyn Store,
    keys: WsKeys,
    record: &ActivityRecord,
    completion: Option<&entity::Completion>,
) -> ApiResult<()> {
    Ok(entity::create(store, record, keys, "Work activity exists", completion).await?)
}

impl ActivityRecord {
    pub fn activity(&self) -> &Activity {
        &self.activity
    }
}

/// Replaces name and translations; the sort order stays. A concurrent replace in between is
/// re-applied on the version it wrote (`entity::modify`): the last one wins whole.
/// Replaces name and translations; with `If-Match`, only the activity as the client read it.
pub async fn replace(
    store: &dyn Store,
    keys: WsKeys,
    id: Uuid,
    draft: Draft,
    if_match: &IfMatch,
    event: impl Fn(&Activity) -> ApiResult<entity::Completion>,
) -> ApiResult<Activity> {
    let busy = "The work activity is being changed concurrently; retry";
    let updated_at = clock::now_rfc3339();
    let change = |stored: Option<ActivityRecord>| {
        let mut record = stored.ok_or_else(|| ApiError::not_found("Work activity not found"))?;
        if_match.check(&record.activity)?;
        record.activity.name = draft.name.clone();
        record.activity.translations = draft.translations.clone();
        record.updated_at = updated_at.clone();
        Ok(Change::Write(record))
    };
    let beside = |next: &ActivityRecord| event(&next.activity);
    let record = entity::modify_with(store, &activity_key(keys, id), keys, busy, change, beside).await?;
    Ok(record.activity)
}
