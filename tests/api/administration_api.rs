//! Roles, permissions and work activities over HTTP (spec §2.1, §2.2, §4.1, §4.2), on every
//! store backend: the permission matrix, every role rule with its failing request,
//! inheritance, concurrency and workspace isolation.

use api_tests::{TestApi, assert_error_body, each_backend};
use reqwest::Method;
use serde_json::{Value, json};
use workapi_domain::identity::{self, NewToken, NewUser, UserKind};
use workapi_domain::permissions::{CEO, GUEST, ROOT, STAFF, TEAM_LEADER, catalog, key};

fn unique(name: &str) -> String {
    format!("{name} {}", &uuid::Uuid::new_v4().simple().to_string()[..8])
}

pub(crate) async fn send(api: &TestApi, method: Method, path: &str, token: &str, body: Option<Value>) -> (u16, Value) {
    let (status, _, body) = api.call(method, path, Some(token), body).await;
    (status, body)
}

/// Creates a custom role as Root and returns its full view.
pub(crate) async fn create_role(api: &TestApi, root: &str, body: Value) -> Value {
    let (status, role) = send(api, Method::POST, "/administration/roles?responseShape=full", root, Some(body)).await;
    assert_eq!(status, 201, "[{}] create role: {role}", api.backend);
    role
}

pub(crate) fn role_body(parent: Option<&str>, permissions: Value) -> Value {
    json!({"name": unique("Role"), "icon": "fa-star", "type": "normal", "parentId": parent, "permissions": permissions})
}

pub(crate) fn id(v: &Value) -> String {
    v["id"].as_str().expect("id").to_owned()
}

/// Every endpoint of the matrix with a request that succeeds when allowed.
#[derive(Clone, Copy, Debug)]
enum Endpoint {
    ListRoles,
    CreateRole,
    PatchRole,
    TogglePermission,
    ListActivities,
    CreateActivity,
    ReplaceActivity,
    TaskTag,
    ComponentTag,
    ProjectTag,
}

const ENDPOINTS: [Endpoint; 10] = [
    Endpoint::ListRoles,
    Endpoint::CreateRole,
    Endpoint::PatchRole,
    Endpoint::TogglePermission,
    Endpoint::ListActivities,
    Endpoint::CreateActivity,
    Endpoint::ReplaceActivity,
    Endpoint::TaskTag,
    Endpoint::ComponentTag,
    Endpoint::ProjectTag,
];

async fn call_endpoint(api: &TestApi, endpoint: Endpoint, token: &str, role_id: &str, activity_id: &str) -> u16 {
    let (method, path, body) = match endpoint {
        Endpoint::ListRoles => (Method::GET, "/administration/roles".to_owned(), None),
        Endpoint::CreateRole => (Method::POST, "/administration/roles".to_owned(), Some(role_body(None, json!({})))),
        Endpoint::PatchRole => {
            (Method::PATCH, format!("/administration/roles/{role_id}"), Some(json!({"name": unique("Renamed")})))
        }
        Endpoint::TogglePermission => (
            Method::PATCH,
            format!("/administration/roles/{role_id}/permissions/Projects.edit"),
            Some(json!({"allow": true})),
        ),
        Endpoint::ListActivities => (Method::GET, "/administration/task-settings/activities".to_owned(), None),
        Endpoint::CreateActivity => {
            (Method::POST, "/administration/task-settings/activities".to_owned(), Some(json!({"name": unique("A")})))
        }
        Endpoint::ReplaceActivity => (
            Method::PUT,
            format!("/administration/task-settings/activities/{activity_id}"),
            Some(json!({"name": unique("A"), "translations": [{"language": "de", "name": "Entwicklung"}]})),
        ),
        Endpoint::TaskTag => (Method::POST, "/tags/task/create".to_owned(), Some(json!({"name": unique("T")}))),
        Endpoint::ComponentTag => {
            (Method::POST, "/tags/project-component/create".to_owned(), Some(json!({"name": unique("T")})))
        }
        Endpoint::ProjectTag => (Method::POST, "/tags/project/create".to_owned(), Some(json!({"name": unique("T")}))),
    };
    let (status, body) = send(api, method, &path, token, body).await;
    assert!(matches!(status, 200 | 201 | 403), "[{}] {endpoint:?}: unexpected {status} {body}", api.backend);
    if status == 403 {
        assert_error_body(api.backend, status, &body, 403);
    }
    status
}

