//! Helpdesk mail accounts over HTTP with real tokens (spec §2.6, §3, §4.9; docs/helpdesk.md),
//! on every store backend: list and get, disable (settings kept but hidden, removed from the
//! automatic-pulling schedule, idempotent), enable (settings back exactly, back in the
//! schedule), the settings update with every field validated, the permission, other
//! workspaces' accounts as 404, and the seed's mail-account section.

use api_tests::{TestApi, assert_error_body, each_backend};
use helpdesk::store::{PullTarget, pull_schedule};
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;
use workapi_domain::identity::{self, UserKind};
use workapi_domain::permissions::{GUEST, ROOT, STAFF};

struct World {
    project: Uuid,
    support: Uuid,
    billing: Uuid,
}

async fn seeded(api: &TestApi, workspace: Uuid, assignee: Option<Uuid>) -> World {
    let w = World { project: Uuid::new_v4(), support: Uuid::new_v4(), billing: Uuid::new_v4() };
    let tag = &Uuid::new_v4().simple().to_string()[..8];
    let seed = json!({"version": 1,
    "projects": [{"id": w.project, "name": "Support", "hourRate": 90, "currency": "EUR", "taxRate": 19}],
    "mailAccounts": [
        {"id": w.support, "email": format!("support-{tag}@x.example"), "displayName": "Support",
         "helpdeskEnabled": true, "settings": {"sendDefaultReply": true,
            "defaultReplyBody": "Thanks, we **will** answer soon.", "taskPriority": "High",
            "taskProjectId": w.project, "taskAssignedId": assignee, "taskTagsIds": []}},
        {"id": w.billing, "email": format!("billing-{tag}@x.example"), "displayName": "Billing"}
    ]});
    let file = local::seed::parse(&seed.to_string()).expect("seed parses");
    local::seed::load(api.store.as_ref(), workspace, &file).await.expect("seed loads");
    w
}

fn account_path(id: impl std::fmt::Display, action: &str) -> String {
    format!("/helpdesk/email-accounts/{id}{action}")
}

async fn delete(api: &TestApi, path: &str, token: &str) -> (u16, Value) {
    let (status, _, body) = api.call(Method::DELETE, path, Some(token), None).await;
    (status, body)
}

async fn patch(api: &TestApi, path: &str, token: &str, body: Value) -> (u16, Value) {
    let (status, _, body) = api.call(Method::PATCH, path, Some(token), Some(body)).await;
    (status, body)
}

async fn scheduled(api: &TestApi, account: Uuid) -> bool {
    let target = PullTarget { workspace_id: api.workspace_id, account_id: account };
    pull_schedule(api.store.as_ref()).await.expect("the schedule reads").contains(&target)
}

#[tokio::test]
async fn disabling_hides_and_keeps_the_settings_and_stops_automatic_pulling_until_enabled() {
    each_backend(async |_, api| {
        let (admin, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, api.workspace_id, Some(admin.id)).await;

        let (status, list) = api.get("/helpdesk/email-accounts", &token).await;
        assert_eq!(status, 200, "[{}] {list}", api.backend);
        let ids: Vec<&str> = list.as_array().unwrap().iter().map(|a| a["id"].as_str().unwrap()).collect();
        assert_eq!(ids, [w.billing.to_string(), w.support.to_string()], "[{}] by address", api.backend);
        assert!(list[0].get("settings").is_none(), "[{}] no helpdesk, no settings: {list}", api.backend);

        let (status, before) = api.get(&account_path(w.support, ""), &token).await;
        assert_eq!(status, 200, "[{}] {before}", api.backend);
        let settings = &before["settings"];
        assert_eq!(
            settings,
            &json!({"emailAccountId": w.support, "emailAddress": before["email"], "emailDisplayName": "Support",
                    "isEnabled": true, "sendDefaultReply": true,
                    "defaultReplyBody": "<p>Thanks, we <strong>will</strong> answer soon.</p>",
                    "taskPriority": "High", "taskProjectId": w.project, "taskStatusId": null, "taskTypeId": null,
                    "taskAssignedId": admin.id, "taskAccountableId": null, "taskTagsIds": []}),
            "[{}]",
            api.backend
        );
        assert!(scheduled(api, w.support).await, "[{}] enabled: pulled automatically", api.backend);
        assert!(!scheduled(api, w.billing).await, "[{}] no helpdesk: not pulled", api.backend);

        let (status, disabled) = delete(api, &account_path(w.support, "/disable"), &token).await;
        assert_eq!(status, 200, "[{}] {disabled}", api.backend);
        let mut expected = before.clone();
        expected.as_object_mut().unwrap().remove("settings");
        expected["helpdeskEnabled"] = json!(false);
        assert_eq!(disabled, expected, "[{}] settings absent while disabled", api.backend);
        assert!(!scheduled(api, w.support).await, "[{}] removed from automatic pulling", api.backend);
        let (_, read) = api.get(&account_path(w.support, ""), &token).await;
        assert_eq!(read, expected, "[{}]", api.backend);
        let (status, again) = delete(api, &account_path(w.support, "/disable"), &token).await;
        assert_eq!((status, again), (200, expected.clone()), "[{}] idempotent", api.backend);
        // The settings cannot be changed unseen while disabled.
        let (status, body) =
            patch(api, &account_path(w.support, "/settings"), &token, json!({"taskPriority": "Low"})).await;
        assert_error_body(api.backend, status, &body, 409);

        let (status, enabled) = api.post(&account_path(w.support, "/enable"), &token, json!({})).await;
        assert_eq!((status, &enabled), (200, &before), "[{}] the kept settings, exactly", api.backend);
        assert!(scheduled(api, w.support).await, "[{}] pulled automatically again", api.backend);
        let (status, again) = api.post(&account_path(w.support, "/enable"), &token, json!({})).await;
        assert_eq!((status, again), (200, before), "[{}] idempotent", api.backend);
    })
    .await;
}

