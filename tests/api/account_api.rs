//! The caller's notifications over HTTP with real tokens (spec §3, §4.10, §7;
//! docs/account.md), on every store backend: newest first, the unread filter, cursor pages,
//! the exact unread count, marking read (idempotent, also under 20 concurrent marks), other
//! users' and workspaces' notifications as 404, malformed input as 400 with the §7 body, and
//! imposter mode acting as the impersonated user.

use api_tests::{Backend, TestApi, assert_error_body, each_backend};
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::Arc;
use uuid::Uuid;
use workapi_domain::identity::{self, UserKind};
use workapi_domain::permissions::{ROOT, STAFF};

/// Seeds notifications for `user`: (title, createdAt, isRead); returns their ids in order.
async fn notify(api: &TestApi, workspace: Uuid, user: Uuid, entries: &[(&str, &str, bool)]) -> Vec<Uuid> {
    let ids: Vec<Uuid> = entries.iter().map(|_| Uuid::new_v4()).collect();
    let notifications: Vec<Value> = entries
        .iter()
        .zip(&ids)
        .map(|((title, at, read), id)| {
            json!({"id": id, "userId": user, "title": title, "body": format!("About {title}"), "createdAt": at,
                   "isRead": read})
        })
        .collect();
    let seed = json!({"version": 1, "notifications": notifications});
    let file = local::seed::parse(&seed.to_string()).expect("seed parses");
    local::seed::load(api.store.as_ref(), workspace, &file).await.expect("seed loads");
    ids
}

const FIVE: &[(&str, &str, bool)] = &[
    ("first", "2026-11-20T08:00:00Z", true),
    ("second", "2026-11-21T08:00:00Z", false),
    ("third", "2026-11-22T08:00:00+02:00", false),
    ("fourth", "2026-11-23T08:00:00Z", true),
    ("fifth", "2026-11-24T08:00:00.5Z", false),
];

fn titles(page: &Value) -> Vec<String> {
    page["items"].as_array().unwrap().iter().map(|n| n["title"].as_str().unwrap().to_owned()).collect()
}

async fn all_pages(api: &TestApi, token: &str, query: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..20 {
        let path = match &cursor {
            Some(c) => format!("/account/notifications?{query}&cursor={c}"),
            None => format!("/account/notifications?{query}"),
        };
        let (status, page) = api.get(&path, token).await;
        assert_eq!(status, 200, "[{}] {path}: {page}", api.backend);
        items.extend(page["items"].as_array().unwrap().iter().cloned());
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return items,
        }
    }
    panic!("[{}] the pages never ended", api.backend);
}

#[tokio::test]
async fn notifications_list_newest_first_filter_unread_page_by_cursor_and_count_exactly() {
    each_backend(async |_, api| {
        let (user, token) = api.user(STAFF, UserKind::Employee).await;
        let ids = notify(api, api.workspace_id, user.id, FIVE).await;

        let (status, page) = api.get("/account/notifications", &token).await;
        assert_eq!(status, 200, "[{}] {page}", api.backend);
        assert_eq!(titles(&page), ["fifth", "fourth", "third", "second", "first"], "[{}]", api.backend);
        assert_eq!((page["unreadCount"].clone(), page["nextCursor"].clone()), (json!(3), Value::Null));
        let fifth = &page["items"][0];
        assert_eq!(
            fifth,
            &json!({"id": ids[4], "title": "fifth", "body": "About fifth", "createdAt": "2026-11-24T08:00:00.500Z",
                    "isRead": false, "readAt": null}),
            "[{}]",
            api.backend
        );
        assert_eq!(page["items"][2]["createdAt"], "2026-11-22T06:00:00.000Z", "stored in UTC");

        let (_, unread) = api.get("/account/notifications?unreadOnly=true", &token).await;
        assert_eq!(titles(&unread), ["fifth", "third", "second"], "[{}]", api.backend);
        let (_, count) = api.get("/account/notifications/unread-count", &token).await;
        assert_eq!(count, json!({"unreadCount": 3}), "[{}]", api.backend);

        // Pages of two: every notification exactly once, in order, and the last page says so.
        let (_, first) = api.get("/account/notifications?limit=2", &token).await;
        assert_eq!((titles(&first), first["nextCursor"].is_string()), (vec!["fifth".into(), "fourth".into()], true));
        let paged: Vec<Value> = all_pages(api, &token, "limit=2").await;
        assert_eq!(paged, page["items"].as_array().unwrap().clone(), "[{}] pages = the whole list", api.backend);
        let unread_paged = all_pages(api, &token, "limit=1&unreadOnly=true").await;
        assert_eq!(unread_paged, unread["items"].as_array().unwrap().clone(), "[{}]", api.backend);
        // A page that ends exactly at the end has no next cursor.
        let (_, exact) = api.get("/account/notifications?limit=5", &token).await;
        assert_eq!((exact["items"].as_array().unwrap().len(), exact["nextCursor"].clone()), (5, Value::Null));

        // Marking one read: it leaves the unread list and the count, and says when.
        let (status, body) = api.post(&format!("/account/notifications/{}/read", ids[2]), &token, json!({})).await;
        assert_eq!((status, body), (200, json!({"success": true})), "[{}]", api.backend);
        let (_, unread) = api.get("/account/notifications?unreadOnly=true", &token).await;
        assert_eq!((titles(&unread), unread["unreadCount"].clone()), (vec!["fifth".into(), "second".into()], json!(2)));
        let (_, page) = api.get("/account/notifications", &token).await;
        let third = &page["items"][2];
        assert_eq!((third["title"].as_str(), third["isRead"].as_bool()), (Some("third"), Some(true)));
        let read_at = third["readAt"].as_str().expect("readAt set").to_owned();

        // Again: the same answer, nothing changes (the first readAt stays).
        let (status, body) = api.post(&format!("/account/notifications/{}/read", ids[2]), &token, json!({})).await;
        assert_eq!((status, body), (200, json!({"success": true})), "[{}]", api.backend);
        let (_, again) = api.get("/account/notifications", &token).await;
        assert_eq!(again, page, "[{}] idempotent", api.backend);
        assert_eq!(again["items"][2]["readAt"], read_at);
        // A notification read from the start can be marked too.
        let (status, _) = api.post(&format!("/account/notifications/{}/read", ids[0]), &token, json!({})).await;
        assert_eq!(status, 200, "[{}]", api.backend);
    })
    .await;
}

