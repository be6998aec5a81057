//! Role rules (spec §2.1, §4.1) as plain functions: reading a request into a [`Draft`],
//! checking a draft against the workspace's roles, and shaping the response.

use serde::Serialize;
use uuid::Uuid;
use workapi_domain::permissions::catalog::{self, PermissionEntries};
use workapi_domain::permissions::roles::{
    ChainError, CustomRole, MAX_DEPTH, ParentError, PermissionMap, Resolved, RoleId, RoleRef, invalid_entries,
};
use workapi_domain::permissions::{RoleType, Roles};
use workapi_kit::error::FieldErrors;
use workapi_kit::input::{At, Errors, Field, Input, MultilineText, Patch, SchemaRef, Text};
use workapi_kit::{ApiError, ApiResult};

pub const MAX_NAME_CHARS: usize = 100;
pub const MAX_DESCRIPTION_CHARS: usize = 400;
pub const MAX_ICON_CHARS: usize = 64;

/// An icon-set class name (`fa-star`, `fa-solid fa-star`) or an emoji shortcode (`:star:`):
/// letters, digits, spaces and `-_:+`, so it can be written into any client's markup safely.
#[derive(Debug, Clone, PartialEq)]
pub struct Icon(String);

impl Field for Icon {
    fn read(value: &serde_json::Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let text = Text::<1, MAX_ICON_CHARS>::read(value, at, errors)?.into_string();
        if text.chars().all(|c| c.is_ascii_alphanumeric() || " -_:+".contains(c)) {
            Some(Icon(text))
        } else {
            let name = at.name();
            errors.add(
                at,
                format!("{name} must be an icon class name or an emoji shortcode (letters, digits, spaces, - _ : +)"),
            );
            None
        }
    }

    fn schema() -> SchemaRef {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .min_length(Some(1))
            .max_length(Some(MAX_ICON_CHARS))
            .pattern(Some(r"^[A-Za-z0-9 _:+-]*[A-Za-z0-9_:+-][A-Za-z0-9 _:+-]*$"))
            .examples(["fa-star"])
            .into()
    }
}

/// A custom role: create and full replacement.
#[derive(Input)]
#[input(example = serde_json::json!({"name": "Reviewers", "icon": "fa-eye", "type": "normal", "description": "Review the work of others", "parentId": "_staff", "permissions": {"Invoices.manage": false}}))]
pub struct RoleBody {
    name: Text<1, MAX_NAME_CHARS>,
    /// An icon-set class name or an emoji shortcode
    icon: Icon,
    r#type: RoleType,
    /// May be empty; omitted means empty
    description: Option<MultilineText<0, MAX_DESCRIPTION_CHARS>>,
    /// A base role or a custom role of the workspace; omitted or null means no parent
    parent_id: Patch<RoleId>,
    /// Explicit entries; omitted keeps the stored map (empty on create)
    permissions: Option<PermissionEntries>,
}

/// A partial update of a custom role: every field optional. Permissions have their own
/// endpoints.
#[derive(Input)]
#[input(example = serde_json::json!({"name": "Senior reviewers", "parentId": null}))]
pub struct RolePatchBody {
    name: Option<Text<1, MAX_NAME_CHARS>>,
    description: Option<MultilineText<0, MAX_DESCRIPTION_CHARS>>,
    icon: Option<Icon>,
    /// null removes the parent
    parent_id: Patch<RoleId>,
    r#type: Option<RoleType>,
    #[input(hidden, rename = "permissions")]
    _permissions: Option<NotHere>,
}

/// A field a body may not carry, with the message saying where it belongs.
pub struct NotHere;

impl Field for NotHere {
    fn read(_: &serde_json::Value, at: &At, errors: &mut Errors) -> Option<Self> {
        errors.add(
            at,
            "permissions cannot be changed here; use PUT /administration/roles/{id}/permissions or PATCH /administration/roles/{id}/permissions/{permissionKey}",
        );
        None
    }

    fn schema() -> SchemaRef {
        utoipa::openapi::schema::ObjectBuilder::new().into()
    }
}

/// One permission: true grants, false revokes (both override inheritance), null returns the
/// key to inheritance.
#[derive(Input)]
#[input(example = serde_json::json!({"allow": true}))]
pub struct AllowBody {
    pub allow: workapi_kit::input::Nullable<bool>,
}