#[tokio::test]
async fn permission_matrix_of_base_and_custom_roles() {
    use Endpoint::*;
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let target = id(&create_role(api, &root, role_body(Some(STAFF), json!({}))).await);
        let (_, activity) =
            send(api, Method::POST, "/administration/task-settings/activities", &root, Some(json!({"name": "Dev"})))
                .await;
        let activity = id(&activity);

        // Custom roles: Staff plus role administration; CEO minus role administration and task
        // tags; a guest role inheriting everything from Root.
        let staff_admin =
            id(&create_role(api, &root, role_body(Some(STAFF), json!({key::WS_SETTINGS_MANAGE_ROLES: true}))).await);
        let ceo_minus = id(&create_role(
            api,
            &root,
            role_body(Some(CEO), json!({key::WS_SETTINGS_MANAGE_ROLES: false, key::TASKS_CREATE_TAGS: false})),
        )
        .await);
        let guest_of_root = id(&create_role(
            api,
            &root,
            json!({"name": unique("External"), "icon": ":busts_in_silhouette:", "type": "guest", "parentId": ROOT}),
        )
        .await);

        let all: &[Endpoint] = &ENDPOINTS;
        let cases: Vec<(&str, UserKind, &[Endpoint])> = vec![
            (ROOT, UserKind::Employee, all),
            (CEO, UserKind::Employee, all),
            (TEAM_LEADER, UserKind::Employee, &[ListRoles, ListActivities, TaskTag, ComponentTag, ProjectTag]),
            (STAFF, UserKind::Employee, &[ListRoles, ListActivities, TaskTag, ProjectTag]),
            (STAFF, UserKind::OrganizationMember, &[ListActivities, TaskTag]),
            (GUEST, UserKind::Employee, &[ListActivities]),
            (
                &staff_admin,
                UserKind::Employee,
                &[ListRoles, CreateRole, PatchRole, TogglePermission, ListActivities, TaskTag, ProjectTag],
            ),
            (
                &ceo_minus,
                UserKind::Employee,
                &[ListRoles, ListActivities, CreateActivity, ReplaceActivity, ComponentTag, ProjectTag],
            ),
            // Guest-disallowed keys never take effect, and a guest role is not an employee.
            (&guest_of_root, UserKind::Employee, &[ListActivities, TaskTag, ComponentTag]),
        ];
        for (role, kind, allowed) in cases {
            let (_, token) = api.user(role, kind).await;
            for endpoint in ENDPOINTS {
                let status = call_endpoint(api, endpoint, &token, &target, &activity).await;
                let expected = if allowed.iter().any(|a| std::mem::discriminant(a) == std::mem::discriminant(&endpoint))
                {
                    "allowed"
                } else {
                    "forbidden"
                };
                let got = if status == 403 { "forbidden" } else { "allowed" };
                assert_eq!(got, expected, "[{}] role {role} ({kind:?}) on {endpoint:?}", api.backend);
            }
        }
    })
    .await;
}

#[tokio::test]
async fn base_roles_are_read_only() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let writes = [
            (
                Method::PUT,
                format!("/administration/roles/{CEO}"),
                json!({"name": "X", "icon": "fa-x", "type": "normal"}),
            ),
            (Method::PATCH, format!("/administration/roles/{CEO}"), json!({"name": "X"})),
            (
                Method::PATCH,
                format!("/administration/roles/{STAFF}/permissions/Invoices.manage"),
                json!({"allow": true}),
            ),
            (Method::PUT, format!("/administration/roles/{GUEST}/permissions"), json!({})),
        ];
        for (method, path, body) in writes {
            let (status, body) = send(api, method.clone(), &path, &root, Some(body)).await;
            assert_error_body(api.backend, status, &body, 403);
            assert!(
                body["message"].as_str().unwrap().contains("read-only"),
                "[{}] {method} {path}: {body}",
                api.backend
            );
        }
        let (status, body) = send(api, Method::DELETE, &format!("/administration/roles/{ROOT}"), &root, None).await;
        assert_error_body(api.backend, status, &body, 403);
        let (_, ceo) = api.get(&format!("/administration/roles/{CEO}"), &root).await;
        assert_eq!(ceo["name"], "CEO", "[{}] unchanged", api.backend);
        assert_eq!(ceo["readOnly"], true);
        assert!(ceo.get("createdAt").is_none() && ceo.get("parentId").is_none(), "{ceo}");
    })
    .await;
}

