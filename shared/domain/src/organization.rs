//! Customer organizations. Their contacts are users of kind `organizationMember` whose
//! `organizationId` names the organization (`crate::identity::User`).

use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_store::entity::{self, Entity};
use workapi_store::keys::WsKeys;
use workapi_store::{Key, Query, Store, StoreResult, query_all};

/// A customer organization. Seeded (docs/seed.md); the API only reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Organization {
    pub id: Uuid,
    pub name: String,
}

impl Entity for Organization {
    const TYPE: &'static str = "Organization";
    const PREFIX: &'static str = "ORG#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        key(keys, self.id)
    }
}

pub fn key(keys: WsKeys, id: Uuid) -> Key {
    keys.root(format!("{}{id}", Organization::PREFIX))
}

pub async fn get(store: &dyn Store, keys: WsKeys, id: Uuid) -> StoreResult<Option<Organization>> {
    entity::get(store, &key(keys, id)).await
}

pub async fn list(store: &dyn Store, keys: WsKeys) -> StoreResult<Vec<Organization>> {
    let items = query_all(store, Query::table(keys.root_pk()).begins_with(Organization::PREFIX)).await?;
    items.into_iter().map(entity::from_item).collect()
}
