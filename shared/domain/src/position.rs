//! Manual positions: billable items added to a project by hand (spec §2.4, §4.5). Written by
//! the projects function (which owns their operations), read by billing (they are invoice
//! lines, `invoice_lines`). Key: `MPOS#<id>` in the project's partition.

use crate::money;
use crate::project::{self, ProjectScope};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_richtext::Doc;
use workapi_store::{Store, StoreResult};

/// How a discount is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub enum DiscountType {
    /// An amount off the price
    #[default]
    Fixed,
    /// Percent off the price (0–100)
    Percentage,
}
workapi_wire::closed_enum!(DiscountType);

/// The stored position: the description as IDoc.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManualPositionRecord {
    pub id: Uuid,
    pub project_id: Uuid,
    pub name: String,
    pub description: Doc,
    #[serde(with = "money")]
    pub price: Decimal,
    pub category_id: Option<Uuid>,
    pub discount_type: DiscountType,
    #[serde(with = "money")]
    pub discount_amount: Decimal,
    pub sort: i64,
    pub created_at: String,
    pub created_by: Uuid,
}

project::project_entity!(ManualPositionRecord, "ManualPosition", "MPOS#");

/// A project's manual positions as stored (one query of the project's partition), unordered.
pub async fn list(store: &dyn Store, scope: ProjectScope) -> StoreResult<Vec<ManualPositionRecord>> {
    project::items(store, scope).await
}