#[tokio::test]
async fn list_and_get_show_the_three_maps_localized() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let child = create_role(api, &root, role_body(Some(STAFF), json!({key::INVOICES_MANAGE: true}))).await;
        let (status, list) = api.get("/administration/roles", &root).await;
        assert_eq!(status, 200);
        let ids: Vec<_> = list.as_array().unwrap().iter().map(id).collect();
        assert_eq!(&ids[..5], [ROOT, CEO, TEAM_LEADER, STAFF, GUEST], "[{}] base roles first", api.backend);
        assert_eq!(ids[5], id(&child));

        assert_eq!(child["rawPermissions"], json!({key::INVOICES_MANAGE: true}));
        assert_eq!(child["permissions"][key::TASKS_CREATE_TAGS], true, "inherited entry from Staff");
        assert_eq!(child["permissions"][key::INVOICES_MANAGE], true, "explicit entry");
        assert_eq!(child["effectivePermissions"].as_object().unwrap().len(), catalog::CATALOG.len());
        assert_eq!(child["effectivePermissions"][key::PROJECTS_EDIT], false, "no entry anywhere: denied");
        assert_eq!(child["readOnly"], false);
        assert_eq!(child["parentId"], STAFF);
        assert!(child["createdAt"].is_string() && child["editedAt"].is_string() && child["createdBy"].is_string());

        // A German-speaking user sees the base roles in German.
        let email = format!("{}@test.example", uuid::Uuid::new_v4().simple());
        let user = identity::create_user(
            api.store.as_ref(),
            api.workspace_id,
            NewUser { email: &email, name: "Grete", role_id: CEO, kind: UserKind::Employee, language: "de" },
        )
        .await
        .unwrap();
        let (token, _) = identity::create_token(
            api.store.as_ref(),
            &api.key,
            api.workspace_id,
            user.id,
            NewToken { name: "t", scopes: vec!["api:read".into()], expires_at: None },
        )
        .await
        .unwrap();
        let (_, ceo) = api.get(&format!("/administration/roles/{CEO}"), &token).await;
        assert_eq!(ceo["name"], "Geschäftsführung", "[{}]", api.backend);
        let (status, body) = api.get("/administration/roles/_nobody", &token).await;
        assert_error_body(api.backend, status, &body, 404);
    })
    .await;
}

#[tokio::test]
async fn put_replaces_the_role_and_validates_every_field() {
    each_backend(async |_, api| {
        let (user, root) = api.user(ROOT, UserKind::Employee).await;
        let role = create_role(api, &root, role_body(Some(STAFF), json!({key::PROJECTS_EDIT: true}))).await;
        let path = format!("/administration/roles/{}", id(&role));

        let (status, body) =
            send(api, Method::PUT, &path, &root, Some(json!({"description": "x".repeat(401), "type": "boss"}))).await;
        assert_error_body(api.backend, status, &body, 400);
        let fields: Vec<_> = body["errors"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(fields, ["description", "icon", "name", "type"], "[{}] {body}", api.backend);

        tokio::time::sleep(std::time::Duration::from_millis(5)).await; // editedAt has millisecond precision
        let put = json!({"name": "Reviewer", "icon": ":eyes:", "type": "normal", "description": "d".repeat(400)});
        let (status, compact) = send(api, Method::PUT, &path, &root, Some(put.clone())).await;
        assert_eq!(status, 200, "[{}] {compact}", api.backend);
        assert_eq!(compact, json!({"id": role["id"], "name": "Reviewer"}), "compact default");
        let (_, full) = send(api, Method::PUT, &format!("{path}?responseShape=full"), &root, Some(put)).await;
        assert_eq!(full["description"].as_str().unwrap().len(), 400);
        assert!(full.get("parentId").is_none(), "[{}] an omitted parent is no parent: {full}", api.backend);
        assert_eq!(full["rawPermissions"], json!({key::PROJECTS_EDIT: true}), "omitted permissions are kept");
        assert_eq!(full["createdAt"], role["createdAt"]);
        assert_eq!(full["createdBy"], user.id.to_string());
        assert!(full["editedAt"].as_str().unwrap() > role["editedAt"].as_str().unwrap(), "editedAt moves");

        let (status, body) = send(
            api,
            Method::PUT,
            &path,
            &root,
            Some(json!({"name": "G", "icon": "fa-x", "type": "guest", "permissions": {key::WS_SETTINGS_MANAGE_SETTINGS: true}})),
        )
        .await;
        assert_error_body(api.backend, status, &body, 400);
        assert!(body["errors"]["permissions"][0].as_str().unwrap().contains("guest"), "{body}");

        let (status, body) = send(
            api,
            Method::PUT,
            &path,
            &root,
            Some(json!({"name": "G", "icon": "fa-x", "type": "normal", "permissions": {"projects.fly": true}})),
        )
        .await;
        assert_error_body(api.backend, status, &body, 400);
    })
    .await;
}

#[tokio::test]
async fn patch_changes_only_what_it_carries_and_recalculates_on_parent_change() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let role = create_role(api, &root, role_body(Some(STAFF), json!({}))).await;
        let path = format!("/administration/roles/{}?responseShape=full", id(&role));
        assert_eq!(role["effectivePermissions"][key::TASKS_CREATE_TAGS], true);
        assert_eq!(role["effectivePermissions"][key::INVOICES_MANAGE], false);

        tokio::time::sleep(std::time::Duration::from_millis(5)).await; // editedAt has millisecond precision
        let (status, moved) = send(api, Method::PATCH, &path, &root, Some(json!({"parentId": CEO}))).await;
        assert_eq!(status, 200, "[{}] {moved}", api.backend);
        assert_eq!(moved["name"], role["name"], "name kept");
        assert_eq!(moved["effectivePermissions"][key::INVOICES_MANAGE], true, "recalculated from the new parent");
        assert!(moved["editedAt"].as_str().unwrap() > role["editedAt"].as_str().unwrap());

        let (_, detached) = send(api, Method::PATCH, &path, &root, Some(json!({"parentId": null}))).await;
        assert!(detached.get("parentId").is_none(), "{detached}");
        assert!(detached["effectivePermissions"].as_object().unwrap().values().all(|v| v == false));

        let (status, body) =
            send(api, Method::PATCH, &path, &root, Some(json!({"permissions": {key::PROJECTS_EDIT: true}}))).await;
        assert_error_body(api.backend, status, &body, 400);
        let (status, body) =
            send(api, Method::PATCH, &path, &root, Some(json!({"description": "x".repeat(401)}))).await;
        assert_error_body(api.backend, status, &body, 400);
        let (status, body) = send(api, Method::PATCH, &path, &root, Some(json!({"parentId": "_nobody"}))).await;
        assert_error_body(api.backend, status, &body, 400);
        assert!(body["errors"]["parentId"].is_array());

        // A role granting a guest-disallowed key cannot become a guest role.
        let admin = create_role(api, &root, role_body(None, json!({key::INVOICES_MANAGE: true}))).await;
        let admin_path = format!("/administration/roles/{}", id(&admin));
        let (status, body) = send(api, Method::PATCH, &admin_path, &root, Some(json!({"type": "guest"}))).await;
        assert_error_body(api.backend, status, &body, 400);
        assert!(body["errors"]["type"][0].as_str().unwrap().contains(key::INVOICES_MANAGE), "{body}");
    })
    .await;
}