/// The editable fields of a custom role: what a write would store.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub name: String,
    pub description: String,
    pub icon: String,
    pub role_type: RoleType,
    pub parent_id: Option<String>,
    pub raw: PermissionMap,
}

impl Draft {
    pub fn of(role: &CustomRole) -> Self {
        Draft {
            name: role.name.clone(),
            description: role.description.clone(),
            icon: role.icon.clone(),
            role_type: role.role_type,
            parent_id: role.parent_id.clone(),
            raw: role.raw_permissions.clone(),
        }
    }
}

/// Create (`current` None) and PUT: the whole role. Omitted `description` is empty, omitted
/// `parentId` means no parent; omitted `permissions` keeps the stored map on PUT (it has its
/// own endpoints, and a rename must not wipe it) and is empty on create.
pub fn full(body: &RoleBody, current: Option<&CustomRole>) -> Draft {
    Draft {
        name: body.name.to_string(),
        description: body.description.as_ref().map(|d| d.to_string()).unwrap_or_default(),
        icon: body.icon.0.clone(),
        role_type: body.r#type,
        parent_id: body.parent_id.clone().into_option().map(RoleId::into_string),
        raw: match &body.permissions {
            Some(entries) => entries.0.clone(),
            None => current.map(|c| c.raw_permissions.clone()).unwrap_or_default(),
        },
    }
}

/// The request field blamed when a full replacement holds permissions its type forbids.
pub fn full_blame(body: &RoleBody) -> &'static str {
    if body.permissions.is_some() { "permissions" } else { "type" }
}

/// PATCH: the fields present replace the stored ones; `parentId: null` removes the parent.
pub fn partial(body: &RolePatchBody, current: &CustomRole) -> Draft {
    let mut draft = Draft::of(current);
    if let Some(name) = &body.name {
        draft.name = name.to_string();
    }
    if let Some(icon) = &body.icon {
        draft.icon = icon.0.clone();
    }
    if let Some(role_type) = body.r#type {
        draft.role_type = role_type;
    }
    if let Some(description) = &body.description {
        draft.description = description.to_string();
    }
    draft.parent_id = match &body.parent_id {
        Patch::Absent => draft.parent_id,
        Patch::Null => None,
        Patch::Value(parent) => Some(parent.as_str().to_owned()),
    };
    draft
}

/// `PUT /administration/roles/{id}/permissions`: the complete map, given either as the body
/// itself or as `{"permissions": {…}}`.
pub fn permission_map(body: serde_json::Value) -> ApiResult<PermissionMap> {
    let map = match body {
        serde_json::Value::Object(mut map)
            if map.len() == 1 && map.get("permissions").is_some_and(|v| v.is_object()) =>
        {
            map.remove("permissions").unwrap_or_default()
        }
        other => other,
    };
    let mut errors = Errors::default();
    let entries = PermissionEntries::read(&map, &At::root().child("permissions"), &mut errors);
    Ok(errors.finish(entries)?.0)
}

/// `PATCH …/permissions/{permissionKey}`: `allow` true or false sets an explicit entry; null
/// removes it, so the key is inherited again.
pub fn set_permission(raw: &mut PermissionMap, key: catalog::PermissionKey, allow: Option<bool>) {
    match allow {
        Some(allow) => {
            raw.insert(key.as_str().to_owned(), allow);
        }
        None => {
            raw.remove(key.as_str());
        }
    }
}

/// What a checked draft needs written: its resolved maps, and the custom roles of its parent
/// chain, whose versions the write bumps (see `store::write`).
pub struct Checked<'r> {
    pub resolved: Resolved,
    pub chain: Vec<&'r CustomRole>,
}

