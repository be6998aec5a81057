//! Tasks: the records the tasks function (express quotations) and the projects function (a
//! project's tasks) read. Seeded (docs/seed.md); the API reads them.
//!
//! Keys (docs/data-model.md): the task in its own partition `WS#<ws>#TASK#<id>` (sort key
//! `TASK#`) beside its own items (its quotations), listed per project through GSI1; its number
//! guard in a partition of its own (`WS#<ws>#TASKNO#<shortNumber>`), written with the task in
//! one transaction, so a number names at most one task and a lookup by number is two strongly
//! consistent reads.

use crate::money;
use crate::project::{self, AccessError, ProjectRecord, Viewer};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::str::FromStr;
use uuid::Uuid;
use workapi_richtext::{self as richtext, Doc};
use workapi_store::entity::{self, Entity, IndexKey};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Key, Query, Store, StoreResult, TxOp, query_all};
use workapi_wire::order::OrderKey;

/// Most products a task may carry (they live inside the task's item).
pub const MAX_PRODUCTS: usize = 50;
/// Most options per task product.
pub const MAX_OPTIONS: usize = 20;
/// Largest quantity of a task product.
pub const MAX_QUANTITY: i64 = 1_000;
/// Largest unit price, option price and hour rate: a million in the project's currency. With
/// the other bounds (50 products of 20 options, 100,000 hours, tax at most 100 %), a task's
/// quotation total stays under `money::MAX_EXACT_AMOUNT` (tested in `pricing`).
pub const MAX_PRICE: i64 = 1_000_000;
/// Largest estimated work time, in hours.
pub const MAX_ESTIMATED_HOURS: i64 = 100_000;

/// How a quantity is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub enum Unit {
    /// Hours of work
    Hour,
    /// Pieces
    Piece,
}
workapi_wire::closed_enum!(Unit);

/// An option of a task product: an extra priced per unit of the product's quantity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "6a1f0c52-8e3b-4d7a-9f21-0b3c4d5e6f70", "title": "Express setup", "unitPrice": 120})))]
pub struct TaskProductOption {
    pub id: Uuid,
    pub title: String,
    #[serde(with = "money")]
    #[schema(value_type = f64, minimum = 0)]
    pub unit_price: Decimal,
}

/// A product of a task as stored: the description as IDoc.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskProductRecord {
    pub id: Uuid,
    pub title: String,
    pub description: Doc,
    #[serde(with = "money")]
    pub quantity: Decimal,
    pub unit: Unit,
    #[serde(with = "money")]
    pub unit_price: Decimal,
    pub options: Vec<TaskProductOption>,
}

/// A product of a task as the API returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "4d3c2b1a-0f9e-4d8c-8b7a-6f5e4d3c2b1a", "title": "Payment provider setup",
    "description": "<p>Account, webhooks and test payments</p>", "quantity": 1, "unit": "Piece", "unitPrice": 450,
    "options": [{"id": "6a1f0c52-8e3b-4d7a-9f21-0b3c4d5e6f70", "title": "Express setup", "unitPrice": 120}]})))]
pub struct TaskProduct {
    pub id: Uuid,
    pub title: String,
    /// HTML
    pub description: String,
    #[serde(with = "money")]
    #[schema(value_type = f64, minimum = 0)]
    pub quantity: Decimal,
    pub unit: Unit,
    /// Net price per unit in the project's currency
    #[serde(with = "money")]
    #[schema(value_type = f64, minimum = 0)]
    pub unit_price: Decimal,
    pub options: Vec<TaskProductOption>,
}

/// A task as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    pub id: Uuid,
    /// Unique in the workspace, from 1.
    pub short_number: i64,
    pub project_id: Uuid,
    pub title: String,
    pub description: Doc,
    #[serde(with = "money::option", default)]
    pub estimated_hours: Option<Decimal>,
    /// The task's own hour rate; none means the project's.
    #[serde(with = "money::option", default)]
    pub hour_rate: Option<Decimal>,
    pub products: Vec<TaskProductRecord>,
}

