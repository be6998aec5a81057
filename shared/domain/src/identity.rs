//! Workspaces, users and personal access tokens: the records authentication reads, and the
//! operations the operator CLI and the tests use to create them.

use crate::permissions;
use crate::token::{self, TokenKey};
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_store::clock;
use workapi_store::entity::{self, Entity, IndexKey, to_item};
use workapi_store::keys::{self, WsKeys};
use workapi_store::{Condition, Key, Query, Store, StoreError, StoreResult, TxOp, Update, from_item, query_all};

pub const ENTITY_WORKSPACE: &str = "Workspace";
pub const ENTITY_USER: &str = "User";
pub const ENTITY_EMAIL_GUARD: &str = "UserEmail";
pub const ENTITY_TOKEN: &str = "PersonalAccessToken";

pub const SCOPE_READ: &str = "api:read";
pub const SCOPE_WRITE: &str = "api:write";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Workspace {
    pub id: Uuid,
    pub name: String,
    pub language: String,
    pub created_at: String,
    /// The workspace's API feature (spec §4.12: OAuth clients are installed automatically while
    /// it is on). Off: no OAuth authorization and no refresh succeeds. Records written before
    /// the flag existed have it on.
    #[serde(default = "api_enabled_by_default")]
    pub api_enabled: bool,
}

fn api_enabled_by_default() -> bool {
    true
}

/// Employees work for the workspace; organization members belong to a customer organization.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum UserKind {
    Employee,
    OrganizationMember,
}

/// Whether a user with these permissions is an employee of the workspace: not a member of a
/// customer organization (a contact), and holding a role of type normal (guest roles are for
/// external users, docs/permissions.md). The one rule behind
/// [`permissions::Requirement::Employee`] and behind fields that must name an employee (a
/// helpdesk account's task assignee).
pub fn is_employee(kind: UserKind, permissions: &permissions::PermissionSet) -> bool {
    kind == UserKind::Employee && permissions.is_internal()
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: Uuid,
    pub workspace_id: Uuid,
    pub email: String,
    pub name: String,
    pub role_id: String,
    pub kind: UserKind,
    pub language: String,
    pub is_active: bool,
    pub created_at: String,
    /// The customer organization of an organization member (a contact); absent for employees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization_id: Option<Uuid>,
}

/// The stored record of a personal access token (never the token itself).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TokenRecord {
    pub id: Uuid,
    pub workspace_id: Uuid,
    pub user_id: Uuid,
    pub name: String,
    pub scopes: Vec<String>,
    pub created_at: String,
    /// Epoch seconds; absent means no expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    /// Kept coarsely (at most one write per hour) so authentication stays one read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<i64>,
}

impl Entity for Workspace {
    const TYPE: &'static str = ENTITY_WORKSPACE;
    const PREFIX: &'static str = "WORKSPACE";
    type Scope = ();

    fn key(&self, _: ()) -> Key {
        WsKeys::new(self.id).workspace()
    }

    /// Every workspace, by creation (the operator CLI, demo seeding).
    fn gsi1(&self, _: ()) -> Option<IndexKey> {
        Some(IndexKey { pk: keys::WORKSPACES_GSI1PK.into(), sk: format!("{}#{}", self.created_at, self.id) })
    }
}

impl Entity for User {
    const TYPE: &'static str = ENTITY_USER;
    const PREFIX: &'static str = WsKeys::USER_SK;
    type Scope = ();

    fn key(&self, _: ()) -> Key {
        WsKeys::new(self.workspace_id).user(self.id)
    }

    /// The workspace's users, by id (contacts, a role's holders).
    fn gsi2(&self, _: ()) -> Option<IndexKey> {
        Some(IndexKey { pk: WsKeys::new(self.workspace_id).users_gsi2pk(), sk: self.id.to_string() })
    }

    /// The user by e-mail (case-folded), at login.
    fn gsi1(&self, _: ()) -> Option<IndexKey> {
        Some(IndexKey {
            pk: keys::user_email_gsi1pk(&folded(&self.email)),
            sk: format!("WS#{}#USER#{}", self.workspace_id, self.id),
        })
    }
}

/// The e-mail a user is found by and unique by: trimmed and lower-cased.
fn folded(email: &str) -> String {
    email.trim().to_lowercase()
}

