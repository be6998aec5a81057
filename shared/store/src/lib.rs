//! The item-level store (DESIGN §2): one trait, two backends with the same semantics.
//!
//! Items are JSON objects carrying the generic key attributes `PK`, `SK` (and optionally
//! `GSI1PK`/`GSI1SK`, `GSI2PK`/`GSI2SK`, `ttl`, and always `entity`). Keys are built only by [`keys`], so every
//! tenant key starts with the workspace id.
//!
//! Semantics both backends guarantee:
//! - an item whose `ttl` (epoch seconds) lies in the past is invisible: `get` and `query` skip
//!   it and `Condition::NotExists` treats it as absent, even before the TTL sweeper removed it;
//! - conditions are typed ([`Condition`]) and evaluated atomically with the write;
//! - `transact` writes all or nothing;
//! - `query` returns items in sort-key byte order, paginated by an opaque [`Cursor`].

pub mod dynamo;
pub mod keys;
pub mod limits;
pub mod objects;
#[cfg(feature = "s3")]
pub mod s3;
#[cfg(feature = "embedded")]
pub mod sqlite;
#[cfg(feature = "sqs")]
pub mod sqs;

pub mod aws;
pub mod changes;
pub mod clock;
pub mod entity;

use async_trait::async_trait;
use serde_json::{Map, Value};

/// A stored item: a JSON object with the key attributes inside it.
pub type Item = Map<String, Value>;

pub const PK: &str = "PK";
pub const SK: &str = "SK";
pub const GSI1PK: &str = "GSI1PK";
pub const GSI1SK: &str = "GSI1SK";
/// The list index's keys (GSI2): an entity's place in its list's documented order, so that a
/// page of a long list is one query from the cursor on (docs/data-model.md#lists).
pub const GSI2PK: &str = "GSI2PK";
pub const GSI2SK: &str = "GSI2SK";
pub const TTL: &str = "ttl";
pub const ENTITY: &str = "entity";
/// Attribute used by [`Condition::VersionEquals`] for optimistic concurrency.
pub const VERSION: &str = "version";

/// The primary key of an item.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    pub pk: String,
    pub sk: String,
}

impl Key {
    pub fn new(pk: impl Into<String>, sk: impl Into<String>) -> Self {
        Key { pk: pk.into(), sk: sk.into() }
    }

    /// Reads the key attributes out of an item.
    pub fn of(item: &Item) -> Option<Key> {
        Some(Key::new(item.get(PK)?.as_str()?, item.get(SK)?.as_str()?))
    }
}

/// A condition evaluated atomically with a write.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// No condition.
    None,
    /// The item does not exist (or has expired).
    NotExists,
    /// The item exists (and has not expired).
    Exists,
    /// The item exists and its numeric `version` attribute equals the value.
    VersionEquals(i64),
    /// The item is absent, or the numeric attribute is absent or below the limit.
    /// Used by rate-limit counters: increment only while under the limit.
    CounterBelow { attr: String, limit: i64 },
    /// The item exists (and has not expired) and its attribute holds exactly this string.
    /// Used by the idempotency record: the write is this request's, by the nonce of its claim.
    Equals { attr: String, value: String },
    /// The item is absent (or expired), or it lacks the attribute. Used by the idempotency
    /// record: delete it only while no response was recorded in it.
    Lacks(String),
    /// Every condition holds (an empty list always holds).
    All(Vec<Condition>),
}

/// A partial update: attributes to set and attributes to remove.
/// Like DynamoDB's UpdateItem it creates the item when absent, unless the condition forbids it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Update {
    pub set: Item,
    pub remove: Vec<String>,
    /// Numbers added to numeric attributes (absent counts as 0), like DynamoDB's `ADD`: a
    /// counter changed inside a transaction (a quota given back with the file it counted).
    pub add: Vec<(String, i64)>,
}

impl Update {
    pub fn set(mut self, attr: &str, value: impl Into<Value>) -> Self {
        self.set.insert(attr.to_owned(), value.into());
        self
    }
    pub fn remove(mut self, attr: &str) -> Self {
        self.remove.push(attr.to_owned());
        self
    }
    pub fn add(mut self, attr: &str, by: i64) -> Self {
        self.add.push((attr.to_owned(), by));
        self
    }
}

