//! Work-activity persistence: one item per activity in the workspace partition. Updates are
//! conditioned on the version they read, so two concurrent full updates cannot interleave.

use super::rules::{Activity, Draft};
use serde::{Deserialize, Serialize};
use shared::clock;
use shared::store::keys::WsKeys;
use shared::store::{Condition, Query, Store, StoreError, from_item, query_all, to_item};
use shared::{ApiError, ApiResult};
use uuid::Uuid;

const ENTITY_ACTIVITY: &str = "WorkActivity";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ActivityRecord {
    #[serde(flatten)]
    activity: Activity,
    created_at: String,
    updated_at: String,
    version: i64,
}

/// Every activity of the workspace, by sort order then name.
pub async fn list(store: &dyn Store, keys: WsKeys) -> ApiResult<Vec<Activity>> {
    let items = query_all(store, Query::table(keys.root_pk()).begins_with(WsKeys::ACTIVITY_PREFIX)).await?;
    let mut all =
        items.into_iter().map(|i| from_item::<ActivityRecord>(i).map(|r| r.activity)).collect::<Result<Vec<_>, _>>()?;
    all.sort_by(|a, b| (a.sort, &a.name, a.id).cmp(&(b.sort, &b.name, b.id)));
    Ok(all)
}

/// Appends an activity after the last one.
pub async fn create(store: &dyn Store, keys: WsKeys, draft: Draft) -> ApiResult<Activity> {
    let sort = list(store, keys).await?.iter().map(|a| a.sort).max().map_or(1, |s| s + 1);
    let now = clock::now_rfc3339();
    let activity = Activity { id: Uuid::new_v4(), name: draft.name, sort, translations: draft.translations };
    let record = ActivityRecord { activity, created_at: now.clone(), updated_at: now, version: 1 };
    store.put(to_item(&record, ENTITY_ACTIVITY, &keys.activity(record.activity.id)), Condition::NotExists).await?;
    Ok(record.activity)
}

/// Replaces name and translations; the sort order stays.
pub async fn replace(store: &dyn Store, keys: WsKeys, id: Uuid, draft: Draft) -> ApiResult<Activity> {
    let key = keys.activity(id);
    let current: ActivityRecord =
        from_item(store.get(&key).await?.ok_or_else(|| ApiError::not_found("Work activity not found"))?)?;
    let record = ActivityRecord {
        activity: Activity { id, name: draft.name, sort: current.activity.sort, translations: draft.translations },
        created_at: current.created_at,
        updated_at: clock::now_rfc3339(),
        version: current.version + 1,
    };
    match store.put(to_item(&record, ENTITY_ACTIVITY, &key), Condition::VersionEquals(current.version)).await {
        Ok(()) => Ok(record.activity),
        Err(StoreError::ConditionFailed) => Err(ApiError::conflict("Work activity changed concurrently; retry")),
        Err(e) => Err(e.into()),
    }
}
