//! Permission keys and the five read-only base roles with their default permission sets.
//! The catalog and defaults are documented in docs/permissions.md.

use std::collections::BTreeMap;

/// Every permission key the service checks.
pub mod key {
    pub const TASKS_CREATE_TAGS: &str = "Tasks.createTags";
    pub const PROJECTS_EDIT: &str = "Projects.edit";
    pub const PROJECTS_MANAGE_COMPONENTS: &str = "Projects.manageComponents";
    pub const PROJECTS_MANAGE_DOCUMENTATION: &str = "Projects.manageDocumentation";
    pub const PROJECTS_MANAGE_MANUAL_POSITIONS: &str = "Projects.manageManualPositions";
    pub const PROJECT_COMPONENTS_LIBRARY_EDIT: &str = "ProjectComponentsLibrary.edit";
    pub const INVOICES_MANAGE: &str = "Invoices.manage";
    pub const WS_SETTINGS_MANAGE_SETTINGS: &str = "WsSettings.manageSettings";
    pub const PUBLIC_API_ALLOW_IMPOSTER_MODE: &str = "PublicApi.allowImposterMode";
}

pub const ALL: &[&str] = &[
    key::TASKS_CREATE_TAGS,
    key::PROJECTS_EDIT,
    key::PROJECTS_MANAGE_COMPONENTS,
    key::PROJECTS_MANAGE_DOCUMENTATION,
    key::PROJECTS_MANAGE_MANUAL_POSITIONS,
    key::PROJECT_COMPONENTS_LIBRARY_EDIT,
    key::INVOICES_MANAGE,
    key::WS_SETTINGS_MANAGE_SETTINGS,
    key::PUBLIC_API_ALLOW_IMPOSTER_MODE,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleType {
    Normal,
    Guest,
}

impl RoleType {
    pub fn as_str(self) -> &'static str {
        match self {
            RoleType::Normal => "normal",
            RoleType::Guest => "guest",
        }
    }
}

/// A base role: built in, read-only, the same in every workspace.
#[derive(Debug)]
pub struct BaseRole {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub icon: &'static str,
    pub role_type: RoleType,
    pub granted: &'static [&'static str],
}

pub const ROOT: &str = "_root";
pub const CEO: &str = "_ceo";
pub const TEAM_LEADER: &str = "_team_leader";
pub const STAFF: &str = "_staff";
pub const GUEST: &str = "_guest";

pub const BASE_ROLES: &[BaseRole] = &[
    BaseRole {
        id: ROOT,
        name: "Root",
        description: "Owner of the workspace with every permission",
        icon: "fa-crown",
        role_type: RoleType::Normal,
        granted: ALL,
    },
    BaseRole {
        id: CEO,
        name: "CEO",
        description: "Runs the business: everything except acting as another user through the API",
        icon: "fa-briefcase",
        role_type: RoleType::Normal,
        granted: &[
            key::TASKS_CREATE_TAGS,
            key::PROJECTS_EDIT,
            key::PROJECTS_MANAGE_COMPONENTS,
            key::PROJECTS_MANAGE_DOCUMENTATION,
            key::PROJECTS_MANAGE_MANUAL_POSITIONS,
            key::PROJECT_COMPONENTS_LIBRARY_EDIT,
            key::INVOICES_MANAGE,
            key::WS_SETTINGS_MANAGE_SETTINGS,
        ],
    },
    BaseRole {
        id: TEAM_LEADER,
        name: "Team Leader",
        description: "Leads projects and their teams; no billing or workspace settings",
        icon: "fa-users",
        role_type: RoleType::Normal,
        granted: &[
            key::TASKS_CREATE_TAGS,
            key::PROJECTS_EDIT,
            key::PROJECTS_MANAGE_COMPONENTS,
            key::PROJECTS_MANAGE_DOCUMENTATION,
            key::PROJECTS_MANAGE_MANUAL_POSITIONS,
            key::PROJECT_COMPONENTS_LIBRARY_EDIT,
        ],
    },
    BaseRole {
        id: STAFF,
        name: "Staff",
        description: "Works on tasks and project documentation",
        icon: "fa-user",
        role_type: RoleType::Normal,
        granted: &[key::TASKS_CREATE_TAGS, key::PROJECTS_MANAGE_DOCUMENTATION],
    },
    BaseRole {
        id: GUEST,
        name: "Guest",
        description: "External user with read-only access",
        icon: "fa-user-secret",
        role_type: RoleType::Guest,
        granted: &[],
    },
];

pub fn base_role(id: &str) -> Option<&'static BaseRole> {
    BASE_ROLES.iter().find(|r| r.id == id)
}

/// Effective permissions: key → allowed. Keys absent from the map are denied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionSet(BTreeMap<String, bool>);

impl PermissionSet {
    pub fn of_base_role(role: &BaseRole) -> Self {
        PermissionSet(ALL.iter().map(|k| ((*k).to_owned(), role.granted.contains(k))).collect())
    }

    /// Resolves a role id. Unknown roles grant nothing (custom roles arrive with the
    /// permission engine).
    pub fn for_role(role_id: &str) -> Self {
        base_role(role_id).map(Self::of_base_role).unwrap_or_default()
    }

    pub fn allows(&self, key: &str) -> bool {
        self.0.get(key).copied().unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_role_ids_are_underscore_prefixed_and_unique() {
        let mut ids: Vec<_> = BASE_ROLES.iter().map(|r| r.id).collect();
        assert!(ids.iter().all(|id| id.starts_with('_')));
        ids.dedup();
        assert_eq!(ids.len(), 5);
    }

    #[test]
    fn defaults_shrink_from_root_to_guest() {
        let root = PermissionSet::for_role(ROOT);
        assert!(ALL.iter().all(|k| root.allows(k)));
        assert!(!PermissionSet::for_role(CEO).allows(key::PUBLIC_API_ALLOW_IMPOSTER_MODE));
        assert!(!PermissionSet::for_role(TEAM_LEADER).allows(key::INVOICES_MANAGE));
        let staff = PermissionSet::for_role(STAFF);
        assert!(staff.allows(key::TASKS_CREATE_TAGS) && !staff.allows(key::PROJECTS_MANAGE_COMPONENTS));
        let guest = PermissionSet::for_role(GUEST);
        assert!(ALL.iter().all(|k| !guest.allows(k)));
        assert!(!PermissionSet::for_role("_nobody").allows(key::TASKS_CREATE_TAGS));
    }

    #[test]
    fn every_granted_key_is_in_the_catalog() {
        for role in BASE_ROLES {
            for key in role.granted {
                assert!(ALL.contains(key), "{} grants unknown {key}", role.id);
            }
        }
    }
}
