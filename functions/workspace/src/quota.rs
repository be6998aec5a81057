//! The workspace's storage quota (docs/files.md#the-storage-quota): the bytes of its uploads,
//! counted on one item and reserved before a file is written, so that concurrent uploads can
//! never together exceed the quota.
//!
//! The reservation is one conditional atomic increment (`CounterBelow`): it succeeds only while
//! the bytes stored plus the new file's fit, and both backends evaluate the condition with the
//! write. A failure after it (the object store, the record) gives the bytes back; a crash in
//! between leaves them counted, so the count may run high, never low.

use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use workapi_kit::entity::Entity;
use workapi_kit::{ApiError, ApiResult};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, ENTITY, Item, Key, Store, StoreError, TxOp, Update};

/// The quota when none is configured: 1 GiB per workspace.
pub const DEFAULT_QUOTA_BYTES: u64 = 1024 * 1024 * 1024;

/// The environment variable that sets every workspace's quota, in bytes.
pub const QUOTA_ENV: &str = "LT_FILES_QUOTA_BYTES";

/// The counter's attribute: bytes stored.
const BYTES: &str = "bytes";

/// The workspace's storage use: `WS#<ws>` / `STORAGE#files` (docs/data-model.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StorageUsage {
    pub bytes: i64,
}

impl Entity for StorageUsage {
    const TYPE: &'static str = "StorageUsage";
    const PREFIX: &'static str = "STORAGE#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        usage_key(keys)
    }
}

/// The key of a workspace's storage counter.
pub fn usage_key(keys: WsKeys) -> Key {
    keys.root(format!("{}files", StorageUsage::PREFIX))
}

/// The quota of every workspace: `LT_FILES_QUOTA_BYTES`, else [`DEFAULT_QUOTA_BYTES`]; read
/// once. A value that is not a positive whole number of bytes is a configuration error (500,
/// logged), never a silent default.
pub fn configured_quota() -> ApiResult<u64> {
    static QUOTA: OnceLock<Result<u64, String>> = OnceLock::new();
    QUOTA.get_or_init(|| parse_quota(std::env::var(QUOTA_ENV).ok().as_deref())).clone().map_err(ApiError::internal)
}

/// Reads a quota setting: absent or empty is the default; otherwise bytes, 1 to 2^53.
pub fn parse_quota(value: Option<&str>) -> Result<u64, String> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else { return Ok(DEFAULT_QUOTA_BYTES) };
    match value.parse::<u64>() {
        Ok(bytes) if (1..=1 << 53).contains(&bytes) => Ok(bytes),
        _ => Err(format!("{QUOTA_ENV} must be a number of bytes from 1 to 2^53, not {value:?}")),
    }
}

/// Reserves `size` bytes of the workspace's `quota` in one conditional write. Over the quota:
/// 413 naming the quota, the bytes stored and the file's size (`errors.<field>`).
pub async fn reserve(store: &dyn Store, keys: WsKeys, field: &str, size: u64, quota: u64) -> ApiResult<()> {
    let over = |stored: Option<u64>| over_quota(field, quota, stored, size);
    if size > quota {
        return Err(over(None));
    }
    // Admitted while bytes < quota - size + 1, i.e. bytes + size <= quota.
    let limit = i64::try_from(quota - size + 1).map_err(ApiError::internal)?;
    let by = i64::try_from(size).map_err(ApiError::internal)?;
    let init = Item::from_iter([(ENTITY.to_owned(), StorageUsage::TYPE.into())]);
    let below = Condition::CounterBelow { attr: BYTES.into(), limit };
    match store.increment(&usage_key(keys), BYTES, by, init, below).await {
        Ok(_) => Ok(()),
        // Refused: read what is stored, for the message (one more read, on refusals only).
        Err(StoreError::ConditionFailed) => Err(over(stored(store, keys).await.ok())),
        Err(e) => Err(e.into()),
    }
}

/// Gives back a reservation whose file was not stored. A failure is logged, not returned: the
/// upload has failed already, and the bytes stay counted (high, never low).
pub async fn release(store: &dyn Store, keys: WsKeys, size: u64) {
    let Ok(by) = i64::try_from(size) else { return };
    if let Err(e) = store.increment(&usage_key(keys), BYTES, -by, Item::new(), Condition::Exists).await {
        tracing::warn!(error = %e, workspace = %keys.workspace_id(), size, "storage reservation not released");
    }
}

