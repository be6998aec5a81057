use super::catalog::{self, CATALOG, key};
use super::roles::*;
use super::*;
use uuid::Uuid;

fn base(id: &str) -> PermissionSet {
    PermissionSet::from_roles(&Roles::default(), id)
}

fn custom(id: &str, role_type: RoleType, parent: Option<&str>, raw: &[(&str, bool)]) -> CustomRole {
    CustomRole {
        id: id.to_owned(),
        name: id.to_owned(),
        description: String::new(),
        icon: "fa-star".into(),
        role_type,
        parent_id: parent.map(str::to_owned),
        raw_permissions: raw.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
        created_at: "2026-01-01T00:00:00.000Z".into(),
        created_by: Uuid::nil(),
        edited_at: "2026-01-01T00:00:00.000Z".into(),
        version: 1,
    }
}

#[test]
fn base_role_ids_are_underscore_prefixed_and_unique() {
    let mut ids: Vec<_> = BASE_ROLES.iter().map(|r| r.id).collect();
    assert!(ids.iter().all(|id| id.starts_with('_')));
    ids.dedup();
    assert_eq!(ids.len(), 5);
}

#[test]
fn defaults_shrink_from_root_to_guest() {
    let root = base(roles::ROOT);
    assert!(catalog::keys().all(|k| root.allows(k)));
    assert!(!base(roles::CEO).allows(key::PUBLIC_API_ALLOW_IMPOSTER_MODE));
    assert!(base(roles::CEO).allows(key::WS_SETTINGS_MANAGE_ROLES));
    assert!(!base(roles::TEAM_LEADER).allows(key::INVOICES_MANAGE));
    let staff = base(roles::STAFF);
    assert!(staff.allows(key::TASKS_CREATE_TAGS) && !staff.allows(key::PROJECTS_MANAGE_COMPONENTS));
    assert!(catalog::keys().all(|k| !base(roles::GUEST).allows(k)));
    assert!(!base("_nobody").allows(key::TASKS_CREATE_TAGS));
}

#[test]
fn base_roles_grant_only_catalog_keys_and_guest_only_guest_keys() {
    for role in BASE_ROLES {
        for key in role.granted {
            assert!(catalog::allowed_for(key, role.role_type == RoleType::Guest), "{} grants {key}", role.id);
        }
    }
    assert!(CATALOG.iter().any(|p| !p.guest_allowed));
}

#[test]
fn names_are_localized_by_primary_language() {
    let ceo = base_role(roles::CEO).unwrap();
    assert_eq!(ceo.name.get("de"), "Geschäftsführung");
    assert_eq!(ceo.name.get("de-AT"), "Geschäftsführung");
    assert_eq!(ceo.name.get("en"), "CEO");
    assert_eq!(ceo.name.get("fr"), "CEO");
    assert_eq!(ceo.name.get(""), "CEO");
}

#[test]
fn explicit_entries_override_inheritance_both_ways() {
    let roles = Roles::new([
        custom(
            "a",
            RoleType::Normal,
            Some(roles::STAFF),
            &[(key::TASKS_CREATE_TAGS, false), (key::PROJECTS_EDIT, true)],
        ),
        custom("b", RoleType::Normal, Some("a"), &[(key::TASKS_CREATE_TAGS, true)]),
    ]);
    let a = roles.resolve("a").unwrap();
    assert!(!a.effective[key::TASKS_CREATE_TAGS], "child revokes what Staff grants");
    assert!(a.effective[key::PROJECTS_EDIT], "child grants what Staff lacks");
    assert!(a.effective[key::PROJECTS_MANAGE_DOCUMENTATION], "inherited from Staff");
    assert_eq!(a.raw.len(), 2);
    assert_eq!(a.permissions.len(), catalog::keys().count(), "Staff states every key");
    let b = roles.resolve("b").unwrap();
    assert!(b.effective[key::TASKS_CREATE_TAGS], "grandchild re-grants");
    assert!(b.effective[key::PROJECTS_EDIT], "inherited from a");
}

#[test]
fn a_root_custom_role_denies_what_it_does_not_state() {
    let roles = Roles::new([custom("solo", RoleType::Normal, None, &[(key::INVOICES_MANAGE, true)])]);
    let solo = roles.resolve("solo").unwrap();
    assert_eq!(solo.permissions.len(), 1);
    assert_eq!(solo.effective.len(), catalog::keys().count());
    assert!(solo.effective[key::INVOICES_MANAGE]);
    assert!(!solo.effective[key::TASKS_CREATE_TAGS]);
}

