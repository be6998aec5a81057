//! Notifications made from events (docs/account.md#notifications-from-events), on every store
//! backend: a change made through the API records its event; handing that event to
//! `account::notify::from_event` (what the events dispatcher does, at least once per event) puts
//! one notification in each recipient's list, never the actor's, once however often it is handed
//! over, and the recipient's unread count goes up by one.

use api_tests::{TestApi, each_backend};
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;
use workapi_domain::event::{self, EventRecord};
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::{CEO, ROOT, STAFF, TEAM_LEADER};
use workapi_store::keys::WsKeys;
use workapi_store::{entity, query_all};

/// The workspace's one event of `event_type` about `resource_id`, as the outbox holds it.
async fn recorded(api: &TestApi, event_type: &str, resource_id: &str) -> EventRecord {
    let items = query_all(api.store.as_ref(), event::feed_query(WsKeys::new(api.workspace_id))).await.unwrap();
    let mut found: Vec<EventRecord> = items
        .into_iter()
        .map(|item| entity::from_item::<EventRecord>(item).unwrap())
        .filter(|e| e.payload.event_type == event_type && e.resource.id == resource_id)
        .collect();
    assert_eq!(found.len(), 1, "[{}] one {event_type} about {resource_id}", api.backend);
    found.remove(0)
}

/// Hands the event over as the dispatcher does; how many notifications that wrote.
async fn dispatch(api: &TestApi, event: &EventRecord) -> usize {
    account::notify::from_event(api.store.as_ref(), WsKeys::new(api.workspace_id), event).await.unwrap()
}

/// The caller's whole notification list (one page of up to 100).
async fn notifications(api: &TestApi, token: &str) -> Value {
    let (status, page) = api.get("/account/notifications?limit=100", token).await;
    assert_eq!(status, 200, "[{}] {page}", api.backend);
    page
}

async fn unread(api: &TestApi, token: &str) -> u64 {
    let (status, body) = api.get("/account/notifications/unread-count", token).await;
    assert_eq!(status, 200, "[{}] {body}", api.backend);
    body["unreadCount"].as_u64().unwrap()
}

async fn seed(api: &TestApi, seed: Value) {
    let file = local::seed::parse(&seed.to_string()).expect("seed parses");
    local::seed::load(api.store.as_ref(), api.workspace_id, &file).await.expect("seed loads");
}

