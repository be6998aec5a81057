//! The keys of what `shared` itself reads and writes (workspaces, users, credentials, roles,
//! rate limits, OAuth grants for token verification), and the workspace-bound [`WsKeys`] that
//! functions build their entities' keys with, beside the entities (the schema is documented in
//! docs/data-model.md).
//!
//! Tenant keys are only reachable through [`WsKeys`], which is bound to one workspace: a handler
//! gets it from the authenticated caller, so it cannot name another workspace's items.
//! Identifier segments are typed (`Uuid`) or come from closed enums, so user input cannot
//! inject a `#` into a key; free text appears only as the last segment of a uniqueness guard.

use super::Key;
use uuid::Uuid;

/// Keys inside one workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WsKeys {
    ws: Uuid,
}

impl WsKeys {
    pub fn new(workspace_id: Uuid) -> Self {
        WsKeys { ws: workspace_id }
    }

    pub fn workspace_id(&self) -> Uuid {
        self.ws
    }

    /// Partition of the workspace's own small collections (users, roles, settings…).
    pub fn root_pk(&self) -> String {
        format!("WS#{}", self.ws)
    }

    /// A key in the workspace partition. Functions build their entities' keys with this and
    /// [`WsKeys::partition`], beside the entities (e.g. `functions/tags/src/store.rs`).
    pub fn root(&self, sort_key: impl Into<String>) -> Key {
        Key::new(self.root_pk(), sort_key)
    }

    /// A partition of its own inside the workspace: `WS#<id>#<name>`.
    pub fn partition(&self, name: &str) -> String {
        format!("WS#{}#{name}", self.ws)
    }

    pub fn workspace(&self) -> Key {
        Key::new(self.root_pk(), "WORKSPACE")
    }

    /// A user's own partition: the user (`USER`) and the user's notifications. Users are not in
    /// the workspace partition, which would make it hot: every request reads its caller
    /// (docs/performance.md, "Scale").
    pub fn user_pk(&self, user_id: Uuid) -> String {
        self.partition(&format!("USER#{user_id}"))
    }

    pub fn user(&self, user_id: Uuid) -> Key {
        Key::new(self.user_pk(user_id), Self::USER_SK)
    }

    pub const USER_SK: &'static str = "USER";

    /// Where a user was stored before users had partitions of their own: still read when the
    /// user is not found at [`WsKeys::user`], until `workapi table reindex` has moved it
    /// (docs/data-model.md#lists).
    pub fn legacy_user(&self, user_id: Uuid) -> Key {
        Key::new(self.root_pk(), format!("{}{user_id}", Self::LEGACY_USER_PREFIX))
    }

    pub const LEGACY_USER_PREFIX: &'static str = "USER#";

    /// List-index (GSI2) partition of the workspace's users.
    pub fn users_gsi2pk(&self) -> String {
        self.partition("USERS")
    }

    /// Uniqueness guard of a user's e-mail (case-folded) inside the workspace.
    pub fn user_email(&self, folded_email: &str) -> Key {
        Key::new(self.root_pk(), format!("EMAIL#{folded_email}"))
    }

    pub const ROLE_PREFIX: &'static str = "ROLE#";

    /// A custom role of this workspace. None when the id is not one of this workspace's
    /// custom-role ids, so a path parameter can neither reach another workspace nor inject a
    /// key separator.
    pub fn custom_role(&self, role_id: &str) -> Option<Key> {
        is_custom_role_id_of(self.ws, role_id)
            .then(|| Key::new(self.root_pk(), format!("{}{role_id}", Self::ROLE_PREFIX)))
    }

    /// GSI1 partition listing one user's personal access tokens.
    pub fn user_tokens_gsi1pk(&self, user_id: Uuid) -> String {
        format!("WS#{}#USER#{user_id}#PATS", self.ws)
    }
}

/// Credential lookup by hash. Not tenant-prefixed because the workspace is not known until
/// the credential is found; the item names its workspace and holds no tenant data.
pub fn credential(token_hash_hex: &str) -> Key {
    Key::new(format!("CRED#{token_hash_hex}"), "CRED")
}

/// The counter of one rate-limit bucket (`ip:<addr>`, `token:<id>`, `login-ip:<addr>` or
/// `login-email:<sha256 of the folded e-mail>`) in one window.
pub fn rate_limit_window(bucket: &str, window_start: i64) -> Key {
    Key::new(format!("RL#{bucket}#{window_start}"), "RL")
}

/// An OAuth grant: what one approval gave one client, and the generation of its refresh token.
/// Written by the oauth function; read here by every use of one of its access tokens.
pub fn oauth_grant(grant_id: Uuid) -> Key {
    Key::new(format!("{OAUTH_GRANT_PREFIX}{grant_id}"), "GRANT")
}

/// The partition-key prefix of OAuth grants.
pub const OAUTH_GRANT_PREFIX: &str = "OAUTH#GRANT#";

/// Custom role ids carry their workspace: `<workspace id>_<32 hex>`.
pub fn new_custom_role_id(workspace_id: Uuid) -> String {
    format!("{workspace_id}_{}", Uuid::new_v4().simple())
}

/// Whether an id names a custom role of this workspace (says nothing about existence). Its
/// shape is what keeps a path parameter from reaching another workspace or injecting a key
/// separator.
pub fn is_custom_role_id_of(workspace_id: Uuid, id: &str) -> bool {
    id.strip_prefix(&workspace_id.to_string())
        .and_then(|rest| rest.strip_prefix('_'))
        .is_some_and(|hex| hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// GSI1 partition that lists every workspace (operator CLI, demo seeding).
pub const WORKSPACES_GSI1PK: &str = "WORKSPACES";

/// GSI1 partition for login by e-mail (case-folded).
pub fn user_email_gsi1pk(folded_email: &str) -> String {
    format!("EMAIL#{folded_email}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_keys_start_with_the_workspace() {
        let ws = Uuid::new_v4();
        let keys = WsKeys::new(ws);
        let prefix = format!("WS#{ws}");
        for key in [
            keys.workspace(),
            keys.user(Uuid::new_v4()),
            keys.root("X"),
            keys.custom_role(&new_custom_role_id(ws)).unwrap(),
        ] {
            assert!(key.pk.starts_with(&prefix), "{key:?}");
        }
        assert!(keys.user_tokens_gsi1pk(Uuid::new_v4()).starts_with(&prefix));
    }

    #[test]
    fn role_keys_only_for_this_workspaces_role_ids() {
        let keys = WsKeys::new(Uuid::new_v4());
        let foreign = new_custom_role_id(Uuid::new_v4());
        assert!(keys.custom_role(&foreign).is_none());
        assert!(keys.custom_role("_root").is_none());
        assert!(keys.custom_role(&format!("{}_x#ACTIVITY", keys.workspace_id())).is_none());
    }

    #[test]
    fn different_workspaces_never_share_a_partition() {
        let a = WsKeys::new(Uuid::new_v4());
        let b = WsKeys::new(Uuid::new_v4());
        assert_ne!(a.partition("TAGS#task"), b.partition("TAGS#task"));
        assert!(a.partition("TAGS#task").starts_with(&a.root_pk()));
        assert_ne!(a.root_pk(), b.root_pk());
    }
}
