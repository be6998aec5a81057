//! `workapi table reindex`: writes the index keys of items stored before the list index (GSI2)
//! existed, or before the catalog's category index sorted names as the list index does, and
//! moves users, projects and tasks (with their number guards) stored in the workspace partition
//! to partitions of their own (docs/data-model.md#lists). Each tag and catalog product is read
//! and written again as its entity writes it today, only when its keys differ; a tag also gains
//! its folded name; an invoice gains its place in the invoice list (only those two attributes). Safe to run while the API serves: a tag is written only at the version read,
//! and users, projects, tasks and products are not changed by the API after their creation.
//! Running it twice writes nothing the second time.

use std::collections::BTreeMap;
use workapi_domain::billing::{self, IssuedInvoiceRecord};
use workapi_domain::catalog::ProductRecord;
use workapi_domain::identity::{self, User};
use workapi_domain::project::{self, ProjectRecord};
use workapi_domain::tag::{self, TAG_TYPES, TagRecord};
use workapi_domain::task::{self, TaskNumberRecord, TaskRecord};
use workapi_kit::ApiResult;
use workapi_kit::entity::{self, Entity};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Index, Item, Query, Store, StoreError, TxOp, Update, query_all};

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
                rewrite::<TagRecord>(store, &mut report, item, entity::to_item(&record, scope)?, cond).await?;
            }
        }
        let legacy_users = Query::table(keys.root_pk()).begins_with(WsKeys::LEGACY_USER_PREFIX);
        for item in query_all(store, legacy_users).await? {
            let user: User = entity::from_item(item)?;
            move_item(store, entity::to_item(&user, ())?, keys.legacy_user(user.id)).await?;
            *report.0.entry(User::TYPE).or_default() += 1;
        }
        let legacy_projects = Query::table(keys.root_pk()).begins_with(project::LEGACY_PREFIX);
        for item in query_all(store, legacy_projects).await? {
            let record: ProjectRecord = entity::from_item(item)?;
            move_item(store, entity::to_item(&record, keys)?, project::legacy_key(keys, record.project.id)).await?;
            *report.0.entry(ProjectRecord::TYPE).or_default() += 1;
        }
        let legacy_tasks = Query::table(keys.root_pk()).begins_with(TaskRecord::PREFIX);
        for item in query_all(store, legacy_tasks).await? {
            let record: TaskRecord = entity::from_item(item)?;
            move_item(store, entity::to_item(&record, keys)?, task::legacy_key(keys, record.id)).await?;
            *report.0.entry(TaskRecord::TYPE).or_default() += 1;
        }
        let legacy_numbers = Query::table(keys.root_pk()).begins_with(TaskNumberRecord::PREFIX);
        for item in query_all(store, legacy_numbers).await? {
            let guard: TaskNumberRecord = entity::from_item(item)?;
            let legacy = task::legacy_number_key(keys, guard.short_number);
            move_item(store, entity::to_item(&guard, keys)?, legacy).await?;
            *report.0.entry(TaskNumberRecord::TYPE).or_default() += 1;
        }
        let products = Query::table(keys.root_pk()).begins_with(ProductRecord::PREFIX);
        for item in query_all(store, products).await? {
            let record: ProductRecord = entity::from_item(item.clone())?;
            rewrite::<ProductRecord>(store, &mut report, item, entity::to_item(&record, keys)?, Condition::Exists)
                .await?;
        }
        // Invoices change after their issue (a cancellation marks them), so only their list keys
        // are written, not the item read.
        let invoices = Query::gsi1(billing::invoice_index(keys));
        for item in query_all(store, invoices).await? {
            let record: IssuedInvoiceRecord = entity::from_item(item.clone())?;
            let Some(listed) = record.gsi2(keys) else { continue };
            let (pk, sk) = Index::Gsi2.key_attrs();
            if item.get(pk) == Some(&listed.pk.clone().into()) && item.get(sk) == Some(&listed.sk.clone().into()) {
                continue;
            }
            let update = Update::default().set(pk, listed.pk).set(sk, listed.sk);
            store.update(&record.key(keys), update, Condition::Exists).await?;
            *report.0.entry(IssuedInvoiceRecord::TYPE).or_default() += 1;
        }
    }
    Ok(report)
}

/// Moves an item stored in the workspace partition (a user, a project) to its own partition, as
/// its entity writes it today (`fresh`): one transaction of the copy and the delete. When the
/// new place holds it already (written there since), that copy stands and the old one is only
/// deleted. Neither users nor projects are changed by the API after their creation, so the copy
/// is current.
async fn move_item(store: &dyn Store, fresh: Item, legacy: workapi_store::Key) -> ApiResult<()> {
    let copy = TxOp::Put { item: fresh, cond: Condition::NotExists };
    let delete = TxOp::Delete { key: legacy.clone(), cond: Condition::Exists };
    match store.transact(vec![copy, delete]).await {
        Err(StoreError::TransactionCancelled { failed }) if failed == [0] => {
            store.delete(&legacy, Condition::Exists).await?;
            Ok(())
        }
        other => Ok(other?),
    }
}