/// The uniqueness guard of a user's e-mail in a workspace, written with the user.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct EmailGuard {
    user_id: Uuid,
}

impl Entity for EmailGuard {
    const TYPE: &'static str = ENTITY_EMAIL_GUARD;
    const PREFIX: &'static str = "EMAIL#";
    /// The workspace and the folded e-mail, which the guard's key holds and its item does not.
    type Scope = (WsKeys, String);

    fn key(&self, (keys, folded_email): (WsKeys, String)) -> Key {
        keys.user_email(&folded_email)
    }
}

impl Entity for TokenRecord {
    const TYPE: &'static str = ENTITY_TOKEN;
    const PREFIX: &'static str = "CRED#";
    /// The token's hash (`token::token_hash`), which the key holds and the record does not.
    type Scope = String;

    fn key(&self, token_hash: String) -> Key {
        keys::credential(&token_hash)
    }

    /// A user's tokens, by creation.
    fn gsi1(&self, _: String) -> Option<IndexKey> {
        Some(IndexKey {
            pk: WsKeys::new(self.workspace_id).user_tokens_gsi1pk(self.user_id),
            sk: format!("PAT#{}#{}", self.created_at, self.id),
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    #[error("{0}")]
    Invalid(String),
    #[error("a user with e-mail {0} already exists in this workspace")]
    DuplicateEmail(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub async fn create_workspace(store: &dyn Store, name: &str, language: &str) -> Result<Workspace, IdentityError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(IdentityError::Invalid("workspace name must not be empty".into()));
    }
    let workspace = Workspace {
        id: Uuid::new_v4(),
        name: name.to_owned(),
        language: language.to_owned(),
        created_at: clock::now_rfc3339(),
        api_enabled: true,
    };
    store.put(to_item(&workspace, ())?, Condition::NotExists).await?;
    Ok(workspace)
}

pub async fn get_workspace(store: &dyn Store, id: Uuid) -> StoreResult<Option<Workspace>> {
    store.get(&WsKeys::new(id).workspace()).await?.map(from_item).transpose()
}

/// Switches a workspace's API feature on or off (operator CLI). NotFound for an unknown
/// workspace.
pub async fn set_api_enabled(store: &dyn Store, id: Uuid, enabled: bool) -> Result<Workspace, IdentityError> {
    let update = Update::default().set("apiEnabled", enabled);
    match store.update(&WsKeys::new(id).workspace(), update, Condition::Exists).await {
        Ok(item) => Ok(from_item(item)?),
        Err(StoreError::ConditionFailed) => Err(IdentityError::NotFound(format!("workspace {id}"))),
        Err(e) => Err(e.into()),
    }
}

pub async fn list_workspaces(store: &dyn Store) -> StoreResult<Vec<Workspace>> {
    query_all(store, Query::gsi1(keys::WORKSPACES_GSI1PK)).await?.into_iter().map(from_item).collect()
}

pub struct NewUser<'a> {
    pub email: &'a str,
    pub name: &'a str,
    pub role_id: &'a str,
    pub kind: UserKind,
    pub language: &'a str,
}

/// Creates a user; the e-mail is unique per workspace (case-insensitive), enforced by a guard
/// item written in the same transaction.
pub async fn create_user(store: &dyn Store, workspace_id: Uuid, new: NewUser<'_>) -> Result<User, IdentityError> {
    let email = new.email.trim();
    if !email.contains('@') || email.len() > 254 {
        return Err(IdentityError::Invalid(format!("{email:?} is not an e-mail address")));
    }
    if get_workspace(store, workspace_id).await?.is_none() {
        return Err(IdentityError::NotFound(format!("workspace {workspace_id}")));
    }
    let keys = WsKeys::new(workspace_id);
    let role_reference = role_reference(store, keys, new.role_id).await?;
    let user = User {
        id: Uuid::new_v4(),
        workspace_id,
        email: email.to_owned(),
        name: new.name.trim().to_owned(),
        role_id: new.role_id.to_owned(),
        kind: new.kind,
        language: new.language.to_owned(),
        is_active: true,
        created_at: clock::now_rfc3339(),
        organization_id: None,
    };
    let guard = to_item(&EmailGuard { user_id: user.id }, (keys, folded(&user.email)))?;
    let mut ops = vec![
        TxOp::Put { item: guard, cond: Condition::NotExists },
        TxOp::Put { item: to_item(&user, ())?, cond: Condition::NotExists },
    ];
    ops.extend(role_reference);
    match store.transact(ops).await {
        Ok(()) => Ok(user),
        Err(StoreError::TransactionCancelled { failed }) if failed.contains(&0) => {
            Err(IdentityError::DuplicateEmail(email.to_owned()))
        }
        Err(StoreError::TransactionCancelled { failed }) if failed.contains(&2) => {
            Err(IdentityError::Invalid(format!("role {} changed or was deleted meanwhile; try again", new.role_id)))
        }
        Err(e) => Err(e.into()),
    }
}

/// A user may hold a base role or a custom role of their workspace. Taking a custom role
/// bumps its version in the same transaction, so a concurrent delete of the role (conditioned
/// on the version it saw with no holders) cannot succeed.
async fn role_reference(store: &dyn Store, keys: WsKeys, role_id: &str) -> Result<Option<TxOp>, IdentityError> {
    if permissions::base_role(role_id).is_some() {
        return Ok(None);
    }
    let unknown = || IdentityError::Invalid(format!("unknown role {role_id:?} (a base role or a custom role id)"));
    let key = keys.custom_role(role_id).ok_or_else(unknown)?;
    let role: permissions::roles::CustomRole = from_item(store.get(&key).await?.ok_or_else(unknown)?)?;
    let update = Update::default().set(workapi_store::VERSION, role.version + 1);
    Ok(Some(TxOp::Update { key, update, cond: Condition::VersionEquals(role.version) }))
}

/// Writes a user with a given id as it is (operator seed files): absent → created with its
/// e-mail guard; present and equal → nothing (Ok(false)); present and different → replaced, its
/// e-mail guard moved in the same transaction when the e-mail changed. A custom role is not
/// allowed here (seeded users hold base roles). Returns whether anything was written.
pub async fn ensure_user(store: &dyn Store, user: &User) -> Result<bool, IdentityError> {
    if permissions::base_role(&user.role_id).is_none() {
        return Err(IdentityError::Invalid(format!("{:?} is not a base role", user.role_id)));
    }
    let keys = WsKeys::new(user.workspace_id);
    let existing = get_user(store, user.workspace_id, user.id).await?;
    let mut user = user.clone();
    if let Some(existing) = &existing {
        user.created_at = existing.created_at.clone();
        if *existing == user {
            return Ok(false);
        }
    }
    let folded_email = folded(&user.email);
    let user_item = to_item(&user, ())?;
    let guard = || to_item(&EmailGuard { user_id: user.id }, (keys, folded_email.clone()));
    let ops = match &existing {
        None => vec![
            TxOp::Put { item: guard()?, cond: Condition::NotExists },
            TxOp::Put { item: user_item, cond: Condition::NotExists },
        ],
        Some(old) if folded(&old.email) == folded_email => {
            vec![TxOp::Put { item: user_item, cond: Condition::Exists }]
        }
        Some(old) => vec![
            TxOp::Put { item: guard()?, cond: Condition::NotExists },
            TxOp::Put { item: user_item, cond: Condition::Exists },
            TxOp::Delete { key: keys.user_email(&folded(&old.email)), cond: Condition::Exists },
        ],
    };
    match store.transact(ops).await {
        Ok(()) => Ok(true),
        Err(StoreError::TransactionCancelled { failed }) if failed.contains(&0) => {
            Err(IdentityError::DuplicateEmail(user.email.clone()))
        }
        Err(StoreError::TransactionCancelled { .. }) => {
            Err(IdentityError::Invalid(format!("user {} changed meanwhile; try again", user.id)))
        }
        Err(e) => Err(e.into()),
    }
}

/// The user, read consistently; one stored before users had partitions of their own is found
/// where it was until `workapi table reindex` moves it, so an upgrade locks nobody out.
pub async fn get_user(store: &dyn Store, workspace_id: Uuid, user_id: Uuid) -> StoreResult<Option<User>> {
    let keys = WsKeys::new(workspace_id);
    entity::get_moved(store, &keys.user(user_id), &keys.legacy_user(user_id)).await
}

/// [`get_user`] eventually consistent: for authenticating a request (a deactivation or a role
/// change reaches requests within about a second; docs/auth.md), never for a read-modify-write.
pub async fn get_user_eventually(store: &dyn Store, workspace_id: Uuid, user_id: Uuid) -> StoreResult<Option<User>> {
    store.get_eventually(&WsKeys::new(workspace_id).user(user_id)).await?.map(from_item).transpose()
}

/// The workspace's users by id, from the list index (eventually consistent: a user created in
/// the last second may be missing; a role's delete is guarded by its version, not by this list).
pub async fn list_users(store: &dyn Store, workspace_id: Uuid) -> StoreResult<Vec<User>> {
    let keys = WsKeys::new(workspace_id);
    query_all(store, Query::gsi2(keys.users_gsi2pk())).await?.into_iter().map(from_item).collect()
}

pub struct NewToken<'a> {
    pub name: &'a str,
    pub scopes: Vec<String>,
    /// Epoch seconds; None for no expiry.
    pub expires_at: Option<i64>,
}

/// Mints a personal access token for a user. Returns the raw token (show it once) and the
/// stored record, which holds only its hash.
pub async fn create_token(
    store: &dyn Store,
    key: &TokenKey,
    workspace_id: Uuid,
    user_id: Uuid,
    new: NewToken<'_>,
) -> Result<(String, TokenRecord), IdentityError> {
    for scope in &new.scopes {
        if scope != SCOPE_READ && scope != SCOPE_WRITE {
            return Err(IdentityError::Invalid(format!("unknown scope {scope:?} (use {SCOPE_READ}, {SCOPE_WRITE})")));
        }
    }
    if new.scopes.is_empty() {
        return Err(IdentityError::Invalid("a token needs at least one scope".into()));
    }
    match get_user(store, workspace_id, user_id).await? {
        None => return Err(IdentityError::NotFound(format!("user {user_id} in workspace {workspace_id}"))),
        // Its token would be refused on every request (401): refuse it now, saying why.
        Some(user) if !user.is_active => {
            return Err(IdentityError::Invalid(format!(
                "user {user_id} is inactive, so a token for them would be refused; reactivate the user first"
            )));
        }
        Some(_) => {}
    }
    let raw = token::mint(key);
    let record = TokenRecord {
        id: Uuid::new_v4(),
        workspace_id,
        user_id,
        name: new.name.to_owned(),
        scopes: new.scopes,
        created_at: clock::now_rfc3339(),
        expires_at: new.expires_at,
        revoked_at: None,
        last_used_at: None,
    };
    store.put(to_item(&record, token::token_hash(&raw))?, Condition::NotExists).await?;
    Ok((raw, record))
}

/// Lists a user's tokens with their credential keys (for revocation).
pub async fn list_tokens(
    store: &dyn Store,
    workspace_id: Uuid,
    user_id: Uuid,
) -> StoreResult<Vec<(workapi_store::Key, TokenRecord)>> {
    let keys = WsKeys::new(workspace_id);
    query_all(store, Query::gsi1(keys.user_tokens_gsi1pk(user_id)))
        .await?
        .into_iter()
        .map(|item| {
            let key =
                workapi_store::Key::of(&item).ok_or_else(|| StoreError::Backend("token item without key".into()))?;
            Ok((key, from_item(item)?))
        })
        .collect()
}

/// Revokes a token by id. Revoked tokens fail authentication at once.
pub async fn revoke_token(
    store: &dyn Store,
    workspace_id: Uuid,
    user_id: Uuid,
    token_id: Uuid,
) -> Result<(), IdentityError> {
    let (key, _) = list_tokens(store, workspace_id, user_id)
        .await?
        .into_iter()
        .find(|(_, t)| t.id == token_id)
        .ok_or_else(|| IdentityError::NotFound(format!("token {token_id}")))?;
    store.update(&key, Update::default().set("revokedAt", clock::now_rfc3339()), Condition::Exists).await?;
    Ok(())
}

#[cfg(test)]
mod employee_tests {
    use super::{UserKind, is_employee};
    use crate::permissions::roles::{CustomRole, RoleType, Roles};
    use crate::permissions::{GUEST, PermissionSet, STAFF};