#[tokio::test]
async fn settings_changes_validate_every_field_and_keep_what_is_absent() {
    each_backend(async |_, api| {
        let (admin, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, api.workspace_id, Some(admin.id)).await;
        let (other, _) = api.user(STAFF, UserKind::Employee).await;
        let (status, tag) =
            api.post("/tags/task/create", &token, json!({"name": format!("mail-{}", Uuid::new_v4())})).await;
        assert_eq!(status, 200, "[{}] {tag}", api.backend);
        let path = account_path(w.support, "/settings");

        let change = json!({"defaultReplyBody": "<p>Hi <script>x</script><em>there</em></p>", "taskPriority": null,
            "taskAccountableId": other.id, "taskTagsIds": [tag["id"]], "taskStatusId": Uuid::nil()});
        let (status, changed) = patch(api, &path, &token, change).await;
        assert_eq!(status, 200, "[{}] {changed}", api.backend);
        let s = &changed["settings"];
        assert_eq!(s["defaultReplyBody"], "<p>Hi <em>there</em></p>", "[{}] editor profile, as HTML", api.backend);
        assert_eq!((s["taskPriority"].clone(), s["taskAccountableId"].clone()), (Value::Null, json!(other.id)));
        assert_eq!((s["taskTagsIds"].clone(), s["taskStatusId"].clone()), (json!([tag["id"]]), json!(Uuid::nil())));
        assert_eq!(
            (s["taskProjectId"].clone(), s["sendDefaultReply"].clone()),
            (json!(w.project), json!(true)),
            "kept"
        );
        // null inherits again
        let (_, inherited) = patch(api, &path, &token, json!({"taskTagsIds": null, "sendDefaultReply": false})).await;
        assert_eq!(
            (inherited["settings"]["taskTagsIds"].clone(), inherited["settings"]["sendDefaultReply"].clone()),
            (Value::Null, json!(false)),
            "[{}]",
            api.backend
        );

        // Every bad field at once, nothing written.
        let other_ws = identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let foreign_project = seeded(api, other_ws.id, None).await.project;
        let (inactive, _) = api.user(STAFF, UserKind::Employee).await;
        identity::ensure_user(api.store.as_ref(), &identity::User { is_active: false, ..inactive.clone() })
            .await
            .unwrap();
        let bad = json!({"sendDefaultReply": "yes", "taskPriority": "Whenever", "taskProjectId": foreign_project,
            "taskAssignedId": inactive.id, "taskAccountableId": Uuid::new_v4(), "taskTypeId": "type",
            "defaultReplyBody": 5});
        let (status, body) = patch(api, &path, &token, bad).await;
        assert_error_body(api.backend, status, &body, 400);
        for field in ["sendDefaultReply", "taskPriority", "taskTypeId", "defaultReplyBody"] {
            assert!(body["errors"][field].is_array(), "[{}] {field} in {body}", api.backend);
        }
        let refs = json!({"taskProjectId": foreign_project, "taskAssignedId": inactive.id,
            "taskAccountableId": Uuid::new_v4(), "taskTagsIds": [Uuid::new_v4(), tag["id"], tag["id"]]});
        let (status, body) = patch(api, &path, &token, refs).await;
        assert_error_body(api.backend, status, &body, 400);
        for field in ["taskProjectId", "taskAssignedId", "taskAccountableId", "taskTagsIds"] {
            assert!(body["errors"][field].is_array(), "[{}] {field} in {body}", api.backend);
        }
        assert_eq!(
            body["errors"]["taskTagsIds"].as_array().unwrap().len(),
            2,
            "[{}] unknown and repeated",
            api.backend
        );
        let (_, after) = api.get(&account_path(w.support, ""), &token).await;
        assert_eq!(after, inherited, "[{}] nothing written", api.backend);

        // Holders of a guest role are never employees (docs/permissions.md), though their user
        // record is not a contact's: neither the base Guest role nor a custom guest role may
        // take the account's tasks. 400 naming the field; nothing written.
        let (base_guest, _) = api.user(GUEST, UserKind::Employee).await;
        let custom = crate::administration_api::create_role(
            api,
            &token,
            json!({"name": format!("Visitor {}", Uuid::new_v4()), "icon": "fa-eye", "type": "guest", "parentId": GUEST}),
        )
        .await;
        let custom_id = custom["id"].as_str().unwrap();
        let (custom_guest, _) = api.user(custom_id, UserKind::Employee).await;
        for (assignee, accountable) in [(base_guest.id, custom_guest.id), (custom_guest.id, base_guest.id)] {
            let guests = json!({"taskAssignedId": assignee, "taskAccountableId": accountable});
            let (status, body) = patch(api, &path, &token, guests).await;
            assert_error_body(api.backend, status, &body, 400);
            let fields: Vec<&String> = body["errors"].as_object().unwrap().keys().collect();
            assert_eq!(fields, ["taskAccountableId", "taskAssignedId"], "[{}] {body}", api.backend);
            assert!(body["errors"]["taskAssignedId"][0].as_str().unwrap().contains("guest role"), "[{}] {body}", api.backend);
        }
        let (_, after) = api.get(&account_path(w.support, ""), &token).await;
        assert_eq!(after, inherited, "[{}] nothing written", api.backend);
        // A custom role of type normal is an employee's.
        let staffish = crate::administration_api::create_role(
            api,
            &token,
            json!({"name": format!("Agent {}", Uuid::new_v4()), "icon": "fa-user", "type": "normal", "parentId": STAFF}),
        )
        .await;
        let (agent, _) = api.user(staffish["id"].as_str().unwrap(), UserKind::Employee).await;
        let (status, changed) = patch(api, &path, &token, json!({"taskAssignedId": agent.id})).await;
        assert_eq!((status, changed["settings"]["taskAssignedId"].clone()), (200, json!(agent.id)), "[{}] {changed}", api.backend);
    })
    .await;
}