#[tokio::test]
async fn parent_chains_cannot_become_circular() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let a = id(&create_role(api, &root, role_body(Some(STAFF), json!({}))).await);
        let b = id(&create_role(api, &root, role_body(Some(&a), json!({}))).await);
        let c = id(&create_role(api, &root, role_body(Some(&b), json!({}))).await);
        for (role, parent, why) in [(&a, &c, "grandchild"), (&a, &b, "child"), (&a, &a, "itself")] {
            let (status, body) = send(
                api,
                Method::PATCH,
                &format!("/administration/roles/{role}"),
                &root,
                Some(json!({"parentId": parent})),
            )
            .await;
            assert_error_body(api.backend, status, &body, 400);
            assert!(body["errors"]["parentId"].is_array(), "[{}] {why}: {body}", api.backend);
        }
        let put = json!({"name": "A", "icon": "fa-a", "type": "normal", "parentId": c});
        let (status, body) = send(api, Method::PUT, &format!("/administration/roles/{a}"), &root, Some(put)).await;
        assert_error_body(api.backend, status, &body, 400);

        // Chains are bounded: ten roles at most, the base role at the top included.
        let mut parent = c.clone();
        let mut depth = 4; // c, b, a, Staff
        while depth < 10 {
            parent = id(&create_role(api, &root, role_body(Some(&parent), json!({}))).await);
            depth += 1;
        }
        let (status, body) =
            send(api, Method::POST, "/administration/roles", &root, Some(role_body(Some(&parent), json!({})))).await;
        assert_error_body(api.backend, status, &body, 400);
    })
    .await;
}

