//! Client installations: a client is installed in a workspace automatically on its first
//! approval there, while the workspace's API feature is on (spec §4.12). One item per client
//! and workspace, `WS#<ws>` / `OAUTHINSTALL#<clientId>`.

use crate::clock;
use crate::store::keys::WsKeys;
use crate::store::{Condition, Store, StoreError, StoreResult, from_item, to_item};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub const ENTITY_INSTALLATION: &str = "OAuthInstallation";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Installation {
    pub client_id: String,
    /// The user whose approval installed it.
    pub installed_by: Uuid,
    pub installed_at: String,
}

/// Installs a client in a workspace unless it is installed already (then nothing changes).
pub async fn ensure(store: &dyn Store, keys: WsKeys, client_id: &str, user_id: Uuid) -> StoreResult<()> {
    let key = keys.oauth_installation(client_id).ok_or_else(|| StoreError::Invalid("malformed client id".into()))?;
    let installation =
        Installation { client_id: client_id.to_owned(), installed_by: user_id, installed_at: clock::now_rfc3339() };
    match store.put(to_item(&installation, ENTITY_INSTALLATION, &key)?, Condition::NotExists).await {
        Ok(()) | Err(StoreError::ConditionFailed) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The installation of a client in a workspace, if any.
pub async fn get(store: &dyn Store, keys: WsKeys, client_id: &str) -> StoreResult<Option<Installation>> {
    let Some(key) = keys.oauth_installation(client_id) else {
        return Ok(None);
    };
    store.get(&key).await?.map(from_item).transpose()
}