/// Which key pair a query reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Index {
    Table,
    Gsi1,
    /// The list index: entities in their list's order (`entity::Entity::gsi2`).
    Gsi2,
}

impl Index {
    /// The index's name in DynamoDB (none for the table).
    pub fn name(self) -> Option<&'static str> {
        match self {
            Index::Table => None,
            Index::Gsi1 => Some("GSI1"),
            Index::Gsi2 => Some("GSI2"),
        }
    }

    /// The partition and sort key attributes the index is keyed by.
    pub fn key_attrs(self) -> (&'static str, &'static str) {
        match self {
            Index::Table => (PK, SK),
            Index::Gsi1 => (GSI1PK, GSI1SK),
            Index::Gsi2 => (GSI2PK, GSI2SK),
        }
    }

    /// Every secondary index of the table.
    pub const SECONDARY: [Index; 2] = [Index::Gsi1, Index::Gsi2];
}

/// Sort-key condition of a query.
#[derive(Debug, Clone, PartialEq)]
pub enum SortKey {
    Any,
    Equals(String),
    BeginsWith(String),
    /// Inclusive on both ends, like DynamoDB's BETWEEN.
    Between(String, String),
}

/// Opaque position after the last item of a page: the key attributes of that item.
#[derive(Debug, Clone, PartialEq)]
pub struct Cursor(pub Item);

#[derive(Debug, Clone)]
pub struct Query {
    pub index: Index,
    pub pk: String,
    pub sk: SortKey,
    pub forward: bool,
    pub limit: Option<u32>,
    pub after: Option<Cursor>,
    /// Read eventually consistently (see [`Store::get_eventually`]); index reads always are.
    pub eventual: bool,
}

impl Query {
    pub fn table(pk: impl Into<String>) -> Self {
        Query {
            index: Index::Table,
            pk: pk.into(),
            sk: SortKey::Any,
            forward: true,
            limit: None,
            after: None,
            eventual: false,
        }
    }
    pub fn gsi1(pk: impl Into<String>) -> Self {
        Query { index: Index::Gsi1, ..Query::table(pk) }
    }
    /// A query of the list index (GSI2).
    pub fn gsi2(pk: impl Into<String>) -> Self {
        Query { index: Index::Gsi2, ..Query::table(pk) }
    }
    pub fn sk(mut self, sk: SortKey) -> Self {
        self.sk = sk;
        self
    }
    pub fn begins_with(self, prefix: impl Into<String>) -> Self {
        self.sk(SortKey::BeginsWith(prefix.into()))
    }
    pub fn backward(mut self) -> Self {
        self.forward = false;
        self
    }
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }
    pub fn after(mut self, cursor: Option<Cursor>) -> Self {
        self.after = cursor;
        self
    }
    pub fn eventually_consistent(mut self) -> Self {
        self.eventual = true;
        self
    }
}

#[derive(Debug, Clone, Default)]
pub struct Page {
    pub items: Vec<Item>,
    /// Present when more items may follow.
    pub next: Option<Cursor>,
}

/// One write inside a transaction.
#[derive(Debug, Clone)]
pub enum TxOp {
    Put { item: Item, cond: Condition },
    Update { key: Key, update: Update, cond: Condition },
    Delete { key: Key, cond: Condition },
    Check { key: Key, cond: Condition },
}

pub use limits::MAX_TX_OPS;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The write's condition did not hold; nothing was written.
    #[error("condition failed")]
    ConditionFailed,
    /// A transaction was cancelled; nothing was written. `failed` lists the indexes of the
    /// operations whose condition did not hold (empty when cancelled for another reason,
    /// such as a concurrent transaction on the same items).
    #[error("transaction cancelled")]
    TransactionCancelled { failed: Vec<usize> },
    /// The request was malformed (missing key attributes, too many operations, …): a bug.
    #[error("invalid store request: {0}")]
    Invalid(String),
    /// The backend failed for a reason of ours (a request it refused, a corrupt item, the
    /// disk). The message may hold internals and must never reach a response body.
    #[error("store backend error: {0}")]
    Backend(String),
    /// A write DynamoDB's limits refuse (`limits`): an item over 400 KB, a transaction over
    /// 4 MB. Nothing was written. The message names the size and the limit, nothing internal;
    /// `part` is the item's largest part as a field path (`limits::largest_part`), when known.
    #[error("too large for the store: {message}")]
    TooLarge { message: String, part: Option<String> },
    /// The backend could not answer beyond the client's retries: throttled, timed out, the
    /// connection reset or the response cut, a 5xx (docs/reliability.md). Nothing is known to
    /// be written by the failed call; the same request may succeed shortly (503).
    #[error("store unavailable: {0}")]
    Unavailable(String),
}