#[tokio::test]
async fn permission_workspace_and_path_checks() {
    each_backend(async |_, api| {
        let (admin, token) = api.user(ROOT, UserKind::Employee).await;
        let (_, staff) = api.user(STAFF, UserKind::Employee).await;
        let w = seeded(api, api.workspace_id, Some(admin.id)).await;
        let other_ws = identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let foreign = seeded(api, other_ws.id, None).await;

        for (method, action) in [(Method::GET, ""), (Method::DELETE, "/disable"), (Method::POST, "/enable")] {
            let (status, _, body) =
                api.call(method.clone(), &account_path(w.support, action), Some(&staff), None).await;
            assert_error_body(api.backend, status, &body, 403);
            for id in [foreign.support, Uuid::new_v4()] {
                let (status, _, body) = api.call(method.clone(), &account_path(id, action), Some(&token), None).await;
                assert_error_body(api.backend, status, &body, 404);
            }
            let (status, _, body) = api.call(method.clone(), &account_path("nope", action), Some(&token), None).await;
            assert_error_body(api.backend, status, &body, 400);
            assert!(body["errors"]["accountId"].is_array(), "[{}] {body}", api.backend);
        }
        let (status, body) = api.get("/helpdesk/email-accounts", &staff).await;
        assert_error_body(api.backend, status, &body, 403);
        let (status, body) = patch(api, &account_path(foreign.support, "/settings"), &token, json!({})).await;
        assert_error_body(api.backend, status, &body, 404);
        assert!(scheduled(api, w.support).await && !scheduled(api, foreign.billing).await, "[{}]", api.backend);
        let (_, list) = api.get("/helpdesk/email-accounts", &token).await;
        assert_eq!(list.as_array().unwrap().len(), 2, "[{}] only this workspace's accounts", api.backend);
    })
    .await;
}

