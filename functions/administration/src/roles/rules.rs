//! Role rules (spec §2.1, §4.1) as plain functions: reading a request into a [`Draft`],
//! checking a draft against the workspace's roles, and shaping the response.

use serde::Serialize;
use serde_json::{Map, Value};
use shared::error::FieldErrors;
use shared::permissions::roles::{
    ChainError, CustomRole, MAX_DEPTH, ParentError, PermissionMap, Resolved, RoleRef, invalid_entries,
};
use shared::permissions::{RoleType, Roles, catalog};
use shared::validate::Fields;
use shared::{ApiError, ApiResult};
use uuid::Uuid;

pub const MAX_NAME_CHARS: usize = 100;
pub const MAX_DESCRIPTION_CHARS: usize = 400;
pub const MAX_ICON_CHARS: usize = 64;

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

/// An icon-set class name (`fa-star`, `fa-solid fa-star`) or an emoji shortcode (`:star:`):
/// letters, digits, spaces and `-_:+`, so it can be written into any client's markup safely.
fn icon(fields: &mut Fields, value: Option<String>) -> Option<String> {
    let icon = value?;
    let valid = !icon.is_empty() && icon.chars().all(|c| c.is_ascii_alphanumeric() || " -_:+".contains(c));
    if valid {
        Some(icon)
    } else {
        fields
            .error("icon", "icon must be an icon class name or an emoji shortcode (letters, digits, spaces, - _ : +)");
        None
    }
}

fn role_type(text: Option<String>) -> Option<RoleType> {
    text.as_deref().and_then(RoleType::parse)
}

/// Create (`current` None) and PUT: the whole role. Omitted `description` is empty, omitted
/// `parentId` means no parent; omitted `permissions` keeps the stored map on PUT (it has its
/// own endpoints, and a rename must not wipe it) and is empty on create.
pub fn full(body: &Map<String, Value>, current: Option<&CustomRole>) -> ApiResult<Draft> {
    let mut fields = Fields::new(body);
    let name = fields.required_text("name", MAX_NAME_CHARS);
    let icon_text = fields.required_text("icon", MAX_ICON_CHARS);
    let icon = icon(&mut fields, icon_text);
    let role_type = role_type(fields.required_choice("type", RoleType::ALL));
    let description = fields.optional_text("description", MAX_DESCRIPTION_CHARS).unwrap_or_default();
    let parent_id = fields.optional_nullable_text("parentId", 200).flatten();
    let raw = fields.optional_bool_map("permissions");
    fields.finish()?;
    Ok(Draft {
        name: name.expect("validated"),
        description,
        icon: icon.expect("validated"),
        role_type: role_type.expect("validated"),
        parent_id,
        raw: raw.or_else(|| current.map(|c| c.raw_permissions.clone())).unwrap_or_default(),
    })
}

/// PATCH: the fields present replace the stored ones; `parentId: null` removes the parent.
/// Permissions have their own endpoints and are refused here.
pub fn partial(body: &Map<String, Value>, current: &CustomRole) -> ApiResult<Draft> {
    let mut fields = Fields::new(body);
    if fields.has("permissions") {
        fields.error(
            "permissions",
            "permissions cannot be changed here; use PUT /administration/roles/{id}/permissions or PATCH /administration/roles/{id}/permissions/{permissionKey}",
        );
    }
    let mut draft = Draft::of(current);
    if fields.has("name") {
        draft.name = fields.required_text("name", MAX_NAME_CHARS).unwrap_or_default();
    }
    if fields.has("icon") {
        let text = fields.required_text("icon", MAX_ICON_CHARS);
        draft.icon = icon(&mut fields, text).unwrap_or_default();
    }
    if fields.has("type") {
        draft.role_type = role_type(fields.required_choice("type", RoleType::ALL)).unwrap_or(draft.role_type);
    }
    if let Some(description) = fields.optional_text("description", MAX_DESCRIPTION_CHARS) {
        draft.description = description;
    }
    if let Some(parent) = fields.optional_nullable_text("parentId", 200) {
        draft.parent_id = parent;
    }
    fields.finish()?;
    Ok(draft)
}

/// `PUT /administration/roles/{id}/permissions`: the complete map, given either as the body
/// itself or as `{"permissions": {…}}`.
pub fn permission_map(body: &Map<String, Value>) -> ApiResult<PermissionMap> {
    let wrapped;
    let body = match body.get("permissions") {
        Some(Value::Object(_)) if body.len() == 1 => body,
        _ => {
            wrapped = Map::from_iter([("permissions".to_owned(), Value::Object(body.clone()))]);
            &wrapped
        }
    };
    let mut fields = Fields::new(body);
    let map = fields.optional_bool_map("permissions");
    fields.finish()?;
    Ok(map.unwrap_or_default())
}

