//! The agents' partition `WS#<ws>#AGENTS` (docs/data-model.md): agents and saved provider
//! API keys (seeded), skills, managed-provider settings and project overrides, each one item.

use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_kit::entity::{self, Entity};
use workapi_kit::secrets::SecretName;
use workapi_store::keys::WsKeys;
use workapi_store::{Key, Query, Store, StoreResult, query_all};

/// The partition of a workspace's agent items.
pub fn partition(keys: WsKeys) -> String {
    keys.partition("AGENTS")
}

pub fn item_key(keys: WsKeys, prefix: &str, id: impl std::fmt::Display) -> Key {
    Key::new(partition(keys), format!("{prefix}{id}"))
}

/// Every item of one kind in the partition (one query, paged).
pub async fn list<E: Entity>(store: &dyn Store, keys: WsKeys) -> StoreResult<Vec<E>> {
    let items = query_all(store, Query::table(partition(keys)).begins_with(E::PREFIX)).await?;
    items.into_iter().map(entity::from_item).collect()
}

/// An agent of the workspace (spec §4.11 addresses it by id; it is created by the seed file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "6b1f3c2a-4d5e-4f60-8a7b-9c0d1e2f3a4b", "name": "Support triage",
    "managedProviderConfigured": true})))]
pub struct Agent {
    pub id: Uuid,
    pub name: String,
    /// Whether managed-provider settings were saved for it
    #[serde(default)]
    pub managed_provider_configured: bool,
}

impl Entity for Agent {
    const TYPE: &'static str = "Agent";
    const PREFIX: &'static str = "AGENT#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        item_key(keys, Self::PREFIX, self.id)
    }
}

pub async fn get_agent(store: &dyn Store, keys: WsKeys, id: Uuid) -> StoreResult<Option<Agent>> {
    entity::get(store, &item_key(keys, Agent::PREFIX, id)).await
}

/// A saved provider API key: its label and the name of the secret that holds the key material
/// (never the key itself). Created by the seed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderApiKey {
    pub id: Uuid,
    pub label: String,
    pub secret: SecretName,
    /// The key's last four characters, kept only for keys of 20 characters or more.
    pub last_four: Option<String>,
}

impl Entity for ProviderApiKey {
    const TYPE: &'static str = "ProviderApiKey";
    const PREFIX: &'static str = "PROVIDERKEY#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        item_key(keys, Self::PREFIX, self.id)
    }
}

pub async fn get_provider_key(store: &dyn Store, keys: WsKeys, id: Uuid) -> StoreResult<Option<ProviderApiKey>> {
    entity::get(store, &item_key(keys, ProviderApiKey::PREFIX, id)).await
}

/// A saved provider key as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "0d6c9a8e-3b2f-4e1d-9c8b-7a6f5e4d3c2b", "label": "Team key", "lastFour": "9xQz"})))]
pub struct ProviderApiKeyView {
    pub id: Uuid,
    pub label: String,
    /// The key's last four characters (null for keys shorter than 20 characters)
    #[schema(required)]
    pub last_four: Option<String>,
}

impl From<ProviderApiKey> for ProviderApiKeyView {
    fn from(key: ProviderApiKey) -> Self {
        ProviderApiKeyView { id: key.id, label: key.label, last_four: key.last_four }
    }
}

/// Keys shorter than this show no last four characters: four of a short key give too much away.
pub const MIN_KEY_CHARS_FOR_LAST_FOUR: usize = 20;

/// The last four characters a response may show of a key.
pub fn last_four(key: &str) -> Option<String> {
    let chars: Vec<char> = key.chars().collect();
    (chars.len() >= MIN_KEY_CHARS_FOR_LAST_FOUR).then(|| chars[chars.len() - 4..].iter().collect())
}

/// The name of a new secret of the workspace: `<ws>/<scope>/<fresh id>`. Every value gets a
/// fresh name, so a value is never overwritten in place and a lost race leaves the stored
/// settings pointing at their own secrets.
pub fn new_secret_name(keys: WsKeys, scope: &str) -> SecretName {
    SecretName::new(format!("{}/{scope}/{}", keys.workspace_id(), Uuid::new_v4().simple()))
        .expect("uuids and fixed scopes make a valid secret name")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_four_only_of_long_keys() {
        assert_eq!(last_four("sk-ant-api03-abcdefghijkl"), Some("ijkl".into()));
        assert_eq!(last_four("short-key-123"), None);
        assert_eq!(last_four(&"x".repeat(19)), None);
    }

    #[test]
    fn secret_names_are_fresh_and_scoped() {
        let keys = WsKeys::new(Uuid::new_v4());
        let a = new_secret_name(keys, "agents/x");
        assert!(a.as_str().starts_with(&format!("{}/agents/x/", keys.workspace_id())));
        assert_ne!(a, new_secret_name(keys, "agents/x"));
    }
}
