//! The entity layer above the [`Store`] trait (docs/data-model.md): an entity declares its type
//! name, its key prefix and how its keys are built, once; the helpers here write it with its
//! keys and index keys, turn a lost condition into a typed [`EntityError`] in one place, and
//! keep the counters of ordered collections. (Retrying a lost race (`modify`) and appending at the end of a
//! collection answer HTTP errors, so they live in the kit: `workapi_kit::entity`.)

use crate::{
    Condition, ENTITY, GSI1PK, GSI1SK, GSI2PK, GSI2SK, Item, Key, PK, SK, Store, StoreError, StoreResult, TxOp,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;

/// An entity's type name and the key prefix that sets its items apart, as listed by the
/// function that owns it (the registry test checks that no two prefixes overlap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntityKind {
    pub name: &'static str,
    pub prefix: &'static str,
}

/// A secondary-index key (GSI1 or GSI2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexKey {
    pub pk: String,
    pub sk: String,
}

/// A record stored as one item.
pub trait Entity: Serialize + DeserializeOwned + Send + Sync {
    /// The `entity` attribute of its items: unique across the table.
    const TYPE: &'static str;
    /// The prefix of the key part that sets its items apart (the sort key in a shared
    /// partition, the partition key for items alone in theirs).
    const PREFIX: &'static str;
    const KIND: EntityKind = EntityKind { name: Self::TYPE, prefix: Self::PREFIX };
    /// What the keys need besides the record: the workspace (`WsKeys`) for tenant data, the
    /// token's hash for a credential looked up by its token.
    type Scope: Clone + Send + Sync;

    fn key(&self, scope: Self::Scope) -> Key;

    /// The GSI1 key, for entities listed through the index.
    fn gsi1(&self, _scope: Self::Scope) -> Option<IndexKey> {
        None
    }

    /// The list index key (GSI2), for entities whose list can be long: the list's partition
    /// and the entity's place in the list's order (`workapi_wire::order::OrderKey::sort_text`),
    /// so that a page is read from the cursor on instead of the whole list. `None` takes the
    /// entity out of the list (a deleted tag).
    fn gsi2(&self, _scope: Self::Scope) -> Option<IndexKey> {
        None
    }
}

/// An entity written with optimistic concurrency: its `version` grows by one on every write.
pub trait Versioned: Entity {
    fn version(&self) -> i64;
    fn set_version(&mut self, version: i64);
}