/// Checks a draft for role `role_id` (None when new) against the workspace's roles.
/// `permissions_field` names the request field blamed for permissions the role type forbids
/// (`type` when only the type changed).
pub fn check<'r>(
    roles: &'r Roles,
    role_id: Option<&str>,
    draft: &Draft,
    permissions_field: &str,
) -> ApiResult<Checked<'r>> {
    let mut errors = FieldErrors::new();
    let invalid = invalid_entries(&draft.raw, draft.role_type);
    if !invalid.is_empty() {
        errors.insert(permissions_field.to_owned(), invalid);
    }
    let mut chain = Vec::new();
    if let Some(parent) = &draft.parent_id {
        match roles.check_parent(role_id, parent) {
            Ok(found) => {
                // The parent's own chain, this role, and everything below it must fit the bound.
                let below = role_id.map_or(0, |id| roles.descendant_depth(id));
                let ancestors = roles.lineage(parent).map(|l| l.len()).unwrap_or(MAX_DEPTH);
                if ancestors + 1 + below > MAX_DEPTH {
                    errors.insert("parentId".into(), vec![format!("a role chain may hold at most {MAX_DEPTH} roles")]);
                }
                chain = found;
            }
            Err(e) => {
                let message = match e {
                    ParentError::Unknown => format!("parent role {parent} does not exist"),
                    other => other.to_string(),
                };
                errors.insert("parentId".into(), vec![message]);
            }
        }
    }
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    let resolved = roles
        .resolve_draft(draft.role_type, draft.parent_id.as_deref(), &draft.raw)
        .map_err(|e| ApiError::field("parentId", e.to_string()))?;
    Ok(Checked { resolved, chain })
}

/// The no-escalation rule (docs/permissions.md, "Changing roles"), checked on every write
/// against the roles as they are when the write happens. `actor_role` is the role whose
/// permissions authorize the request (the token owner's, also in imposter mode); `current` is
/// the stored role (None on create) and `after` what the draft resolves to.
///
/// - Nobody but Root gives a role a permission it does not effectively hold itself: not as an
///   explicit entry, and not through a new parent, a type change or a removed `false`.
/// - Nobody but Root changes the role it holds or any ancestor of it, except to remove
///   permissions (set entries to false or drop `true` entries).
pub fn check_escalation(
    roles: &Roles,
    actor_role: &str,
    current: Option<&CustomRole>,
    draft: &Draft,
    after: &Resolved,
) -> ApiResult<()> {
    if actor_role == workapi_domain::permissions::ROOT {
        return Ok(());
    }
    let before = match current {
        Some(role) => roles.resolve(&role.id).map(|r| r.effective).unwrap_or_default(),
        None => PermissionMap::new(),
    };
    let held = roles.resolve(actor_role).map(|r| r.effective).unwrap_or_default();
    let is_true = |map: &PermissionMap, k: &str| map.get(k).copied().unwrap_or(false);
    let stored_raw = current.map(|c| c.raw_permissions.clone()).unwrap_or_default();
    // Keys the role gains in effect, and keys it is newly given explicitly.
    let gained: Vec<&str> = catalog::keys()
        .filter(|k| {
            (is_true(&after.effective, k) && !is_true(&before, k))
                || (is_true(&draft.raw, k) && !is_true(&stored_raw, k))
        })
        .collect();
    if let Some(key) = gained.iter().find(|k| !is_true(&held, k)) {
        return Err(ApiError::forbidden(format!(
            "You cannot grant {key}: your own role does not hold it, and a role can only be given permissions its editor holds"
        )));
    }
    let Some(current) = current else { return Ok(()) };
    let own_chain = roles.lineage(actor_role).map(|chain| chain.iter().any(|r| r.id() == current.id)).unwrap_or(false);
    if !own_chain {
        return Ok(());
    }
    let what =
        if current.id == actor_role { "the role you hold" } else { "a role that the role you hold inherits from" };
    if let Some(key) = gained.first() {
        return Err(ApiError::forbidden(format!("You cannot grant {key} to {what}: it may only lose permissions")));
    }
    if (Draft { raw: current.raw_permissions.clone(), ..draft.clone() }) != Draft::of(current) {
        return Err(ApiError::forbidden(format!(
            "You cannot change {what} except to remove permissions; ask someone whose role is above it"
        )));
    }
    Ok(())
}

