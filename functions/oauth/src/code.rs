//! Authorization codes: random, single-use, 60 seconds. Only the SHA-256 of a code is stored
//! (`OAUTH#CODE#<sha256>` / `CODE`, with `ttl`), bound to the client, the redirect URI, the
//! scopes, the PKCE challenge, the user and the workspace, and to the id of the grant its
//! exchange will create (so a replay can revoke exactly that grant).
//!
//! A code is redeemed by a conditional write (`version` 0 → 1) in the same transaction that
//! creates the grant and its tokens; the used record is kept for a day so a late replay is
//! still recognised (and revokes the grant) rather than looking merely unknown.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_domain::token::token_hash;
use workapi_kit::entity::{self, Entity};
use workapi_store::{Condition, Key, Store, StoreResult, TTL, TxOp, Update, VERSION};

/// Lifetime of a code.
pub const CODE_TTL_SECS: i64 = 60;
/// How long a used code's record stays, so that a replay revokes its grant.
pub const USED_CODE_KEEP_SECS: i64 = 86_400;
/// A code is 32 random bytes, base64url without padding.
pub const CODE_CHARS: usize = 43;

/// The stored record of a code (never the code itself).
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeRecord {
    /// SHA-256 (hex) of the code: the key. Records written before this attribute existed lack
    /// it; they are only ever read.
    #[serde(default)]
    pub code_hash: String,
    pub client_id: String,
    /// The redirect URI the authorization response went to.
    pub redirect_uri: String,
    /// Whether the authorization request named it (then the token request must repeat it).
    pub redirect_uri_given: bool,
    pub scopes: Vec<String>,
    pub code_challenge: String,
    pub workspace_id: Uuid,
    pub user_id: Uuid,
    /// The grant that redeeming the code creates.
    pub grant_id: Uuid,
    /// The `resource` of the authorization request (RFC 8707), when it named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Epoch seconds.
    pub expires_at: i64,
    /// Epoch seconds; set when the code was redeemed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_at: Option<i64>,
    #[serde(default)]
    pub version: i64,
}

impl Entity for CodeRecord {
    const TYPE: &'static str = "OAuthCode";
    const PREFIX: &'static str = "OAUTH#CODE#";
    type Scope = ();

    fn key(&self, _: ()) -> Key {
        code_key(&self.code_hash)
    }
}

fn code_key(code_hash: &str) -> Key {
    Key::new(format!("{}{code_hash}", CodeRecord::PREFIX), "CODE")
}

/// What an approval binds a new code to.
pub struct NewCode<'a> {
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub redirect_uri_given: bool,
    pub scopes: &'a [String],
    pub code_challenge: &'a str,
    pub workspace_id: Uuid,
    pub user_id: Uuid,
    pub resource: Option<&'a str>,
}

/// True for something shaped like a code (checked before any hashing or store read).
pub fn is_code_shaped(code: &str) -> bool {
    code.len() == CODE_CHARS && code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The key of a code's record (by the SHA-256 of the code, so any text gives a well-formed key).
pub fn key_of(code: &str) -> Key {
    code_key(&token_hash(code))
}

/// Issues a new code: stores its record and returns the raw code (sent once, in the redirect).
pub async fn issue(store: &dyn Store, new: NewCode<'_>, now: i64) -> StoreResult<String> {
    let mut random = [0u8; 32];
    rand::rng().fill_bytes(&mut random);
    let code = URL_SAFE_NO_PAD.encode(random);
    let record = CodeRecord {
        code_hash: token_hash(&code),
        client_id: new.client_id.to_owned(),
        redirect_uri: new.redirect_uri.to_owned(),
        redirect_uri_given: new.redirect_uri_given,
        scopes: new.scopes.to_vec(),
        code_challenge: new.code_challenge.to_owned(),
        workspace_id: new.workspace_id,
        user_id: new.user_id,
        grant_id: Uuid::new_v4(),
        resource: new.resource.map(str::to_owned),
        expires_at: now + CODE_TTL_SECS,
        used_at: None,
        version: 0,
    };
    let mut item = entity::to_item(&record, ())?;
    item.insert(TTL.into(), record.expires_at.into());
    store.put(item, Condition::NotExists).await?;
    Ok(code)
}

/// The live record of a code (absent, expired and malformed codes alike: None).
pub async fn get(store: &dyn Store, key: &Key) -> StoreResult<Option<CodeRecord>> {
    entity::get(store, key).await
}

/// The write that redeems a code: only while it is live and unused.
pub fn redeem_op(key: Key, now: i64) -> TxOp {
    let update = Update::default().set(VERSION, 1).set("usedAt", now).set(TTL, now + USED_CODE_KEEP_SECS);
    TxOp::Update { key, update, cond: Condition::VersionEquals(0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_shape() {
        assert!(is_code_shaped(&"a".repeat(43)));
        assert!(!is_code_shaped(&"a".repeat(42)));
        assert!(!is_code_shaped(&format!("{}#", "a".repeat(42))));
        let key = key_of("x");
        assert!(key.pk.starts_with("OAUTH#CODE#") && key.pk.len() == "OAUTH#CODE#".len() + 64, "{key:?}");
    }
}