/// `PATCH …/permissions/{permissionKey}`: `allow` true or false sets an explicit entry; null
/// removes it, so the key is inherited again.
pub fn set_permission(body: &Map<String, Value>, raw: &mut PermissionMap, key: &str) -> ApiResult<()> {
    if catalog::find(key).is_none() {
        return Err(ApiError::field("permissionKey", format!("{key} is not a permission key")));
    }
    match body.get("allow") {
        Some(Value::Bool(allow)) => {
            raw.insert(key.to_owned(), *allow);
        }
        Some(Value::Null) => {
            raw.remove(key);
        }
        _ => return Err(ApiError::field("allow", "allow is required: true, false, or null to inherit")),
    }
    Ok(())
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

/// The role as the API returns it (spec §2.1).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
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
    use shared::permissions::{STAFF, key};

    fn body(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
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
        let err = full(&body(json!({"description": "x".repeat(401)})), None).unwrap_err();
        assert_eq!(field_errors(err), ["description", "icon", "name", "type"]);
        let ok =
            full(&body(json!({"name": "QA", "icon": ":bug:", "type": "guest", "description": "x".repeat(400)})), None)
                .unwrap();
        assert_eq!(ok.role_type, RoleType::Guest);
        assert_eq!(ok.description.chars().count(), 400);
        let bad = full(&body(json!({"name": "QA", "icon": "<svg>", "type": "admin"})), None).unwrap_err();
        assert_eq!(field_errors(bad), ["icon", "type"]);
    }

    #[test]
    fn put_keeps_stored_permissions_when_omitted_and_replaces_them_when_given() {
        let current = stored("r", Some(STAFF));
        let kept = full(&body(json!({"name": "N", "icon": "fa-x", "type": "normal"})), Some(&current)).unwrap();
        assert_eq!(kept.raw, current.raw_permissions);
        assert_eq!(kept.parent_id, None, "an omitted parent is no parent");
        assert_eq!(kept.description, "");
        let replaced = full(
            &body(json!({"name": "N", "icon": "fa-x", "type": "normal", "permissions": {key::PROJECTS_EDIT: false}})),
            Some(&current),
        )
        .unwrap();
        assert_eq!(replaced.raw, [(key::PROJECTS_EDIT.to_owned(), false)].into());
    }

    #[test]
    fn patch_keeps_what_it_omits_and_refuses_permissions() {
        let current = stored("r", Some(STAFF));
        let draft = partial(&body(json!({"name": "Renamed"})), &current).unwrap();
        assert_eq!(draft.name, "Renamed");
        assert_eq!((draft.icon.as_str(), draft.parent_id.as_deref()), ("fa-star", Some(STAFF)));
        assert_eq!(partial(&body(json!({"parentId": null})), &current).unwrap().parent_id, None);
        let err = partial(&body(json!({"permissions": {}, "name": ""})), &current).unwrap_err();
        assert_eq!(field_errors(err), ["name", "permissions"]);
    }

    #[test]
    fn permission_maps_come_bare_or_wrapped() {
        let bare = permission_map(&body(json!({key::PROJECTS_EDIT: true}))).unwrap();
        let wrapped = permission_map(&body(json!({"permissions": {key::PROJECTS_EDIT: true}}))).unwrap();
        assert_eq!(bare, wrapped);
        assert!(permission_map(&body(json!({key::PROJECTS_EDIT: "yes"}))).is_err());
    }

    #[test]
    fn a_single_permission_is_set_or_returned_to_inheritance() {
        let mut raw = PermissionMap::new();
        set_permission(&body(json!({"allow": false})), &mut raw, key::PROJECTS_EDIT).unwrap();
        assert!(!raw[key::PROJECTS_EDIT]);
        set_permission(&body(json!({"allow": null})), &mut raw, key::PROJECTS_EDIT).unwrap();
        assert!(raw.is_empty());
        assert!(set_permission(&body(json!({})), &mut raw, key::PROJECTS_EDIT).is_err());
        assert!(set_permission(&body(json!({"allow": true})), &mut raw, "projects.fly").is_err());
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

    #[test]
    fn base_roles_are_localized_and_read_only() {
        let roles = Roles::default();
        let de = view(&roles, shared::permissions::TEAM_LEADER, "de").unwrap();
        assert_eq!((de.name.as_str(), de.read_only), ("Teamleitung", true));
        assert!(de.created_at.is_none() && de.parent_id.is_none());
        let json = serde_json::to_value(&de).unwrap();
        assert!(json.get("createdAt").is_none() && json["type"] == "normal");
        assert_eq!(view(&roles, shared::permissions::TEAM_LEADER, "en").unwrap().name, "Team Leader");
    }
}