/// A task as the API returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "b7e4a0c2-3f1d-4e5a-9b8c-7d6e5f4a3b2c", "shortNumber": 1042,
    "projectId": "5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e", "title": "Checkout redesign",
    "description": "<p>New one-page checkout</p>", "estimatedHours": 12.5, "hourRate": null, "effectiveHourRate": 95,
    "products": [{"id": "4d3c2b1a-0f9e-4d8c-8b7a-6f5e4d3c2b1a", "title": "Payment provider setup",
        "description": "<p>Account, webhooks and test payments</p>", "quantity": 1, "unit": "Piece", "unitPrice": 450,
        "options": [{"id": "6a1f0c52-8e3b-4d7a-9f21-0b3c4d5e6f70", "title": "Express setup", "unitPrice": 120}]}]})))]
pub struct Task {
    pub id: Uuid,
    /// Unique in the workspace; usable instead of the id in `/tasks/{identifier}`
    pub short_number: i64,
    pub project_id: Uuid,
    pub title: String,
    /// HTML
    pub description: String,
    /// Estimated work time in hours, or null when not estimated
    #[serde(with = "money::option")]
    #[schema(value_type = Option<f64>, required)]
    pub estimated_hours: Option<Decimal>,
    /// The task's own net hour rate, or null when the project's applies
    #[serde(with = "money::option")]
    #[schema(value_type = Option<f64>, required)]
    pub hour_rate: Option<Decimal>,
    /// The hour rate that applies: the task's own, else the project's
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub effective_hour_rate: Decimal,
    pub products: Vec<TaskProduct>,
}

impl TaskRecord {
    /// The hour rate that applies: the task's own, else its project's.
    pub fn effective_hour_rate(&self, project: &project::Project) -> Decimal {
        self.hour_rate.unwrap_or(project.hour_rate)
    }

    pub fn to_response(&self, project: &project::Project) -> Task {
        Task {
            id: self.id,
            short_number: self.short_number,
            project_id: self.project_id,
            title: self.title.clone(),
            description: richtext::to_html(&self.description),
            estimated_hours: self.estimated_hours,
            hour_rate: self.hour_rate,
            effective_hour_rate: self.effective_hour_rate(project),
            products: self
                .products
                .iter()
                .map(|p| TaskProduct {
                    id: p.id,
                    title: p.title.clone(),
                    description: richtext::to_html(&p.description),
                    quantity: p.quantity,
                    unit: p.unit,
                    unit_price: p.unit_price,
                    options: p.options.clone(),
                })
                .collect(),
        }
    }
}

impl Entity for TaskRecord {
    const TYPE: &'static str = "Task";
    const PREFIX: &'static str = "TASK#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        key(keys, self.id)
    }

    /// Listed per project, by number.
    fn gsi1(&self, keys: WsKeys) -> Option<IndexKey> {
        Some(IndexKey { pk: project_index(keys, self.project_id), sk: number_sort_key(self.short_number) })
    }
}

/// A task lives in its own partition, beside its items (quotations…), and its number guard in
/// one of its own: reading them (every task-scoped request does) does not load the workspace
/// partition (docs/performance.md, "Scale").
pub fn key(keys: WsKeys, id: Uuid) -> Key {
    Key::new(partition((keys, id)), TaskRecord::PREFIX)
}

/// Where a task was stored before tasks had partitions of their own: still read when the task
/// is not found at [`key`], until `workapi table reindex` moves it (docs/data-model.md#lists).
pub fn legacy_key(keys: WsKeys, id: Uuid) -> Key {
    keys.root(format!("{}{id}", TaskRecord::PREFIX))
}

fn project_index(keys: WsKeys, project_id: Uuid) -> String {
    format!("{}#TASKS", project::partition((keys, project_id)))
}

/// Numbers sort as text when zero-padded to the width of `i64::MAX`.
fn number_sort_key(short_number: i64) -> String {
    format!("{short_number:019}")
}

/// The guard that makes a task number unique in its workspace, and finds the task by it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskNumberRecord {
    pub short_number: i64,
    pub task_id: Uuid,
}

impl Entity for TaskNumberRecord {
    const TYPE: &'static str = "TaskNumber";
    const PREFIX: &'static str = "TASKNO#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        number_key(keys, self.short_number)
    }
}

pub fn number_key(keys: WsKeys, short_number: i64) -> Key {
    Key::new(keys.partition(&format!("{}{short_number}", TaskNumberRecord::PREFIX)), TaskNumberRecord::PREFIX)
}

