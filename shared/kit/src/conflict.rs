//! Lost races answered over HTTP: the versioned read-modify-write of one entity ([`modify`]),
//! retrying a cycle that lost an optimistic-concurrency race, and appending at the end of an
//! ordered collection. The store's
//! entity layer (`workapi_store::entity`) says *that* a write lost ([`EntityError::Stale`]); these
//! helpers decide when to give up, and the kit answers 409. Reached as `workapi_kit::entity::…` beside
//! the store's entity layer.

use crate::error::{ApiError, ApiResult};
use std::future::Future;
use std::time::Duration;
use workapi_store::entity::{self, Completion, EntityError, SEQUENCE, Versioned, init_counter, write_next};
use workapi_store::{Condition, Item, Key, Store, StoreError};

/// The 409 of a lost optimistic-concurrency race ([`EntityError::Stale`]).
pub fn changed_concurrently(what: &'static str) -> ApiError {
    EntityError::Stale(what).into()
}

/// What one attempt of a read-modify-write cycle came to.
pub enum Attempt<T> {
    Done(T),
    /// Lost a race (a failed condition or a cancelled transaction): read again and retry.
    Conflict,
}

/// How long [`retry_on_conflict`] keeps re-running a write that loses races before it gives
/// up with 409. Optimistic concurrency lets one of N racing writers win per round, so a fixed
/// number of attempts fails the last of many concurrent writers (a client toggling 30
/// permissions of one role at once) on a slow store; a time budget does not. It stays far
/// below the functions' 10 s timeout.
pub const RETRY_BUDGET: Duration = Duration::from_secs(4);

/// Runs `attempt` (numbered from 0) until it is done, re-running it after a conflict with a
/// jittered pause so racing writers spread out; once [`RETRY_BUDGET`] is spent, a 409 saying
/// `busy`.
pub async fn retry_on_conflict<T, F, Fut>(busy: &str, attempt: F) -> ApiResult<T>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = ApiResult<Attempt<T>>>,
{
    retry_within(RETRY_BUDGET, busy, attempt).await
}

async fn retry_within<T, F, Fut>(budget: Duration, busy: &str, mut attempt: F) -> ApiResult<T>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = ApiResult<Attempt<T>>>,
{
    let deadline = tokio::time::Instant::now() + budget;
    let mut n = 0;
    loop {
        match attempt(n).await? {
            Attempt::Done(value) => return Ok(value),
            Attempt::Conflict if tokio::time::Instant::now() + back_off_bound(n) < deadline => {
                tokio::time::sleep(back_off(n)).await;
                n += 1;
            }
            Attempt::Conflict => return Err(ApiError::conflict(busy)),
        }
    }
}

/// The bound of the pause after the `attempt`th conflict: 2 ms, 4 ms, … 64 ms, then 64 ms.
fn back_off_bound(attempt: u32) -> Duration {
    Duration::from_millis(2u64 << attempt.min(5))
}

/// Full jitter: a random pause below the bound.
fn back_off(attempt: u32) -> Duration {
    let bound = back_off_bound(attempt).as_micros() as u64;
    Duration::from_micros(rand::random_range(0..bound))
}

/// What the change of a read-modify-write ([`modify`]) makes of the entity it read.
#[derive(Debug)]
pub enum Change<E> {
    /// Nothing to write: the entity as read is the outcome.
    Keep(E),
    /// Write this as the next version of what was read (its version is set by the write).
    Write(E),
}

/// An answer built before its write, carrying the write that records it (the request's
/// idempotency completion: `workapi_kit::idempotency::Answer`), which [`modify_answering`] puts in
/// the same transaction as the entity.
pub trait Recorded {
    fn completion(&self) -> Option<&Completion>;
}

/// The versioned read-modify-write of one entity, the one way to change a stored record under
/// optimistic concurrency: reads the entity at `key` (None when nothing is stored), lets
/// `change` decide what it becomes (a pure function of what was read; its error is the answer,
/// nothing written), and writes the result as the next version on the condition that the
/// version read is still the stored one (nothing stored, when nothing was read). A write that
/// lost a race wrote nothing and is re-run on a fresh read ([`retry_on_conflict`]: a 409 saying
/// `busy` once the budget is spent). Returns the entity as written, or as kept.
pub async fn modify<E, F>(store: &dyn Store, key: &Key, scope: E::Scope, busy: &str, change: F) -> ApiResult<E>
where
    E: Versioned + Clone,
    F: Fn(Option<E>) -> ApiResult<Change<E>>,
{
    struct Unrecorded<E>(E);
    impl<E> Recorded for Unrecorded<E> {
        fn completion(&self) -> Option<&Completion> {
            None
        }
    }
    let done = modify_answering(store, key, scope, busy, change, |entity: &E| Ok(Unrecorded(entity.clone()))).await?;
    Ok(done.0)
}