/// The role as the API returns it (spec §2.1).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({
    "id": "0fb3f555-64a1-46ed-ae2b-6815ce6f1050_e5b8f62b6b63426d8d757a718a02d2f2",
    "name": "Reviewers", "description": "Review the work of others", "icon": "fa-eye", "type": "normal",
    "parentId": "_staff",
    "permissions": {
        "Invoices.manage": false, "ProjectComponentsLibrary.edit": false, "Projects.edit": false,
        "Projects.manageComponents": false, "Projects.manageDocumentation": true,
        "Projects.manageManualPositions": false, "PublicApi.allowImposterMode": false, "Tasks.createTags": true,
        "WsSettings.manageRoles": false, "WsSettings.manageSettings": false, "WsSettings.manageTaskSettings": false
    },
    "rawPermissions": {"Invoices.manage": false},
    "effectivePermissions": {
        "Invoices.manage": false, "ProjectComponentsLibrary.edit": false, "Projects.edit": false,
        "Projects.manageComponents": false, "Projects.manageDocumentation": true,
        "Projects.manageManualPositions": false, "PublicApi.allowImposterMode": false, "Tasks.createTags": true,
        "WsSettings.manageRoles": false, "WsSettings.manageSettings": false, "WsSettings.manageTaskSettings": false
    },
    "readOnly": false,
    "createdAt": "2026-11-24T10:00:00.000Z", "createdBy": "95df1b90-ea25-44f5-b0e7-107ebdc7b8b0",
    "editedAt": "2026-11-24T10:00:00.000Z"
})))]
pub struct RoleView {
    /// Base roles: `_root`, `_ceo`, `_team_leader`, `_staff`, `_guest`; custom roles:
    /// `<workspace id>_<32 hex>`
    pub id: String,
    /// Localized to the caller's language for base roles
    pub name: String,
    pub description: String,
    pub icon: String,
    #[serde(rename = "type")]
    pub role_type: RoleType,
    /// Absent when the role has no parent
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub parent_id: Option<String>,
    /// Explicit and inherited entries (true allowed, false disallowed; missing: inherited, denied)
    #[schema(value_type = catalog::PermissionMapSchema)]
    pub permissions: PermissionMap,
    /// Entries stored on this role before inheritance
    #[schema(value_type = catalog::PermissionMapSchema)]
    pub raw_permissions: PermissionMap,
    /// Every catalog key after resolving the parent chain and the guest restrictions
    #[schema(value_type = catalog::PermissionMapSchema)]
    pub effective_permissions: PermissionMap,
    /// True for the built-in base roles
    pub read_only: bool,
    /// When the custom role was created; absent for base roles
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime, nullable = false)]
    pub created_at: Option<String>,
    /// Who created the custom role; absent for base roles
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub created_by: Option<Uuid>,
    /// When the custom role was last changed; absent for base roles
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime, nullable = false)]
    pub edited_at: Option<String>,
}

