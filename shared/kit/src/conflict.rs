//! Lost races answered over HTTP: retrying a read-modify-write cycle that lost an
//! optimistic-concurrency race, and appending at the end of an ordered collection. The store's
//! entity layer (`workapi_store::entity`) says *that* a write lost ([`EntityError::Stale`]); these
//! helpers decide when to give up, and the kit answers 409. Reached as `workapi_kit::entity::…` beside
//! the store's entity layer.

use crate::error::{ApiError, ApiResult};
use std::future::Future;
use std::time::Duration;
use workapi_store::entity::{EntityError, SEQUENCE, init_counter};
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

    async fn futures_util_join(handles: impl Iterator<Item = tokio::task::JoinHandle<i64>>) -> Vec<i64> {
        let mut out = Vec::new();
        for handle in handles.collect::<Vec<_>>() {
            out.push(handle.await.unwrap());
        }
        out
    }
}
