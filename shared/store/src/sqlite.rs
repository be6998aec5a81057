//! Embedded backend: SQLite (bundled), one row per item, the item body kept as JSON.
//!
//! Every operation runs in one `BEGIN IMMEDIATE` transaction on a single connection, so the
//! read-check-write of a condition is atomic here and also against another process (the
//! operator CLI) writing the same file. Text columns compare with SQLite's BINARY collation,
//! i.e. UTF-8 byte order, which is DynamoDB's order for string keys.

use super::*;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params_from_iter, types::Value as SqlValue};
use std::path::Path;
use std::sync::{Arc, Mutex};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS items (
    pk     TEXT NOT NULL,
    sk     TEXT NOT NULL,
    gsi1pk TEXT,
    gsi1sk TEXT,
    gsi2pk TEXT,
    gsi2sk TEXT,
    ttl    INTEGER,
    body   TEXT NOT NULL,
    PRIMARY KEY (pk, sk)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS items_gsi1 ON items (gsi1pk, gsi1sk, pk, sk) WHERE gsi1pk IS NOT NULL;
-- The change feed (crate::changes): each inserted event item, in commit order, written by the
-- inserting transaction itself, as DynamoDB Streams records an INSERT.
CREATE TABLE IF NOT EXISTS stream (
    seq  INTEGER PRIMARY KEY AUTOINCREMENT,
    body TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS stream_inserts AFTER INSERT ON items
    WHEN json_extract(NEW.body, '$.entity') = 'Event'
    BEGIN INSERT INTO stream (body) VALUES (NEW.body); END;
-- The embedded queue (crate::changes::PolledQueue): a message is due at `visible_at`.
CREATE TABLE IF NOT EXISTS queue (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    visible_at INTEGER NOT NULL,
    receipt    TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS queue_due ON queue (visible_at);
";

/// What a database made before the list index (GSI2) lacks; its index is created after it.
const GSI2_COLUMNS: &str = "ALTER TABLE items ADD COLUMN gsi2pk TEXT; ALTER TABLE items ADD COLUMN gsi2sk TEXT;";
const GSI2_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS items_gsi2 ON items (gsi2pk, gsi2sk, pk, sk) WHERE gsi2pk IS NOT NULL;";

#[derive(Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
}

impl SqliteStore {
    /// Opens (creating if needed) a database file.
    pub fn open(path: &Path) -> StoreResult<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Backend(e.to_string()))?;
        }
        let conn = Connection::open(path).map_err(backend)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(backend)?;
        Self::init(conn)
    }

    /// A private in-memory database (tests, throwaway servers).
    pub fn in_memory() -> StoreResult<Self> {
        Self::init(Connection::open_in_memory().map_err(backend)?)
    }

    fn init(conn: Connection) -> StoreResult<Self> {
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(backend)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(backend)?;
        conn.execute_batch(SCHEMA).map_err(backend)?;
        let has_gsi2: bool = conn
            .query_row("SELECT count(*) FROM pragma_table_info('items') WHERE name = 'gsi2pk'", [], |row| row.get(0))
            .map_err(backend)?;
        if !has_gsi2 {
            conn.execute_batch(GSI2_COLUMNS).map_err(backend)?;
        }
        conn.execute_batch(GSI2_INDEX).map_err(backend)?;
        Ok(SqliteStore { conn: Arc::new(Mutex::new(conn)) })
    }

    /// Runs `f` inside one immediate transaction on a blocking thread. The closure returns
    /// `Ok(Err(e))` to roll back with a domain error (a failed condition).
    async fn with_tx<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<StoreResult<T>> + Send + 'static,
    {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(backend)?;
            match f(&tx).map_err(backend)? {
                Ok(value) => {
                    tx.commit().map_err(backend)?;
                    Ok(value)
                }
                Err(e) => Err(e), // dropping `tx` rolls back
            }
        })
        .await
        .map_err(|e| StoreError::Backend(format!("sqlite worker failed: {e}")))?
    }
}