/// The write that gives a deleted file's bytes back, for the delete's transaction: conditioned
/// on the counter existing (an upload created it before the file was stored).
pub fn give_back(keys: WsKeys, size: u64) -> ApiResult<TxOp> {
    let by = i64::try_from(size).map_err(ApiError::internal)?;
    Ok(TxOp::Update { key: usage_key(keys), update: Update::default().add(BYTES, -by), cond: Condition::Exists })
}

/// The bytes the workspace stores (0 before its first upload).
pub async fn stored(store: &dyn Store, keys: WsKeys) -> ApiResult<u64> {
    let usage: Option<StorageUsage> = workapi_kit::entity::get(store, &usage_key(keys)).await?;
    Ok(usage.map_or(0, |u| u.bytes.max(0) as u64))
}

fn over_quota(field: &str, quota: u64, stored: Option<u64>, size: u64) -> ApiError {
    let stored = stored.map(|bytes| format!(", {bytes} bytes are stored")).unwrap_or_default();
    let reason = format!(
        "the workspace's storage quota of {} ({quota} bytes) is full{stored}: a file of {size} bytes does not fit",
        human(quota)
    );
    let mut error = ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, format!("Storage quota exceeded: {reason}"));
    error.errors = Some(BTreeMap::from([(field.to_owned(), vec![format!("{field} does not fit: {reason}")])]));
    error
}

/// Bytes for people: whole GiB, MiB or KiB when exact, else bytes.
fn human(bytes: u64) -> String {
    for (unit, size) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use uuid::Uuid;
    use workapi_store::sqlite::SqliteStore;

    #[test]
    fn quota_settings_are_bytes_or_the_default() {
        assert_eq!(parse_quota(None), Ok(DEFAULT_QUOTA_BYTES));
        assert_eq!(parse_quota(Some(" ")), Ok(DEFAULT_QUOTA_BYTES));
        assert_eq!(parse_quota(Some("5242880")), Ok(5 * 1024 * 1024));
        for wrong in ["0", "-1", "1.5", "1GiB", "9007199254740993"] {
            assert!(parse_quota(Some(wrong)).is_err(), "{wrong}");
        }
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human(DEFAULT_QUOTA_BYTES), "1 GiB");
        assert_eq!(human(5 << 20), "5 MiB");
        assert_eq!(human(1536), "1536 bytes");
        assert_eq!(human(3 << 10), "3 KiB");
    }

    async fn store() -> Arc<dyn Store> {
        Arc::new(SqliteStore::in_memory().expect("an in-memory store"))
    }

    #[tokio::test]
    async fn reservations_fill_the_quota_exactly_and_releases_give_back() {
        let store = store().await;
        let keys = WsKeys::new(Uuid::new_v4());
        let store = store.as_ref();
        reserve(store, keys, "file", 60, 100).await.unwrap();
        reserve(store, keys, "file", 40, 100).await.unwrap();
        assert_eq!(stored(store, keys).await.unwrap(), 100);
        let refused = reserve(store, keys, "file", 1, 100).await.unwrap_err();
        assert_eq!(refused.status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(refused.message.contains("100 bytes are stored"), "{}", refused.message);
        assert!(refused.errors.unwrap()["file"][0].contains("quota of 100 bytes"));
        release(store, keys, 40).await;
        assert_eq!(stored(store, keys).await.unwrap(), 60);
        reserve(store, keys, "file", 40, 100).await.unwrap();
        // Larger than the whole quota: refused before any write.
        let other = WsKeys::new(Uuid::new_v4());
        assert!(reserve(store, other, "file", 101, 100).await.is_err());
        assert_eq!(stored(store, other).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn concurrent_reservations_never_exceed_the_quota() {
        let store = store().await;
        let keys = WsKeys::new(Uuid::new_v4());
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move { reserve(store.as_ref(), keys, "file", 10, 95).await.is_ok() })
            })
            .collect();
        let mut admitted = 0;
        for task in tasks {
            admitted += task.await.unwrap() as usize;
        }
        assert_eq!(admitted, 9);
        assert_eq!(stored(store.as_ref(), keys).await.unwrap(), 90);
    }
}
