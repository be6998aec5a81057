//! `workapi table reindex`: writes the index keys of items stored before the list index (GSI2)
//! existed, or before the catalog's category index sorted names as the list index does, and
//! moves users stored in the workspace partition to partitions of their own
//! (docs/data-model.md#lists). Each item of the listed entities (tags, projects, catalog
//! products) is read and written again as its entity writes it today, only when its keys
//! differ; a tag also gains its folded name. Safe to run while the API serves: a tag is
//! written only at the version read, and projects and products are not changed by the API
//! after their creation. Running it twice writes nothing the second time.

use std::collections::BTreeMap;
use workapi_domain::catalog::ProductRecord;
use workapi_domain::identity::{self, User};
use workapi_domain::project::ProjectRecord;
use workapi_domain::tag::{self, TAG_TYPES, TagRecord};
use workapi_kit::ApiResult;
use workapi_kit::entity::{self, Entity};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Index, Item, Query, Store, StoreError, TxOp, query_all};

/// Items written again, by entity type.
#[derive(Debug, Default)]
pub struct Report(BTreeMap<&'static str, usize>);

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counts: Vec<String> = self.0.iter().map(|(kind, n)| format!("{kind}: {n}")).collect();
        if counts.is_empty() { write!(f, "none needed") } else { write!(f, "{}", counts.join(", ")) }
    }
}

/// Reindexes every workspace.
pub async fn reindex(store: &dyn Store) -> ApiResult<Report> {
    let mut report = Report::default();
    for workspace in identity::list_workspaces(store).await? {
        let keys = WsKeys::new(workspace.id);
        for &tag_type in TAG_TYPES {
            let scope = (keys, tag_type);
            let query = Query::table(tag::partition(scope)).begins_with(TagRecord::PREFIX);
            for item in query_all(store, query).await? {
                let mut record: TagRecord = entity::from_item(item.clone())?;
                record.folded_name = tags::domain::fold_name(&record.tag.name);
                let cond = Condition::VersionEquals(record.version);
                rewrite(store, &mut report, item, entity::to_item(&record, scope)?, cond).await?;
            }
        }
        let legacy_users = Query::table(keys.root_pk()).begins_with(WsKeys::LEGACY_USER_PREFIX);
        for item in query_all(store, legacy_users).await? {
            let user: User = entity::from_item(item)?;
            move_user(store, keys, &user).await?;
            *report.0.entry(User::TYPE).or_default() += 1;
        }
        let projects = Query::table(keys.root_pk()).begins_with(ProjectRecord::PREFIX);
        for item in query_all(store, projects).await? {
            let record: ProjectRecord = entity::from_item(item.clone())?;
            rewrite(store, &mut report, item, entity::to_item(&record, keys)?, Condition::Exists).await?;
        }
        let products = Query::table(keys.root_pk()).begins_with(ProductRecord::PREFIX);
        for item in query_all(store, products).await? {
            let record: ProductRecord = entity::from_item(item.clone())?;
            rewrite(store, &mut report, item, entity::to_item(&record, keys)?, Condition::Exists).await?;
        }
    }
    Ok(report)
}

/// Moves a user stored in the workspace partition to its own (one transaction: the copy and the
/// delete). When the user's partition holds it already (written there since), that copy stands
/// and the old one is only deleted.
async fn move_user(store: &dyn Store, keys: WsKeys, user: &User) -> ApiResult<()> {
    let legacy = keys.legacy_user(user.id);
    let fresh = TxOp::Put { item: entity::to_item(user, ())?, cond: Condition::NotExists };
    let delete = TxOp::Delete { key: legacy.clone(), cond: Condition::Exists };
    match store.transact(vec![fresh, delete]).await {
        Err(StoreError::TransactionCancelled { failed }) if failed == [0] => {
            store.delete(&legacy, Condition::Exists).await?;
            Ok(())
        }
        other => Ok(other?),
    }
}