#[tokio::test]
async fn explicit_entries_override_inheritance_both_ways_and_reach_the_holders() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let role = create_role(api, &root, role_body(Some(STAFF), json!({key::TASKS_CREATE_TAGS: false}))).await;
        let role_id = id(&role);
        assert_eq!(role["effectivePermissions"][key::TASKS_CREATE_TAGS], false, "explicit false beats Staff's grant");
        let (_, holder) = api.user(&role_id, UserKind::Employee).await;
        let (status, _) = api.post("/tags/task/create", &holder, json!({"name": unique("T")})).await;
        assert_eq!(status, 403, "[{}] the holder lacks Tasks.createTags", api.backend);

        let toggle = format!("/administration/roles/{role_id}/permissions/{}", key::TASKS_CREATE_TAGS);
        let (status, updated) = send(api, Method::PATCH, &toggle, &root, Some(json!({"allow": true}))).await;
        assert_eq!(status, 200, "[{}] {updated}", api.backend);
        assert_eq!(updated["rawPermissions"][key::TASKS_CREATE_TAGS], true, "complete role returned");
        let (status, _) = api.post("/tags/task/create", &holder, json!({"name": unique("T")})).await;
        assert_eq!(status, 200, "[{}] the change applies to the next request", api.backend);

        let (_, inherited) = send(api, Method::PATCH, &toggle, &root, Some(json!({"allow": null}))).await;
        assert!(inherited["rawPermissions"].as_object().unwrap().is_empty());
        assert_eq!(inherited["effectivePermissions"][key::TASKS_CREATE_TAGS], true, "inherited from Staff again");

        let grant = format!("/administration/roles/{role_id}/permissions/{}", key::INVOICES_MANAGE);
        let (_, granted) = send(api, Method::PATCH, &grant, &root, Some(json!({"allow": true}))).await;
        assert_eq!(granted["effectivePermissions"][key::INVOICES_MANAGE], true, "explicit true beats Staff's lack");

        for (path, body) in [
            (format!("/administration/roles/{role_id}/permissions/projects.fly"), json!({"allow": true})),
            (grant.clone(), json!({})),
            (grant.clone(), json!({"allow": "yes"})),
        ] {
            let (status, err) = send(api, Method::PATCH, &path, &root, Some(body)).await;
            assert_error_body(api.backend, status, &err, 400);
        }

        // The complete map, bare or wrapped.
        let map_path = format!("/administration/roles/{role_id}/permissions");
        let (status, replaced) = send(
            api,
            Method::PUT,
            &map_path,
            &root,
            Some(json!({key::PROJECTS_EDIT: true, key::TASKS_CREATE_TAGS: false})),
        )
        .await;
        assert_eq!(status, 200, "{replaced}");
        assert_eq!(replaced["rawPermissions"], json!({key::PROJECTS_EDIT: true, key::TASKS_CREATE_TAGS: false}));
        let (_, wrapped) =
            send(api, Method::PUT, &map_path, &root, Some(json!({"permissions": {key::PROJECTS_EDIT: false}}))).await;
        assert_eq!(wrapped["rawPermissions"], json!({key::PROJECTS_EDIT: false}));

        // Guest roles cannot be granted guest-disallowed keys one at a time either.
        let guest = create_role(api, &root, json!({"name": unique("G"), "icon": "fa-g", "type": "guest"})).await;
        let path = format!("/administration/roles/{}/permissions/{}", id(&guest), key::WS_SETTINGS_MANAGE_SETTINGS);
        let (status, body) = send(api, Method::PATCH, &path, &root, Some(json!({"allow": true}))).await;
        assert_error_body(api.backend, status, &body, 400);
        let (status, _) = send(api, Method::PATCH, &path, &root, Some(json!({"allow": false}))).await;
        assert_eq!(status, 200, "an explicit false is allowed on a guest role");
    })
    .await;
}

#[tokio::test]
async fn concurrent_permission_toggles_on_one_role_all_land() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let role_id = id(&create_role(api, &root, role_body(None, json!({}))).await);
        let keys: Vec<&str> = catalog::keys().collect();
        let calls = keys.iter().map(|k| {
            let path = format!("/administration/roles/{role_id}/permissions/{k}");
            let root = root.clone();
            async move { send(api, Method::PATCH, &path, &root, Some(json!({"allow": true}))).await }
        });
        for (status, body) in futures::future::join_all(calls).await {
            assert_eq!(status, 200, "[{}] {body}", api.backend);
        }
        let (_, role) = api.get(&format!("/administration/roles/{role_id}"), &root).await;
        let raw = role["rawPermissions"].as_object().unwrap();
        assert_eq!(raw.len(), keys.len(), "[{}] lost updates: {raw:?}", api.backend);
    })
    .await;
}

#[tokio::test]
async fn concurrent_activity_creates_get_distinct_consecutive_sort_values() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let base = "/administration/task-settings/activities?responseShape=full";
        let (_, first) = send(api, Method::POST, base, &root, Some(json!({"name": "First"}))).await;
        let start = first["sort"].as_i64().unwrap();
        let calls = (0..20).map(|i| {
            let root = root.clone();
            async move { send(api, Method::POST, base, &root, Some(json!({"name": format!("Parallel {i}")}))).await }
        });
        let mut sorts = Vec::new();
        for (status, body) in futures::future::join_all(calls).await {
            assert_eq!(status, 201, "[{}] {body}", api.backend);
            sorts.push(body["sort"].as_i64().unwrap());
        }
        sorts.sort();
        assert_eq!(sorts, (start + 1..=start + 20).collect::<Vec<_>>(), "[{}] sort values", api.backend);
    })
    .await;
}