#[tokio::test]
async fn twenty_concurrent_read_marks_all_answer_200_and_leave_one_state() {
    each_backend(async |_, api| {
        let (user, token) = api.user(STAFF, UserKind::Employee).await;
        let ids = notify(api, api.workspace_id, user.id, FIVE).await;
        let api = Arc::new(api);
        let path = format!("/account/notifications/{}/read", ids[1]);
        let marks = (0..20).map(|_| {
            let (api, token, path) = (api.clone(), token.clone(), path.clone());
            async move { api.post(&path, &token, json!({})).await }
        });
        let answers = futures::future::join_all(marks).await;
        for (status, body) in &answers {
            assert_eq!((*status, body), (200, &json!({"success": true})), "[{}]", api.backend);
        }
        let (_, page) = api.get("/account/notifications", &token).await;
        assert_eq!(page["unreadCount"], 2, "[{}] exactly one fewer unread: {page}", api.backend);
        let second = &page["items"][3];
        assert_eq!(
            (second["id"].as_str(), second["isRead"].as_bool()),
            (Some(ids[1].to_string().as_str()), Some(true))
        );
        let (_, unread) = api.get("/account/notifications?unreadOnly=true", &token).await;
        assert_eq!(titles(&unread), ["fifth", "third"], "[{}]", api.backend);
        // The record and its timeline entry agree on when it was read.
        let scope = (workapi_store::keys::WsKeys::new(api.workspace_id), user.id);
        let record = account::notifications::get(api.store.as_ref(), scope, ids[1]).await.unwrap().unwrap();
        assert_eq!(record.notification.read_at.as_deref(), second["readAt"].as_str(), "[{}]", api.backend);
        assert_eq!(record.version, 2, "[{}] written once", api.backend);
    })
    .await;
}

#[tokio::test]
async fn other_users_and_other_workspaces_notifications_are_404_and_stay_unread() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let (colleague, colleague_token) = api.user(STAFF, UserKind::Employee).await;
        let theirs = notify(api, api.workspace_id, colleague.id, &[("theirs", "2026-11-20T08:00:00Z", false)]).await;
        let other_ws = identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let (stranger, _) = api.user_in(other_ws.id, ROOT, UserKind::Employee, &["api:read", "api:write"]).await;
        let foreign = notify(api, other_ws.id, stranger.id, &[("foreign", "2026-11-20T08:00:00Z", false)]).await;

        for id in [theirs[0], foreign[0], Uuid::new_v4()] {
            let (status, body) = api.post(&format!("/account/notifications/{id}/read"), &token, json!({})).await;
            assert_error_body(api.backend, status, &body, 404);
        }
        let (_, mine) = api.get("/account/notifications", &token).await;
        assert_eq!((titles(&mine).len(), mine["unreadCount"].clone()), (0, json!(0)), "[{}] only my own", api.backend);
        let (_, page) = api.get("/account/notifications?unreadOnly=true", &colleague_token).await;
        assert_eq!(titles(&page), ["theirs"], "[{}] still unread for its owner", api.backend);
    })
    .await;
}