/// [`modify`] writing `beside` (the change's event: `events::Event::completion`), built from
/// the entity as it will be written, in the same transaction. A kept entity writes nothing,
/// so records no event.
pub async fn modify_with<E, F, B>(
    store: &dyn Store,
    key: &Key,
    scope: E::Scope,
    busy: &str,
    change: F,
    beside: B,
) -> ApiResult<E>
where
    E: Versioned + Clone,
    F: Fn(Option<E>) -> ApiResult<Change<E>>,
    B: Fn(&E) -> ApiResult<Completion>,
{
    struct With<E>(E, Completion);
    impl<E> Recorded for With<E> {
        fn completion(&self) -> Option<&Completion> {
            Some(&self.1)
        }
    }
    let respond = |entity: &E| Ok(With(entity.clone(), beside(entity)?));
    let done = modify_answering(store, key, scope, busy, change, respond).await?;
    Ok(done.0)
}

/// [`modify`] answering `respond`'s answer, built from the entity as it will be written (its
/// new version included) before the write, whose completion is written in the same
/// transaction (so a retried request replays exactly this answer). A kept entity is answered
/// without a write; the idempotency layer then records the answer itself.
pub async fn modify_answering<E, T, F, R>(
    store: &dyn Store,
    key: &Key,
    scope: E::Scope,
    busy: &str,
    change: F,
    respond: R,
) -> ApiResult<T>
where
    E: Versioned,
    T: Recorded,
    F: Fn(Option<E>) -> ApiResult<Change<E>>,
    R: Fn(&E) -> ApiResult<T>,
{
    retry_on_conflict(busy, |_| async {
        let stored: Option<E> = entity::get(store, key).await?;
        let read = stored.as_ref().map(Versioned::version);
        let mut next = match change(stored)? {
            Change::Keep(kept) => return Ok(Attempt::Done(respond(&kept)?)),
            Change::Write(next) => next,
        };
        if next.key(scope.clone()) != *key {
            return Err(ApiError::internal(format!("a change of the {} at {key:?} moved it elsewhere", E::TYPE)));
        }
        next.set_version(read.unwrap_or(0) + 1);
        let answer = respond(&next)?;
        match write_next(store, &mut next, scope.clone(), read, answer.completion()).await {
            Ok(()) => Ok(Attempt::Done(answer)),
            Err(EntityError::Stale(_)) => Ok(Attempt::Conflict),
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// The next position at the end of an ordered collection, from an atomic counter, so that
/// concurrent appends get distinct consecutive positions. One write once the counter exists.
/// `last` gives the position of the current last element; it is read only when the counter
/// does not exist yet (collections written before their counter, or the first append), and
/// written with a not-exists condition so that concurrent first appends agree on it.
pub async fn append_at_end<F>(store: &dyn Store, counter: &Key, last: F) -> ApiResult<i64>
where
    F: Future<Output = ApiResult<i64>>,
{
    let attr = "value";
    match store.increment(counter, attr, 1, Item::new(), Condition::Exists).await {
        Err(StoreError::ConditionFailed) => {}
        other => return Ok(other?),
    }
    let current = last.await?;
    init_counter(store, counter, SEQUENCE, attr, async { Ok(current) }).await?;
    Ok(store.increment(counter, attr, 1, Item::new(), Condition::Exists).await?)
}

#[cfg(all(test, feature = "embedded"))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use workapi_store::sqlite::SqliteStore;

    #[tokio::test]
    async fn retries_until_done_and_gives_up_with_409() {
        let mut calls = 0;
        let value = retry_on_conflict("busy", |n| {
            calls += 1;
            async move { Ok(if n < 2 { Attempt::Conflict } else { Attempt::Done(n) }) }
        })
        .await
        .unwrap();
        assert_eq!((value, calls), (2, 3));
        let mut calls = 0;
        let budget = Duration::from_millis(300);
        let busy = retry_within::<(), _, _>(budget, "busy", |_| {
            calls += 1;
            async { Ok(Attempt::Conflict) }
        })
        .await
        .unwrap_err();
        assert_eq!((busy.status.as_u16(), busy.message.as_str()), (409, "busy"));
        assert!(calls > 2, "kept retrying within the budget: {calls} calls");
    }

    #[tokio::test]
    async fn concurrent_appends_get_distinct_consecutive_positions_after_the_existing_ones() {
        let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().unwrap());
        let counter = Key::new("P", "SEQ#NOTE");
        let appends = (0..20).map(|_| {
            let store = store.clone();
            let counter = counter.clone();
            tokio::spawn(async move { append_at_end(store.as_ref(), &counter, async { Ok(3) }).await.unwrap() })
        });
        let mut positions: Vec<i64> = futures_util_join(appends).await;
        positions.sort();
        assert_eq!(positions, (4..24).collect::<Vec<_>>());
    }

    /// A counter read-modify-written by the tests of [`modify`].
    #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Counter {
        n: i64,
        version: i64,
    }

    impl entity::Entity for Counter {
        const TYPE: &'static str = "Counter";
        const PREFIX: &'static str = "COUNTER";
        type Scope = ();

        fn key(&self, _: ()) -> Key {
            counter_key()
        }
    }

    impl Versioned for Counter {
        fn version(&self) -> i64 {
            self.version
        }
        fn set_version(&mut self, version: i64) {
            self.version = version;
        }
    }

    fn counter_key() -> Key {
        Key::new("P", "COUNTER")
    }

    /// A store on which a rival writer lands between the read and the write of each of the
    /// first `rivals` writes: it adds 100 to the stored counter and moves its version on, as a
    /// concurrent `modify` would.
    struct Racing {
        inner: SqliteStore,
        rivals: std::sync::atomic::AtomicU32,
    }

    impl Racing {
        fn new(rivals: u32) -> Self {
            Racing { inner: SqliteStore::in_memory().unwrap(), rivals: rivals.into() }
        }

        async fn rival_lands(&self) -> workapi_store::StoreResult<()> {
            use std::sync::atomic::Ordering;
            if self.rivals.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok() {
                let bump = workapi_store::Update::default().add("n", 100).add(workapi_store::VERSION, 1);
                self.inner.update(&counter_key(), bump, Condition::Exists).await?;
            }
            Ok(())
        }
    }

    #[async_trait::async_trait]
    impl Store for Racing {
        async fn get(&self, key: &Key) -> workapi_store::StoreResult<Option<Item>> {
            self.inner.get(key).await
        }
        async fn put(&self, item: Item, cond: Condition) -> workapi_store::StoreResult<()> {
            self.rival_lands().await?;
            self.inner.put(item, cond).await
        }
        async fn update(
            &self,
            key: &Key,
            update: workapi_store::Update,
            cond: Condition,
        ) -> workapi_store::StoreResult<Item> {
            self.inner.update(key, update, cond).await
        }
        async fn delete(&self, key: &Key, cond: Condition) -> workapi_store::StoreResult<Option<Item>> {
            self.inner.delete(key, cond).await
        }
        async fn query(&self, query: workapi_store::Query) -> workapi_store::StoreResult<workapi_store::Page> {
            self.inner.query(query).await
        }
        async fn transact(&self, ops: Vec<workapi_store::TxOp>) -> workapi_store::StoreResult<()> {
            self.rival_lands().await?;
            self.inner.transact(ops).await
        }
        async fn increment(
            &self,
            key: &Key,
            attr: &str,
            by: i64,
            init: Item,
            cond: Condition,
        ) -> workapi_store::StoreResult<i64> {
            self.inner.increment(key, attr, by, init, cond).await
        }
    }

    async fn stored(store: &dyn Store) -> Option<Counter> {
        entity::get(store, &counter_key()).await.unwrap()
    }

    fn plus_one(calls: &std::sync::atomic::AtomicU32) -> impl Fn(Option<Counter>) -> ApiResult<Change<Counter>> + '_ {
        move |read| {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let n = read.map_or(0, |c| c.n);
            Ok(Change::Write(Counter { n: n + 1, version: 0 }))
        }
    }

    #[tokio::test]
    async fn modify_creates_then_writes_next_versions_and_keeps_or_refuses_without_writing() {
        let store = Racing::new(0);
        let calls = std::sync::atomic::AtomicU32::new(0);
        // Nothing stored: the change sees None; the first version is 1.
        let created = modify(&store, &counter_key(), (), "busy", plus_one(&calls)).await.unwrap();
        assert_eq!(created, Counter { n: 1, version: 1 });
        let next = modify(&store, &counter_key(), (), "busy", plus_one(&calls)).await.unwrap();
        assert_eq!((next.clone(), stored(&store).await), (Counter { n: 2, version: 2 }, Some(next)));
        // Kept: answered as read, nothing written.
        let kept = modify(&store, &counter_key(), (), "busy", |read: Option<Counter>| Ok(Change::Keep(read.unwrap())))
            .await
            .unwrap();
        assert_eq!((kept.version, stored(&store).await.unwrap().version), (2, 2));
        // Refused: the change's error is the answer, nothing written.
        let refused = modify(&store, &counter_key(), (), "busy", |_: Option<Counter>| -> ApiResult<Change<Counter>> {
            Err(ApiError::not_found("Counter not found"))
        })
        .await
        .unwrap_err();
        assert_eq!((refused.status.as_u16(), refused.message.as_str()), (404, "Counter not found"));
        assert_eq!(stored(&store).await, Some(Counter { n: 2, version: 2 }));
    }

    #[tokio::test]
    async fn modify_reapplies_the_change_on_what_a_rival_wrote_after_a_lost_race() {
        let store = Racing::new(0);
        store
            .inner
            .put(entity::to_item(&Counter { n: 1, version: 1 }, ()).unwrap(), Condition::NotExists)
            .await
            .unwrap();
        store.rivals.store(2, std::sync::atomic::Ordering::SeqCst);
        let calls = std::sync::atomic::AtomicU32::new(0);
        let written = modify(&store, &counter_key(), (), "busy", plus_one(&calls)).await.unwrap();
        // Two rivals landed (+100 each, versions 2 and 3), then ours on the third read.
        assert_eq!(written, Counter { n: 202, version: 4 });
        assert_eq!(stored(&store).await, Some(written));
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn modify_gives_up_with_409_after_the_budget_having_written_nothing() {
        let store = Racing::new(u32::MAX);
        store
            .inner
            .put(entity::to_item(&Counter { n: 1, version: 1 }, ()).unwrap(), Condition::NotExists)
            .await
            .unwrap();
        let calls = std::sync::atomic::AtomicU32::new(0);
        let busy = modify(&store, &counter_key(), (), "The counter is busy", plus_one(&calls)).await.unwrap_err();
        assert_eq!((busy.status.as_u16(), busy.message.as_str()), (409, "The counter is busy"));
        let after = stored(&store).await.unwrap();
        let attempts = calls.load(std::sync::atomic::Ordering::SeqCst);
        assert!(attempts > 2, "kept retrying within the budget: {attempts} attempts");
        // Every rival's +100 landed, none of our +1s.
        assert_eq!((after.n, after.version), (1 + 100 * i64::from(attempts), 1 + i64::from(attempts)));
    }

    /// An answer recorded by a completion marking `R`/`IDEM` done, conditioned on its `claim`.
    struct Recording(Completion);

    impl Recorded for Recording {
        fn completion(&self) -> Option<&Completion> {
            Some(&self.0)
        }
    }

    fn recording(nonce: &'static str) -> Recording {
        let op = workapi_store::TxOp::Update {
            key: Key::new("R", "IDEM"),
            update: workapi_store::Update::default().set("done", true),
            cond: Condition::Equals { attr: "claim".into(), value: nonce.into() },
        };
        Recording(Completion::new(op, || {}))
    }

    #[tokio::test]
    async fn modify_answering_writes_the_entity_and_its_completion_together_or_neither() {
        let store = Racing::new(0);
        let claim = workapi_store::Update::default().set("claim", "n1");
        store.inner.update(&Key::new("R", "IDEM"), claim, Condition::None).await.unwrap();
        let calls = std::sync::atomic::AtomicU32::new(0);
        // The record is no longer this request's: nothing written.
        let refused =
            modify_answering(&store, &counter_key(), (), "busy", plus_one(&calls), |_| Ok(recording("n2"))).await;
        assert!(refused.is_err());
        assert_eq!(stored(&store).await, None);
        let done = || async { store.inner.get(&Key::new("R", "IDEM")).await.unwrap().unwrap().get("done").cloned() };
        assert_eq!(done().await, None);
        // Ours: both written.
        modify_answering(&store, &counter_key(), (), "busy", plus_one(&calls), |_| Ok(recording("n1"))).await.unwrap();
        assert_eq!((stored(&store).await, done().await), (Some(Counter { n: 1, version: 1 }), Some(true.into())));
    }

    async fn futures_util_join(handles: impl Iterator<Item = tokio::task::JoinHandle<i64>>) -> Vec<i64> {
        let mut out = Vec::new();
        for handle in handles.collect::<Vec<_>>() {
            out.push(handle.await.unwrap());
        }
        out
    }
}
