//! The store as the handlers see it: every call in a `store` span (inside the request's, so its
//! lines carry the request id) that, at `debug`, logs the call's operation, outcome and
//! duration. Never a key or an item: they may hold what users typed.

use async_trait::async_trait;
use std::future::Future;
use std::sync::Arc;
use tracing::Instrument;
use workapi_store::{Condition, Item, Key, Page, Query, Store, StoreResult, TxOp, Update};

pub struct TracedStore(pub Arc<dyn Store>);

async fn traced<T>(operation: &'static str, call: impl Future<Output = StoreResult<T>>) -> StoreResult<T> {
    let span = tracing::debug_span!("store", operation);
    async {
        let started = std::time::Instant::now();
        let result = call.await;
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        match &result {
            Ok(_) => tracing::debug!(elapsed_ms, "store call"),
            Err(e) => tracing::debug!(elapsed_ms, error = %e, "store call failed"),
        }
        result
    }
    .instrument(span)
    .await
}

#[async_trait]
impl Store for TracedStore {
    async fn get(&self, key: &Key) -> StoreResult<Option<Item>> {
        traced("get", self.0.get(key)).await
    }
    async fn get_eventually(&self, key: &Key) -> StoreResult<Option<Item>> {
        traced("get", self.0.get_eventually(key)).await
    }
    async fn put(&self, item: Item, cond: Condition) -> StoreResult<()> {
        traced("put", self.0.put(item, cond)).await
    }
    async fn update(&self, key: &Key, update: Update, cond: Condition) -> StoreResult<Item> {
        traced("update", self.0.update(key, update, cond)).await
    }
    async fn delete(&self, key: &Key, cond: Condition) -> StoreResult<Option<Item>> {
        traced("delete", self.0.delete(key, cond)).await
    }
    async fn query(&self, query: Query) -> StoreResult<Page> {
        traced("query", self.0.query(query)).await
    }
    async fn transact(&self, ops: Vec<TxOp>) -> StoreResult<()> {
        traced("transact", self.0.transact(ops)).await
    }
    async fn increment(&self, key: &Key, attr: &str, by: i64, init: Item, cond: Condition) -> StoreResult<i64> {
        traced("increment", self.0.increment(key, attr, by, init, cond)).await
    }
}