/// What the entity layer's writes refuse, beside the store's own failures: typed, so that a
/// caller matches on the meaning (the kit answers `Exists` and `Stale` with 409: `From<EntityError>
/// for ApiError`), never on a status read back.
#[derive(Debug, thiserror::Error)]
pub enum EntityError {
    /// A create found another item at the entity's key; the message is the caller's.
    #[error("{0}")]
    Exists(String),
    /// An optimistic-concurrency write lost the race: the entity (of this type) changed since
    /// it was read.
    #[error("The {0} changed concurrently; read it again and retry")]
    Stale(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub type EntityResult<T> = Result<T, EntityError>;

/// The item of an entity: its attributes, keys, index keys and type. A record that does not
/// serialise to an object is an error, never a half-written item.
pub fn to_item<E: Entity>(entity: &E, scope: E::Scope) -> StoreResult<Item> {
    let mut item = match serde_json::to_value(entity) {
        Ok(Value::Object(map)) => map,
        Ok(other) => return Err(StoreError::Invalid(format!("{} serialises to {other}, not an object", E::TYPE))),
        Err(e) => return Err(StoreError::Invalid(format!("{} does not serialise: {e}", E::TYPE))),
    };
    let key = entity.key(scope.clone());
    item.insert(PK.into(), key.pk.into());
    item.insert(SK.into(), key.sk.into());
    item.insert(ENTITY.into(), E::TYPE.into());
    if let Some(index) = entity.gsi1(scope.clone()) {
        item.insert(GSI1PK.into(), index.pk.into());
        item.insert(GSI1SK.into(), index.sk.into());
    }
    if let Some(index) = entity.gsi2(scope) {
        item.insert(GSI2PK.into(), index.pk.into());
        item.insert(GSI2SK.into(), index.sk.into());
    }
    Ok(item)
}

/// Where a query of the table starts after an item: its key, as DynamoDB's
/// `ExclusiveStartKey` holds it. The item need not exist any more.
pub fn table_start(table: &Key) -> crate::Cursor {
    let mut item = Item::new();
    item.insert(PK.into(), table.pk.clone().into());
    item.insert(SK.into(), table.sk.clone().into());
    crate::Cursor(item)
}

/// Where a query of a secondary index starts after an item: the item's table key and its
/// index key, as DynamoDB's `ExclusiveStartKey` holds them. The item need not exist any more.
pub fn index_start(index: crate::Index, table: &Key, at: IndexKey) -> crate::Cursor {
    let (index_pk, index_sk) = index.key_attrs();
    let mut item = Item::new();
    item.insert(PK.into(), table.pk.clone().into());
    item.insert(SK.into(), table.sk.clone().into());
    item.insert(index_pk.into(), at.pk.into());
    item.insert(index_sk.into(), at.sk.into());
    crate::Cursor(item)
}

/// Reads an entity back from its item (key and bookkeeping attributes are ignored).
pub fn from_item<E: DeserializeOwned>(item: Item) -> StoreResult<E> {
    crate::from_item(item)
}

pub async fn get<E: Entity>(store: &dyn Store, key: &Key) -> StoreResult<Option<E>> {
    store.get(key).await?.map(from_item).transpose()
}

/// An entity that moved to a partition of its own (docs/data-model.md#lists): read at its key,
/// or, when absent there, at the key it had before, until `workapi table reindex` moves it.
pub async fn get_moved<E: Entity>(store: &dyn Store, key: &Key, before: &Key) -> StoreResult<Option<E>> {
    match get(store, key).await? {
        Some(found) => Ok(Some(found)),
        None => get(store, before).await,
    }
}

/// The writes that must be applied with a change, in its transaction: the completion of the
/// request's idempotency record (`workapi_kit::idempotency`: the recorded response) and the
/// change's events (the outbox: `workapi_kit::events`, docs/events.md). The writing helpers
/// below take one (`None` for a write with nothing beside it), add its operations to the
/// transaction that makes the change, and report it written once that transaction succeeded;
/// the idempotency layer then writes nothing more.
#[derive(Clone, Default)]
pub struct Completion {
    ops: Vec<TxOp>,
    on_written: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl Completion {
    /// `op` is the write; `on_written` runs when a transaction holding it succeeded.
    pub fn new(op: TxOp, on_written: impl Fn() + Send + Sync + 'static) -> Self {
        Completion { ops: vec![op], on_written: Some(Arc::new(on_written)) }
    }

    /// Writes that need no report once written (events).
    pub fn of(ops: Vec<TxOp>) -> Self {
        Completion { ops, on_written: None }
    }

    /// This completion with `op` written beside its own operations.
    pub fn and(mut self, op: TxOp) -> Self {
        self.ops.push(op);
        self
    }

    /// The writes, in the order they join the transaction.
    pub fn ops(&self) -> &[TxOp] {
        &self.ops
    }

    fn written(&self) {
        if let Some(on_written) = &self.on_written {
            on_written();
        }
    }
}

impl std::fmt::Debug for Completion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completion").field("ops", &self.ops).finish_non_exhaustive()
    }
}

/// Writes `ops` in one transaction, with the completion's operations last when there is one.
/// Inside [`retry_on_conflict`] each attempt calls it again, so the completion is re-added to
/// every attempt's transaction.
pub async fn transact(store: &dyn Store, mut ops: Vec<TxOp>, completion: Option<&Completion>) -> StoreResult<()> {
    if let Some(completion) = completion {
        ops.extend(completion.ops.iter().cloned());
    }
    store.transact(ops).await?;
    if let Some(completion) = completion {
        completion.written();
    }
    Ok(())
}

/// Writes one item: a plain put without a completion (one request, as before), a transaction
/// of the put and the completion with one. The put's condition failing is `ConditionFailed`
/// either way; the completion's failing (the idempotency record is no longer this request's)
/// stays a cancelled transaction.
pub async fn put(store: &dyn Store, item: Item, cond: Condition, completion: Option<&Completion>) -> StoreResult<()> {
    if completion.is_none_or(|c| c.ops.is_empty()) {
        let written = store.put(item, cond).await;
        if let (Ok(()), Some(completion)) = (&written, completion) {
            completion.written();
        }
        return written;
    }
    match transact(store, vec![TxOp::Put { item, cond }], completion).await {
        Err(StoreError::TransactionCancelled { failed }) if failed.contains(&0) => Err(StoreError::ConditionFailed),
        other => other,
    }
}

/// Writes a new entity; one that exists already is [`EntityError::Exists`] with `conflict` as
/// its message (a 409). With a
/// completion, the put and the completion are one transaction ([`put`]).
///
/// When the put was applied but its answer lost (a reset, a timeout after the write), the
/// SDK's retry finds the item there: an item equal to ours is ours, not a conflict
/// (docs/reliability.md). Its fresh id was only ever in this call's transaction, which held
/// the completion too: so the completion was applied with it, and is reported written.
pub async fn create<E: Entity>(
    store: &dyn Store,
    entity: &E,
    scope: E::Scope,
    conflict: &str,
    completion: Option<&Completion>,
) -> EntityResult<()> {
    let item = to_item(entity, scope.clone())?;
    match put(store, item.clone(), Condition::NotExists, completion).await {
        Ok(()) => Ok(()),
        Err(StoreError::ConditionFailed) => {
            let key = entity.key(scope);
            match store.get(&key).await? {
                Some(existing) if existing == item => {
                    if let Some(completion) = completion {
                        completion.written();
                    }
                    Ok(())
                }
                _ => Err(EntityError::Exists(conflict.to_owned())),
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// What [`create_with`] came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Created {
    /// The entity and every write beside it are written.
    Done,
    /// The conditions of these writes beside it (indexes into `also`) did not hold; nothing was
    /// written.
    Refused(Vec<usize>),
    /// Cancelled by a concurrent transaction on the same items (DynamoDB cancels one of two);
    /// nothing was written: try again ([`retry_on_conflict`]).
    Contended,
}

/// Writes a new entity together with `also` (writes that must happen with it or not at all: a
/// counter it counts on, a reference it takes) in one transaction, the completion last. An
/// entity that exists already is a 409 with `conflict` as its message, except the same item,
/// which is this create applied with its answer lost, as in [`create`].
pub async fn create_with<E: Entity>(
    store: &dyn Store,
    entity: &E,
    scope: E::Scope,
    conflict: &str,
    also: Vec<TxOp>,
    completion: Option<&Completion>,
) -> EntityResult<Created> {
    let item = to_item(entity, scope.clone())?;
    let beside = 1..=also.len();
    let mut ops = vec![TxOp::Put { item: item.clone(), cond: Condition::NotExists }];
    ops.extend(also);
    match transact(store, ops, completion).await {
        Ok(()) => Ok(Created::Done),
        Err(StoreError::TransactionCancelled { failed }) if failed.contains(&0) => {
            match store.get(&entity.key(scope)).await? {
                Some(existing) if existing == item => {
                    if let Some(completion) = completion {
                        completion.written();
                    }
                    Ok(Created::Done)
                }
                _ => Err(EntityError::Exists(conflict.to_owned())),
            }
        }
        Err(StoreError::TransactionCancelled { failed }) if failed.iter().any(|i| beside.contains(i)) => {
            Ok(Created::Refused(failed.iter().filter(|i| beside.contains(i)).map(|i| i - 1).collect()))
        }
        Err(StoreError::TransactionCancelled { failed }) if failed.is_empty() => Ok(Created::Contended),
        Err(e) => Err(e.into()),
    }
}

/// Writes `entity` as the next version of what a read-modify-write read: `read` is the version
/// it read, `None` when nothing was stored (the write then requires that still nothing is).
/// The entity's version is set to the next one; a concurrent write since the read is
/// [`EntityError::Stale`] (a 409), the entity's version left as it was, and nothing written.
/// With a completion, the put and the completion are one transaction ([`put`]). The kit's
/// `entity::modify` reads, changes and calls this, re-running after a lost race.
pub async fn write_next<E: Versioned>(
    store: &dyn Store,
    entity: &mut E,
    scope: E::Scope,
    read: Option<i64>,
    completion: Option<&Completion>,
) -> EntityResult<()> {
    let before = entity.version();
    entity.set_version(read.unwrap_or(0) + 1);
    let cond = read.map_or(Condition::NotExists, Condition::VersionEquals);
    let written = match to_item(entity, scope) {
        Ok(item) => put(store, item, cond, completion).await,
        Err(e) => Err(e),
    };
    match written {
        Ok(()) => Ok(()),
        Err(e) => {
            entity.set_version(before);
            match e {
                StoreError::ConditionFailed => Err(EntityError::Stale(E::TYPE)),
                other => Err(other.into()),
            }
        }
    }
}

/// Whether a store error means "lost a race" (a retry may succeed).
pub fn is_conflict(error: &StoreError) -> bool {
    matches!(error, StoreError::ConditionFailed | StoreError::TransactionCancelled { .. })
}

/// The counter behind an ordered collection (work activities, manual positions).
pub const SEQUENCE: EntityKind = EntityKind { name: "Sequence", prefix: "SEQ#" };

/// Creates the counter `counter` (an item of `kind`) holding `current` in `attr`, unless it
/// exists: for counters that start after items written before them. Written with a not-exists
/// condition, so concurrent first writers agree on one value: every write that changes the
/// counted items changes the counter in the same transaction, conditioned on its existing, so
/// none lands between `current`'s read and this put without making the put fail.
pub async fn init_counter<F>(
    store: &dyn Store,
    counter: &Key,
    kind: EntityKind,
    attr: &str,
    current: F,
) -> StoreResult<()>
where
    F: Future<Output = StoreResult<i64>>,
{
    let mut item = Item::new();
    item.insert(PK.into(), counter.pk.clone().into());
    item.insert(SK.into(), counter.sk.clone().into());
    item.insert(ENTITY.into(), kind.name.into());
    item.insert(attr.into(), current.await?.into());
    match store.put(item, Condition::NotExists).await {
        Ok(()) | Err(StoreError::ConditionFailed) => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(all(test, feature = "embedded"))]
mod tests {
    use super::*;
    use crate::sqlite::SqliteStore;
    use std::sync::Arc;

    #[derive(Serialize, serde::Deserialize)]
    struct Note {
        id: u32,
        text: String,
        version: i64,
    }

    impl Entity for Note {
        const TYPE: &'static str = "Note";
        const PREFIX: &'static str = "NOTE#";
        type Scope = ();

        fn key(&self, _: ()) -> Key {
            Key::new("P", format!("NOTE#{}", self.id))
        }

        fn gsi1(&self, _: ()) -> Option<IndexKey> {
            Some(IndexKey { pk: "NOTES".into(), sk: self.text.clone() })
        }
    }

    impl Versioned for Note {
        fn version(&self) -> i64 {
            self.version
        }
        fn set_version(&mut self, version: i64) {
            self.version = version;
        }
    }

    #[tokio::test]
    async fn items_carry_keys_index_and_type_and_versions_guard_writes() {
        let store = SqliteStore::in_memory().unwrap();
        let mut note = Note { id: 1, text: "a".into(), version: 1 };
        let item = to_item(&note, ()).unwrap();
        assert_eq!(
            (item[PK].as_str(), item[GSI1PK].as_str(), item[ENTITY].as_str()),
            (Some("P"), Some("NOTES"), Some("Note"))
        );
        create(&store, &note, (), "exists", None).await.unwrap();
        // The same item again is this create applied already (its answer lost): accepted.
        create(&store, &note, (), "exists", None).await.unwrap();
        let other = Note { id: 1, text: "other".into(), version: 1 };
        assert!(
            matches!(create(&store, &other, (), "exists", None).await, Err(EntityError::Exists(m)) if m == "exists")
        );
        let mut stale = Note { id: 1, text: "stale".into(), version: 1 };
        write_next(&store, &mut note, (), Some(1), None).await.unwrap();
        assert_eq!(note.version, 2);
        let lost = write_next(&store, &mut stale, (), Some(1), None).await.unwrap_err();
        assert!(matches!(lost, EntityError::Stale("Note")), "{lost}");
        assert_eq!(stale.version, 1);
        let read: Note = get(&store, &note.key(())).await.unwrap().unwrap();
        assert_eq!((read.text.as_str(), read.version), ("a", 2));
    }

    /// A completion marking a record `done`, conditioned on the record's `claim`, that counts
    /// how often it was reported written.
    fn completion(nonce: &str) -> (Completion, Arc<std::sync::atomic::AtomicUsize>) {
        let written = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = written.clone();
        let op = TxOp::Update {
            key: Key::new("R", "IDEM"),
            update: crate::Update::default().set("done", true),
            cond: Condition::Equals { attr: "claim".into(), value: nonce.into() },
        };
        let completion = Completion::new(op, move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
        (completion, written)
    }

    #[tokio::test]
    async fn a_create_with_a_completion_writes_both_or_neither() {
        let store = SqliteStore::in_memory().unwrap();
        let record = Key::new("R", "IDEM");
        let mut claim = Item::new();
        claim.insert(PK.into(), "R".into());
        claim.insert(SK.into(), "IDEM".into());
        claim.insert(ENTITY.into(), "Record".into());
        claim.insert("claim".into(), "n1".into());
        store.put(claim, Condition::None).await.unwrap();
        let done = |store: &SqliteStore| {
            let record = record.clone();
            let store = store.clone();
            async move { store.get(&record).await.unwrap().unwrap().get("done").cloned() }
        };
        // Not this request's record any more: nothing written, not reported written.
        let (theirs, written) = completion("n2");
        let note = Note { id: 1, text: "a".into(), version: 1 };
        let refused = create(&store, &note, (), "exists", Some(&theirs)).await.unwrap_err();
        assert!(matches!(refused, EntityError::Store(StoreError::TransactionCancelled { .. })), "{refused}");
        assert_eq!(get::<Note>(&store, &note.key(())).await.unwrap().map(|n| n.id), None);
        assert_eq!((done(&store).await, written.load(std::sync::atomic::Ordering::SeqCst)), (None, 0));
        // Ours: the item and the completion in one transaction, reported written once.
        let (ours, written) = completion("n1");
        create(&store, &note, (), "exists", Some(&ours)).await.unwrap();
        assert!(get::<Note>(&store, &note.key(())).await.unwrap().is_some());
        assert_eq!((done(&store).await, written.load(std::sync::atomic::Ordering::SeqCst)), (Some(true.into()), 1));
        // The same item again (the create applied with its completion, its answer lost):
        // accepted, and the completion reported written (it was applied with the item).
        let (again, written) = completion("n1");
        create(&store, &note, (), "exists", Some(&again)).await.unwrap();
        assert_eq!(written.load(std::sync::atomic::Ordering::SeqCst), 1);
        // Another item under the key: 409, as without a completion.
        let other = Note { id: 1, text: "other".into(), version: 1 };
        assert!(matches!(create(&store, &other, (), "exists", Some(&again)).await, Err(EntityError::Exists(_))));
        // Without a completion: a plain put.
        create(&store, &Note { id: 2, text: "b".into(), version: 1 }, (), "exists", None).await.unwrap();
    }

    /// A completion's writes besides the record's (a change's events) join the same
    /// transaction: all written with the change, or none of them and not the change.
    #[tokio::test]
    async fn a_completion_with_several_writes_is_written_whole_or_not_at_all() {
        let store = SqliteStore::in_memory().unwrap();
        let event = |n: u32| {
            let mut item = Item::new();
            item.insert(PK.into(), "EVENTS".into());
            item.insert(SK.into(), format!("EVT#{n}").into());
            item.insert(ENTITY.into(), "Event".into());
            TxOp::Put { item, cond: Condition::NotExists }
        };
        let events = || async {
            let query = crate::Query::table("EVENTS");
            store.query(query).await.unwrap().items.len()
        };
        let mut note = Note { id: 1, text: "a".into(), version: 1 };
        // Without an idempotency record: the event alone makes the put a transaction.
        create(&store, &note, (), "exists", Some(&Completion::of(vec![event(1)]))).await.unwrap();
        assert_eq!(events().await, 1);
        // A stale write with its event: neither.
        let mut stale = Note { id: 1, text: "stale".into(), version: 1 };
        let beside = Completion::of(vec![event(2)]);
        assert!(write_next(&store, &mut stale, (), Some(7), Some(&beside)).await.is_err());
        assert_eq!(events().await, 1);
        // A failing write beside it (an event id taken): neither the change nor the others.
        let taken = Completion::of(vec![event(3)]).and(event(1));
        assert!(write_next(&store, &mut note, (), Some(1), Some(&taken)).await.is_err());
        let read: Note = get(&store, &note.key(())).await.unwrap().unwrap();
        assert_eq!((read.version, events().await), (1, 1));
        // Both, with the change.
        let both = Completion::of(vec![event(3)]).and(event(4));
        write_next(&store, &mut note, (), Some(1), Some(&both)).await.unwrap();
        assert_eq!((note.version, events().await), (2, 3));
    }
}
