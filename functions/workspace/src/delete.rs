//! Deleting an uploaded file (docs/files.md#deleting-a-file): the record and the quota's bytes
//! in one transaction, conditioned on the record existing and no catalog product naming it as
//! its logo, then the bytes in the object store.
//!
//! The transaction is what makes the quota exact: of two deletes of one file (a retry, or two
//! clients at once) only one finds the record, so its bytes are given back once. The object is
//! deleted after it; when that fails the bytes stay in the bucket, unreachable (no record names
//! them) and no longer counted: logged, never a failed delete.

use crate::quota;
use workapi_kit::entity::{self, Attempt};
use workapi_kit::files::{self, FileRecord, LOGO_USES};
use workapi_kit::{ApiError, ApiResult, AppState};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, StoreError, TxOp};

/// What a file's deletion may find in the way.
fn in_use(file: &FileRecord) -> ApiError {
    let products = if file.logo_uses == 1 {
        "a catalog product".to_owned()
    } else {
        format!("{} catalog products", file.logo_uses)
    };
    ApiError::conflict(format!("The file is the logo of {products}; a logo in use cannot be deleted"))
}

fn not_found() -> ApiError {
    ApiError::not_found("File not found")
}

/// Deletes `file` (read by the caller from `keys`) and gives its bytes back to the quota,
/// exactly once however many deletes race: 404 for all but one. 409 while a product names it
/// as its logo.
/// `event` (`file.deleted`) is written in the delete's transaction.
pub async fn delete(state: &AppState, keys: WsKeys, file: &FileRecord, event: TxOp) -> ApiResult<()> {
    if file.logo_uses > 0 {
        return Err(in_use(file));
    }
    let store = state.store();
    let record = files::file_key(keys, file.id);
    let unused = Condition::All(vec![Condition::Exists, Condition::CounterBelow { attr: LOGO_USES.into(), limit: 1 }]);
    let give_back = quota::give_back(keys, file.size)?;
    let (record, unused, event) = (&record, &unused, &event);
    entity::retry_on_conflict("The file is being changed concurrently; retry", |_| {
        let ops = vec![TxOp::Delete { key: record.clone(), cond: unused.clone() }, give_back.clone(), event.clone()];
        async move {
            match store.transact(ops).await {
                Ok(()) => Ok(Attempt::Done(())),
                // Gone (another delete gave its bytes back), or named as a logo since it was read.
                Err(StoreError::TransactionCancelled { failed }) if failed.contains(&0) => {
                    match files::find_image(store, keys, file.id).await? {
                        None => Err(not_found()),
                        Some(now) if now.logo_uses > 0 => Err(in_use(&now)),
                        Some(_) => Ok(Attempt::Conflict),
                    }
                }
                // No storage counter: the file was stored before uploads were counted, so it
                // holds no bytes of the count to give back.
                Err(StoreError::TransactionCancelled { failed }) if failed == [1] => {
                    let delete = TxOp::Delete { key: record.clone(), cond: unused.clone() };
                    match store.transact(vec![delete, event.clone()]).await {
                        Ok(()) => Ok(Attempt::Done(())),
                        Err(e) if entity::is_conflict(&e) => Ok(Attempt::Conflict),
                        Err(e) => Err(e.into()),
                    }
                }
                Err(StoreError::TransactionCancelled { failed }) if failed.is_empty() => Ok(Attempt::Conflict),
                Err(e) => Err(e.into()),
            }
        }
    })
    .await?;
    files::delete_bytes(state, file).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use uuid::Uuid;
    use workapi_domain::token::TokenKey;
    use workapi_kit::app::TokenKeySource;
    use workapi_kit::files::ImageType;
    use workapi_store::objects::{DirectoryObjects, ObjectStore};
    use workapi_store::sqlite::SqliteStore;

    async fn stored_file(state: &AppState, keys: WsKeys, size: u64) -> FileRecord {
        let record = FileRecord {
            id: Uuid::new_v4(),
            workspace_id: keys.workspace_id(),
            content_type: ImageType::Png,
            width: 1,
            height: 1,
            size,
            created_at: "2026-11-26T00:00:00Z".into(),
            created_by: Uuid::new_v4(),
            logo_uses: 0,
        };
        quota::reserve(state.store(), keys, "file", size, 1000).await.unwrap();
        files::save(state, keys, &record, vec![0; size as usize], None).await.unwrap();
        record
    }

    /// An outbox item, the write a delete's event makes.
    fn event(keys: WsKeys) -> TxOp {
        let mut item = workapi_store::Item::new();
        item.insert(workapi_store::PK.into(), keys.partition("EVENTS").into());
        item.insert(workapi_store::SK.into(), format!("EVT#{}", Uuid::new_v4()).into());
        item.insert(workapi_store::ENTITY.into(), "Event".into());
        TxOp::Put { item, cond: Condition::NotExists }
    }

    /// A state on the embedded store, its objects under the returned directory.
    fn state() -> (AppState, std::path::PathBuf) {
        let root = std::env::temp_dir().join(format!("workapi-delete-{}", Uuid::new_v4()));
        let objects: Arc<dyn ObjectStore> = Arc::new(DirectoryObjects::new(root.clone()));
        let store = Arc::new(SqliteStore::in_memory().unwrap());
        (AppState::builder(store, TokenKeySource::Static(TokenKey::generate())).objects(objects).build(), root)
    }

    /// The delete decides on the record as it is when it writes, not as the caller read it: a
    /// product that took the file as its logo since is a 409, and a stale read of a deleted file
    /// is a 404; neither gives bytes back.
    #[tokio::test]
    async fn the_delete_decides_on_the_record_as_written_not_as_read() {
        let (state, _) = state();
        let keys = WsKeys::new(Uuid::new_v4());
        let (logo, plain) = (stored_file(&state, keys, 100).await, stored_file(&state, keys, 30).await);
        assert_eq!(quota::stored(state.store(), keys).await.unwrap(), 130);

        // Read unused, then named by a product (its create's write), then deleted: refused.
        state.store().transact(vec![files::use_as_logo(keys, logo.id)]).await.unwrap();
        let refused = delete(&state, keys, &logo, event(keys)).await.unwrap_err();
        assert_eq!((refused.status.as_u16(), refused.message.contains("logo of a catalog product")), (409, true));
        assert!(files::find_image(state.store(), keys, logo.id).await.unwrap().is_some());
        assert_eq!(quota::stored(state.store(), keys).await.unwrap(), 130);

        delete(&state, keys, &plain, event(keys)).await.unwrap();
        assert_eq!(quota::stored(state.store(), keys).await.unwrap(), 100);
        assert_eq!(
            state.objects().unwrap().get(&files::object_key(keys.workspace_id(), plain.id)).await.unwrap(),
            None
        );
        // The same read again (a retry): 404, nothing given back twice.
        assert_eq!(delete(&state, keys, &plain, event(keys)).await.unwrap_err().status.as_u16(), 404);
        assert_eq!(quota::stored(state.store(), keys).await.unwrap(), 100);
        // A file gone, named as a logo: the product's write fails, nothing is created.
        assert!(state.store().transact(vec![files::use_as_logo(keys, plain.id)]).await.is_err());
        assert_eq!(files::find_image(state.store(), keys, plain.id).await.unwrap(), None);
    }

    /// When the object store fails after the record's delete, the delete still succeeds: the
    /// record is gone and its bytes given back; the object stays, an orphan (logged).
    #[tokio::test]
    async fn a_failing_object_delete_leaves_an_orphan_that_no_longer_counts() {
        let (state, root) = state();
        let keys = WsKeys::new(Uuid::new_v4());
        let file = stored_file(&state, keys, 40).await;
        // The object's path made a non-empty directory: removing it as a file fails.
        let path = root.join(files::object_key(keys.workspace_id(), file.id).as_str());
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir_all(path.join("stuck")).unwrap();
        delete(&state, keys, &file, event(keys)).await.unwrap();
        assert_eq!(files::find_image(state.store(), keys, file.id).await.unwrap(), None);
        assert_eq!(quota::stored(state.store(), keys).await.unwrap(), 0);
        assert!(path.exists(), "the orphan stays");
        std::fs::remove_dir_all(root).unwrap();
    }
}