/// A quotation A created and B accepted notifies A (the creator), not B (the actor); handed
/// over twice it is still one notification, at the event's time; A's unread count goes up by
/// one. A rejection after it is a second notification, also when two dispatchers race.
#[tokio::test]
async fn an_accepted_quotation_notifies_its_creator_once_and_never_the_actor() {
    each_backend(async |_, api| {
        let b = api.backend;
        let (creator, creator_token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let (decider, decider_token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let (org, contact, project, task) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let tag = Uuid::new_v4().simple().to_string();
        seed(api, json!({"version": 1,
            "organizations": [{"id": org, "name": "Acme"}],
            "contacts": [{"id": contact, "organizationId": org, "name": "Erika", "email": format!("e-{tag}@acme.example")}],
            "projects": [{"id": project, "name": "Shop", "customerOrganizationId": org,
                "members": [creator.id, decider.id, contact], "hourRate": 95, "currency": "EUR", "taxRate": 19,
                "expressQuotationsEnabled": true}],
            "tasks": [{"id": task, "shortNumber": 1, "projectId": project, "title": "Checkout redesign",
                "estimatedHours": 2}]
        }))
        .await;
        let path = format!("/tasks/{task}/express-quotations");
        let (status, created) =
            api.post(&path, &creator_token, json!({"contactUserId": contact, "includeEstimate": true})).await;
        assert_eq!(status, 201, "[{b}] {created}");
        let id = created["id"].as_str().unwrap();
        let before = unread(api, &creator_token).await;

        let accept = format!("{path}/{id}/accept?responseShape=full");
        let (status, accepted) = api.post(&accept, &decider_token, json!({})).await;
        assert_eq!(status, 200, "[{b}] {accepted}");
        let event = recorded(api, "express_quotation.accepted", id).await;
        assert_eq!(dispatch(api, &event).await, 1, "[{b}]");
        assert_eq!(dispatch(api, &event).await, 0, "[{b}] handed over again: nothing new");

        let page = notifications(api, &creator_token).await;
        let total = format!("{:.2} EUR", accepted["total"].as_f64().unwrap());
        let expected = json!([{
            "id": account::notify::event_notification_id(&event.id, creator.id),
            "title": "Quotation accepted",
            "body": format!("{} accepted express quotation #1 on “Checkout redesign” ({total}).", decider.name),
            "createdAt": event.payload.timestamp, "isRead": false, "readAt": null
        }]);
        assert_eq!(page["items"], expected, "[{b}]");
        assert_eq!(unread(api, &creator_token).await, before + 1, "[{b}]");
        assert_eq!(notifications(api, &decider_token).await["items"], json!([]), "[{b}] never the actor");

        // Withdrawn: a second event, a second notification, newest first; handed over by two
        // dispatchers at once, still written once.
        let (status, _) = api.post(&format!("{path}/{id}/reject"), &decider_token, json!({})).await;
        assert_eq!(status, 200, "[{b}]");
        let rejected = recorded(api, "express_quotation.rejected", id).await;
        let (first, second) = tokio::join!(dispatch(api, &rejected), dispatch(api, &rejected));
        assert_eq!(first + second, 1, "[{b}]");
        assert_eq!(unread(api, &creator_token).await, before + 2, "[{b}]");
        let titles: Vec<Value> =
            notifications(api, &creator_token).await["items"].as_array().unwrap().iter().map(|n| n["title"].clone()).collect();
        assert_eq!(titles, [json!("Quotation rejected"), json!("Quotation accepted")], "[{b}]");
    })
    .await;
}

/// A disabled helpdesk account notifies every holder of `WsSettings.manageSettings` but the
/// actor, once each; a member without the permission gets nothing.
#[tokio::test]
async fn a_disabled_helpdesk_account_notifies_the_settings_managers_but_the_actor() {
    each_backend(async |_, api| {
        let b = api.backend;
        let (_, actor_token) = api.user(ROOT, UserKind::Employee).await;
        let (_, root_token) = api.user(ROOT, UserKind::Employee).await;
        let (_, ceo_token) = api.user(CEO, UserKind::Employee).await;
        let (_, staff_token) = api.user(STAFF, UserKind::Employee).await;
        let account = Uuid::new_v4();
        let email = format!("support-{}@x.example", &Uuid::new_v4().simple().to_string()[..8]);
        seed(
            api,
            json!({"version": 1, "mailAccounts": [{"id": account, "email": email, "displayName": "Support",
            "helpdeskEnabled": true, "settings": {"sendDefaultReply": false}}]}),
        )
        .await;
        let before = unread(api, &root_token).await;

        let path = format!("/helpdesk/email-accounts/{account}/disable");
        let (status, _, body) = api.call(Method::DELETE, &path, Some(&actor_token), None).await;
        assert_eq!(status, 200, "[{b}] {body}");
        let event = recorded(api, "helpdesk_account.disabled", &account.to_string()).await;
        assert_eq!(dispatch(api, &event).await, 2, "[{b}] the other Root and the CEO");
        assert_eq!(dispatch(api, &event).await, 0, "[{b}]");

        let body = format!("Test User disabled the helpdesk of {email}: its mails no longer become tasks.");
        for token in [&root_token, &ceo_token] {
            let items = notifications(api, token).await["items"].clone();
            assert_eq!(items.as_array().unwrap().len(), 1, "[{b}] {items}");
            assert_eq!((&items[0]["title"], &items[0]["body"]), (&json!("Helpdesk disabled"), &json!(body)), "[{b}]");
        }
        assert_eq!(unread(api, &root_token).await, before + 1, "[{b}]");
        assert_eq!(unread(api, &actor_token).await, 0, "[{b}] never the actor");
        assert_eq!(unread(api, &staff_token).await, 0, "[{b}] not a settings manager");
    })
    .await;
}