#[tokio::test]
async fn malformed_ids_cursors_and_parameters_are_400_with_the_validation_body() {
    each_backend(async |_, api| {
        let (user, token) = api.user(STAFF, UserKind::Employee).await;
        notify(api, api.workspace_id, user.id, FIVE).await;
        let (status, body) = api.post("/account/notifications/not-a-uuid/read", &token, json!({})).await;
        assert_error_body(api.backend, status, &body, 400);
        assert!(body["errors"]["id"][0].is_string(), "[{}] errors names the id: {body}", api.backend);
        for (query, field) in [
            ("cursor=bogus", "cursor"),
            ("cursor=MjAyNi0xMS0yMA", "cursor"),
            ("limit=0", "limit"),
            ("limit=101", "limit"),
            ("limit=ten", "limit"),
            ("unreadOnly=yes", "unreadOnly"),
        ] {
            let (status, body) = api.get(&format!("/account/notifications?{query}"), &token).await;
            assert_error_body(api.backend, status, &body, 400);
            assert!(body["errors"][field].is_array(), "[{}] {query}: {body}", api.backend);
        }
        let (status, _) = api.get("/account/notifications?limit=100&unreadOnly=false", &token).await;
        assert_eq!(status, 200, "[{}] the bounds themselves are fine", api.backend);
    })
    .await;
}

#[tokio::test]
async fn authentication_and_scopes_come_first() {
    each_backend(async |_, api| {
        let (user, _) = api.user(STAFF, UserKind::Employee).await;
        let ids = notify(api, api.workspace_id, user.id, FIVE).await;
        let path = format!("/account/notifications/{}/read", ids[1]);
        let (status, _, body) = api.call(Method::POST, &path, None, None).await;
        assert_error_body(api.backend, status, &body, 401);
        let (_, read_only) = api.user_in(api.workspace_id, STAFF, UserKind::Employee, &["api:read"]).await;
        let (status, body) = api.post(&path, &read_only, json!({})).await;
        assert_error_body(api.backend, status, &body, 403);
        let (status, _) = api.get("/account/notifications", &read_only).await;
        assert_eq!(status, 200, "[{}] reading needs api:read only", api.backend);
    })
    .await;
}

async fn call_as(api: &TestApi, method: Method, path: &str, token: &str, target: Uuid) -> (u16, Value) {
    let response = api
        .http
        .request(method, api.url(path))
        .bearer_auth(token)
        .header("LT_IMPOSTER_USER_ID", target.to_string())
        .send()
        .await
        .expect("request reaches the server");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn imposter_mode_reads_and_marks_as_the_impersonated_user() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let (target, target_token) = api.user(STAFF, UserKind::Employee).await;
        let own = notify(api, api.workspace_id, root.id, &[("root's", "2026-11-20T08:00:00Z", false)]).await;
        let theirs = notify(api, api.workspace_id, target.id, &[("target's", "2026-11-21T08:00:00Z", false)]).await;

        let (status, page) = call_as(api, Method::GET, "/account/notifications", &token, target.id).await;
        assert_eq!((status, titles(&page)), (200, vec!["target's".to_owned()]), "[{}] {page}", api.backend);
        let (status, body) =
            call_as(api, Method::POST, &format!("/account/notifications/{}/read", own[0]), &token, target.id).await;
        assert_error_body(api.backend, status, &body, 404);
        let (status, _) =
            call_as(api, Method::POST, &format!("/account/notifications/{}/read", theirs[0]), &token, target.id).await;
        assert_eq!(status, 200, "[{}]", api.backend);
        let (_, page) = api.get("/account/notifications", &target_token).await;
        assert_eq!(page["unreadCount"], 0, "[{}] read for the target", api.backend);
        let (_, page) = api.get("/account/notifications", &token).await;
        assert_eq!(page["unreadCount"], 1, "[{}] root's own untouched", api.backend);
    })
    .await;
}