    #[test]
    fn employees_are_not_contacts_and_hold_no_guest_role() {
        let base = |id| PermissionSet::from_roles(&Roles::default(), id);
        assert!(is_employee(UserKind::Employee, &base(STAFF)));
        assert!(!is_employee(UserKind::OrganizationMember, &base(STAFF)), "a contact");
        assert!(!is_employee(UserKind::Employee, &base(GUEST)), "a guest role's holder");
        let guest = CustomRole {
            id: "g".into(),
            name: "g".into(),
            description: String::new(),
            icon: "fa-star".into(),
            role_type: RoleType::Guest,
            parent_id: Some(GUEST.into()),
            raw_permissions: Default::default(),
            created_at: String::new(),
            created_by: uuid::Uuid::nil(),
            edited_at: String::new(),
            version: 1,
        };
        assert!(!is_employee(UserKind::Employee, &PermissionSet::from_roles(&Roles::new([guest]), "g")));
    }
}

#[cfg(test)]
mod item_tests {
    use super::*;
    use serde_json::json;

    /// The items authentication reads back are laid out as stored data has them
    /// (docs/data-model.md, Identity): keys, index keys, `entity` and the record's attributes.
    #[test]
    fn identity_items_keep_their_stored_layout() {
        let ws = Uuid::parse_str("11111111-1111-4111-8111-111111111111").unwrap();
        let id = Uuid::parse_str("22222222-2222-4222-8222-222222222222").unwrap();
        let workspace = Workspace {
            id: ws,
            name: "Acme".into(),
            language: "en".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            api_enabled: true,
        };
        assert_eq!(
            serde_json::Value::Object(to_item(&workspace, ()).unwrap()),
            json!({"PK": format!("WS#{ws}"), "SK": "WORKSPACE", "entity": "Workspace",
                "GSI1PK": "WORKSPACES", "GSI1SK": format!("2026-01-01T00:00:00Z#{ws}"),
                "id": ws, "name": "Acme", "language": "en", "createdAt": "2026-01-01T00:00:00Z", "apiEnabled": true})
        );
        let user = User {
            id,
            workspace_id: ws,
            email: " Ann@Example.com".into(),
            name: "Ann".into(),
            role_id: "staff".into(),
            kind: UserKind::Employee,
            language: "en".into(),
            is_active: true,
            created_at: "2026-01-01T00:00:00Z".into(),
            organization_id: None,
        };
        assert_eq!(
            serde_json::Value::Object(to_item(&user, ()).unwrap()),
            json!({"PK": format!("WS#{ws}#USER#{id}"), "SK": "USER", "entity": "User",
                "GSI1PK": keys::user_email_gsi1pk("ann@example.com"), "GSI1SK": format!("WS#{ws}#USER#{id}"),
                "GSI2PK": format!("WS#{ws}#USERS"), "GSI2SK": id.to_string(),
                "id": id, "workspaceId": ws, "email": " Ann@Example.com", "name": "Ann", "roleId": "staff",
                "kind": "employee", "language": "en", "isActive": true, "createdAt": "2026-01-01T00:00:00Z"})
        );
        let guard = to_item(&EmailGuard { user_id: id }, (WsKeys::new(ws), "ann@example.com".into())).unwrap();
        assert_eq!(
            serde_json::Value::Object(guard),
            json!({"PK": format!("WS#{ws}"), "SK": "EMAIL#ann@example.com", "entity": "UserEmail", "userId": id})
        );
        let token = TokenRecord {
            id,
            workspace_id: ws,
            user_id: id,
            name: "ci".into(),
            scopes: vec![SCOPE_READ.into()],
            created_at: "2026-01-01T00:00:00Z".into(),
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
        };
        assert_eq!(
            serde_json::Value::Object(to_item(&token, "ab12".into()).unwrap()),
            json!({"PK": "CRED#ab12", "SK": "CRED", "entity": "PersonalAccessToken",
                "GSI1PK": format!("WS#{ws}#USER#{id}#PATS"), "GSI1SK": format!("PAT#2026-01-01T00:00:00Z#{id}"),
                "id": id, "workspaceId": ws, "userId": id, "name": "ci", "scopes": ["api:read"],
                "createdAt": "2026-01-01T00:00:00Z"})
        );
    }
}
