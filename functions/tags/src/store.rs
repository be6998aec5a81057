//! Tag persistence. A tag item plus a name guard (`TAGNAME#<folded name>`) written in one
//! transaction: concurrent creates of one name produce exactly one tag, and every caller gets it.
//! Keys: each tag type has its partition `WS#<ws>#TAGS#<type>` (docs/data-model.md); the tag
//! record and its key are `workapi_domain::tag`, the name guard is the function's own.

use crate::domain::{Color, fold_name};
use serde::{Deserialize, Serialize};
use uuid::Uuid;
pub use workapi_domain::tag::Tag;
use workapi_domain::tag::{self, Scope, TagRecord, key as tag_key, partition};
use workapi_kit::conditional::IfMatch;
use workapi_kit::entity::{self, Attempt, Change, Completion, Entity};
use workapi_kit::idempotency::Answer;
use workapi_kit::paging::{OrderKey, Paging, StoreList, Window};
use workapi_kit::{ApiError, ApiResult};
use workapi_store::clock;
use workapi_store::{Condition, GSI2PK, GSI2SK, Key, Store, StoreError, TxOp, Update};

/// The response of the [P] tag endpoints (named, so the document can reference it).
pub type TagProjection = workapi_kit::projection::Projected<Tag>;

/// The uniqueness guard of a live tag's name (case-folded).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NameGuard {
    tag_id: Uuid,
    /// Guards written before this attribute existed lack it; only new guards are keyed by it.
    #[serde(default)]
    folded_name: String,
}

impl Entity for NameGuard {
    const TYPE: &'static str = "TagName";
    const PREFIX: &'static str = "TAGNAME#";
    type Scope = Scope;

    fn key(&self, scope: Scope) -> Key {
        guard_key(scope, &self.folded_name)
    }
}

fn guard_key(scope: Scope, folded_name: &str) -> Key {
    Key::new(partition(scope), format!("{}{folded_name}", NameGuard::PREFIX))
}

async fn get_live(store: &dyn Store, scope: Scope, id: Uuid) -> ApiResult<TagRecord> {
    live(entity::get(store, &tag_key(scope, id)).await?)
}

/// The tag unless it is missing or deleted (404).
fn live(record: Option<TagRecord>) -> ApiResult<TagRecord> {
    record.filter(|r| !r.tag.is_deleted).ok_or_else(|| ApiError::not_found("Tag not found"))
}

/// A new tag named `name` and the writes that create it: the tag and its name guard, each only
/// where nothing is (`NotExists`), in one transaction.
pub fn new_tag(scope: Scope, name: &str, by: Uuid) -> ApiResult<(TagRecord, Vec<TxOp>)> {
    let folded = fold_name(name);
    let record = TagRecord {
        tag: Tag { id: Uuid::new_v4(), name: name.to_owned(), color: None, is_deleted: false },
        folded_name: folded.clone(),
        created_at: clock::now_rfc3339(),
        created_by: by,
        version: 1,
    };
    let guard = NameGuard { tag_id: record.tag.id, folded_name: folded };
    let ops = vec![
        TxOp::Put { item: entity::to_item(&guard, scope)?, cond: Condition::NotExists },
        TxOp::Put { item: entity::to_item(&record, scope)?, cond: Condition::NotExists },
    ];
    Ok((record, ops))
}

/// Creates the tag, or returns the live tag whose name matches case-insensitively; `respond`
/// turns the tag into the answer. A new tag's answer is built before its transaction, which
/// records it (the request's idempotency completion: `workapi_kit::idempotency`), re-added on every
/// attempt.
///
/// An existing tag is returned without any write, so there is no transaction to record its
/// answer in: the idempotency layer records that answer with its own write afterwards. That
/// is safe: nothing was created, and a retry that runs again finds the same tag.
pub async fn create_or_get(
    store: &dyn Store,
    scope: Scope,
    name: &str,
    by: Uuid,
    respond: impl Fn(&Tag) -> ApiResult<Answer>,
) -> ApiResult<Answer> {
    let folded = fold_name(name);
    entity::retry_on_conflict("The tag name is being changed concurrently; retry", |_| async {
        let (record, ops) = new_tag(scope, name, by)?;
        let answer = respond(&record.tag)?;
        match entity::transact(store, ops, answer.completion()).await {
            Ok(()) => Ok(Attempt::Done(answer)),
            // Someone holds the name: theirs is the tag, unless it vanished meanwhile.
            Err(e) if entity::is_conflict(&e) => {
                let holder: Option<NameGuard> = entity::get(store, &guard_key(scope, &folded)).await?;
                match holder {
                    Some(holder) => match get_live(store, scope, holder.tag_id).await {
                        Ok(existing) => Ok(Attempt::Done(respond(&existing.tag)?)),
                        Err(_) => Ok(Attempt::Conflict),
                    },
                    None => Ok(Attempt::Conflict),
                }
            }
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// One page of the live tags of a type, by name (case-insensitive): read from the list index
/// from the cursor on, never the whole list.
pub async fn list_page(store: &dyn Store, scope: Scope, paging: &Paging) -> ApiResult<Window<Tag>> {
    let list = StoreList {
        query: tag::list_query(scope),
        start_after: |after: &OrderKey| tag::list_start(scope, after),
        key: tag::order,
        largest_item: 1024,
    };
    let decode = |item| Ok(Some(entity::from_item::<TagRecord>(item)?));
    Ok(paging.window_from_store(store, list, decode).await?.map(|record| record.tag))
}

/// Sets the colour while the tag is live and, with `If-Match`, still as the client read it.
pub async fn set_color(
    store: &dyn Store,
    scope: Scope,
    id: Uuid,
    color: Option<Color>,
    if_match: &IfMatch,
    event: impl Fn(&Tag) -> ApiResult<Completion>,
) -> ApiResult<Tag> {
    let busy = "The tag is being changed concurrently; retry";
    let change = |stored: Option<TagRecord>| {
        let record = live(stored)?;
        if_match.check(&record.tag)?;
        Ok(Change::Write(TagRecord { tag: Tag { color, ..record.tag }, ..record }))
    };
    let updated =
        entity::modify_with(store, &tag_key(scope, id), scope, busy, change, |next: &TagRecord| event(&next.tag))
            .await?;
    Ok(updated.tag)
}

/// Marks the tag deleted and frees its name, atomically; with `If-Match`, only the tag as the
/// client read it (the delete is conditioned on the version checked).
pub async fn soft_delete(
    store: &dyn Store,
    scope: Scope,
    id: Uuid,
    if_match: &IfMatch,
    event: impl Fn(&Tag) -> ApiResult<TxOp>,
) -> ApiResult<()> {
    let record = get_live(store, scope, id).await?;
    if_match.check(&record.tag)?;
    let deleted = Tag { is_deleted: true, ..record.tag.clone() };
    let ops = vec![
        TxOp::Update {
            key: tag_key(scope, id),
            // Out of the list index too: a deleted tag is not listed.
            update: Update::default()
                .set("isDeleted", true)
                .set(workapi_store::VERSION, record.version + 1)
                .remove(GSI2PK)
                .remove(GSI2SK),
            cond: Condition::VersionEquals(record.version),
        },
        TxOp::Delete { key: guard_key(scope, &fold_name(&record.tag.name)), cond: Condition::None },
        event(&deleted)?,
    ];
    match store.transact(ops).await {
        Ok(()) => Ok(()),
        Err(StoreError::TransactionCancelled { .. }) => Err(entity::changed_concurrently("tag")),
        Err(e) => Err(e.into()),
    }
}
