//! Notification persistence (docs/account.md, docs/data-model.md). Every notification is three
//! items in its user's partition `WS#<ws>#USER#<userId>`, written together in one transaction:
//!
//! - `NOTIF#<id>`: the record, the truth about `isRead` (found by id: one read);
//! - `NOTIFAT#<createdAt>#<id>`: its timeline entry (the full list, newest first: one query);
//! - `NOTIFUNREAD#<createdAt>#<id>`: present only while unread (the unread-only list, and the
//!   unread count, which is the number of these entries).
//!
//! All three are table items, so every list and the count are strongly consistent: a
//! notification marked read has left the unread list and the count when the 200 is sent. The
//! user id is in the partition key: another user's notification is not found (404), never
//! forbidden, and no request can address one.

use crate::cursor::Position;
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_kit::entity::{self, Attempt, Entity};
use workapi_kit::{ApiError, ApiResult};
use workapi_store::clock;
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Cursor, Item, Key, PK, Query, SK, Store, StoreError, TxOp, Update, query_all};

/// Whose notifications: the workspace and the user.
pub type Scope = (WsKeys, Uuid);

/// The user's own partition, beside the user record.
fn partition((keys, user_id): Scope) -> String {
    keys.user_pk(user_id)
}

/// A notification as the API returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "0b7c1a52-4a4e-4f0e-9a57-2f1d2b3c4d5e", "title": "New comment on #1042",
    "body": "Erika commented on Checkout redesign.", "createdAt": "2026-11-24T09:30:00.000Z",
    "isRead": false, "readAt": null})))]
pub struct Notification {
    pub id: Uuid,
    pub title: String,
    /// Plain text
    pub body: String,
    #[schema(format = DateTime)]
    pub created_at: String,
    pub is_read: bool,
    /// When it was first marked read; null while unread
    #[schema(required, format = DateTime)]
    pub read_at: Option<String>,
}

impl Notification {
    pub fn position(&self) -> Position {
        Position { created_at: self.created_at.clone(), id: self.id }
    }
}

/// The stored record: the notification, its owner and its version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationRecord {
    #[serde(flatten)]
    pub notification: Notification,
    pub user_id: Uuid,
    pub version: i64,
}

impl Entity for NotificationRecord {
    const TYPE: &'static str = "Notification";
    const PREFIX: &'static str = "NOTIF#";
    type Scope = Scope;

    fn key(&self, scope: Scope) -> Key {
        record_key(scope, self.notification.id)
    }
}

fn record_key(scope: Scope, id: Uuid) -> Key {
    Key::new(partition(scope), format!("{}{id}", NotificationRecord::PREFIX))
}

/// The timeline entry: a copy of the notification, kept in step by every write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TimelineEntry(pub Notification);

impl Entity for TimelineEntry {
    const TYPE: &'static str = "NotificationTimeline";
    const PREFIX: &'static str = "NOTIFAT#";
    type Scope = Scope;

    fn key(&self, scope: Scope) -> Key {
        entry_key::<Self>(scope, &self.0.position())
    }
}

/// The unread entry: a copy of an unread notification; deleted when it is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UnreadEntry(pub Notification);

impl Entity for UnreadEntry {
    const TYPE: &'static str = "UnreadNotification";
    const PREFIX: &'static str = "NOTIFUNREAD#";
    type Scope = Scope;

    fn key(&self, scope: Scope) -> Key {
        entry_key::<Self>(scope, &self.0.position())
    }
}

fn entry_key<E: Entity>(scope: Scope, at: &Position) -> Key {
    Key::new(partition(scope), format!("{}{}", E::PREFIX, at.sort_key()))
}

pub async fn get(store: &dyn Store, scope: Scope, id: Uuid) -> ApiResult<Option<NotificationRecord>> {
    Ok(entity::get(store, &record_key(scope, id)).await?)
}

