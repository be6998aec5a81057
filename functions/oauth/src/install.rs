//! Client installations: a client is installed in a workspace automatically on its first
//! approval there, while the workspace's API feature is on (spec §4.12). One item per client
//! and workspace, `WS#<ws>` / `OAUTHINSTALL#<client key part>` (the client id, or for a metadata
//! document client `cimd_<sha256 of its URL>`, see `client::key_part`).

use crate::client::key_part;
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_kit::entity::{self, Entity};
use workapi_store::clock;
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Key, Store, StoreError, StoreResult};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Installation {
    pub client_id: String,
    /// The user whose approval installed it.
    pub installed_by: Uuid,
    pub installed_at: String,
}

impl Entity for Installation {
    const TYPE: &'static str = "OAuthInstallation";
    const PREFIX: &'static str = "OAUTHINSTALL#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        let part = key_part(&self.client_id).unwrap_or_else(|| self.client_id.clone());
        keys.root(format!("{}{part}", Self::PREFIX))
    }
}

/// The key of a client's installation in a workspace. None unless `client_id` is a well-formed
/// `dcr_<uuid>` or an acceptable metadata document URL.
pub fn installation_key(keys: WsKeys, client_id: &str) -> Option<Key> {
    key_part(client_id).map(|part| keys.root(format!("{}{part}", Installation::PREFIX)))
}

/// Installs a client in a workspace unless it is installed already (then nothing changes).
pub async fn ensure(store: &dyn Store, keys: WsKeys, client_id: &str, user_id: Uuid) -> StoreResult<()> {
    if key_part(client_id).is_none() {
        return Err(StoreError::Invalid("malformed client id".into()));
    }
    let installation =
        Installation { client_id: client_id.to_owned(), installed_by: user_id, installed_at: clock::now_rfc3339() };
    match store.put(entity::to_item(&installation, keys)?, Condition::NotExists).await {
        Ok(()) | Err(StoreError::ConditionFailed) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The installation of a client in a workspace, if any.
pub async fn get(store: &dyn Store, keys: WsKeys, client_id: &str) -> StoreResult<Option<Installation>> {
    let Some(key) = installation_key(keys, client_id) else {
        return Ok(None);
    };
    entity::get(store, &key).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installation_keys_are_in_the_workspace_and_refuse_malformed_ids() {
        let keys = WsKeys::new(Uuid::new_v4());
        let client_id = crate::client::new_client_id();
        let key = installation_key(keys, &client_id).unwrap();
        assert!(key.pk.starts_with(&keys.root_pk()));
        let installation = Installation { client_id, installed_by: Uuid::nil(), installed_at: String::new() };
        assert_eq!(installation.key(keys), key);
        assert!(installation_key(keys, "dcr_x#WORKSPACE").is_none());
        assert!(installation_key(keys, "").is_none());
        // A metadata document client: its URL is hashed into the key.
        let url = "https://app.example/client#WORKSPACE".replace('#', "/");
        let key = installation_key(keys, &url).unwrap();
        assert!(key.sk.starts_with("OAUTHINSTALL#cimd_") && !key.sk.contains("app.example"), "{}", key.sk);
        let installation = Installation { client_id: url, installed_by: Uuid::nil(), installed_at: String::new() };
        assert_eq!(installation.key(keys), key);
        assert!(installation_key(keys, "http://app.example/client").is_none());
    }
}
