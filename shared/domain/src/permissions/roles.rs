//! Roles: the five built-in base roles and a workspace's custom roles, and how a role's
//! permissions resolve along its parent chain (spec §2.1, docs/permissions.md).
//!
//! Resolution: walk from the role up to its root; nearer entries override farther ones, in
//! both directions (an explicit `false` on a child revokes what a parent grants). A base role
//! states every catalog key explicitly. `effectivePermissions` covers the whole catalog:
//! a key with no entry anywhere is denied, and guest roles never hold guest-disallowed keys,
//! whatever they inherit.

use super::catalog::{self, key};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use uuid::Uuid;
use workapi_store::keys::WsKeys;
use workapi_store::{Query, Store, StoreResult, from_item, query_all};

pub type PermissionMap = BTreeMap<String, bool>;

/// Longest parent chain accepted (a role plus nine ancestors); bounds every resolution.
pub const MAX_DEPTH: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoleType {
    /// Internal team members
    Normal,
    /// External users, with extra permission restrictions
    Guest,
}

impl RoleType {
    pub const ALL: &'static [&'static str] = &["normal", "guest"];

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "normal" => Some(RoleType::Normal),
            "guest" => Some(RoleType::Guest),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RoleType::Normal => "normal",
            RoleType::Guest => "guest",
        }
    }
}

workapi_wire::closed_enum!(RoleType);

/// A role id as a path or a body names it: a base role (`_staff`; any `_name` is well-formed)
/// or a custom role (`<workspace id>_<32 hex digits>`). Well-formed says nothing about
/// existence: an unknown or another workspace's role is a 404 where it is looked up.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct RoleId(String);

impl RoleId {
    const PATTERN: &'static str =
        "^(_[a-z][a-z_]{0,31}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}_[0-9a-f]{32})$";

    pub fn parse(text: &str) -> Option<RoleId> {
        let base_shaped = text.strip_prefix('_').is_some_and(|name| {
            (1..=32).contains(&name.len())
                && name.starts_with(|c: char| c.is_ascii_lowercase())
                && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        });
        let custom_shaped = text.split_once('_').is_some_and(|(ws, hex)| {
            Uuid::try_parse(ws).is_ok_and(|u| u.hyphenated().to_string() == ws)
                && hex.len() == 32
                && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        });
        (base_shaped || custom_shaped).then(|| RoleId(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    const EXPECTED: &'static str = "a role id: a base role such as _staff, or <workspace id>_<32 hex digits>";
}

impl<'de> Deserialize<'de> for RoleId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        workapi_wire::deserialize_str(deserializer, RoleId::EXPECTED, RoleId::parse)
    }
}

impl utoipa::PartialSchema for RoleId {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(RoleId::PATTERN))
            .description(Some("A base role (_root, _ceo, _team_leader, _staff, _guest) or a custom role id"))
            .examples(["_staff"])
            .into()
    }
}

impl utoipa::ToSchema for RoleId {
    fn name() -> std::borrow::Cow<'static, str> {
        "RoleId".into()
    }
}

impl workapi_wire::Field for RoleId {
    fn read(value: &serde_json::Value, at: &workapi_wire::At, errors: &mut workapi_wire::Errors) -> Option<Self> {
        let parsed = value.as_str().and_then(RoleId::parse);
        if parsed.is_none() {
            errors.add(at, format!("{} must be {}", at.name(), RoleId::EXPECTED));
        }
        parsed
    }

    fn schema() -> workapi_wire::SchemaRef {
        <RoleId as utoipa::PartialSchema>::schema()
    }
}

/// A text in the languages the base roles are translated to.
#[derive(Debug)]
pub struct Text {
    pub en: &'static str,
    pub de: &'static str,
}

impl Text {
    /// By the primary subtag of the language (`de`, `de-AT`, `DE`); English otherwise.
    pub fn get(&self, language: &str) -> &'static str {
        let primary = language.split(['-', '_']).next().unwrap_or_default();
        if primary.eq_ignore_ascii_case("de") { self.de } else { self.en }
    }
}

/// A base role: built in, read-only, the same in every workspace.
#[derive(Debug)]
pub struct BaseRole {
    pub id: &'static str,
    pub name: Text,
    pub description: Text,
    pub icon: &'static str,
    pub role_type: RoleType,
    pub granted: &'static [&'static str],
}

pub const ROOT: &str = "_root";
pub const CEO: &str = "_ceo";
pub const TEAM_LEADER: &str = "_team_leader";
pub const STAFF: &str = "_staff";
pub const GUEST: &str = "_guest";

