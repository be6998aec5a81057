//! Tag persistence. A tag item plus a name guard (`TAGNAME#<folded name>`) written in one
//! transaction: concurrent creates of one name produce exactly one tag, and every caller gets it.

use crate::domain::{TagType, fold_name};
use serde::{Deserialize, Serialize};
use shared::clock;
use shared::store::keys::WsKeys;
use shared::store::{Condition, Query, Store, StoreError, TxOp, Update, VERSION, from_item, query_all, to_item};
use shared::{ApiError, ApiResult};
use uuid::Uuid;

const ENTITY_TAG: &str = "Tag";
const ENTITY_TAG_NAME: &str = "TagName";

/// How often a create retries after losing a race whose winner vanished again (a concurrent
/// delete) or after a transaction conflict.
const CREATE_ATTEMPTS: usize = 5;

/// The tag as the API returns it (spec §2.5).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Tag {
    pub id: Uuid,
    pub name: String,
    /// One of the palette, or null when unset
    #[schema(required, value_type = Option<crate::domain::Color>)]
    pub color: Option<String>,
    /// Soft-deleted tags do not appear in lists
    pub is_deleted: bool,
}

/// The stored record: the tag plus bookkeeping that is not part of the response.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TagRecord {
    #[serde(flatten)]
    tag: Tag,
    created_at: String,
    created_by: Uuid,
    version: i64,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NameGuard {
    tag_id: Uuid,
}

async fn get_record(store: &dyn Store, keys: WsKeys, tag_type: TagType, id: Uuid) -> ApiResult<Option<TagRecord>> {
    Ok(store.get(&keys.tag(tag_type.as_str(), id)).await?.map(from_item).transpose()?)
}

/// Creates the tag, or returns the live tag whose name matches case-insensitively.
pub async fn create_or_get(store: &dyn Store, keys: WsKeys, tag_type: TagType, name: &str, by: Uuid) -> ApiResult<Tag> {
    let folded = fold_name(name);
    let guard_key = keys.tag_name(tag_type.as_str(), &folded);
    for _ in 0..CREATE_ATTEMPTS {
        let record = TagRecord {
            tag: Tag { id: Uuid::new_v4(), name: name.to_owned(), color: None, is_deleted: false },
            created_at: clock::now_rfc3339(),
            created_by: by,
            version: 1,
        };
        let guard = to_item(&NameGuard { tag_id: record.tag.id }, ENTITY_TAG_NAME, &guard_key);
        let item = to_item(&record, ENTITY_TAG, &keys.tag(tag_type.as_str(), record.tag.id));
        let written = store
            .transact(vec![
                TxOp::Put { item: guard, cond: Condition::NotExists },
                TxOp::Put { item, cond: Condition::NotExists },
            ])
            .await;
        match written {
            Ok(()) => return Ok(record.tag),
            Err(StoreError::TransactionCancelled { .. }) => {
                // Someone holds the name (or we collided with a concurrent transaction).
                if let Some(guard) = store.get(&guard_key).await? {
                    let guard: NameGuard = from_item(guard)?;
                    if let Some(existing) = get_record(store, keys, tag_type, guard.tag_id).await?
                        && !existing.tag.is_deleted
                    {
                        return Ok(existing.tag);
                    }
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::internal(format!("tag create for {tag_type:?} did not settle after {CREATE_ATTEMPTS} attempts")))
}

/// Live tags of a type, ordered by name (case-insensitive).
pub async fn list_live(store: &dyn Store, keys: WsKeys, tag_type: TagType) -> ApiResult<Vec<Tag>> {
    let query = Query::table(keys.tags_pk(tag_type.as_str())).begins_with(WsKeys::TAG_PREFIX);
    let mut tags = Vec::new();
    for item in query_all(store, query).await? {
        let record: TagRecord = from_item(item)?;
        if !record.tag.is_deleted {
            tags.push(record.tag);
        }
    }
    tags.sort_by_cached_key(|t| (fold_name(&t.name), t.id));
    Ok(tags)
}

fn tag_not_found() -> ApiError {
    ApiError::not_found("Tag not found")
}

pub async fn set_color(
    store: &dyn Store,
    keys: WsKeys,
    tag_type: TagType,
    id: Uuid,
    color: Option<String>,
) -> ApiResult<Tag> {
    let record =
        get_record(store, keys, tag_type, id).await?.filter(|r| !r.tag.is_deleted).ok_or_else(tag_not_found)?;
    let update = Update::default().set("color", color).set(VERSION, record.version + 1);
    match store.update(&keys.tag(tag_type.as_str(), id), update, Condition::VersionEquals(record.version)).await {
        Ok(item) => Ok(from_item::<TagRecord>(item)?.tag),
        // Changed or deleted in between: report the state the client can re-read.
        Err(StoreError::ConditionFailed) => Err(ApiError::conflict("Tag changed concurrently; retry")),
        Err(e) => Err(e.into()),
    }
}

/// Marks the tag deleted and frees its name, atomically.
pub async fn soft_delete(store: &dyn Store, keys: WsKeys, tag_type: TagType, id: Uuid) -> ApiResult<()> {
    let record =
        get_record(store, keys, tag_type, id).await?.filter(|r| !r.tag.is_deleted).ok_or_else(tag_not_found)?;
    let ops = vec![
        TxOp::Update {
            key: keys.tag(tag_type.as_str(), id),
            update: Update::default().set("isDeleted", true).set(VERSION, record.version + 1),
            cond: Condition::VersionEquals(record.version),
        },
        TxOp::Delete { key: keys.tag_name(tag_type.as_str(), &fold_name(&record.tag.name)), cond: Condition::None },
    ];
    match store.transact(ops).await {
        Ok(()) => Ok(()),
        Err(StoreError::TransactionCancelled { .. }) => Err(ApiError::conflict("Tag changed concurrently; retry")),
        Err(e) => Err(e.into()),
    }
}
