//! Projects: the record the projects function (and later the tasks and billing functions)
//! reads, its manual-position categories, and the one access rule.
//!
//! Keys: everything that belongs to one project in the project's own partition
//! `WS#<ws>#PROJECT#<id>`: the project itself (`PROJECT#`) with its members inside it (a
//! bounded list, so an access check is the one read that loads the project anyway), and its
//! items by kind (docs/data-model.md). The list index (GSI2) lists the workspace's projects.

use crate::money;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use uuid::Uuid;
use workapi_store::entity::{self, Entity, IndexKey};
use workapi_store::keys::WsKeys;
use workapi_store::{Cursor, Index, Key, Query, Store, StoreError, StoreResult, query_all};
use workapi_wire::order::OrderKey;

/// Most members a project may list (keeps the item far below DynamoDB's 400 KB).
pub const MAX_MEMBERS: usize = 1000;

/// A project as the API returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e", "name": "Website relaunch",
    "customerOrganizationId": "8a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "expressQuotationsEnabled": true,
    "hourRate": 95, "currency": "EUR", "taxRate": 19})))]
pub struct Project {
    pub id: Uuid,
    pub name: String,
    /// The customer, or null for an internal project
    #[schema(required)]
    pub customer_organization_id: Option<Uuid>,
    /// Whether express quotations may be created for the project's tasks
    pub express_quotations_enabled: bool,
    /// Net hour rate in `currency`
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub hour_rate: Decimal,
    /// ISO 4217 code
    #[schema(example = "EUR")]
    pub currency: String,
    /// Tax rate in percent
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub tax_rate: Decimal,
}

/// The stored project: the project and its members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectRecord {
    #[serde(flatten)]
    pub project: Project,
    /// Users with access to the project (besides holders of `Projects.viewAll`)
    pub member_ids: Vec<Uuid>,
}

impl Entity for ProjectRecord {
    const TYPE: &'static str = "Project";
    const PREFIX: &'static str = PROJECT_SK;
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        key(keys, self.project.id)
    }

    /// Listed by name in the list index.
    fn gsi2(&self, keys: WsKeys) -> Option<IndexKey> {
        Some(list_index_key(keys, &order(&self.project)))
    }
}

fn list_index_key(keys: WsKeys, order: &OrderKey) -> IndexKey {
    IndexKey { pk: keys.partition("PROJECTS"), sk: order.sort_text() }
}

/// The workspace's projects by name: a query of the list index.
pub fn list_query(keys: WsKeys) -> Query {
    Query::gsi2(keys.partition("PROJECTS"))
}

/// Where the list continues after a cursor's place (`None`: not a project's place).
pub fn list_start(keys: WsKeys, after: &OrderKey) -> Option<Cursor> {
    let id = after.last_text()?.parse().ok()?;
    Some(entity::index_start(Index::Gsi2, &key(keys, id), list_index_key(keys, after)))
}

/// A project lives in its own partition, beside its items: reading it (every project-scoped
/// request does) does not load the workspace partition (docs/performance.md, "Scale").
pub fn key(keys: WsKeys, id: Uuid) -> Key {
    project_item((keys, id), PROJECT_SK)
}

/// The sort key of the project record in its partition (no other kind's prefix starts with it).
pub const PROJECT_SK: &str = "PROJECT#";
/// What a project partition's name starts with after the workspace: `PROJECT#<id>`.
const PARTITION_PREFIX: &str = "PROJECT#";

/// Where a project was stored before projects had partitions of their own: still read when the
/// project is not found at [`key`], until `workapi table reindex` moves it
/// (docs/data-model.md#lists).
pub fn legacy_key(keys: WsKeys, id: Uuid) -> Key {
    keys.root(format!("{LEGACY_PREFIX}{id}"))
}

/// The sort-key prefix of projects in the workspace partition, before the move.
pub const LEGACY_PREFIX: &str = "PROJECT#";

/// Where one project's own items live: the workspace and the project.
pub type ProjectScope = (WsKeys, Uuid);