#[tokio::test]
async fn roles_in_use_cannot_be_deleted() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let parent = id(&create_role(api, &root, role_body(Some(STAFF), json!({}))).await);
        let child = id(&create_role(api, &root, role_body(Some(&parent), json!({}))).await);
        let (status, body) = send(api, Method::DELETE, &format!("/administration/roles/{parent}"), &root, None).await;
        assert_error_body(api.backend, status, &body, 409);
        assert!(body["message"].as_str().unwrap().contains("1 role(s)"), "{body}");

        api.user(&child, UserKind::Employee).await;
        let (status, body) = send(api, Method::DELETE, &format!("/administration/roles/{child}"), &root, None).await;
        assert_error_body(api.backend, status, &body, 409);
        assert!(body["message"].as_str().unwrap().contains("1 user(s)"), "{body}");

        let unused = id(&create_role(api, &root, role_body(Some(&parent), json!({}))).await);
        let (status, body) = send(api, Method::DELETE, &format!("/administration/roles/{unused}"), &root, None).await;
        assert_eq!((status, body), (200, json!({"success": true})), "[{}]", api.backend);
        let (status, body) = api.get(&format!("/administration/roles/{unused}"), &root).await;
        assert_error_body(api.backend, status, &body, 404);
        let (status, body) = send(api, Method::DELETE, &format!("/administration/roles/{unused}"), &root, None).await;
        assert_error_body(api.backend, status, &body, 404);
    })
    .await;
}

#[tokio::test]
async fn another_workspaces_roles_and_activities_are_404() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let role = id(&create_role(api, &root, role_body(None, json!({}))).await);
        let (_, activity) =
            send(api, Method::POST, "/administration/task-settings/activities", &root, Some(json!({"name": "Dev"})))
                .await;
        let other = identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let (_, intruder) = api.user_in(other.id, ROOT, UserKind::Employee, &["api:read", "api:write"]).await;
        let attempts = [
            (Method::GET, format!("/administration/roles/{role}"), None),
            (Method::PATCH, format!("/administration/roles/{role}"), Some(json!({"name": "Mine"}))),
            (
                Method::PATCH,
                format!("/administration/roles/{role}/permissions/Projects.edit"),
                Some(json!({"allow": true})),
            ),
            (Method::DELETE, format!("/administration/roles/{role}"), None),
            (
                Method::PUT,
                format!("/administration/task-settings/activities/{}", id(&activity)),
                Some(json!({"name": "Mine", "translations": []})),
            ),
        ];
        for (method, path, body) in attempts {
            let (status, body) = send(api, method.clone(), &path, &intruder, body).await;
            assert_error_body(api.backend, status, &body, 404);
        }
        let (_, roles) = api.get("/administration/roles", &intruder).await;
        assert_eq!(roles.as_array().unwrap().len(), 5, "[{}] only base roles", api.backend);
        let (_, activities) = api.get("/administration/task-settings/activities", &intruder).await;
        assert_eq!(activities, json!([]));
        // A parent from another workspace does not exist here.
        let (status, body) =
            send(api, Method::POST, "/administration/roles", &intruder, Some(role_body(Some(&role), json!({})))).await;
        assert_error_body(api.backend, status, &body, 400);
    })
    .await;
}