/// Writes `fresh` in place of `stored` when any index key or the folded name differs.
async fn rewrite(store: &dyn Store, report: &mut Report, stored: Item, fresh: Item, cond: Condition) -> ApiResult<()> {
    let differs = |attr: &str| stored.get(attr) != fresh.get(attr);
    let keys = Index::SECONDARY.iter().flat_map(|index| <[&str; 2]>::from(index.key_attrs()));
    if !keys.chain(["foldedName"]).any(differs) {
        return Ok(());
    }
    let kind = match fresh.get(workapi_store::ENTITY).and_then(|v| v.as_str()) {
        Some(TagRecord::TYPE) => TagRecord::TYPE,
        Some(ProjectRecord::TYPE) => ProjectRecord::TYPE,
        _ => ProductRecord::TYPE,
    };
    store.put(fresh, cond).await?;
    *report.0.entry(kind).or_default() += 1;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use workapi_domain::tag::TagType;
    use workapi_store::sqlite::SqliteStore;
    use workapi_store::{GSI2PK, GSI2SK};

    /// A user stored in the workspace partition signs in before the move (found where it was),
    /// is listed after it, and a second run moves nothing.
    #[tokio::test]
    async fn users_stored_in_the_workspace_partition_move_to_their_own() {
        let store = SqliteStore::in_memory().unwrap();
        let ws = identity::create_workspace(&store, "Old", "en").await.unwrap();
        let keys = WsKeys::new(ws.id);
        let new = identity::NewUser {
            email: "old@example.com",
            name: "Old",
            role_id: "_staff",
            kind: identity::UserKind::Employee,
            language: "en",
        };
        let user = identity::create_user(&store, ws.id, new).await.unwrap();
        // As it was stored before: in the workspace partition, not in the list index.
        let mut old = store.delete(&keys.user(user.id), Condition::Exists).await.unwrap().unwrap();
        let legacy = keys.legacy_user(user.id);
        old.insert(workapi_store::PK.into(), legacy.pk.clone().into());
        old.insert(workapi_store::SK.into(), legacy.sk.clone().into());
        for attr in [GSI2PK, GSI2SK] {
            old.remove(attr);
        }
        store.put(old, Condition::None).await.unwrap();
        assert_eq!(identity::get_user(&store, ws.id, user.id).await.unwrap(), Some(user.clone()));
        assert!(identity::list_users(&store, ws.id).await.unwrap().is_empty());

        let report = reindex(&store).await.unwrap();
        assert_eq!(report.0.get(User::TYPE), Some(&1), "{report}");
        assert_eq!(identity::list_users(&store, ws.id).await.unwrap(), vec![user.clone()]);
        assert!(store.get(&legacy).await.unwrap().is_none(), "the old item is gone");
        assert_eq!(identity::get_user_eventually(&store, ws.id, user.id).await.unwrap(), Some(user));
        assert_eq!(reindex(&store).await.unwrap().to_string(), "none needed");
    }

    /// A tag and a product stored before the list index: listed again once reindexed, and a
    /// second run writes nothing.
    #[tokio::test]
    async fn items_stored_before_the_list_index_are_listed_after_a_reindex() {
        let store = SqliteStore::in_memory().unwrap();
        let ws = identity::create_workspace(&store, "Old", "en").await.unwrap();
        let keys = WsKeys::new(ws.id);
        let scope = (keys, TagType::Task);
        let (record, _) = tags::store::new_tag(scope, "Very  Urgent", uuid::Uuid::new_v4()).unwrap();
        let mut old = entity::to_item(&record, scope).unwrap();
        for attr in [GSI2PK, GSI2SK, "foldedName"] {
            old.remove(attr);
        }
        store.put(old, Condition::None).await.unwrap();
        let listed = || async { store.query(tag::list_query(scope)).await.unwrap().items.len() };
        assert_eq!(listed().await, 0);

        let report = reindex(&store).await.unwrap();
        assert_eq!(report.0.get(TagRecord::TYPE), Some(&1), "{report}");
        assert_eq!(listed().await, 1);
        let again: TagRecord = entity::get(&store, &tag::key(scope, record.tag.id)).await.unwrap().unwrap();
        assert_eq!((again.folded_name.as_str(), again.version), ("very urgent", record.version));
        assert_eq!(reindex(&store).await.unwrap().to_string(), "none needed");
    }
}