/// Where a number guard was stored before (see [`legacy_key`]).
pub fn legacy_number_key(keys: WsKeys, short_number: i64) -> Key {
    keys.root(format!("{}{short_number}", TaskNumberRecord::PREFIX))
}

/// The guard of a task number: which task holds it.
pub async fn number_guard(store: &dyn Store, keys: WsKeys, short_number: i64) -> StoreResult<Option<TaskNumberRecord>> {
    entity::get_moved(store, &number_key(keys, short_number), &legacy_number_key(keys, short_number)).await
}

/// Where one task's own items live: the workspace and the task.
pub type TaskScope = (WsKeys, Uuid);

/// The partition of one task's items (`WS#<ws>#TASK#<id>`).
pub fn partition((keys, task_id): TaskScope) -> String {
    keys.partition(&format!("{}{task_id}", TaskRecord::PREFIX))
}

/// A key in one task's partition.
pub fn task_item(scope: TaskScope, sort_key: impl Into<String>) -> Key {
    Key::new(partition(scope), sort_key)
}

/// How a path names a task: its UUID or its numeric `shortNumber`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskIdentifier {
    Id(Uuid),
    Number(i64),
}

/// The path parameter's pattern: a number from 1 with at most 18 significant digits (leading
/// zeros allowed), or a hyphenated UUID. Exactly what [`TaskIdentifier::from_str`] accepts, so
/// the document and the parser agree.
pub const IDENTIFIER_PATTERN: &str =
    "^(0*[1-9][0-9]{0,17}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$";

impl FromStr for TaskIdentifier {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        const INVALID: &str = "must be a task UUID or a positive numeric shortNumber";
        if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            let significant = text.trim_start_matches('0');
            return match significant.len() {
                1..=18 => significant.parse().map(TaskIdentifier::Number).map_err(|_| INVALID),
                _ => Err(INVALID),
            };
        }
        // The hyphenated form only (36 characters), as the pattern says.
        if text.len() != 36 {
            return Err(INVALID);
        }
        Uuid::parse_str(text).map(TaskIdentifier::Id).map_err(|_| INVALID)
    }
}

/// Documented as a string with [`IDENTIFIER_PATTERN`] (inline in the path parameters).
impl utoipa::PartialSchema for TaskIdentifier {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new().schema_type(Type::String).pattern(Some(IDENTIFIER_PATTERN)).into()
    }
}

impl utoipa::ToSchema for TaskIdentifier {}