#[tokio::test]
async fn seeded_mail_accounts_are_validated_whole_and_load_idempotently() {
    each_backend(async |_, api| {
        let bad = json!({"version": 1, "mailAccounts": [
            {"id": Uuid::nil(), "email": "nope", "displayName": " ", "helpdeskEnabled": true,
             "settings": {"taskProjectId": Uuid::new_v4(), "taskAssignedId": Uuid::new_v4(),
                          "taskTagsIds": [Uuid::new_v4()], "defaultReplyBody": "<p>ok</p>"}},
            {"id": Uuid::nil(), "email": "a@x.example", "displayName": "A"}
        ]});
        let file = local::seed::parse(&bad.to_string()).unwrap();
        let error = local::seed::load(api.store.as_ref(), api.workspace_id, &file).await.unwrap_err().to_string();
        for expected in [
            "mailAccounts[1].id",
            "mailAccounts[0].email",
            "mailAccounts[0].displayName",
            "mailAccounts[0].settings.taskProjectId",
            "mailAccounts[0].settings.taskAssignedId",
            "mailAccounts[0].settings.taskTagsIds",
        ] {
            assert!(error.contains(expected), "[{}] {expected} in {error}", api.backend);
        }
        let unknown = json!({"version": 1, "mailAccounts": [{"id": Uuid::nil(), "email": "a@x.example",
            "displayName": "A", "settings": {"taskPriorty": "High"}}]});
        assert!(local::seed::parse(&unknown.to_string()).is_err(), "[{}] a misspelt field is refused", api.backend);
        let (admin, _) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, api.workspace_id, Some(admin.id)).await;
        let again = json!({"version": 1, "mailAccounts": [{"id": w.billing, "email": "changed@x.example",
            "displayName": "Billing"}]});
        let file = local::seed::parse(&again.to_string()).unwrap();
        let first = local::seed::load(api.store.as_ref(), api.workspace_id, &file).await.unwrap();
        let second = local::seed::load(api.store.as_ref(), api.workspace_id, &file).await.unwrap();
        assert_eq!((first.written(), second.written()), (1, 0), "[{}]", api.backend);
    })
    .await;
}

#[tokio::test]
async fn store_round_trips_per_request() {
    each_backend(async |_, api| {
        let (admin, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, api.workspace_id, Some(admin.id)).await;
        api.get("/helpdesk/email-accounts", &token).await; // the token's lastUsedAt, once
        let (get, disable, enable) =
            (account_path(w.support, ""), account_path(w.support, "/disable"), account_path(w.support, "/enable"));
        assert_eq!(
            api.round_trips(api.get("/helpdesk/email-accounts", &token)).await.0.counts(),
            (4, 2),
            "[{}]",
            api.backend
        );
        assert_eq!(api.round_trips(api.get(&get, &token)).await.0.counts(), (4, 2), "[{}]", api.backend);
        assert_eq!(api.round_trips(delete(api, &disable, &token)).await.0.counts(), (4, 3), "[{}]", api.backend);
        assert_eq!(
            api.round_trips(delete(api, &disable, &token)).await.0.counts(),
            (4, 2),
            "[{}] no write",
            api.backend
        );
        assert_eq!(api.round_trips(api.post(&enable, &token, json!({}))).await.0.counts(), (4, 3), "[{}]", api.backend);
        let (settings, _) = api
            .round_trips(patch(
                api,
                &account_path(w.support, "/settings"),
                &token,
                json!({"taskProjectId": w.project, "taskPriority": "Low"}),
            ))
            .await;
        assert_eq!(settings.counts(), (6, 3), "[{}] account, project, account in the write cycle", api.backend);
    })
    .await;
}