const PROJECT_WORK: &[&str] = &[
    key::TASKS_CREATE_TAGS,
    key::PROJECTS_EDIT,
    key::PROJECTS_MANAGE_COMPONENTS,
    key::PROJECTS_MANAGE_DOCUMENTATION,
    key::PROJECTS_MANAGE_MANUAL_POSITIONS,
    key::PROJECT_COMPONENTS_LIBRARY_EDIT,
];

pub const BASE_ROLES: &[BaseRole] = &[
    BaseRole {
        id: ROOT,
        name: Text { en: "Root", de: "Root" },
        description: Text {
            en: "Owner of the workspace with every permission",
            de: "Inhaber des Arbeitsbereichs mit allen Berechtigungen",
        },
        icon: "fa-crown",
        role_type: RoleType::Normal,
        granted: &[
            key::TASKS_CREATE_TAGS,
            key::PROJECTS_EDIT,
            key::PROJECTS_MANAGE_COMPONENTS,
            key::PROJECTS_MANAGE_DOCUMENTATION,
            key::PROJECTS_MANAGE_MANUAL_POSITIONS,
            key::PROJECTS_VIEW_ALL,
            key::PROJECT_COMPONENTS_LIBRARY_EDIT,
            key::PRODUCT_CATALOG_EDIT,
            key::INVOICES_MANAGE,
            key::WS_SETTINGS_MANAGE_SETTINGS,
            key::WS_SETTINGS_MANAGE_ROLES,
            key::WS_SETTINGS_MANAGE_TASK_SETTINGS,
            key::PUBLIC_API_ALLOW_IMPOSTER_MODE,
        ],
    },
    BaseRole {
        id: CEO,
        name: Text { en: "CEO", de: "Geschäftsführung" },
        description: Text {
            en: "Runs the business: everything except acting as another user through the API",
            de: "Führt das Unternehmen: alles außer dem Handeln als anderer Benutzer über die API",
        },
        icon: "fa-briefcase",
        role_type: RoleType::Normal,
        granted: &[
            key::TASKS_CREATE_TAGS,
            key::PROJECTS_EDIT,
            key::PROJECTS_MANAGE_COMPONENTS,
            key::PROJECTS_MANAGE_DOCUMENTATION,
            key::PROJECTS_MANAGE_MANUAL_POSITIONS,
            key::PROJECTS_VIEW_ALL,
            key::PROJECT_COMPONENTS_LIBRARY_EDIT,
            key::PRODUCT_CATALOG_EDIT,
            key::INVOICES_MANAGE,
            key::WS_SETTINGS_MANAGE_SETTINGS,
            key::WS_SETTINGS_MANAGE_ROLES,
            key::WS_SETTINGS_MANAGE_TASK_SETTINGS,
        ],
    },
    BaseRole {
        id: TEAM_LEADER,
        name: Text { en: "Team Leader", de: "Teamleitung" },
        description: Text {
            en: "Leads projects and their teams; no billing or workspace settings",
            de: "Leitet Projekte und ihre Teams; keine Abrechnung und keine Arbeitsbereich-Einstellungen",
        },
        icon: "fa-users",
        role_type: RoleType::Normal,
        granted: PROJECT_WORK,
    },
    BaseRole {
        id: STAFF,
        name: Text { en: "Staff", de: "Mitarbeiter" },
        description: Text {
            en: "Works on tasks and project documentation",
            de: "Arbeitet an Aufgaben und Projektdokumentation",
        },
        icon: "fa-user",
        role_type: RoleType::Normal,
        granted: &[key::TASKS_CREATE_TAGS, key::PROJECTS_MANAGE_DOCUMENTATION],
    },
    BaseRole {
        id: GUEST,
        name: Text { en: "Guest", de: "Gast" },
        description: Text { en: "External user with read-only access", de: "Externer Benutzer mit Lesezugriff" },
        icon: "fa-user-secret",
        role_type: RoleType::Guest,
        granted: &[],
    },
];

pub fn base_role(id: &str) -> Option<&'static BaseRole> {
    BASE_ROLES.iter().find(|r| r.id == id)
}

/// A workspace's own role, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomRole {
    pub id: String,
    pub name: String,
    pub description: String,
    pub icon: String,
    #[serde(rename = "type")]
    pub role_type: RoleType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    pub raw_permissions: PermissionMap,
    pub created_at: String,
    pub created_by: Uuid,
    pub edited_at: String,
    /// Optimistic-concurrency counter; bumped by every change and by every new reference
    /// (a child role or a user), so a delete conditioned on it cannot orphan anything.
    pub version: i64,
}

