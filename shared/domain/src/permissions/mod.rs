//! Permissions: the key catalog, base and custom roles with inheritance, and the one way a
//! route states what it needs ([`Requirement`], checked by `Caller::authorize`).
//! Documented in docs/permissions.md.

pub mod catalog;
pub mod roles;

pub use catalog::key;
pub use roles::{BASE_ROLES, BaseRole, CEO, GUEST, ROOT, RoleType, Roles, STAFF, TEAM_LEADER, base_role};

use workapi_store::keys::WsKeys;
use workapi_store::{Store, StoreResult};

/// Effective permissions of a caller: key → allowed. Keys absent from the map are denied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionSet {
    /// The role the permissions come from (empty when it did not resolve).
    role_id: String,
    effective: roles::PermissionMap,
    /// The role is of type normal: an internal team member. Guest roles (and roles that do not
    /// resolve) are external.
    internal: bool,
}

impl PermissionSet {
    /// The effective permissions of a role of the workspace. Base roles need no store read;
    /// a custom role costs one query (all roles of the workspace). A role that cannot be
    /// resolved (unknown, or a corrupt chain) grants nothing.
    pub async fn of_role(store: &dyn Store, keys: WsKeys, role_id: &str) -> StoreResult<Self> {
        if base_role(role_id).is_some() {
            return Ok(Self::from_roles(&Roles::default(), role_id));
        }
        Ok(Self::from_roles(&Roles::load(store, keys).await?, role_id))
    }

    /// The permissions of `role_id` given the workspace's custom roles as a load returned them:
    /// authentication loads them before it knows the caller's role (concurrently with the user
    /// read), and a base role needs none of them, so a failed load only matters to a custom role.
    pub fn of_role_loaded(roles: StoreResult<Roles>, role_id: &str) -> StoreResult<Self> {
        if base_role(role_id).is_some() {
            return Ok(Self::from_roles(&Roles::default(), role_id));
        }
        Ok(Self::from_roles(&roles?, role_id))
    }

    pub fn from_roles(roles: &Roles, role_id: &str) -> Self {
        match roles.resolve(role_id) {
            Ok(resolved) => PermissionSet {
                role_id: role_id.to_owned(),
                effective: resolved.effective,
                internal: roles.get(role_id).is_some_and(|r| r.role_type() == RoleType::Normal),
            },
            Err(e) => {
                tracing::warn!(role_id, error = %e, "role does not resolve; granting nothing");
                PermissionSet::default()
            }
        }
    }

    /// The role these permissions come from: the token owner's, also in imposter mode.
    pub fn role_id(&self) -> &str {
        &self.role_id
    }

    pub fn allows(&self, key: &str) -> bool {
        self.effective.get(key).copied().unwrap_or(false)
    }

    /// Whether the role is for internal team members (type normal), not for guests.
    pub fn is_internal(&self) -> bool {
        self.internal
    }
}

/// What a route demands of an authenticated caller, beyond the scope its method needs.
/// Every route declares one; `Caller::authorize` is the only place it is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requirement {
    /// Any authenticated member of the workspace.
    Member,
    /// An employee of the workspace: not a member of a customer organization, and holding a
    /// role of type normal (guest roles are for external users).
    Employee,
    Permission(&'static str),
    /// At least one of the permissions.
    AnyOf(&'static [&'static str]),
}

impl Requirement {
    /// Whether a user of `kind` holding `permissions` meets it: the one rule behind
    /// `Caller::authorize` and behind who may receive a notification about a resource.
    pub fn met_by(self, kind: crate::identity::UserKind, permissions: &PermissionSet) -> bool {
        match self {
            Requirement::Member => true,
            Requirement::Employee => crate::identity::is_employee(kind, permissions),
            Requirement::Permission(key) => permissions.allows(key),
            Requirement::AnyOf(keys) => keys.iter().any(|k| permissions.allows(k)),
        }
    }
}

#[cfg(test)]
mod tests;
