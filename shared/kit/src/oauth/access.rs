//! OAuth access tokens as the API sees them (docs/oauth.md#tokens): `lt_oat_…` bearer tokens
//! issued by the oauth function, stored only as a `CRED#<sha256>` item naming their grant
//! (`OAUTH#GRANT#<grantId>`). Every use reads the token's record and its grant, so revoking the
//! grant revokes every token issued under it at once.

use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_domain::token::{self, Kind, TokenKey, token_hash};
use workapi_store::entity::Entity;
use workapi_store::{ENTITY, Item, Store, StoreError, from_item, keys};

/// Entity type of an access token's credential item.
pub const ENTITY_ACCESS_TOKEN: &str = "OAuthAccessToken";

/// The stored record of an access token (never the token), written by the oauth function.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccessRecord {
    /// The token's own id.
    pub id: Uuid,
    pub grant_id: Uuid,
    pub client_id: String,
    pub workspace_id: Uuid,
    pub user_id: Uuid,
    pub scopes: Vec<String>,
    /// Epoch seconds.
    pub expires_at: i64,
    /// Epoch seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<i64>,
    /// The API the token is bound to (RFC 8707), when the client named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
}

impl Entity for AccessRecord {
    const TYPE: &'static str = ENTITY_ACCESS_TOKEN;
    const PREFIX: &'static str = "CRED#";
    /// The token's hash (`token::token_hash`), which the key holds and the record does not.
    type Scope = String;

    fn key(&self, token_hash: String) -> workapi_store::Key {
        keys::credential(&token_hash)
    }
}

/// What verification reads of a grant (the oauth function owns the whole record).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GrantStatus {
    id: Uuid,
    scopes: Vec<String>,
    #[serde(default)]
    revoked_at: Option<i64>,
}

/// What a valid access token establishes.
#[derive(Debug, Clone)]
pub struct AccessGrant {
    pub workspace_id: Uuid,
    pub user_id: Uuid,
    pub grant_id: Uuid,
    pub client_id: String,
    /// The token's scopes, within the grant's.
    pub scopes: Vec<String>,
    /// The API the token is bound to (RFC 8707); the caller refuses it elsewhere.
    pub resource: Option<String>,
}

/// Why an access token is refused.
#[derive(Debug)]
pub enum AccessRejection {
    /// Malformed, forged (keyed tag), unknown.
    Invalid,
    Expired,
    /// The token or its grant was revoked (an expired grant is gone: revoked too).
    Revoked,
    Store(StoreError),
}

/// Verifies an access token's first half: shape, keyed tag, then the credential record (the one
/// `credential` already read, when given), checked for revocation and expiry. Its grant is
/// still to be confirmed ([`confirm_grant`]), which authentication does concurrently with its
/// other reads.
pub async fn verify_access_record(
    store: &dyn Store,
    key: &TokenKey,
    token: &str,
    now: i64,
    credential: Option<Option<Item>>,
) -> Result<AccessRecord, AccessRejection> {
    token::verify_kind(key, Kind::OAuthAccess, token).map_err(|_| AccessRejection::Invalid)?;
    let item = match credential {
        Some(item) => item,
        None => store.get(&keys::credential(&token_hash(token))).await.map_err(AccessRejection::Store)?,
    };
    let record: AccessRecord = match item {
        Some(item) if item.get(ENTITY).and_then(|v| v.as_str()) == Some(ENTITY_ACCESS_TOKEN) => {
            from_item(item).map_err(AccessRejection::Store)?
        }
        _ => return Err(AccessRejection::Invalid),
    };
    if record.revoked_at.is_some() {
        return Err(AccessRejection::Revoked);
    }
    if record.expires_at <= now {
        return Err(AccessRejection::Expired);
    }
    Ok(record)
}

/// Verifies an access token's second half: the record's grant still stands (revoking the grant
/// revokes its tokens), and the token's scopes within the grant's.
pub async fn confirm_grant(store: &dyn Store, record: AccessRecord) -> Result<AccessGrant, AccessRejection> {
    let grant: GrantStatus = match store.get(&keys::oauth_grant(record.grant_id)).await {
        Ok(Some(item)) => from_item(item).map_err(AccessRejection::Store)?,
        Ok(None) => return Err(AccessRejection::Revoked),
        Err(e) => return Err(AccessRejection::Store(e)),
    };
    if grant.revoked_at.is_some() {
        return Err(AccessRejection::Revoked);
    }
    let scopes = record.scopes.into_iter().filter(|s| grant.scopes.contains(s)).collect();
    Ok(AccessGrant {
        workspace_id: record.workspace_id,
        user_id: record.user_id,
        grant_id: grant.id,
        client_id: record.client_id,
        scopes,
        resource: record.resource,
    })
}