impl workapi_store::entity::Entity for CustomRole {
    const TYPE: &'static str = "Role";
    const PREFIX: &'static str = WsKeys::ROLE_PREFIX;
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> workapi_store::Key {
        keys.root(format!("{}{}", Self::PREFIX, self.id))
    }
}

/// Custom role ids carry their workspace (`<workspace id>_<32 hex>`); their shape is checked
/// where their keys are built.
pub use workapi_store::keys::{is_custom_role_id_of, new_custom_role_id};

/// A base or a custom role.
#[derive(Debug, Clone, Copy)]
pub enum RoleRef<'a> {
    Base(&'static BaseRole),
    Custom(&'a CustomRole),
}

impl<'a> RoleRef<'a> {
    pub fn id(&self) -> &'a str {
        match self {
            RoleRef::Base(r) => r.id,
            RoleRef::Custom(r) => &r.id,
        }
    }

    pub fn role_type(&self) -> RoleType {
        match self {
            RoleRef::Base(r) => r.role_type,
            RoleRef::Custom(r) => r.role_type,
        }
    }

    fn parent_id(&self) -> Option<&'a str> {
        match self {
            RoleRef::Base(_) => None,
            RoleRef::Custom(r) => r.parent_id.as_deref(),
        }
    }

    /// The entries stored on this role: a base role states every catalog key.
    pub fn raw(&self) -> PermissionMap {
        match self {
            RoleRef::Base(r) => catalog::keys().map(|k| (k.to_owned(), r.granted.contains(&k))).collect(),
            RoleRef::Custom(r) => r.raw_permissions.clone(),
        }
    }
}

/// Why a parent chain cannot be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    #[error("role {0} does not exist")]
    Unknown(String),
    #[error("the parent chain of role {0} is circular")]
    Circular(String),
    #[error("the parent chain is longer than {MAX_DEPTH} roles")]
    TooDeep,
}

/// A role's three permission maps (spec §2.1).
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub permissions: PermissionMap,
    pub raw: PermissionMap,
    pub effective: PermissionMap,
}

/// The roles of one workspace: the base roles plus its custom roles.
#[derive(Debug, Clone, Default)]
pub struct Roles {
    custom: HashMap<String, CustomRole>,
}

impl Roles {
    pub fn new(custom: impl IntoIterator<Item = CustomRole>) -> Self {
        Roles { custom: custom.into_iter().map(|r| (r.id.clone(), r)).collect() }
    }

    /// All custom roles of a workspace in one query (a workspace has few roles).
    pub async fn load(store: &dyn Store, keys: WsKeys) -> StoreResult<Self> {
        Self::load_from(store, Query::table(keys.root_pk()).begins_with(WsKeys::ROLE_PREFIX)).await
    }

    /// [`Roles::load`] eventually consistent: for authenticating a request (a role's change
    /// reaches requests within about a second), never for a role's read-modify-write.
    pub async fn load_eventually(store: &dyn Store, keys: WsKeys) -> StoreResult<Self> {
        let query = Query::table(keys.root_pk()).begins_with(WsKeys::ROLE_PREFIX).eventually_consistent();
        Self::load_from(store, query).await
    }

    async fn load_from(store: &dyn Store, query: Query) -> StoreResult<Self> {
        let items = query_all(store, query).await?;
        Ok(Roles::new(items.into_iter().map(from_item).collect::<StoreResult<Vec<CustomRole>>>()?))
    }