/// The embedded store's change feed: the `stream` table, read from the oldest row; `done`
/// deletes what the last `next` returned. One reader per database (the local server).
pub struct SqliteChanges {
    store: SqliteStore,
    read_through: Mutex<Option<i64>>,
}

impl SqliteStore {
    /// The feed of inserted event items (crate::changes::ChangeFeed).
    pub fn changes(&self) -> SqliteChanges {
        SqliteChanges { store: self.clone(), read_through: Mutex::new(None) }
    }
}

#[async_trait]
impl crate::changes::ChangeFeed for SqliteChanges {
    async fn next(&self, max: usize) -> StoreResult<Vec<Item>> {
        let rows: Vec<(i64, String)> = self
            .store
            .with_tx(move |tx| {
                let mut statement = tx.prepare("SELECT seq, body FROM stream ORDER BY seq LIMIT ?1")?;
                let rows = statement.query_map([max as i64], |row| Ok((row.get(0)?, row.get(1)?)))?;
                Ok(Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?))
            })
            .await?;
        *self.read_through.lock().unwrap_or_else(|p| p.into_inner()) = rows.last().map(|(seq, _)| *seq);
        Ok(rows.iter().map(|(_, body)| parse_body(body)).collect())
    }

    async fn done(&self) -> StoreResult<()> {
        let Some(through) = self.read_through.lock().unwrap_or_else(|p| p.into_inner()).take() else { return Ok(()) };
        self.store
            .with_tx(move |tx| Ok(Ok(tx.execute("DELETE FROM stream WHERE seq <= ?1", [through]).map(|_| ())?)))
            .await
    }
}

#[async_trait]
impl crate::changes::Queue for SqliteStore {
    async fn send(&self, body: &str, delay: std::time::Duration) -> StoreResult<()> {
        let delay = delay.min(crate::changes::MAX_DELAY).as_millis() as i64;
        let body = body.to_owned();
        self.with_tx(move |tx| {
            let visible_at = now_millis() + delay;
            tx.execute("INSERT INTO queue (visible_at, body) VALUES (?1, ?2)", rusqlite::params![visible_at, body])?;
            Ok(Ok(()))
        })
        .await
    }
}

