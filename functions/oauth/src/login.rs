//! Password login: which user an e-mail and a password name (docs/auth.md).
//!
//! Every failure looks the same from outside: an unknown e-mail, a wrong password, a user with
//! no password and an inactive user all end as [`Outcome::Rejected`] after the same work (one
//! index query, one credential read and one Argon2id verification per account tried).

use crate::password;
use shared::identity::{ENTITY_USER, User};
use shared::store::keys::{self, WsKeys};
use shared::store::{ENTITY, Query, Store, StoreResult, from_item, query_all};
use uuid::Uuid;

pub const MAX_EMAIL_CHARS: usize = 254;
pub const MAX_PASSWORD_CHARS: usize = password::MAX_CHARS;
/// Without `workspaceId`, at most this many accounts of one e-mail are tried (bounded work).
pub const MAX_CANDIDATES: usize = 10;

/// A login request, validated.
pub struct Credentials {
    /// Trimmed, as typed; matched case-insensitively.
    pub email: String,
    /// Exactly as sent (not trimmed).
    pub password: String,
    /// Needed only when the e-mail and password sign in to several workspaces.
    pub workspace_id: Option<Uuid>,
}

pub enum Outcome {
    Authenticated(User),
    /// Unknown e-mail, wrong password, no password set, inactive user: indistinguishable.
    Rejected,
    /// The e-mail and password are right in several workspaces (these accounts): the client
    /// must name one.
    Ambiguous(Vec<User>),
}

/// The shape the API accepts for an e-mail: something, `@`, something, no whitespace (the
/// OpenAPI pattern `^\S+@\S+$`). Whether such a user exists is the login's business.
pub fn is_email_shaped(email: &str) -> bool {
    // Some `@` with something before and after it (the pattern allows more `@`s, e.g. `@a@b`).
    !email.chars().any(char::is_whitespace)
        && email.char_indices().any(|(i, c)| c == '@' && i > 0 && i + 1 < email.len())
}

pub async fn authenticate(store: &dyn Store, credentials: &Credentials) -> StoreResult<Outcome> {
    let folded = credentials.email.to_lowercase();
    let mut candidates = Vec::new();
    for item in query_all(store, Query::gsi1(keys::user_email_gsi1pk(&folded))).await? {
        if item.get(ENTITY).and_then(|v| v.as_str()) == Some(ENTITY_USER) {
            let user: User = from_item(item)?;
            if credentials.workspace_id.is_none_or(|ws| ws == user.workspace_id) {
                candidates.push(user);
            }
        }
    }
    candidates.truncate(MAX_CANDIDATES);

    if candidates.is_empty() {
        // The same work as for a real account: a credential read (of a key that cannot exist)
        // and a verification against the dummy hash.
        password::stored_hash(store, WsKeys::new(Uuid::nil()), Uuid::new_v4()).await?;
        password::verify(&credentials.password, None).await;
        return Ok(Outcome::Rejected);
    }
    let mut matched = Vec::new();
    for user in candidates {
        let phc = password::stored_hash(store, WsKeys::new(user.workspace_id), user.id).await?;
        // Inactive users are verified too, so their answer takes the same time.
        if password::verify(&credentials.password, phc).await && user.is_active {
            matched.push(user);
        }
    }
    Ok(match matched.len() {
        0 => Outcome::Rejected,
        1 => Outcome::Authenticated(matched.remove(0)),
        _ => Outcome::Ambiguous(matched),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_shape() {
        for good in ["a@b", "Ann.Lee+x@acme.example", "é@ü.example", "@a@b", "a@b@"] {
            assert!(is_email_shaped(good), "{good}");
        }
        for bad in ["", "@", "a@", "@b", "ab", "a b@c", "a@b c", "a@b\n"] {
            assert!(!is_email_shaped(bad), "{bad:?}");
        }
    }
}