/// The view of one role; `language` localizes base roles.
pub fn view(roles: &Roles, id: &str, language: &str) -> Result<RoleView, ChainError> {
    let role = roles.get(id).ok_or_else(|| ChainError::Unknown(id.to_owned()))?;
    let Resolved { permissions, raw, effective } = roles.resolve(id)?;
    Ok(match role {
        RoleRef::Base(base) => RoleView {
            id: base.id.to_owned(),
            name: base.name.get(language).to_owned(),
            description: base.description.get(language).to_owned(),
            icon: base.icon.to_owned(),
            role_type: base.role_type,
            parent_id: None,
            permissions,
            raw_permissions: raw,
            effective_permissions: effective,
            read_only: true,
            created_at: None,
            created_by: None,
            edited_at: None,
        },
        RoleRef::Custom(custom) => RoleView {
            id: custom.id.clone(),
            name: custom.name.clone(),
            description: custom.description.clone(),
            icon: custom.icon.clone(),
            role_type: custom.role_type,
            parent_id: custom.parent_id.clone(),
            permissions,
            raw_permissions: raw,
            effective_permissions: effective,
            read_only: false,
            created_at: Some(custom.created_at.clone()),
            created_by: Some(custom.created_by),
            edited_at: Some(custom.edited_at.clone()),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use workapi_domain::permissions::{STAFF, key};

    fn role(v: serde_json::Value) -> ApiResult<RoleBody> {
        workapi_kit::input::parse(&v)
    }

    fn patch(v: serde_json::Value) -> ApiResult<RolePatchBody> {
        workapi_kit::input::parse(&v)
    }

    fn stored(id: &str, parent: Option<&str>) -> CustomRole {
        CustomRole {
            id: id.into(),
            name: "Stored".into(),
            description: "kept".into(),
            icon: "fa-star".into(),
            role_type: RoleType::Normal,
            parent_id: parent.map(str::to_owned),
            raw_permissions: [(key::INVOICES_MANAGE.to_owned(), true)].into(),
            created_at: "2026-01-01T00:00:00.000Z".into(),
            created_by: Uuid::nil(),
            edited_at: "2026-01-01T00:00:00.000Z".into(),
            version: 1,
        }
    }

    fn field_errors(err: ApiError) -> Vec<String> {
        err.errors.unwrap_or_default().into_keys().collect()
    }

    #[test]
    fn put_requires_name_icon_type_and_bounds_the_description() {
        let err = role(json!({"description": "x".repeat(401)})).err().unwrap();
        assert_eq!(field_errors(err), ["description", "icon", "name", "type"]);
        let body = role(json!({"name": "QA", "icon": ":bug:", "type": "guest", "description": "x".repeat(400)}));
        let ok = full(&body.ok().unwrap(), None);
        assert_eq!(ok.role_type, RoleType::Guest);
        assert_eq!(ok.description.chars().count(), 400);
        let bad = role(json!({"name": "QA", "icon": "<svg>", "type": "admin"})).err().unwrap();
        assert_eq!(field_errors(bad), ["icon", "type"]);
    }

    #[test]
    fn put_keeps_stored_permissions_when_omitted_and_replaces_them_when_given() {
        let current = stored("r", Some(STAFF));
        let kept = full(&role(json!({"name": "N", "icon": "fa-x", "type": "normal"})).ok().unwrap(), Some(&current));
        assert_eq!(kept.raw, current.raw_permissions);
        assert_eq!(kept.parent_id, None, "an omitted parent is no parent");
        assert_eq!(kept.description, "");
        let replaced = full(
            &role(json!({"name": "N", "icon": "fa-x", "type": "normal", "permissions": {key::PROJECTS_EDIT: false}}))
                .ok()
                .unwrap(),
            Some(&current),
        );
        assert_eq!(replaced.raw, [(key::PROJECTS_EDIT.to_owned(), false)].into());
    }

    #[test]
    fn patch_keeps_what_it_omits_and_refuses_permissions() {
        let current = stored("r", Some(STAFF));
        let draft = partial(&patch(json!({"name": "Renamed"})).ok().unwrap(), &current);
        assert_eq!(draft.name, "Renamed");
        assert_eq!((draft.icon.as_str(), draft.parent_id.as_deref()), ("fa-star", Some(STAFF)));
        assert_eq!(partial(&patch(json!({"parentId": null})).ok().unwrap(), &current).parent_id, None);
        let err = patch(json!({"permissions": {}, "name": ""})).err().unwrap();
        assert_eq!(field_errors(err), ["name", "permissions"]);
    }

    #[test]
    fn permission_maps_come_bare_or_wrapped() {
        let bare = permission_map(json!({key::PROJECTS_EDIT: true})).unwrap();
        let wrapped = permission_map(json!({"permissions": {key::PROJECTS_EDIT: true}})).unwrap();
        assert_eq!(bare, wrapped);
        assert!(permission_map(json!({key::PROJECTS_EDIT: "yes"})).is_err());
    }

    #[test]
    fn a_single_permission_is_set_or_returned_to_inheritance() {
        let edit: catalog::PermissionKey = serde_json::from_value(json!(key::PROJECTS_EDIT)).unwrap();
        let mut raw = PermissionMap::new();
        let allow = |v| workapi_kit::input::parse::<AllowBody>(&v).map(|b| b.allow.0);
        set_permission(&mut raw, edit, allow(json!({"allow": false})).unwrap());
        assert!(!raw[key::PROJECTS_EDIT]);
        set_permission(&mut raw, edit, allow(json!({"allow": null})).unwrap());
        assert!(raw.is_empty());
        assert!(allow(json!({})).is_err(), "allow is required");
        assert!(serde_json::from_value::<catalog::PermissionKey>(json!("projects.fly")).is_err());
    }

    #[test]
    fn check_rejects_guest_permissions_cycles_and_unknown_parents() {
        let roles = Roles::new([stored("a", Some(STAFF)), stored("b", Some("a"))]);
        let mut draft = Draft::of(roles.custom("a").unwrap());
        draft.role_type = RoleType::Guest;
        let err = check(&roles, Some("a"), &draft, "type").err().unwrap();
        assert_eq!(field_errors(err), ["type"], "Invoices.manage is not for guests");
        let mut draft = Draft::of(roles.custom("a").unwrap());
        draft.parent_id = Some("b".into());
        let err = check(&roles, Some("a"), &draft, "permissions").err().unwrap();
        assert!(err.errors.unwrap()["parentId"][0].contains("child cannot become the parent"));
        draft.parent_id = Some("nope".into());
        assert!(check(&roles, Some("a"), &draft, "permissions").is_err());
        draft.parent_id = Some("a".into());
        let checked = check(&roles, None, &draft, "permissions").ok().unwrap();
        assert_eq!(checked.chain.len(), 1, "a new child bumps its custom parent");
        assert!(checked.resolved.effective[key::TASKS_CREATE_TAGS], "inherited from Staff through a");
    }

    /// The no-escalation rule as a table: who edits, which role, what change, and the key
    /// named in the 403 (None: allowed).
    #[test]
    fn escalation_is_refused_and_removal_allowed() {
        use workapi_domain::permissions::{CEO, ROOT};
        let imposter = key::PUBLIC_API_ALLOW_IMPOSTER_MODE;
        let mut manager = stored("ws_manager", Some(CEO));
        manager.raw_permissions.clear();
        let other = stored("ws_other", None);
        let roles = Roles::new([manager.clone(), other.clone()]);
        let with = |role: &CustomRole, change: &dyn Fn(&mut Draft)| {
            let mut draft = Draft::of(role);
            change(&mut draft);
            draft
        };
        let outcome = |editor: &str, current: Option<&CustomRole>, draft: &Draft| {
            let after = roles.resolve_draft(draft.role_type, draft.parent_id.as_deref(), &draft.raw).unwrap();
            check_escalation(&roles, editor, current, draft, &after).err().map(|e| (e.status.as_u16(), e.message))
        };
        let grant = |k: &'static str| {
            move |d: &mut Draft| {
                d.raw.insert(k.to_owned(), true);
            }
        };
        let refused_naming = |result: Option<(u16, String)>, needle: &str| {
            let (status, message) = result.expect("refused");
            assert_eq!(status, 403);
            assert!(message.contains(needle), "{message}");
        };
        // Granting oneself what one lacks, directly or through a new parent.
        refused_naming(outcome("ws_manager", Some(&manager), &with(&manager, &grant(imposter))), imposter);
        refused_naming(
            outcome("ws_manager", Some(&manager), &with(&manager, &|d| d.parent_id = Some(ROOT.into()))),
            imposter,
        );
        // Renaming one's own role.
        refused_naming(
            outcome("ws_manager", Some(&manager), &with(&manager, &|d| d.name = "Mine".into())),
            "the role you hold",
        );
        // Removing from one's own role.
        assert_eq!(
            outcome(
                "ws_manager",
                Some(&manager),
                &with(&manager, &|d| {
                    d.raw.insert(key::PROJECTS_EDIT.to_owned(), false);
                })
            ),
            None
        );
        // Another role: held keys pass, others not, on create too.
        assert_eq!(outcome("ws_manager", Some(&other), &with(&other, &grant(key::PROJECTS_EDIT))), None);
        refused_naming(outcome("ws_manager", Some(&other), &with(&other, &grant(imposter))), imposter);
        refused_naming(outcome("ws_manager", None, &with(&other, &grant(imposter))), imposter);
        // Root may do anything.
        assert_eq!(outcome(ROOT, Some(&manager), &with(&manager, &|d| d.parent_id = Some(ROOT.into()))), None);
    }

    #[test]
    fn base_roles_are_localized_and_read_only() {
        let roles = Roles::default();
        let de = view(&roles, workapi_domain::permissions::TEAM_LEADER, "de").unwrap();
        assert_eq!((de.name.as_str(), de.read_only), ("Teamleitung", true));
        assert!(de.created_at.is_none() && de.parent_id.is_none());
        let json = serde_json::to_value(&de).unwrap();
        assert!(json.get("createdAt").is_none() && json["type"] == "normal");
        assert_eq!(view(&roles, workapi_domain::permissions::TEAM_LEADER, "en").unwrap().name, "Team Leader");
    }
}