/// The partition of one project's items (`WS#<ws>#PROJECT#<id>`).
pub fn partition((keys, project_id): ProjectScope) -> String {
    keys.partition(&format!("{PARTITION_PREFIX}{project_id}"))
}

/// A key in one project's partition.
pub fn project_item(scope: ProjectScope, sort_key: impl Into<String>) -> Key {
    Key::new(partition(scope), sort_key)
}

/// `Entity` for a record kept in its project's partition (`project_id`) under
/// `<prefix><id>`.
macro_rules! project_entity {
    ($record:ty, $type:literal, $prefix:literal) => {
        impl workapi_store::entity::Entity for $record {
            const TYPE: &'static str = $type;
            const PREFIX: &'static str = $prefix;
            type Scope = workapi_store::keys::WsKeys;

            fn key(&self, keys: workapi_store::keys::WsKeys) -> workapi_store::Key {
                $crate::project::project_item((keys, self.project_id), format!("{}{}", Self::PREFIX, self.id))
            }
        }
    };
}
pub(crate) use project_entity;

/// Every item of one kind in a project's partition (one query by the kind's prefix), unordered.
pub async fn items<E: Entity + serde::de::DeserializeOwned>(
    store: &dyn Store,
    scope: ProjectScope,
) -> StoreResult<Vec<E>> {
    let query = Query::table(partition(scope)).begins_with(E::PREFIX);
    query_all(store, query).await?.into_iter().map(entity::from_item).collect()
}

/// The project; one stored before projects had partitions of their own is found where it was.
pub async fn get(store: &dyn Store, keys: WsKeys, id: Uuid) -> StoreResult<Option<ProjectRecord>> {
    entity::get_moved(store, &key(keys, id), &legacy_key(keys, id)).await
}

/// Every project of the workspace, from the list index (eventually consistent).
pub async fn list(store: &dyn Store, keys: WsKeys) -> StoreResult<Vec<ProjectRecord>> {
    query_all(store, list_query(keys)).await?.into_iter().map(entity::from_item).collect()
}

/// The access rule: a member of the project, or a holder of `Projects.viewAll`.
pub fn may_access(record: &ProjectRecord, user_id: Uuid, views_all: bool) -> bool {
    views_all || record.member_ids.contains(&user_id)
}

/// Who is asking, as far as project access goes: the workspace, the user and whether they hold
/// `Projects.viewAll`. The kit builds it from its `Caller` (`Caller::viewer`).
#[derive(Debug, Clone, Copy)]
pub struct Viewer {
    pub keys: WsKeys,
    pub user_id: Uuid,
    pub views_all: bool,
}

/// Why a project (or a task, through its project) is out of a viewer's reach. The kit answers
/// `NotFound` with 404 and `Denied` with 403, each with its message.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// It does not exist in the viewer's workspace (another workspace's is not reachable at all).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// It exists, and the viewer is neither a member of its project nor a holder of `Projects.viewAll`.
    #[error("No access to this project")]
    Denied,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The project, if the viewer may access it: `NotFound` when it does not exist in the viewer's
/// workspace, `Denied` when it exists and the viewer is neither a member nor a holder of
/// `Projects.viewAll`. One read.
pub async fn accessible(store: &dyn Store, viewer: Viewer, id: Uuid) -> Result<ProjectRecord, AccessError> {
    let record = get(store, viewer.keys, id).await?.ok_or(AccessError::NotFound("Project"))?;
    if may_access(&record, viewer.user_id, viewer.views_all) { Ok(record) } else { Err(AccessError::Denied) }
}

/// A project's place in the list: by name, case-insensitively, then id.
pub fn order(project: &Project) -> OrderKey {
    OrderKey::new().name(&project.name).id(project.id)
}

/// A manual-position category's place in its list: by name, case-insensitively, then id.
pub fn category_order(category: &ManualPositionCategory) -> OrderKey {
    OrderKey::new().name(&category.name).id(category.id)
}