#[tokio::test]
async fn work_activities_are_created_updated_and_validated() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let base = "/administration/task-settings/activities";
        let (status, first) = send(api, Method::POST, base, &root, Some(json!({"name": "Development"}))).await;
        assert_eq!(status, 201, "[{}] {first}", api.backend);
        assert_eq!(first.as_object().unwrap().len(), 2, "compact default: {first}");
        let (_, second) = send(
            api,
            Method::POST,
            &format!("{base}?responseShape=full"),
            &root,
            Some(json!({"name": "Design", "translations": [{"language": "de", "name": "Gestaltung"}]})),
        )
        .await;
        assert_eq!(second["sort"], 2, "{second}");

        let path = format!("{base}/{}", id(&first));
        let put = json!({"name": "Dev", "translations": [{"language": "DE", "name": "Entwicklung"}, {"language": "fr", "name": "Développement"}]});
        let (status, updated) = send(api, Method::PUT, &format!("{path}?responseShape=full"), &root, Some(put)).await;
        assert_eq!(status, 200, "{updated}");
        assert_eq!(
            updated,
            json!({"id": first["id"], "name": "Dev", "sort": 1, "translations": [
                {"language": "de", "name": "Entwicklung"}, {"language": "fr", "name": "Développement"}]})
        );
        let (_, list) = api.get(base, &root).await;
        assert_eq!(list.as_array().unwrap().iter().map(|a| a["name"].clone()).collect::<Vec<_>>(), ["Dev", "Design"]);

        for (body, field) in [
            (json!({"name": "Dev"}), "translations"),
            (json!({"name": "", "translations": []}), "name"),
            (json!({"name": "Dev", "translations": [{"language": "xx", "name": "?"}]}), "translations[0].language"),
            (json!({"name": "Dev", "translations": [{"language": "deu", "name": "?"}]}), "translations[0].language"),
            (json!({"name": "Dev", "translations": [{"language": "de"}]}), "translations[0].name"),
            (
                json!({"name": "Dev", "translations": [{"language": "de", "name": "a"}, {"language": "de", "name": "b"}]}),
                "translations[1].language",
            ),
        ] {
            let (status, err) = send(api, Method::PUT, &path, &root, Some(body)).await;
            assert_error_body(api.backend, status, &err, 400);
            assert!(err["errors"][field].is_array(), "[{}] {field}: {err}", api.backend);
        }
        let (status, err) = send(
            api,
            Method::PUT,
            &format!("{base}/{}", uuid::Uuid::new_v4()),
            &root,
            Some(json!({"name": "Dev", "translations": []})),
        )
        .await;
        assert_error_body(api.backend, status, &err, 404);
        let (status, err) =
            send(api, Method::PUT, &format!("{base}/not-a-uuid"), &root, Some(json!({"name": "Dev", "translations": []})))
                .await;
        assert_error_body(api.backend, status, &err, 400);
    })
    .await;
}

#[tokio::test]
async fn scopes_gate_reads_and_writes() {
    each_backend(async |_, api| {
        let (_, read_only) = api.user_in(api.workspace_id, ROOT, UserKind::Employee, &["api:read"]).await;
        let (_, write_only) = api.user_in(api.workspace_id, ROOT, UserKind::Employee, &["api:write"]).await;
        let (status, _) = api.get("/administration/roles", &read_only).await;
        assert_eq!(status, 200);
        let (status, headers, body) =
            api.call(Method::POST, "/administration/roles", Some(&read_only), Some(role_body(None, json!({})))).await;
        assert_error_body(api.backend, status, &body, 403);
        assert!(body["message"].as_str().unwrap().contains("api:write"), "{body}");
        // RFC 6750 §3.1: the challenge names the missing scope, so a client can step up.
        assert_eq!(headers["www-authenticate"], "Bearer error=\"insufficient_scope\", scope=\"api:write\"");
        let (status, headers, body) =
            api.call(Method::GET, "/administration/task-settings/activities", Some(&write_only), None).await;
        assert_error_body(api.backend, status, &body, 403);
        assert_eq!(headers["www-authenticate"], "Bearer error=\"insufficient_scope\", scope=\"api:read\"");
        let (status, _) = api.post("/administration/roles", &write_only, role_body(None, json!({}))).await;
        assert_eq!(status, 201);
    })
    .await;
}