    pub fn get(&self, id: &str) -> Option<RoleRef<'_>> {
        base_role(id).map(RoleRef::Base).or_else(|| self.custom.get(id).map(RoleRef::Custom))
    }

    pub fn custom(&self, id: &str) -> Option<&CustomRole> {
        self.custom.get(id)
    }

    /// Custom roles ordered by creation, then id.
    pub fn custom_roles(&self) -> Vec<&CustomRole> {
        let mut all: Vec<_> = self.custom.values().collect();
        all.sort_by(|a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
        all
    }

    /// Roles whose parent is `id`.
    pub fn children_of(&self, id: &str) -> Vec<&CustomRole> {
        self.custom.values().filter(|r| r.parent_id.as_deref() == Some(id)).collect()
    }

    /// Levels of custom roles below `id` (0 for a leaf), so a new parent can be refused when
    /// it would push a descendant past [`MAX_DEPTH`]. Stops counting at the bound, which also
    /// ends the walk on a corrupt cycle.
    pub fn descendant_depth(&self, id: &str) -> usize {
        let mut depth = 0;
        let mut level = vec![id.to_owned()];
        while depth < MAX_DEPTH {
            let next: Vec<String> =
                level.iter().flat_map(|parent| self.children_of(parent)).map(|r| r.id.clone()).collect();
            if next.is_empty() {
                break;
            }
            depth += 1;
            level = next;
        }
        depth
    }

    /// The role and its ancestors, nearest first.
    pub fn lineage(&self, id: &str) -> Result<Vec<RoleRef<'_>>, ChainError> {
        let mut chain = Vec::new();
        let mut seen = HashSet::new();
        let mut next = Some(id);
        while let Some(id) = next {
            if !seen.insert(id) {
                return Err(ChainError::Circular(id.to_owned()));
            }
            if chain.len() == MAX_DEPTH {
                return Err(ChainError::TooDeep);
            }
            let role = self.get(id).ok_or_else(|| ChainError::Unknown(id.to_owned()))?;
            next = role.parent_id();
            chain.push(role);
        }
        Ok(chain)
    }

    /// The three maps of a role, computed with its own fields replaced by a draft (what a
    /// write would produce), so writes validate exactly what reads will show.
    pub fn resolve_draft(
        &self,
        role_type: RoleType,
        parent_id: Option<&str>,
        raw: &PermissionMap,
    ) -> Result<Resolved, ChainError> {
        let ancestors = match parent_id {
            Some(parent) => self.lineage(parent)?,
            None => Vec::new(),
        };
        if ancestors.len() >= MAX_DEPTH {
            return Err(ChainError::TooDeep);
        }
        let mut permissions = PermissionMap::new();
        for ancestor in ancestors.iter().rev() {
            permissions.extend(ancestor.raw());
        }
        permissions.extend(raw.iter().map(|(k, v)| (k.clone(), *v)));
        let guest = role_type == RoleType::Guest;
        let effective = catalog::keys()
            .map(|k| (k.to_owned(), permissions.get(k).copied().unwrap_or(false) && catalog::allowed_for(k, guest)))
            .collect();
        Ok(Resolved { permissions, raw: raw.clone(), effective })
    }

    pub fn resolve(&self, id: &str) -> Result<Resolved, ChainError> {
        match self.get(id).ok_or_else(|| ChainError::Unknown(id.to_owned()))? {
            RoleRef::Base(base) => {
                let raw = RoleRef::Base(base).raw();
                Ok(Resolved { permissions: raw.clone(), effective: raw.clone(), raw })
            }
            RoleRef::Custom(role) => {
                // Catch a cycle through the role itself, which resolve_draft cannot see.
                self.lineage(id)?;
                self.resolve_draft(role.role_type, role.parent_id.as_deref(), &role.raw_permissions)
            }
        }
    }

    /// Checks a proposed parent for `role_id` (None when the role is new) and returns the
    /// custom roles of the parent's chain, whose versions a write must condition on so that
    /// two concurrent parent changes cannot close a cycle.
    pub fn check_parent(&self, role_id: Option<&str>, parent_id: &str) -> Result<Vec<&CustomRole>, ParentError> {
        if role_id == Some(parent_id) {
            return Err(ParentError::Itself);
        }
        let chain = self.lineage(parent_id).map_err(|e| match e {
            ChainError::Unknown(_) => ParentError::Unknown,
            other => ParentError::Chain(other),
        })?;
        if let Some(id) = role_id
            && chain.iter().any(|r| r.id() == id)
        {
            return Err(ParentError::Descendant);
        }
        if chain.len() >= MAX_DEPTH {
            return Err(ParentError::Chain(ChainError::TooDeep));
        }
        Ok(chain
            .into_iter()
            .filter_map(|r| match r {
                RoleRef::Custom(c) => Some(c),
                RoleRef::Base(_) => None,
            })
            .collect())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParentError {
    #[error("a role cannot be its own parent")]
    Itself,
    #[error("the parent role does not exist")]
    Unknown,
    #[error("the parent is a descendant of this role: a child cannot become the parent (circular dependency)")]
    Descendant,
    #[error("{0}")]
    Chain(ChainError),
}

/// The keys of a map a role of the type may not state: unknown keys, and for guest roles
/// any guest-disallowed key set to true (an explicit false is harmless).
pub fn invalid_entries(raw: &PermissionMap, role_type: RoleType) -> Vec<String> {
    let guest = role_type == RoleType::Guest;
    raw.iter()
        .filter_map(|(key, allow)| match catalog::find(key) {
            None => Some(format!("{key} is not a permission key")),
            Some(p) if guest && *allow && !p.guest_allowed => Some(format!("{key} cannot be granted to a guest role")),
            Some(_) => None,
        })
        .collect()
}