#[tokio::test]
async fn seeded_notifications_are_validated_whole_and_load_idempotently() {
    each_backend(async |_, api| {
        let (user, _) = api.user(STAFF, UserKind::Employee).await;
        let id = Uuid::new_v4();
        let bad = json!({"version": 1, "notifications": [
            {"id": id, "userId": Uuid::new_v4(), "title": "x", "createdAt": "2026-11-20T08:00:00Z"},
            {"id": id, "userEmail": "nobody@nowhere.example", "title": " ", "createdAt": "yesterday"},
            {"id": Uuid::new_v4(), "userId": user.id, "userEmail": user.email, "title": "both", "createdAt": "2026-11-20T08:00:00Z"}
        ]});
        let file = local::seed::parse(&bad.to_string()).unwrap();
        let error = local::seed::load(api.store.as_ref(), api.workspace_id, &file).await.unwrap_err().to_string();
        for expected in [
            "notifications[1].id",
            "notifications[0].userId: no such user",
            "notifications[1].userEmail",
            "notifications[1].title",
            "notifications[1].createdAt",
            "notifications[2]: name the user by exactly one",
        ] {
            assert!(error.contains(expected), "[{}] {expected} in {error}", api.backend);
        }
        let good = json!({"version": 1, "notifications": [
            {"id": id, "userEmail": user.email.to_uppercase(), "title": "Hello", "createdAt": "2026-11-20T08:00:00Z"}
        ]});
        let file = local::seed::parse(&good.to_string()).unwrap();
        let first = local::seed::load(api.store.as_ref(), api.workspace_id, &file).await.unwrap();
        let second = local::seed::load(api.store.as_ref(), api.workspace_id, &file).await.unwrap();
        assert_eq!((first.written(), second.written()), (1, 0), "[{}]", api.backend);
    })
    .await;
}

/// The local server's first start: the demo admin has unread and read notifications, can mark
/// one read and see the count drop; the demo helpdesk account disables and re-enables with its
/// settings back unchanged. (Embedded store only: the demo needs an empty store.)
#[tokio::test]
async fn the_demo_workspace_has_notifications_and_a_helpdesk_account_to_work_with() {
    let key = workapi_domain::token::TokenKey::generate();
    let backend =
        Backend { name: "embedded", store: Arc::new(workapi_store::sqlite::SqliteStore::in_memory().unwrap()) };
    let demo = local::demo::ensure_demo(backend.store.as_ref(), &key).await.unwrap().expect("an empty store");
    let api = TestApi::builder(&backend).token_key(key).start().await;
    let token = demo.token.as_str();

    let (status, page) = api.get("/account/notifications", token).await;
    assert_eq!(status, 200, "{page}");
    let items = page["items"].as_array().unwrap();
    let unread = items.iter().filter(|n| n["isRead"] == false).count();
    assert!(unread >= 3 && items.len() - unread >= 1, "three unread and one read: {page}");
    assert_eq!(page["unreadCount"], unread);
    let first_unread = items.iter().find(|n| n["isRead"] == false).unwrap()["id"].as_str().unwrap().to_owned();
    let (status, _) = api.post(&format!("/account/notifications/{first_unread}/read"), token, json!({})).await;
    assert_eq!(status, 200);
    let (_, count) = api.get("/account/notifications/unread-count", token).await;
    assert_eq!(count["unreadCount"], unread - 1);

    let (status, accounts) = api.get("/helpdesk/email-accounts", token).await;
    assert_eq!(status, 200, "{accounts}");
    let accounts = accounts.as_array().unwrap();
    assert!(accounts.iter().any(|a| a["helpdeskEnabled"] == false && a.get("settings").is_none()), "{accounts:?}");
    let enabled = accounts.iter().find(|a| a["helpdeskEnabled"] == true).expect("a helpdesk account").clone();
    assert_eq!(enabled["settings"]["taskPriority"], "High");
    let id = enabled["id"].as_str().unwrap();
    let (_, _, disabled) =
        api.call(Method::DELETE, &format!("/helpdesk/email-accounts/{id}/disable"), Some(token), None).await;
    assert_eq!((disabled["helpdeskEnabled"].clone(), disabled.get("settings")), (json!(false), None), "{disabled}");
    let (status, enabled_again) = api.post(&format!("/helpdesk/email-accounts/{id}/enable"), token, json!({})).await;
    assert_eq!((status, enabled_again), (200, enabled), "settings back unchanged");
}

#[tokio::test]
async fn store_round_trips_per_request() {
    each_backend(async |_, api| {
        let (user, token) = api.user(STAFF, UserKind::Employee).await;
        let ids = notify(api, api.workspace_id, user.id, FIVE).await;
        api.get("/account/notifications/unread-count", &token).await; // the token's lastUsedAt, once
        let read = format!("/account/notifications/{}/read", ids[1]);
        // Authentication: credential, user and custom-role reads; rate limits: the IP and token
        // counters.
        assert_eq!(
            api.round_trips(api.get("/account/notifications", &token)).await.0.counts(),
            (5, 2),
            "[{}]",
            api.backend
        );
        let count = api.round_trips(api.get("/account/notifications/unread-count", &token)).await.0.counts();
        assert_eq!(count, (4, 2), "[{}]", api.backend);
        assert_eq!(api.round_trips(api.post(&read, &token, json!({}))).await.0.counts(), (4, 3), "[{}]", api.backend);
        assert_eq!(
            api.round_trips(api.post(&read, &token, json!({}))).await.0.counts(),
            (4, 2),
            "[{}] read: no write",
            api.backend
        );
    })
    .await;
}