/// The no-escalation rule (docs/permissions.md, "Changing roles"): a role manager cannot give
/// itself or anyone a permission it lacks, nor change its own role or an ancestor of it except
/// to remove permissions. The review's two-step sequence answers 403 at both steps.
#[tokio::test]
async fn role_managers_cannot_escalate_through_their_own_role_or_grant_what_they_lack() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let managers = id(&create_role(api, &root, role_body(Some(CEO), json!({}))).await);
        let (_, manager) = api.user(&managers, UserKind::Employee).await;
        let imposter = key::PUBLIC_API_ALLOW_IMPOSTER_MODE;
        let forbidden = |status: u16, body: &Value, needle: &str| {
            assert_error_body(api.backend, status, body, 403);
            let message = body["message"].as_str().unwrap_or_default();
            assert!(message.contains(needle), "[{}] message should name {needle}: {message}", api.backend);
        };

        // Step 1 of the review: grant oneself imposter mode through one's own role.
        let own_toggle = format!("/administration/roles/{managers}/permissions/{imposter}");
        let (status, body) = send(api, Method::PATCH, &own_toggle, &manager, Some(json!({"allow": true}))).await;
        forbidden(status, &body, imposter);
        // Step 2: re-parent one's own role under Root.
        let own = format!("/administration/roles/{managers}");
        let (status, body) = send(api, Method::PATCH, &own, &manager, Some(json!({"parentId": ROOT}))).await;
        forbidden(status, &body, imposter);
        // The same through PUT of the whole map, and renaming one's own role.
        let own_map = format!("{own}/permissions");
        let (status, body) = send(api, Method::PUT, &own_map, &manager, Some(json!({imposter: true}))).await;
        forbidden(status, &body, imposter);
        let (status, body) = send(api, Method::PATCH, &own, &manager, Some(json!({"name": unique("Mine")}))).await;
        forbidden(status, &body, "the role you hold");
        let (_, after) = api.get(&format!("{own}?responseShape=full"), &root).await;
        assert_eq!(after["effectivePermissions"][imposter], json!(false), "[{}] nothing was written", api.backend);

        // Other roles: what the manager holds may be given, what it lacks may not, directly,
        // through a parent, or on create.
        let other = id(&create_role(api, &root, role_body(None, json!({}))).await);
        let toggle = |k: &str| format!("/administration/roles/{other}/permissions/{k}");
        let (status, body) =
            send(api, Method::PATCH, &toggle(key::PROJECTS_EDIT), &manager, Some(json!({"allow": true}))).await;
        assert_eq!(status, 200, "[{}] a held permission may be given: {body}", api.backend);
        let (status, body) = send(api, Method::PATCH, &toggle(imposter), &manager, Some(json!({"allow": true}))).await;
        forbidden(status, &body, imposter);
        let (status, body) = send(
            api,
            Method::PATCH,
            &format!("/administration/roles/{other}"),
            &manager,
            Some(json!({"parentId": ROOT})),
        )
        .await;
        forbidden(status, &body, imposter);
        for escalating in [role_body(Some(ROOT), json!({})), role_body(None, json!({imposter: true}))] {
            let (status, body) = send(api, Method::POST, "/administration/roles", &manager, Some(escalating)).await;
            forbidden(status, &body, imposter);
        }
        let (status, body) =
            send(api, Method::POST, "/administration/roles", &manager, Some(role_body(Some(STAFF), json!({})))).await;
        assert_eq!(status, 201, "[{}] a role within the manager's own permissions: {body}", api.backend);

        // Removing permissions from one's own role is allowed.
        let projects_edit = format!("/administration/roles/{managers}/permissions/{}", key::PROJECTS_EDIT);
        let (status, body) = send(api, Method::PATCH, &projects_edit, &manager, Some(json!({"allow": false}))).await;
        assert_eq!(status, 200, "[{}] removing is allowed: {body}", api.backend);
        // ... and giving it back is not (the manager no longer holds it).
        let (status, body) = send(api, Method::PATCH, &projects_edit, &manager, Some(json!({"allow": null}))).await;
        forbidden(status, &body, key::PROJECTS_EDIT);

        // Ancestors of one's own role are protected the same way.
        let parent = id(&create_role(api, &root, role_body(Some(CEO), json!({key::INVOICES_MANAGE: false}))).await);
        let child = id(&create_role(api, &root, role_body(Some(&parent), json!({}))).await);
        let (_, child_manager) = api.user(&child, UserKind::Employee).await;
        let parent_toggle = format!("/administration/roles/{parent}/permissions/{}", key::INVOICES_MANAGE);
        let (status, body) =
            send(api, Method::PATCH, &parent_toggle, &child_manager, Some(json!({"allow": null}))).await;
        forbidden(status, &body, key::INVOICES_MANAGE);
        let (status, body) = send(
            api,
            Method::PATCH,
            &format!("/administration/roles/{parent}"),
            &child_manager,
            Some(json!({"icon": "fa-x"})),
        )
        .await;
        forbidden(status, &body, "inherits from");
        let remove = format!("/administration/roles/{parent}/permissions/{}", key::PROJECTS_EDIT);
        let (status, body) = send(api, Method::PATCH, &remove, &child_manager, Some(json!({"allow": false}))).await;
        assert_eq!(status, 200, "[{}] an ancestor may lose permissions: {body}", api.backend);

        // Root is exempt.
        let (status, body) = send(api, Method::PATCH, &own_toggle, &root, Some(json!({"allow": true}))).await;
        assert_eq!(status, 200, "[{}] Root may grant anything: {body}", api.backend);
    })
    .await;
}

#[tokio::test]
async fn role_and_activity_names_refuse_bidirectional_and_invisible_characters() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        for spoof in ["\u{202e}sreweiveR", "Rev\u{200b}iewers", "\u{2066}x\u{2069}"] {
            let body = json!({"name": spoof, "icon": "fa-star", "type": "normal"});
            let (status, answer) = send(api, Method::POST, "/administration/roles", &root, Some(body)).await;
            assert_error_body(api.backend, status, &answer, 400);
            let (status, answer) = send(
                api,
                Method::POST,
                "/administration/task-settings/activities",
                &root,
                Some(json!({"name": spoof})),
            )
            .await;
            assert_error_body(api.backend, status, &answer, 400);
        }
    })
    .await;
}