impl StoreError {
    /// Whether the failure is the dependency's and passes by itself: the store unavailable, or
    /// a transaction cancelled without a failed condition (a concurrent transaction on the same
    /// items, throttling) after the store's own retries. Such errors answer 503, not 500.
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::Unavailable(_) => true,
            StoreError::TransactionCancelled { failed } => failed.is_empty(),
            _ => false,
        }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// A strongly consistent read: every write acknowledged before it is seen.
    async fn get(&self, key: &Key) -> StoreResult<Option<Item>>;
    /// An eventually consistent read (DynamoDB's, half the read units of [`Store::get`]): it may
    /// miss writes of about the last second. For the reads every request makes, where a second
    /// of delay is acceptable and the units are not (docs/performance.md, "Scale"). A store that
    /// only reads consistently answers it with `get`.
    async fn get_eventually(&self, key: &Key) -> StoreResult<Option<Item>> {
        self.get(key).await
    }
    /// Writes a whole item (its key attributes inside it).
    async fn put(&self, item: Item, cond: Condition) -> StoreResult<()>;
    /// Applies a partial update and returns the item as it is afterwards.
    async fn update(&self, key: &Key, update: Update, cond: Condition) -> StoreResult<Item>;
    /// Deletes and returns the old item, if there was one.
    async fn delete(&self, key: &Key, cond: Condition) -> StoreResult<Option<Item>>;
    async fn query(&self, query: Query) -> StoreResult<Page>;
    /// All writes succeed or none does.
    async fn transact(&self, ops: Vec<TxOp>) -> StoreResult<()>;
    /// Atomically adds `by` to a numeric attribute (absent counts as 0), creating the item with
    /// `init` attributes when absent, and returns the new value.
    async fn increment(&self, key: &Key, attr: &str, by: i64, init: Item, cond: Condition) -> StoreResult<i64>;
}

/// Current time in epoch seconds, for TTL visibility (a security clock: never the business clock).
pub(crate) fn now_epoch() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// True when the item carries a `ttl` in the past.
pub(crate) fn is_expired(item: &Item, now: i64) -> bool {
    item.get(TTL).and_then(Value::as_i64).is_some_and(|ttl| ttl <= now)
}

pub(crate) fn check_item_keys(item: &Item) -> StoreResult<Key> {
    for attr in [PK, SK] {
        match item.get(attr) {
            Some(Value::String(s)) if !s.is_empty() => {}
            _ => return Err(StoreError::Invalid(format!("item lacks string attribute {attr}"))),
        }
    }
    if item.get(ENTITY).and_then(Value::as_str).is_none() {
        return Err(StoreError::Invalid("item lacks its entity attribute".into()));
    }
    Ok(Key::of(item).expect("checked above"))
}

/// Evaluates a condition against the current item (None when absent or expired).
/// The embedded backend uses this directly; the DynamoDB backend translates the same enum
/// into a condition expression with identical meaning.
#[cfg(feature = "embedded")]
pub(crate) fn condition_holds(cond: &Condition, current: Option<&Item>) -> bool {
    match cond {
        Condition::None => true,
        Condition::NotExists => current.is_none(),
        Condition::Exists => current.is_some(),
        Condition::VersionEquals(v) => current.and_then(|i| i.get(VERSION)).and_then(Value::as_i64) == Some(*v),
        Condition::CounterBelow { attr, limit } => match current.and_then(|i| i.get(attr)) {
            None => true,
            Some(n) => n.as_i64().is_some_and(|n| n < *limit),
        },
        Condition::Equals { attr, value } => {
            current.and_then(|i| i.get(attr)).and_then(Value::as_str) == Some(value.as_str())
        }
        Condition::Lacks(attr) => current.is_none_or(|i| !i.contains_key(attr)),
        Condition::All(all) => all.iter().all(|c| condition_holds(c, current)),
    }
}