/// Every project the viewer may access, ordered by name (whole: the potential invoices are
/// computed across them; the projects list pages through the list index instead).
pub async fn list_accessible(store: &dyn Store, viewer: Viewer) -> StoreResult<Vec<Project>> {
    let mut projects: Vec<Project> =
        list(store, viewer.keys).await?.into_iter().filter_map(|r| visible_to(viewer, r)).collect();
    projects.sort_by_cached_key(order);
    Ok(projects)
}

/// The ids of the projects the viewer may access, for a list that skips the others as it reads
/// (the invoices, the events); `None` when the viewer sees every project (`Projects.viewAll`),
/// which reads nothing.
pub async fn accessible_ids(store: &dyn Store, viewer: Viewer) -> StoreResult<Option<HashSet<Uuid>>> {
    if viewer.views_all {
        return Ok(None);
    }
    Ok(Some(list_accessible(store, viewer).await?.into_iter().map(|p| p.id).collect()))
}

/// The project as the viewer sees it in the list: `None` when the viewer may not access it.
pub fn visible_to(viewer: Viewer, record: ProjectRecord) -> Option<Project> {
    may_access(&record, viewer.user_id, viewer.views_all).then_some(record.project)
}

/// A category of a project's manual positions. Seeded (docs/seed.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "2c4e6a8b-1d3f-4a5b-8c7d-9e0f1a2b3c4d", "name": "Licences"})))]
pub struct ManualPositionCategory {
    pub id: Uuid,
    pub name: String,
}

/// The stored category: the category and its project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManualPositionCategoryRecord {
    #[serde(flatten)]
    pub category: ManualPositionCategory,
    pub project_id: Uuid,
}

impl Entity for ManualPositionCategoryRecord {
    const TYPE: &'static str = "ManualPositionCategory";
    const PREFIX: &'static str = "MPOSCAT#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        category_key((keys, self.project_id), self.category.id)
    }
}

pub fn category_key(scope: ProjectScope, id: Uuid) -> Key {
    project_item(scope, format!("{}{id}", ManualPositionCategoryRecord::PREFIX))
}

pub async fn get_category(
    store: &dyn Store,
    scope: ProjectScope,
    id: Uuid,
) -> StoreResult<Option<ManualPositionCategoryRecord>> {
    entity::get(store, &category_key(scope, id)).await
}

/// A project's manual-position categories, ordered by name.
pub async fn list_categories(store: &dyn Store, scope: ProjectScope) -> StoreResult<Vec<ManualPositionCategory>> {
    let query = Query::table(partition(scope)).begins_with(ManualPositionCategoryRecord::PREFIX);
    let mut all = query_all(store, query)
        .await?
        .into_iter()
        .map(|i| entity::from_item::<ManualPositionCategoryRecord>(i).map(|r| r.category))
        .collect::<StoreResult<Vec<_>>>()?;
    all.sort_by_cached_key(category_order);
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(members: Vec<Uuid>) -> ProjectRecord {
        ProjectRecord {
            project: Project {
                id: Uuid::new_v4(),
                name: "P".into(),
                customer_organization_id: None,
                express_quotations_enabled: false,
                hour_rate: Decimal::new(9550, 2),
                currency: "EUR".into(),
                tax_rate: Decimal::from(19),
            },
            member_ids: members,
        }
    }

    #[test]
    fn members_and_holders_of_view_all_have_access() {
        let member = Uuid::new_v4();
        let project = record(vec![member]);
        assert!(may_access(&project, member, false));
        assert!(!may_access(&project, Uuid::new_v4(), false));
        assert!(may_access(&project, Uuid::new_v4(), true));
    }

    #[test]
    fn the_record_keeps_exact_amounts_and_flat_fields() {
        let project = record(vec![]);
        let item = entity::to_item(&project, WsKeys::new(Uuid::nil())).unwrap();
        assert_eq!(item["hourRate"], serde_json::json!(95.5));
        assert_eq!(item["PK"], format!("WS#{}#PROJECT#{}", Uuid::nil(), project.project.id).as_str());
        assert_eq!(item["SK"], "PROJECT#");
        let back: ProjectRecord = entity::from_item(item).unwrap();
        assert_eq!(back, project);
    }
}