#[test]
fn guest_roles_never_hold_guest_disallowed_keys_even_inherited() {
    let roles = Roles::new([custom("g", RoleType::Guest, Some(roles::ROOT), &[])]);
    let g = roles.resolve("g").unwrap();
    assert!(g.permissions[key::WS_SETTINGS_MANAGE_SETTINGS], "inherited entry shown");
    assert!(!g.effective[key::WS_SETTINGS_MANAGE_SETTINGS], "but never effective");
    assert!(!g.effective[key::PUBLIC_API_ALLOW_IMPOSTER_MODE]);
    assert!(g.effective[key::TASKS_CREATE_TAGS]);
    let raw = [(key::WS_SETTINGS_MANAGE_ROLES.to_owned(), true)].into();
    assert_eq!(invalid_entries(&raw, RoleType::Guest).len(), 1);
    assert!(invalid_entries(&raw, RoleType::Normal).is_empty());
    let revoked = [(key::WS_SETTINGS_MANAGE_ROLES.to_owned(), false)].into();
    assert!(invalid_entries(&revoked, RoleType::Guest).is_empty(), "an explicit false is harmless");
    let unknown = [("projects.fly".to_owned(), true)].into();
    assert_eq!(invalid_entries(&unknown, RoleType::Normal), vec!["projects.fly is not a permission key"]);
}

#[test]
fn parents_cannot_close_a_cycle() {
    let roles = Roles::new([
        custom("a", RoleType::Normal, Some(roles::STAFF), &[]),
        custom("b", RoleType::Normal, Some("a"), &[]),
        custom("c", RoleType::Normal, Some("b"), &[]),
    ]);
    assert_eq!(roles.check_parent(Some("a"), "a"), Err(ParentError::Itself));
    assert_eq!(roles.check_parent(Some("a"), "c"), Err(ParentError::Descendant));
    assert_eq!(roles.check_parent(Some("a"), "b"), Err(ParentError::Descendant));
    assert_eq!(roles.check_parent(Some("a"), "missing"), Err(ParentError::Unknown));
    let chain = roles.check_parent(Some("a"), roles::CEO).unwrap();
    assert!(chain.is_empty(), "base roles need no version check");
    let chain: Vec<_> = roles.check_parent(None, "c").unwrap().iter().map(|r| r.id.clone()).collect();
    assert_eq!(chain, ["c", "b", "a"]);
}

#[test]
fn a_corrupt_cycle_resolves_to_nothing_instead_of_looping() {
    let roles = Roles::new([
        custom("x", RoleType::Normal, Some("y"), &[(key::TASKS_CREATE_TAGS, true)]),
        custom("y", RoleType::Normal, Some("x"), &[]),
    ]);
    assert!(matches!(roles.resolve("x"), Err(ChainError::Circular(_))));
    assert!(!PermissionSet::from_roles(&roles, "x").allows(key::TASKS_CREATE_TAGS));
}

#[test]
fn descendant_depth_counts_levels_below() {
    let roles = Roles::new([
        custom("a", RoleType::Normal, None, &[]),
        custom("b", RoleType::Normal, Some("a"), &[]),
        custom("c", RoleType::Normal, Some("b"), &[]),
        custom("d", RoleType::Normal, Some("a"), &[]),
    ]);
    assert_eq!(roles.descendant_depth("a"), 2);
    assert_eq!(roles.descendant_depth("b"), 1);
    assert_eq!(roles.descendant_depth("c"), 0);
    let corrupt =
        Roles::new([custom("x", RoleType::Normal, Some("y"), &[]), custom("y", RoleType::Normal, Some("x"), &[])]);
    assert_eq!(corrupt.descendant_depth("x"), MAX_DEPTH, "a cycle stops at the bound");
}

#[test]
fn chains_are_bounded() {
    let mut all = vec![custom("r0", RoleType::Normal, None, &[])];
    for i in 1..MAX_DEPTH {
        let parent = format!("r{}", i - 1);
        all.push(custom(&format!("r{i}"), RoleType::Normal, Some(&parent), &[]));
    }
    let roles = Roles::new(all);
    assert!(roles.resolve(&format!("r{}", MAX_DEPTH - 1)).is_ok());
    let last = format!("r{}", MAX_DEPTH - 1);
    assert_eq!(roles.check_parent(None, &last), Err(ParentError::Chain(ChainError::TooDeep)));
}

#[test]
fn custom_role_ids_carry_their_workspace() {
    let ws = Uuid::new_v4();
    let id = new_custom_role_id(ws);
    assert!(is_custom_role_id_of(ws, &id));
    assert!(!is_custom_role_id_of(Uuid::new_v4(), &id));
    assert!(!is_custom_role_id_of(ws, roles::STAFF));
    assert!(!is_custom_role_id_of(ws, &format!("{ws}_#")));
}

#[test]
fn only_normal_roles_are_internal() {
    assert!(base(roles::STAFF).is_internal());
    assert!(!base(roles::GUEST).is_internal());
    assert!(!base("_nobody").is_internal(), "an unresolved role is external");
    let roles = Roles::new([custom("g", RoleType::Guest, Some(roles::ROOT), &[])]);
    assert!(!PermissionSet::from_roles(&roles, "g").is_internal());
}