/// Applies an update to a (possibly absent) item, keeping the key attributes.
#[cfg(feature = "embedded")]
pub(crate) fn apply_update(current: Option<Item>, key: &Key, update: &Update) -> Item {
    let mut item = current.unwrap_or_default();
    item.insert(PK.into(), Value::String(key.pk.clone()));
    item.insert(SK.into(), Value::String(key.sk.clone()));
    for attr in &update.remove {
        item.remove(attr);
    }
    for (attr, value) in &update.set {
        item.insert(attr.clone(), value.clone());
    }
    for (attr, by) in &update.add {
        let sum = item.get(attr).and_then(Value::as_i64).unwrap_or(0) + by;
        item.insert(attr.clone(), Value::from(sum));
    }
    item
}

pub(crate) fn check_update(update: &Update) -> StoreResult<()> {
    for attr in update.set.keys().chain(update.remove.iter()).chain(update.add.iter().map(|(attr, _)| attr)) {
        if attr == PK || attr == SK {
            return Err(StoreError::Invalid(format!("an update cannot change {attr}")));
        }
    }
    Ok(())
}

/// At most this many reads of one request in flight at once: a fan-out over a list the caller
/// controls stays polite to the table and to the container's connection pool.
pub const FAN_OUT: usize = 16;

/// Runs `read` for each input concurrently, at most [`FAN_OUT`] at a time, and returns the
/// results in the inputs' order; the first error wins. For reads that depend on an earlier
/// query's result but not on each other, so that they cost one round trip instead of one each.
pub async fn read_all<I, T, E, F, Fut>(inputs: I, read: F) -> Result<Vec<T>, E>
where
    I: IntoIterator,
    F: FnMut(I::Item) -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    use futures_util::{StreamExt, TryStreamExt, stream};
    stream::iter(inputs).map(read).buffered(FAN_OUT).try_collect().await
}

/// Every item a query matches, following the pages (DynamoDB returns at most 1 MB a page).
pub async fn query_all(store: &dyn Store, query: Query) -> StoreResult<Vec<Item>> {
    let mut items = Vec::new();
    let mut after = None;
    loop {
        let page = store.query(query.clone().after(after)).await?;
        items.extend(page.items);
        match page.next {
            Some(next) => after = Some(next),
            None => return Ok(items),
        }
    }
}

/// Reads an entity back from an item, ignoring key and bookkeeping attributes.
pub fn from_item<T: serde::de::DeserializeOwned>(item: Item) -> StoreResult<T> {
    serde_json::from_value(Value::Object(item)).map_err(|e| StoreError::Backend(format!("corrupt item: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(value: Value) -> Item {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn attribute_conditions_on_the_current_item() {
        let equals = |value: &str| Condition::Equals { attr: "claim".into(), value: value.into() };
        let lacks = || Condition::Lacks("response".into());
        let in_flight = item(json!({"claim": "n1"}));
        let completed = item(json!({"claim": "n1", "response": {"status": 201}}));
        let numeric = item(json!({"claim": 1}));
        assert!(condition_holds(&equals("n1"), Some(&in_flight)));
        assert!(!condition_holds(&equals("n2"), Some(&in_flight)));
        assert!(!condition_holds(&equals("1"), Some(&numeric)), "a number is not its digits");
        assert!(!condition_holds(&equals("n1"), None), "an absent (or expired) item holds nothing");
        assert!(condition_holds(&lacks(), Some(&in_flight)));
        assert!(!condition_holds(&lacks(), Some(&completed)));
        assert!(!condition_holds(&lacks(), Some(&item(json!({"response": null})))), "null is present");
        assert!(condition_holds(&lacks(), None), "an absent (or expired) item lacks everything");
        let release = Condition::All(vec![equals("n1"), lacks()]);
        assert!(condition_holds(&release, Some(&in_flight)));
        assert!(!condition_holds(&release, Some(&completed)));
        assert!(!condition_holds(&release, None));
        assert!(condition_holds(&Condition::All(vec![]), None));
    }
}
