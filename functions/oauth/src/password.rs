//! Passwords: Argon2id hashes (the `argon2` crate's default parameters, stored as PHC strings)
//! in a credential item of their own, beside the user (never on the user record, so no user
//! listing or index projection ever carries a hash).
//!
//! Hashing and verifying are CPU-bound (tens of milliseconds by design) and run on the blocking
//! pool. Verifying for an unknown user runs against a dummy hash with the same parameters, so a
//! wrong e-mail costs the same time as a wrong password.
//!
//! Only the login verifies passwords and only the operator CLI (`user set-password`) and the
//! tests set them, so Argon2 lives here, in the oauth function, and no other bootstrap links it.

use argon2::Argon2;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;
use uuid::Uuid;
use workapi_domain::identity::{self, IdentityError};
use workapi_kit::entity::{self, Entity};
use workapi_store::clock;
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Key, Store, StoreResult};

/// Bounds of a new password, in characters.
pub const MIN_CHARS: usize = 12;
pub const MAX_CHARS: usize = 1024;

/// The stored credential, `WS#<ws>` / `PASSWORD#<userId>`, beside the user item. No Debug: it
/// holds a password hash.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordRecord {
    user_id: Uuid,
    workspace_id: Uuid,
    /// `$argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>`
    phc: String,
    updated_at: String,
}

impl Entity for PasswordRecord {
    const TYPE: &'static str = "PasswordCredential";
    const PREFIX: &'static str = "PASSWORD#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        password_key(keys, self.user_id)
    }
}

/// A user's password credential (Argon2id PHC string), beside the user item.
pub fn password_key(keys: WsKeys, user_id: Uuid) -> Key {
    keys.root(format!("{}{user_id}", PasswordRecord::PREFIX))
}

/// Why a new password is refused.
pub fn check_policy(password: &str) -> Result<(), String> {
    let chars = password.chars().count();
    if chars < MIN_CHARS {
        return Err(format!("a password has at least {MIN_CHARS} characters"));
    }
    if chars > MAX_CHARS {
        return Err(format!("a password has at most {MAX_CHARS} characters"));
    }
    if password.trim().is_empty() {
        return Err("a password is not only whitespace".into());
    }
    Ok(())
}

/// Argon2id with a random salt; the PHC string.
fn hash_now(password: &[u8]) -> Result<String, String> {
    Argon2::default().hash_password(password).map(|h| h.to_string()).map_err(|e| format!("hashing a password: {e}"))
}

/// A hash of a random password with the current parameters: what an unknown user is verified
/// against.
static DUMMY: LazyLock<String> = LazyLock::new(|| {
    let mut random = [0u8; 32];
    rand::rng().fill_bytes(&mut random);
    hash_now(&random).unwrap_or_default()
});

/// Hashes a new password (checked against the policy first).
pub async fn hash(password: &str) -> Result<String, String> {
    check_policy(password)?;
    let password = password.to_owned();
    tokio::task::spawn_blocking(move || hash_now(password.as_bytes()))
        .await
        .map_err(|e| format!("hashing a password: {e}"))?
}

/// Whether `password` matches `phc`. With `None` (unknown user, no password set) it verifies
/// against the dummy hash, taking the same time, and answers false. A malformed stored hash is
/// logged and answers false.
pub async fn verify(password: &str, phc: Option<String>) -> bool {
    let password = password.to_owned();
    let outcome = tokio::task::spawn_blocking(move || {
        let (phc, real) = match phc {
            Some(phc) => (phc, true),
            None => (DUMMY.clone(), false),
        };
        match Argon2::default().verify_password(password.as_bytes(), phc.as_str()) {
            Ok(()) => real,
            Err(argon2::password_hash::Error::PasswordInvalid) => false,
            Err(e) => {
                if real {
                    tracing::error!(error = %e, "a stored password hash could not be used");
                }
                false
            }
        }
    })
    .await;
    outcome.unwrap_or_else(|e| {
        tracing::error!(error = %e, "password verification did not finish");
        false
    })
}

/// Sets (or replaces) a user's password.
pub async fn set_password(
    store: &dyn Store,
    workspace_id: Uuid,
    user_id: Uuid,
    password: &str,
) -> Result<(), IdentityError> {
    if identity::get_user(store, workspace_id, user_id).await?.is_none() {
        return Err(IdentityError::NotFound(format!("user {user_id} in workspace {workspace_id}")));
    }
    let phc = hash(password).await.map_err(IdentityError::Invalid)?;
    let record = PasswordRecord { user_id, workspace_id, phc, updated_at: clock::now_rfc3339() };
    store.put(entity::to_item(&record, WsKeys::new(workspace_id))?, Condition::None).await?;
    Ok(())
}

/// The stored hash of a user's password, if one is set.
pub async fn stored_hash(store: &dyn Store, keys: WsKeys, user_id: Uuid) -> StoreResult<Option<String>> {
    let record: Option<PasswordRecord> = entity::get(store, &password_key(keys, user_id)).await?;
    Ok(record.map(|r| r.phc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_verify_only_their_password() {
        let phc = hash("correct horse battery").await.unwrap();
        assert!(phc.starts_with("$argon2id$v=19$"), "{phc}");
        assert!(verify("correct horse battery", Some(phc.clone())).await);
        assert!(!verify("correct horse battery!", Some(phc.clone())).await);
        assert_ne!(hash("correct horse battery").await.unwrap(), phc, "salted");
    }

    #[tokio::test]
    async fn unknown_users_and_broken_hashes_never_match() {
        assert!(!verify("anything at all", None).await);
        assert!(!verify("", None).await);
        assert!(!verify("x", Some("not a phc string".into())).await);
    }

    #[test]
    fn policy() {
        assert!(check_policy("short").is_err());
        assert!(check_policy(&" ".repeat(20)).is_err());
        assert!(check_policy(&"x".repeat(MAX_CHARS + 1)).is_err());
        assert!(check_policy("twelve chars").is_ok());
        assert!(check_policy("ééééééééééé").is_err(), "counted in characters, not bytes");
    }
}