/// Parsed inside the visitor, so a path extractor's error names the parameter.
impl<'de> Deserialize<'de> for TaskIdentifier {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = TaskIdentifier;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a task UUID or a positive numeric shortNumber")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<TaskIdentifier, E> {
                text.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

pub async fn get(store: &dyn Store, keys: WsKeys, id: Uuid) -> StoreResult<Option<TaskRecord>> {
    entity::get_moved(store, &key(keys, id), &legacy_key(keys, id)).await
}

/// The task a path names, by id (one read) or by number (the guard, then the task).
pub async fn find(store: &dyn Store, keys: WsKeys, identifier: TaskIdentifier) -> StoreResult<Option<TaskRecord>> {
    match identifier {
        TaskIdentifier::Id(id) => get(store, keys, id).await,
        TaskIdentifier::Number(n) => match number_guard(store, keys, n).await? {
            Some(guard) => get(store, keys, guard.task_id).await,
            None => Ok(None),
        },
    }
}

/// The task and its project, if the viewer may access the project: `NotFound` when the task
/// does not exist in the viewer's workspace, `Denied` when the viewer may not access its project
/// (the rule of `project::accessible`).
pub async fn accessible(
    store: &dyn Store,
    viewer: Viewer,
    identifier: TaskIdentifier,
) -> Result<(TaskRecord, ProjectRecord), AccessError> {
    let not_found = AccessError::NotFound("Task");
    let task = find(store, viewer.keys, identifier).await?.ok_or(not_found)?;
    match project::accessible(store, viewer, task.project_id).await {
        Ok(project) => Ok((task, project)),
        // A task whose project is gone is not reachable either.
        Err(AccessError::NotFound(_)) => Err(AccessError::NotFound("Task")),
        Err(e) => Err(e),
    }
}

/// A task's place in its project's list: by number, then id.
pub fn order(task: &TaskRecord) -> OrderKey {
    OrderKey::new().int(task.short_number).id(task.id)
}

/// A project's tasks, by number (GSI1: eventually consistent, like any listing).
pub async fn list_for_project(store: &dyn Store, keys: WsKeys, project_id: Uuid) -> StoreResult<Vec<TaskRecord>> {
    let items = query_all(store, Query::gsi1(project_index(keys, project_id))).await?;
    let mut tasks = items.into_iter().map(entity::from_item).collect::<StoreResult<Vec<TaskRecord>>>()?;
    tasks.sort_by_cached_key(order);
    Ok(tasks)
}

/// Writes a task with its number guard in one transaction, unless it is stored exactly so
/// (the seed loader; whether it wrote). A changed number moves the guard; a number another
/// task holds fails the whole transaction (the loader checks first, so that is a race).
pub async fn write(store: &dyn Store, keys: WsKeys, task: &TaskRecord) -> StoreResult<bool> {
    let stored = get(store, keys, task.id).await?;
    if stored.as_ref() == Some(task) {
        return Ok(false);
    }
    let guard = TaskNumberRecord { short_number: task.short_number, task_id: task.id };
    let mut ops = vec![TxOp::Put { item: entity::to_item(task, keys)?, cond: Condition::None }];
    match stored.map(|s| s.short_number) {
        Some(old) if old == task.short_number => {}
        Some(old) => {
            ops.push(TxOp::Delete { key: number_key(keys, old), cond: Condition::None });
            ops.push(TxOp::Put { item: entity::to_item(&guard, keys)?, cond: Condition::NotExists });
        }
        None => ops.push(TxOp::Put { item: entity::to_item(&guard, keys)?, cond: Condition::NotExists }),
    }
    store.transact(ops).await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_uuids_or_positive_numbers() {
        let id = Uuid::new_v4();
        assert_eq!(id.to_string().parse(), Ok(TaskIdentifier::Id(id)));
        assert_eq!("42".parse(), Ok(TaskIdentifier::Number(42)));
        assert_eq!("007".parse(), Ok(TaskIdentifier::Number(7)));
        assert_eq!("999999999999999999".parse(), Ok(TaskIdentifier::Number(999_999_999_999_999_999)));
        assert_eq!("0000999999999999999999".parse(), Ok(TaskIdentifier::Number(999_999_999_999_999_999)));
        let simple = id.simple().to_string();
        let braced = format!("{{{id}}}");
        for bad in ["", "0", "000", "-1", "+1", " 1", "1.0", "1e3", "abc", "9999999999999999999", "12 ", "١٢"] {
            assert!(bad.parse::<TaskIdentifier>().is_err(), "{bad:?}");
        }
        for bad in [simple.as_str(), braced.as_str()] {
            assert!(bad.parse::<TaskIdentifier>().is_err(), "only the hyphenated form: {bad:?}");
        }
    }

    /// The documented pattern and the parser accept the same strings.
    #[test]
    fn the_documented_pattern_is_the_parser() {
        let pattern = regex_lite::Regex::new(IDENTIFIER_PATTERN).unwrap();
        let id = Uuid::new_v4();
        let samples = [
            "1",
            "42",
            "0042",
            "999999999999999999",
            "0000999999999999999999",
            "1000000000000000000",
            "0",
            "00",
            "",
            "-1",
            "1.5",
            "abc",
            " 1",
            "١",
        ];
        let uuids = [id.to_string(), id.to_string().to_uppercase(), id.simple().to_string(), format!("{{{id}}}")];
        for text in samples.iter().map(|s| s.to_string()).chain(uuids) {
            assert_eq!(pattern.is_match(&text), text.parse::<TaskIdentifier>().is_ok(), "{text:?}");
        }
    }

    #[test]
    fn number_sort_keys_order_like_numbers() {
        let mut numbers = [10, 9, 100, 1, 1_000_000_000_000];
        let mut keys: Vec<String> = numbers.iter().map(|n| number_sort_key(*n)).collect();
        keys.sort();
        numbers.sort();
        assert_eq!(keys, numbers.iter().map(|n| number_sort_key(*n)).collect::<Vec<_>>());
    }
}