/// Marks the caller's notification read. Idempotent: an already-read notification is left as
/// it is (its first `readAt` stays). Concurrent marks race on the record's version; the
/// losers re-read, find it read, and answer the same.
/// `event` (`notification.read`) is written in the change's transaction; marking a read
/// notification again writes nothing, so records no event.
pub async fn mark_read(
    store: &dyn Store,
    scope: Scope,
    id: Uuid,
    event: impl Fn(&Notification) -> ApiResult<TxOp>,
) -> ApiResult<Notification> {
    entity::retry_on_conflict("The notification is being changed concurrently; retry", |_| async {
        let record = get(store, scope, id).await?.ok_or_else(|| ApiError::not_found("Notification not found"))?;
        if record.notification.is_read {
            return Ok(Attempt::Done(record.notification));
        }
        let read_at = clock::now_rfc3339();
        let at = record.notification.position();
        let read = Notification { is_read: true, read_at: Some(read_at.clone()), ..record.notification.clone() };
        let ops = vec![
            TxOp::Update {
                key: record_key(scope, id),
                update: Update::default()
                    .set("isRead", true)
                    .set("readAt", read_at.clone())
                    .set(workapi_store::VERSION, record.version + 1),
                cond: Condition::VersionEquals(record.version),
            },
            TxOp::Update {
                key: entry_key::<TimelineEntry>(scope, &at),
                update: Update::default().set("isRead", true).set("readAt", read_at.clone()),
                cond: Condition::Exists,
            },
            TxOp::Delete { key: entry_key::<UnreadEntry>(scope, &at), cond: Condition::None },
            event(&read)?,
        ];
        match store.transact(ops).await {
            Ok(()) => Ok(Attempt::Done(read)),
            Err(e) if entity::is_conflict(&e) => Ok(Attempt::Conflict),
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// One page of a user's notifications, newest first, and where the next page starts.
pub struct Page {
    pub items: Vec<Notification>,
    pub next: Option<Position>,
}

/// Newest first, after `after` (exclusive), at most `limit`; only unread ones when asked.
pub async fn list(
    store: &dyn Store,
    scope: Scope,
    unread_only: bool,
    limit: u32,
    after: Option<&Position>,
) -> ApiResult<Page> {
    let prefix = if unread_only { UnreadEntry::PREFIX } else { TimelineEntry::PREFIX };
    let base = Query::table(partition(scope)).begins_with(prefix).backward();
    let mut cursor = after.map(|at| {
        let mut item = Item::new();
        item.insert(PK.into(), partition(scope).into());
        item.insert(SK.into(), format!("{prefix}{}", at.sort_key()).into());
        Cursor(item)
    });
    // One more than the page, to know whether another page follows (a store page may also end
    // early, at DynamoDB's 1 MB, so keep reading until enough or the end).
    let mut items = Vec::new();
    loop {
        let page = store.query(base.clone().limit(limit + 1 - items.len() as u32).after(cursor)).await?;
        for item in page.items {
            items.push(entity::from_item::<Notification>(item)?);
        }
        cursor = page.next;
        if items.len() > limit as usize || cursor.is_none() {
            break;
        }
    }
    let next = (items.len() > limit as usize).then(|| {
        items.truncate(limit as usize);
        items.last().map(Notification::position)
    });
    Ok(Page { items, next: next.flatten() })
}

/// The number of unread notifications: the unread entries, counted (exact, strongly consistent).
pub async fn unread_count(store: &dyn Store, scope: Scope) -> ApiResult<usize> {
    let query = Query::table(partition(scope)).begins_with(UnreadEntry::PREFIX);
    Ok(query_all(store, query).await?.len())
}

/// The puts that store a notification: its record (first, under `cond`), its timeline entry
/// and, while unread, its unread entry (what [`write`] and [`create`] write; the generator of
/// large workspaces batches them).
pub fn puts(scope: Scope, record: NotificationRecord, cond: Condition) -> ApiResult<Vec<TxOp>> {
    let mut ops = vec![TxOp::Put { item: entity::to_item(&record, scope)?, cond }];
    let timeline = TimelineEntry(record.notification.clone());
    ops.push(TxOp::Put { item: entity::to_item(&timeline, scope)?, cond: Condition::None });
    if !record.notification.is_read {
        let unread = UnreadEntry(record.notification);
        ops.push(TxOp::Put { item: entity::to_item(&unread, scope)?, cond: Condition::None });
    }
    Ok(ops)
}

/// Writes a notification as given (the operator seed), its entries with it, in one
/// transaction, unless it is stored so already. Whether it wrote.
pub async fn write(store: &dyn Store, keys: WsKeys, notification: Notification, user_id: Uuid) -> ApiResult<bool> {
    let scope = (keys, user_id);
    let stored = get(store, scope, notification.id).await?;
    if stored.as_ref().is_some_and(|s| s.notification == notification && s.user_id == user_id) {
        return Ok(false);
    }
    let record = NotificationRecord { notification, user_id, version: stored.as_ref().map_or(1, |s| s.version + 1) };
    let at = record.notification.position();
    let mut ops = Vec::new();
    let moved = stored.as_ref().map(|s| s.notification.position()).filter(|old| *old != at);
    if let Some(old) = &moved {
        // A changed createdAt moves the entries: the old ones must not stay behind.
        ops.push(TxOp::Delete { key: entry_key::<TimelineEntry>(scope, old), cond: Condition::None });
        ops.push(TxOp::Delete { key: entry_key::<UnreadEntry>(scope, old), cond: Condition::None });
    }
    let is_read = record.notification.is_read;
    ops.extend(puts(scope, record, Condition::None)?);
    if is_read && moved.is_none() {
        ops.push(TxOp::Delete { key: entry_key::<UnreadEntry>(scope, &at), cond: Condition::None });
    }
    store.transact(ops).await?;
    Ok(true)
}

/// Writes a new unread notification once (the notifications made from events, docs/account.md):
/// its record conditioned on not existing, with its entries, in one transaction. Its id is
/// deterministic, so a retried or concurrent second write of the same notification finds the
/// record and writes nothing: `false`, not an error. Whether it wrote.
pub async fn create(store: &dyn Store, scope: Scope, notification: Notification) -> ApiResult<bool> {
    let record = NotificationRecord { notification, user_id: scope.1, version: 1 };
    let ops = puts(scope, record, Condition::NotExists)?;
    entity::retry_on_conflict("The notification is being written concurrently; retry", |_| {
        let ops = ops.clone();
        async move {
            match store.transact(ops).await {
                Ok(()) => Ok(Attempt::Done(true)),
                // The record's condition failed: it is stored already.
                Err(StoreError::TransactionCancelled { failed }) if failed.contains(&0) => Ok(Attempt::Done(false)),
                Err(e) if entity::is_conflict(&e) => Ok(Attempt::Conflict),
                Err(e) => Err(e.into()),
            }
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use workapi_store::sqlite::SqliteStore;

    fn note(id: Uuid, at: &str, read: bool) -> Notification {
        Notification {
            id,
            title: "t".into(),
            body: String::new(),
            created_at: at.into(),
            is_read: read,
            read_at: read.then(|| at.to_owned()),
        }
    }

    #[tokio::test]
    async fn rewriting_moves_the_entries_and_marking_read_writes_once() {
        let store = SqliteStore::in_memory().unwrap();
        let (keys, user, id) = (WsKeys::new(Uuid::new_v4()), Uuid::new_v4(), Uuid::new_v4());
        let scope = (keys, user);
        assert!(write(&store, keys, note(id, "2026-11-20T08:00:00.000Z", false), user).await.unwrap());
        assert!(!write(&store, keys, note(id, "2026-11-20T08:00:00.000Z", false), user).await.unwrap());
        // A new createdAt moves both entries: nothing stays at the old place.
        assert!(write(&store, keys, note(id, "2026-11-21T08:00:00.000Z", false), user).await.unwrap());
        let all = list(&store, scope, false, 10, None).await.unwrap();
        assert_eq!(all.items.iter().map(|n| n.created_at.as_str()).collect::<Vec<_>>(), ["2026-11-21T08:00:00.000Z"]);
        assert_eq!(unread_count(&store, scope).await.unwrap(), 1);

        // The event: an outbox item, counted to see that the second mark writes none.
        let events = std::sync::atomic::AtomicUsize::new(0);
        let event = |_: &Notification| {
            events.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut item = workapi_store::Item::new();
            item.insert(workapi_store::PK.into(), keys.partition("EVENTS").into());
            item.insert(workapi_store::SK.into(), format!("EVT#{}", Uuid::new_v4()).into());
            item.insert(workapi_store::ENTITY.into(), "Event".into());
            Ok(TxOp::Put { item, cond: Condition::NotExists })
        };
        let read = mark_read(&store, scope, id, event).await.unwrap();
        let again = mark_read(&store, scope, id, event).await.unwrap();
        assert_eq!(events.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!((read.is_read, &read.read_at), (true, &again.read_at));
        assert_eq!(get(&store, scope, id).await.unwrap().unwrap().version, 3, "one write for two marks");
        assert_eq!(unread_count(&store, scope).await.unwrap(), 0);
        assert_eq!(list(&store, scope, false, 10, None).await.unwrap().items, vec![read]);
        // Another user's scope does not see it.
        let other = (keys, Uuid::new_v4());
        assert!(mark_read(&store, other, id, event).await.unwrap_err().status == axum::http::StatusCode::NOT_FOUND);

        // Seeded unread again, then read with a moved createdAt: no unread entry anywhere.
        write(&store, keys, note(id, "2026-11-21T08:00:00.000Z", false), user).await.unwrap();
        write(&store, keys, note(id, "2026-11-22T08:00:00.000Z", true), user).await.unwrap();
        assert_eq!(unread_count(&store, scope).await.unwrap(), 0);
        assert_eq!(list(&store, scope, false, 10, None).await.unwrap().items.len(), 1);
    }
}
