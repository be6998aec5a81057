//! `workapi table reindex`: writes the index keys of items stored before the list index (GSI2)
//! existed, or before the catalog's category index sorted names as the list index does
//! (docs/data-model.md#lists). Each item of the listed entities (tags, projects, catalog
//! products) is read and written again as its entity writes it today, only when its keys
//! differ; a tag also gains its folded name. Safe to run while the API serves: a tag is
//! written only at the version read, and projects and products are not changed by the API
//! after their creation. Running it twice writes nothing the second time.

use std::collections::BTreeMap;
use workapi_domain::catalog::ProductRecord;
use workapi_domain::identity;
use workapi_domain::project::ProjectRecord;
use workapi_domain::tag::{self, TAG_TYPES, TagRecord};
use workapi_kit::ApiResult;
use workapi_kit::entity::{self, Entity};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Index, Item, Query, Store, query_all};

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
