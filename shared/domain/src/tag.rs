//! Tags (spec §2.5, §4.6): the seven types, the palette, the record and its one key builder.
//! The `tags` function writes them; other functions check references to them with
//! [`is_live`] (a helpdesk account's task tags).

use crate::permissions::{Requirement, key};
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_store::entity::{self, Entity, IndexKey, Versioned};
use workapi_store::keys::WsKeys;
use workapi_store::{Cursor, Index, Key, Query, Store, StoreResult};
use workapi_wire::order::OrderKey;

/// The seven tag types; each has its own partition and name space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TagType {
    Task,
    Project,
    ProjectComponent,
    Organization,
    Object,
    FormTemplate,
    ProjectDocumentation,
}

pub const TAG_TYPES: &[TagType] = &[
    TagType::Task,
    TagType::Project,
    TagType::ProjectComponent,
    TagType::Organization,
    TagType::Object,
    TagType::FormTemplate,
    TagType::ProjectDocumentation,
];

/// The palette (the API stores and returns these names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    Default,
    Red,
    Yellow,
    Green,
    Blue,
    Purple,
    Fuchsia,
    Pink,
    Magenta,
}
workapi_wire::closed_enum!(Color);

/// Read by its path name; an unknown name is a 400 naming the `type` parameter and listing
/// the types.
impl<'de> serde::Deserialize<'de> for TagType {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let expected =
            "one of: task, project, project-component, organization, object, form-template, project-documentation";
        workapi_wire::deserialize_str(deserializer, expected, |name| {
            TAG_TYPES.iter().copied().find(|t| t.as_str() == name)
        })
    }
}

impl TagType {
    pub fn as_str(self) -> &'static str {
        match self {
            TagType::Task => "task",
            TagType::Project => "project",
            TagType::ProjectComponent => "project-component",
            TagType::Organization => "organization",
            TagType::Object => "object",
            TagType::FormTemplate => "form-template",
            TagType::ProjectDocumentation => "project-documentation",
        }
    }

    /// Who may create (and recolour or delete) tags of this type (spec §4.6). Types for which
    /// the spec names no permission are open to employees, like project tags.
    pub const fn write_requirement(self) -> Requirement {
        match self {
            TagType::Task => Requirement::Permission(key::TASKS_CREATE_TAGS),
            TagType::ProjectComponent => {
                Requirement::AnyOf(&[key::PROJECT_COMPONENTS_LIBRARY_EDIT, key::PROJECTS_MANAGE_COMPONENTS])
            }
            TagType::ProjectDocumentation => Requirement::Permission(key::PROJECTS_MANAGE_DOCUMENTATION),
            TagType::Project | TagType::Organization | TagType::Object | TagType::FormTemplate => Requirement::Employee,
        }
    }
}

/// Where a tag's items live: the workspace and the tag type.
pub type Scope = (WsKeys, TagType);

/// The partition of a tag type's items: `WS#<ws>#TAGS#<type>` (docs/data-model.md).
pub fn partition((keys, tag_type): Scope) -> String {
    keys.partition(&format!("TAGS#{}", tag_type.as_str()))
}

/// The tag as the API returns it (spec §2.5).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "3f0c6a5e-8f1e-4c55-9d3a-0b1d2c3e4f50", "name": "Urgent", "color": "red", "isDeleted": false})))]
pub struct Tag {
    pub id: Uuid,
    pub name: String,
    /// One of the palette, or null when unset
    #[schema(required)]
    pub color: Option<Color>,
    /// Soft-deleted tags do not appear in lists
    pub is_deleted: bool,
}

/// Compact default of the [P] tag endpoints: identifiers and the display field.
impl workapi_wire::Compact for Tag {
    const COMPACT: &'static [&'static str] = &["id", "name"];
}

/// The stored record: the tag plus bookkeeping that is not part of the response.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TagRecord {
    #[serde(flatten)]
    pub tag: Tag,
    /// The name's case-insensitive identity (the tags function's `fold_name`): the tag's place
    /// in its list. Tags stored before it was kept have none until `workapi reindex`.
    #[serde(default)]
    pub folded_name: String,
    pub created_at: String,
    pub created_by: Uuid,
    pub version: i64,
}

impl Entity for TagRecord {
    const TYPE: &'static str = "Tag";
    const PREFIX: &'static str = "TAG#";
    type Scope = Scope;

    fn key(&self, scope: Scope) -> Key {
        key(scope, self.tag.id)
    }

    /// Live tags are listed by name in the list index; a deleted tag leaves the list.
    fn gsi2(&self, scope: Scope) -> Option<IndexKey> {
        (!self.tag.is_deleted).then(|| list_index_key(scope, &order(self)))
    }
}

/// A tag's place in its list: by name, case-insensitively, then id. A tag stored before its
/// folded name was kept (until `workapi table reindex`) is placed by its lowercased name.
pub fn order(record: &TagRecord) -> OrderKey {
    match record.folded_name.as_str() {
        "" => OrderKey::new().name(&record.tag.name).id(record.tag.id),
        folded => OrderKey::new().text(folded).id(record.tag.id),
    }
}

fn list_index_key(scope: Scope, order: &OrderKey) -> IndexKey {
    IndexKey { pk: partition(scope), sk: order.sort_text() }
}

/// The live tags of a type, by name: a query of the list index, started after `after`.
pub fn list_query(scope: Scope) -> Query {
    Query::gsi2(partition(scope))
}

/// Where the list continues after a cursor's place (`None`: not a tag's place).
pub fn list_start(scope: Scope, after: &OrderKey) -> Option<Cursor> {
    let id = after.last_text()?.parse().ok()?;
    Some(entity::index_start(Index::Gsi2, &key(scope, id), list_index_key(scope, after)))
}

impl Versioned for TagRecord {
    fn version(&self) -> i64 {
        self.version
    }
    fn set_version(&mut self, version: i64) {
        self.version = version;
    }
}

pub fn key(scope: Scope, id: Uuid) -> Key {
    Key::new(partition(scope), format!("{}{id}", TagRecord::PREFIX))
}

/// Whether a live tag of the type has this id (other functions validate references with it).
pub async fn is_live(store: &dyn Store, scope: Scope, id: Uuid) -> StoreResult<bool> {
    let record: Option<TagRecord> = entity::get(store, &key(scope, id)).await?;
    Ok(record.is_some_and(|r| !r.tag.is_deleted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_type_reads_by_its_path_name() {
        for t in TAG_TYPES {
            let read: TagType = serde_json::from_value(serde_json::json!(t.as_str())).unwrap();
            assert_eq!(read, *t);
        }
        for bad in ["", "Task", "tasks", "project_component", "task "] {
            assert!(serde_json::from_value::<TagType>(serde_json::json!(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_expected_list_names_every_type() {
        let err = serde_json::from_value::<TagType>(serde_json::json!("nope")).unwrap_err().to_string();
        for t in TAG_TYPES {
            assert!(err.contains(t.as_str()), "{err}");
        }
    }
}