/// Writes `fresh` in place of `stored` when any index key or the folded name differs.
async fn rewrite<E: Entity>(
    store: &dyn Store,
    report: &mut Report,
    stored: Item,
    fresh: Item,
    cond: Condition,
) -> ApiResult<()> {
    let differs = |attr: &str| stored.get(attr) != fresh.get(attr);
    let keys = Index::SECONDARY.iter().flat_map(|index| <[&str; 2]>::from(index.key_attrs()));
    if !keys.chain(["foldedName"]).any(differs) {
        return Ok(());
    }
    store.put(fresh, cond).await?;
    *report.0.entry(E::TYPE).or_default() += 1;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use workapi_domain::tag::TagType;
    use workapi_store::sqlite::SqliteStore;
    use workapi_store::{GSI2PK, GSI2SK};

    /// `item` as it was stored before: at `legacy`, not in the list index.
    async fn store_as_before(store: &SqliteStore, mut item: Item, legacy: &workapi_store::Key) {
        item.insert(workapi_store::PK.into(), legacy.pk.clone().into());
        item.insert(workapi_store::SK.into(), legacy.sk.clone().into());
        for attr in [GSI2PK, GSI2SK] {
            item.remove(attr);
        }
        store.put(item, Condition::None).await.unwrap();
    }

    /// A user, a project and a task (with its number guard) stored in the workspace partition are
    /// found before the move (where they were), are listed after it, and a second run moves
    /// nothing.
    #[tokio::test]
    async fn users_projects_and_tasks_stored_in_the_workspace_partition_move_to_their_own() {
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
        let old = store.delete(&keys.user(user.id), Condition::Exists).await.unwrap().unwrap();
        let legacy = keys.legacy_user(user.id);
        store_as_before(&store, old, &legacy).await;
        assert_eq!(identity::get_user(&store, ws.id, user.id).await.unwrap(), Some(user.clone()));
        assert!(identity::list_users(&store, ws.id).await.unwrap().is_empty());
        let project = ProjectRecord {
            project: workapi_domain::project::Project {
                id: uuid::Uuid::new_v4(),
                name: "Old project".into(),
                customer_organization_id: None,
                express_quotations_enabled: false,
                hour_rate: 90.into(),
                currency: "EUR".into(),
                tax_rate: 19.into(),
            },
            member_ids: vec![user.id],
        };
        let project_legacy = project::legacy_key(keys, project.project.id);
        store_as_before(&store, entity::to_item(&project, keys).unwrap(), &project_legacy).await;
        assert_eq!(project::get(&store, keys, project.project.id).await.unwrap(), Some(project.clone()));

        let task = TaskRecord {
            id: uuid::Uuid::new_v4(),
            short_number: 7,
            project_id: project.project.id,
            title: "Old task".into(),
            description: workapi_richtext::Doc::empty(),
            estimated_hours: None,
            hour_rate: None,
            products: vec![],
        };
        let task_legacy = task::legacy_key(keys, task.id);
        store_as_before(&store, entity::to_item(&task, keys).unwrap(), &task_legacy).await;
        let guard = TaskNumberRecord { short_number: 7, task_id: task.id };
        let guard_legacy = task::legacy_number_key(keys, 7);
        store_as_before(&store, entity::to_item(&guard, keys).unwrap(), &guard_legacy).await;
        let by_number = || task::find(&store, keys, task::TaskIdentifier::Number(7));
        assert_eq!(by_number().await.unwrap(), Some(task.clone()));

        let report = reindex(&store).await.unwrap();
        for kind in [User::TYPE, ProjectRecord::TYPE, TaskRecord::TYPE, TaskNumberRecord::TYPE] {
            assert_eq!(report.0.get(kind), Some(&1), "{kind}: {report}");
        }
        assert_eq!(by_number().await.unwrap(), Some(task.clone()));
        assert!(store.get(&task::key(keys, task.id)).await.unwrap().is_some());
        assert!(store.get(&task::number_key(keys, 7)).await.unwrap().is_some());
        assert_eq!(identity::list_users(&store, ws.id).await.unwrap(), vec![user.clone()]);
        assert_eq!(project::list(&store, keys).await.unwrap(), vec![project.clone()]);
        for gone in [&legacy, &project_legacy, &task_legacy, &guard_legacy] {
            assert!(store.get(gone).await.unwrap().is_none(), "the old item is gone: {gone:?}");
        }
        assert!(store.get(&project::key(keys, project.project.id)).await.unwrap().is_some());
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

    /// An invoice stored before the invoice list is listed after a reindex, cancellation kept.
    #[tokio::test]
    async fn invoices_stored_before_the_invoice_list_are_listed_after_a_reindex() {
        let store = SqliteStore::in_memory().unwrap();
        let ws = identity::create_workspace(&store, "Old", "en").await.unwrap();
        let keys = WsKeys::new(ws.id);
        let date = time::macros::date!(2026 - 03 - 31);
        let invoice = IssuedInvoiceRecord {
            id: uuid::Uuid::new_v4(),
            project_id: uuid::Uuid::new_v4(),
            number: "RE-2026-0001".into(),
            date_from: time::macros::date!(2026 - 03 - 01),
            date_to: date,
            consumed: vec![],
            task_ids: vec![],
            line_ids: vec![],
            issue: None,
            cancelled_by: Some(uuid::Uuid::new_v4()),
        };
        let mut old = entity::to_item(&invoice, keys).unwrap();
        for attr in [GSI2PK, GSI2SK] {
            old.remove(attr);
        }
        store.put(old, Condition::None).await.unwrap();
        let listed = || async {
            let items = store.query(billing::invoice_list_query(keys, Some(date), Some(date))).await.unwrap().items;
            items.into_iter().map(|item| entity::from_item(item).unwrap()).collect::<Vec<IssuedInvoiceRecord>>()
        };
        assert!(listed().await.is_empty());

        let report = reindex(&store).await.unwrap();
        assert_eq!(report.0.get(IssuedInvoiceRecord::TYPE), Some(&1), "{report}");
        assert_eq!(listed().await, vec![invoice]);
        assert_eq!(reindex(&store).await.unwrap().to_string(), "none needed");
    }
}