#[async_trait]
impl crate::changes::PolledQueue for SqliteStore {
    async fn receive(&self, max: usize, visibility: std::time::Duration) -> StoreResult<Vec<crate::changes::Received>> {
        let visibility = visibility.as_millis() as i64;
        self.with_tx(move |tx| {
            let now = now_millis();
            let mut statement =
                tx.prepare("SELECT id, body FROM queue WHERE visible_at <= ?1 ORDER BY visible_at, id LIMIT ?2")?;
            let due = statement
                .query_map(rusqlite::params![now, max as i64], |row| {
                    Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let mut received = Vec::with_capacity(due.len());
            for (id, body) in due {
                // A fresh receipt per receive: a late delete of an earlier receive deletes nothing.
                let receipt = format!("{id}.{}", uuid::Uuid::new_v4().simple());
                tx.execute(
                    "UPDATE queue SET visible_at = ?1, receipt = ?2 WHERE id = ?3",
                    rusqlite::params![now + visibility, receipt, id],
                )?;
                received.push(crate::changes::Received { receipt, body });
            }
            Ok(Ok(received))
        })
        .await
    }

    async fn acknowledge(&self, receipt: &str) -> StoreResult<()> {
        let receipt = receipt.to_owned();
        self.with_tx(move |tx| Ok(Ok(tx.execute("DELETE FROM queue WHERE receipt = ?1", [receipt]).map(|_| ())?))).await
    }
}

fn now_millis() -> i64 {
    (time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}

fn backend(e: rusqlite::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

/// Reads the live (not expired) item under a key.
fn read(tx: &rusqlite::Transaction<'_>, key: &Key, now: i64) -> rusqlite::Result<Option<Item>> {
    let body: Option<String> = tx
        .query_row(
            "SELECT body FROM items WHERE pk = ?1 AND sk = ?2 AND (ttl IS NULL OR ttl > ?3)",
            rusqlite::params![key.pk, key.sk, now],
            |row| row.get(0),
        )
        .optional()?;
    Ok(body.map(|b| parse_body(&b)))
}

fn parse_body(body: &str) -> Item {
    // Bodies are only ever written by `write` from an Item, so they parse.
    serde_json::from_str(body).unwrap_or_default()
}

fn write(tx: &rusqlite::Transaction<'_>, item: &Item) -> rusqlite::Result<()> {
    let str_attr = |name: &str| item.get(name).and_then(Value::as_str).map(str::to_owned);
    // Like a DynamoDB GSI, the item is indexed only when both index keys are strings.
    let index_keys = |(pk, sk): (&str, &str)| match (str_attr(pk), str_attr(sk)) {
        (Some(p), Some(s)) => (Some(p), Some(s)),
        _ => (None, None),
    };
    let (gsi1pk, gsi1sk) = index_keys(Index::Gsi1.key_attrs());
    let (gsi2pk, gsi2sk) = index_keys(Index::Gsi2.key_attrs());
    tx.execute(
        "INSERT OR REPLACE INTO items (pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk, ttl, body) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        rusqlite::params![
            str_attr(PK),
            str_attr(SK),
            gsi1pk,
            gsi1sk,
            gsi2pk,
            gsi2sk,
            item.get(TTL).and_then(Value::as_i64),
            serde_json::to_string(item).expect("a JSON map serialises"),
        ],
    )?;
    Ok(())
}

fn remove(tx: &rusqlite::Transaction<'_>, key: &Key) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM items WHERE pk = ?1 AND sk = ?2", rusqlite::params![key.pk, key.sk])?;
    Ok(())
}

fn check_distinct(keys: impl Iterator<Item = Key>) -> StoreResult<()> {
    let mut seen = std::collections::HashSet::new();
    for key in keys {
        if !seen.insert(key) {
            return Err(StoreError::Invalid("a transaction names one item twice".into()));
        }
    }
    Ok(())
}

fn op_key(op: &TxOp) -> StoreResult<Key> {
    match op {
        TxOp::Put { item, .. } => check_item_keys(item),
        TxOp::Update { key, update, .. } => check_update(update).map(|_| key.clone()),
        TxOp::Delete { key, .. } | TxOp::Check { key, .. } => Ok(key.clone()),
    }
}

fn op_cond(op: &TxOp) -> &Condition {
    match op {
        TxOp::Put { cond, .. } | TxOp::Update { cond, .. } | TxOp::Delete { cond, .. } | TxOp::Check { cond, .. } => {
            cond
        }
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn get(&self, key: &Key) -> StoreResult<Option<Item>> {
        let key = key.clone();
        self.with_tx(move |tx| Ok(Ok(read(tx, &key, now_epoch())?))).await
    }

    async fn put(&self, item: Item, cond: Condition) -> StoreResult<()> {
        let key = check_item_keys(&item)?;
        limits::check_item(&item)?;
        self.with_tx(move |tx| {
            let current = read(tx, &key, now_epoch())?;
            if !condition_holds(&cond, current.as_ref()) {
                return Ok(Err(StoreError::ConditionFailed));
            }
            write(tx, &item)?;
            Ok(Ok(()))
        })
        .await
    }

    async fn update(&self, key: &Key, update: Update, cond: Condition) -> StoreResult<Item> {
        check_update(&update)?;
        let key = key.clone();
        self.with_tx(move |tx| {
            let current = read(tx, &key, now_epoch())?;
            if !condition_holds(&cond, current.as_ref()) {
                return Ok(Err(StoreError::ConditionFailed));
            }
            let item = apply_update(current, &key, &update);
            if let Err(e) = limits::check_item(&item) {
                return Ok(Err(e));
            }
            write(tx, &item)?;
            Ok(Ok(item))
        })
        .await
    }

    async fn delete(&self, key: &Key, cond: Condition) -> StoreResult<Option<Item>> {
        let key = key.clone();
        self.with_tx(move |tx| {
            let current = read(tx, &key, now_epoch())?;
            if !condition_holds(&cond, current.as_ref()) {
                return Ok(Err(StoreError::ConditionFailed));
            }
            remove(tx, &key)?;
            Ok(Ok(current))
        })
        .await
    }

    async fn query(&self, query: Query) -> StoreResult<Page> {
        limits::check_query(&query)?;
        self.with_tx(move |tx| Ok(Ok(run_query(tx, &query, now_epoch())?))).await
    }

    async fn transact(&self, ops: Vec<TxOp>) -> StoreResult<()> {
        if ops.is_empty() || ops.len() > MAX_TX_OPS {
            return Err(StoreError::Invalid(format!("a transaction takes 1 to {MAX_TX_OPS} operations")));
        }
        let keys = ops.iter().map(op_key).collect::<StoreResult<Vec<_>>>()?;
        check_distinct(keys.iter().cloned())?;
        self.with_tx(move |tx| {
            let now = now_epoch();
            let mut currents = Vec::with_capacity(ops.len());
            let mut failed = Vec::new();
            for (i, (op, key)) in ops.iter().zip(&keys).enumerate() {
                let current = read(tx, key, now)?;
                if !condition_holds(op_cond(op), current.as_ref()) {
                    failed.push(i);
                }
                currents.push(current);
            }
            if !failed.is_empty() {
                return Ok(Err(StoreError::TransactionCancelled { failed }));
            }
            let updated: Vec<Option<Item>> = ops
                .iter()
                .zip(&keys)
                .zip(currents)
                .map(|((op, key), current)| match op {
                    TxOp::Update { update, .. } => Some(apply_update(current, key, update)),
                    _ => None,
                })
                .collect();
            let written = ops.iter().zip(&updated).filter_map(|(op, updated)| match op {
                TxOp::Put { item, .. } => Some(item),
                _ => updated.as_ref(),
            });
            if let Err(e) = limits::check_transaction(written) {
                return Ok(Err(e));
            }
            for ((op, key), updated) in ops.iter().zip(&keys).zip(&updated) {
                match (op, updated) {
                    (TxOp::Put { item, .. }, _) => write(tx, item)?,
                    (TxOp::Update { .. }, Some(item)) => write(tx, item)?,
                    (TxOp::Delete { .. }, _) => remove(tx, key)?,
                    _ => {}
                }
            }
            Ok(Ok(()))
        })
        .await
    }

    async fn increment(&self, key: &Key, attr: &str, by: i64, init: Item, cond: Condition) -> StoreResult<i64> {
        let key = key.clone();
        let attr = attr.to_owned();
        self.with_tx(move |tx| {
            let current = read(tx, &key, now_epoch())?;
            if !condition_holds(&cond, current.as_ref()) {
                return Ok(Err(StoreError::ConditionFailed));
            }
            let mut item = current.unwrap_or_else(|| {
                let mut fresh = init.clone();
                fresh.insert(PK.into(), Value::String(key.pk.clone()));
                fresh.insert(SK.into(), Value::String(key.sk.clone()));
                fresh
            });
            for (name, value) in &init {
                item.entry(name.clone()).or_insert_with(|| value.clone());
            }
            let value = item.get(&attr).and_then(Value::as_i64).unwrap_or(0) + by;
            item.insert(attr.clone(), Value::from(value));
            write(tx, &item)?;
            Ok(Ok(value))
        })
        .await
    }
}

fn run_query(tx: &rusqlite::Transaction<'_>, q: &Query, now: i64) -> rusqlite::Result<Page> {
    let (pk_col, sk_col, order_cols) = match q.index {
        Index::Table => ("pk", "sk", "sk"),
        Index::Gsi1 => ("gsi1pk", "gsi1sk", "gsi1sk, pk, sk"),
        Index::Gsi2 => ("gsi2pk", "gsi2sk", "gsi2sk, pk, sk"),
    };
    let mut sql = format!("SELECT body FROM items WHERE {pk_col} = ?1 AND (ttl IS NULL OR ttl > ?2)");
    let mut args: Vec<SqlValue> = vec![q.pk.clone().into(), now.into()];
    let arg = |args: &mut Vec<SqlValue>, v: String| {
        args.push(v.into());
        format!("?{}", args.len())
    };
    match &q.sk {
        SortKey::Any => {}
        SortKey::Equals(v) => sql += &format!(" AND {sk_col} = {}", arg(&mut args, v.clone())),
        SortKey::BeginsWith(p) => {
            let a = arg(&mut args, p.clone());
            sql += &format!(" AND {sk_col} >= {a} AND substr({sk_col}, 1, length({a})) = {a}");
        }
        SortKey::Between(lo, hi) => {
            let (a, b) = (arg(&mut args, lo.clone()), arg(&mut args, hi.clone()));
            sql += &format!(" AND {sk_col} BETWEEN {a} AND {b}");
        }
    }
    let cmp = if q.forward { ">" } else { "<" };
    if let Some(Cursor(after)) = &q.after {
        let get = |name: &str| after.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
        match q.index {
            Index::Table => sql += &format!(" AND sk {cmp} {}", arg(&mut args, get(SK))),
            Index::Gsi1 | Index::Gsi2 => {
                let index_sk = get(q.index.key_attrs().1);
                let (a, b, c) = (arg(&mut args, index_sk), arg(&mut args, get(PK)), arg(&mut args, get(SK)));
                sql += &format!(" AND ({sk_col}, pk, sk) {cmp} ({a}, {b}, {c})");
            }
        }
    }
    let dir = if q.forward { "ASC" } else { "DESC" };
    let order = order_cols.split(", ").map(|c| format!("{c} {dir}")).collect::<Vec<_>>().join(", ");
    sql += &format!(" ORDER BY {order}");
    if let Some(limit) = q.limit {
        // One extra row tells whether another page exists.
        sql += &format!(" LIMIT {}", u64::from(limit) + 1);
    }
    let mut stmt = tx.prepare(&sql)?;
    let mut rows = stmt.query_map(params_from_iter(args.iter()), |row| row.get::<_, String>(0))?;
    // Like DynamoDB, a page ends at `limit` items or once it has read 1 MB, whichever first.
    let (mut items, mut read, mut more) = (Vec::new(), 0, false);
    for body in rows.by_ref() {
        if q.limit.is_some_and(|limit| items.len() == limit as usize) || read >= limits::MAX_QUERY_PAGE_BYTES {
            more = true;
            break;
        }
        let item = parse_body(&body?);
        read += limits::item_size(&item);
        items.push(item);
    }
    let next = if more { items.last().map(|last| Cursor(cursor_of(last, q.index))) } else { None };
    Ok(Page { items, next })
}

/// The key attributes that position a cursor, as DynamoDB's LastEvaluatedKey holds them.
pub(crate) fn cursor_of(item: &Item, index: Index) -> Item {
    let mut names = vec![PK, SK];
    if index != Index::Table {
        names.extend(<[&str; 2]>::from(index.key_attrs()));
    }
    names.into_iter().filter_map(|n| item.get(n).map(|v| (n.to_owned(), v.clone()))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::{ChangeFeed, PolledQueue, Queue};

    fn item(sk: &str, entity: &str) -> Item {
        serde_json::json!({PK: "WS#w#EVENTS", SK: sk, ENTITY: entity}).as_object().unwrap().clone()
    }

    /// The feed carries inserted event items only, in commit order, and again until `done`.
    #[tokio::test]
    async fn the_feed_carries_event_inserts_until_done() {
        let store = SqliteStore::in_memory().unwrap();
        let feed = store.changes();
        store.put(item("EVT#2", "Event"), Condition::NotExists).await.unwrap();
        store.put(item("TAG#1", "Tag"), Condition::NotExists).await.unwrap();
        store.transact(vec![TxOp::Put { item: item("EVT#1", "Event"), cond: Condition::NotExists }]).await.unwrap();
        let sks = |items: Vec<Item>| items.iter().map(|i| i[SK].as_str().unwrap().to_owned()).collect::<Vec<_>>();
        assert_eq!(sks(feed.next(10).await.unwrap()), ["EVT#2", "EVT#1"]);
        assert_eq!(sks(feed.next(1).await.unwrap()), ["EVT#2"], "not done: read again");
        feed.done().await.unwrap();
        assert_eq!(sks(feed.next(10).await.unwrap()), ["EVT#1"]);
        feed.done().await.unwrap();
        assert!(feed.next(10).await.unwrap().is_empty());
        // A rolled-back insert leaves no record.
        let refused = TxOp::Put { item: item("TAG#1", "Tag"), cond: Condition::NotExists };
        let event = TxOp::Put { item: item("EVT#3", "Event"), cond: Condition::NotExists };
        assert!(store.transact(vec![event, refused]).await.is_err());
        assert!(feed.next(10).await.unwrap().is_empty());
    }

    /// A message is received once it is due, hidden while received, and again if not deleted.
    #[tokio::test]
    async fn queued_messages_come_when_due_and_again_until_deleted() {
        let store = SqliteStore::in_memory().unwrap();
        let no_wait = std::time::Duration::ZERO;
        store.send("later", std::time::Duration::from_secs(60)).await.unwrap();
        store.send("now", no_wait).await.unwrap();
        let received = store.receive(10, std::time::Duration::from_millis(50)).await.unwrap();
        assert_eq!(received.iter().map(|r| r.body.as_str()).collect::<Vec<_>>(), ["now"]);
        assert!(store.receive(10, no_wait).await.unwrap().is_empty(), "hidden while received");
        tokio::time::sleep(std::time::Duration::from_millis(60)).await;
        let again = store.receive(10, std::time::Duration::from_secs(30)).await.unwrap();
        assert_eq!(again.len(), 1);
        store.acknowledge(&received[0].receipt).await.unwrap();
        store.acknowledge(&again[0].receipt).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        assert!(store.receive(10, no_wait).await.unwrap().is_empty());
    }

    /// A database made before the list index (no GSI2 columns) opens, gains them, and lists
    /// what is written after.
    #[tokio::test]
    async fn a_database_made_before_the_list_index_gains_it_when_opened() {
        let path = std::env::temp_dir().join(format!("workapi-old-{}.db", uuid::Uuid::new_v4().simple()));
        let old = "CREATE TABLE items (pk TEXT NOT NULL, sk TEXT NOT NULL, gsi1pk TEXT, gsi1sk TEXT, \
                   ttl INTEGER, body TEXT NOT NULL, PRIMARY KEY (pk, sk)) WITHOUT ROWID;
                   INSERT INTO items (pk, sk, body) VALUES ('P', 'old', '{\"PK\":\"P\",\"SK\":\"old\",\"entity\":\"T\"}');";
        Connection::open(&path).unwrap().execute_batch(old).unwrap();

        let store = SqliteStore::open(&path).unwrap();
        let item = serde_json::json!({"PK": "P", "SK": "new", "entity": "T", "GSI2PK": "L", "GSI2SK": "a"});
        store.put(item.as_object().unwrap().clone(), Condition::None).await.unwrap();
        let listed = store.query(Query::gsi2("L")).await.unwrap();
        assert_eq!(listed.items.iter().map(|i| i[SK].clone()).collect::<Vec<_>>(), ["new"]);
        assert!(store.get(&Key::new("P", "old")).await.unwrap().is_some(), "the old item is kept");
        drop(store);
        // Opened again: the columns are there already.
        SqliteStore::open(&path).unwrap();
        let _ = std::fs::remove_file(&path);
    }
}
