//! Events (docs/events.md) over HTTP on every store backend: each change records its event in
//! its own transaction (a refused change none, a replayed idempotent request no second one),
//! the feed `GET /events` pages oldest first, filters, expires its cursors after 30 days, and
//! shows a caller only events about what the caller may read.

use api_tests::operations::{Credential, catalogue};
use api_tests::{TestApi, assert_error_body, each_backend, next_page};
use base64::Engine;
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use workapi_domain::event::{RETENTION_SECS, new_id};
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::{ROOT, STAFF, TEAM_LEADER};

/// Every event `token` sees, oldest first, following the feed's pages.
async fn feed(api: &TestApi, token: &str, query: &str) -> Vec<Value> {
    api.list_all(&format!("/events?limit=100{query}"), token).await
}

fn ids(events: &[Value]) -> BTreeSet<String> {
    events.iter().map(|e| e["id"].as_str().unwrap().to_owned()).collect()
}

fn types_of(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

/// Every state-changing request of the operation catalogue (one valid request per documented
/// operation) records at least one event, of a type its operation declares, naming a resource
/// of that type's kind, with the caller as actor. Then: a member without `Invoices.manage`
/// sees the tag events but none about invoices.
#[tokio::test]
async fn every_change_of_the_catalogue_records_a_declared_event() {
    let declared: BTreeMap<&str, Vec<&str>> = registry::FUNCTIONS
        .iter()
        .flat_map(|f| f.emits)
        .map(|e| (e.operation, e.events.iter().map(|t| t.name).collect()))
        .collect();
    each_backend(async |_, api| {
        let catalogue = catalogue(api).await;
        let root = catalogue.root_token.clone();
        let (status, me) = api.get("/account/notifications?limit=1", &root).await;
        assert_eq!(status, 200, "{me}");
        let mut failures = Vec::new();
        let mut checked = 0;
        for request in &catalogue.requests {
            if request.method == Method::GET || request.credential != Credential::RootPat {
                continue;
            }
            let before = ids(&feed(api, &root, "").await);
            let (status, body) = catalogue.send(api, request).await;
            assert!(
                (200..300).contains(&status),
                "{}: {status} {}",
                request.operation_id,
                String::from_utf8_lossy(&body)
            );
            let after = feed(api, &root, "").await;
            let new: Vec<&Value> = after.iter().filter(|e| !before.contains(e["id"].as_str().unwrap())).collect();
            let Some(types) = declared.get(request.operation_id.as_str()) else {
                failures.push(format!("{}: declares no event type", request.operation_id));
                continue;
            };
            let recorded = new.iter().find(|e| types.contains(&e["type"].as_str().unwrap()));
            match recorded {
                None => failures.push(format!(
                    "{}: none of {types:?} recorded; new events: {:?}",
                    request.operation_id,
                    new.iter().map(|e| e["type"].clone()).collect::<Vec<_>>()
                )),
                Some(event) => {
                    let kind = event["type"].as_str().unwrap().split('.').next().unwrap();
                    assert_eq!(event["resource"]["kind"], kind, "{event}");
                    assert!(event["resource"]["id"].as_str().is_some_and(|id| !id.is_empty()), "{event}");
                    assert!(event["actor"]["userId"].is_string() && event["actor"].get("impersonatedBy").is_none());
                    assert!(event["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')), "{event}");
                    assert!(event["data"].is_object() && event["truncated"] == false, "{event}");
                }
            }
            checked += 1;
        }
        assert!(failures.is_empty(), "[{}] changes without their event:\n{}", api.backend, failures.join("\n"));
        assert!(checked >= 30, "[{}] only {checked} state-changing requests", api.backend);

        // Billing events are for invoice managers: a Team Leader (no Invoices.manage) sees
        // the tag events but none about potential invoices or invoices; Root sees both.
        let (_, leader) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let billing = |t: &&str| t.starts_with("invoice.") || t.starts_with("potential_invoice.");
        let everything = feed(api, &root, "").await;
        assert!(types_of(&everything).iter().any(billing), "[{}] Root sees billing events", api.backend);
        let visible = feed(api, &leader, "").await;
        assert!(!types_of(&visible).iter().any(billing), "[{}] {:?}", api.backend, types_of(&visible));
        assert!(types_of(&visible).contains(&"tag.created"), "[{}] {:?}", api.backend, types_of(&visible));
        // A notification's event is its recipient's alone.
        assert!(types_of(&everything).contains(&"notification.read"));
        assert!(!types_of(&visible).contains(&"notification.read"));
    })
    .await;
}

/// The event is part of its change: written with it, never without it, once.
#[tokio::test]
async fn an_event_is_written_with_its_change_only() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let name = format!("Events {}", uuid::Uuid::new_v4().simple());
        let key = [("Idempotency-Key", name.as_str())];
        let create =
            || api.send_with(Method::POST, "/tags/task/create", &root, &key, Some(json!({"name": name.clone()})));
        // An idempotent create and its replay: one tag, one event, the tag as the API returns it.
        let (status, _, tag) = create().await;
        assert_eq!(status, 200, "{tag}");
        let (status, headers, again) = create().await;
        assert_eq!((status, headers["idempotent-replayed"].to_str().unwrap()), (200, "true"));
        assert_eq!(again, tag);
        let id = tag["id"].as_str().unwrap();
        let of_tag = format!("&resourceKind=tag&resourceId={id}");
        let events = feed(api, &root, &of_tag).await;
        assert_eq!(types_of(&events), ["tag.created"], "[{}]", api.backend);
        let (_, full) = api.get("/tags/task?responseShape=full&limit=100", &root).await;
        let listed = full.as_array().unwrap().iter().find(|t| t["id"] == id).unwrap().clone();
        assert_eq!(events[0]["data"], listed, "the data is the tag as the API returns it");
        // The same name again without a key: the existing tag, no change, no event.
        let (status, existing) = api.post("/tags/task/create", &root, json!({"name": name.clone()})).await;
        assert_eq!((status, &existing["id"]), (200, &tag["id"]));

        // Refused changes record nothing: a stale If-Match (412) and a bad body (400).
        let color = format!("/tags/task/{id}/color");
        let stale = [("If-Match", "\"0-stale\"")];
        let (status, _, _) = api.send_with(Method::PUT, &color, &root, &stale, Some(json!({"color": "red"}))).await;
        assert_eq!(status, 412);
        let (status, _, _) = api.send_with(Method::PUT, &color, &root, &[], Some(json!({"color": "plaid"}))).await;
        assert_eq!(status, 400);
        assert_eq!(types_of(&feed(api, &root, &of_tag).await), ["tag.created"], "[{}]", api.backend);
        // A change: its event carries the tag as changed.
        let (status, _, _) = api.send_with(Method::PUT, &color, &root, &[], Some(json!({"color": "red"}))).await;
        assert_eq!(status, 200);
        let events = feed(api, &root, &of_tag).await;
        assert_eq!(types_of(&events), ["tag.created", "tag.updated"], "[{}]", api.backend);
        assert_eq!(events[1]["data"]["color"], "red");

        // A role that a user holds cannot be deleted (409): no role.deleted.
        let body =
            json!({"name": format!("Role {}", uuid::Uuid::new_v4().simple()), "icon": "fa-eye", "type": "normal"});
        let (status, role) = api.post("/administration/roles?responseShape=full", &root, body).await;
        assert_eq!(status, 201, "{role}");
        let role_id = role["id"].as_str().unwrap();
        api.user(role_id, UserKind::Employee).await;
        let (status, _, _) =
            api.call(Method::DELETE, &format!("/administration/roles/{role_id}"), Some(&root), None).await;
        assert_eq!(status, 409);
        let of_role = format!("&resourceKind=role&resourceId={role_id}");
        assert_eq!(types_of(&feed(api, &root, &of_role).await), ["role.created"], "[{}]", api.backend);
        // The same replacement twice (a client retrying a PUT whose answer it lost): one change,
        // one event; the second changes nothing.
        let replaced = json!({"name": "Replaced", "icon": "fa-eye", "type": "normal", "permissions": {}});
        let path = format!("/administration/roles/{role_id}?responseShape=full");
        for _ in 0..2 {
            let (status, _, answer) = api.send_with(Method::PUT, &path, &root, &[], Some(replaced.clone())).await;
            assert_eq!(status, 200, "{answer}");
        }
        let events = feed(api, &root, &of_role).await;
        assert_eq!(types_of(&events), ["role.created", "role.updated"], "[{}]", api.backend);
    })
    .await;
}

/// The feed pages oldest first with the one paging convention, filters by type and resource,
/// refuses unknown filters, and answers a cursor older than the 30 days kept with 410.
#[tokio::test]
async fn the_feed_pages_filters_and_expires_its_cursors() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let mut created = Vec::new();
        for n in 0..3 {
            let (status, tag) = api
                .post("/tags/project/create", &root, json!({"name": format!("Feed {n} {}", uuid::Uuid::new_v4())}))
                .await;
            assert_eq!(status, 200, "{tag}");
            created.push(tag["id"].as_str().unwrap().to_owned());
        }
        let (status, headers, first) =
            api.call(Method::GET, "/events?type=tag.created&limit=2", Some(&root), None).await;
        assert_eq!(status, 200, "{first}");
        assert_eq!(first.as_array().unwrap().len(), 2);
        let next = next_page(&headers).expect("a next page");
        let all = feed(api, &root, "&type=tag.created,tag.deleted").await;
        let listed: Vec<&str> = all.iter().map(|e| e["resource"]["id"].as_str().unwrap()).collect();
        assert_eq!(&listed[listed.len() - 3..], created.iter().map(String::as_str).collect::<Vec<_>>(), "newest last");
        let mut sorted = ids(&all).into_iter().collect::<Vec<_>>();
        sorted.sort();
        assert_eq!(all.iter().map(|e| e["id"].as_str().unwrap()).collect::<Vec<_>>(), sorted, "ids sort by time");
        assert!(next.contains("type=tag.created"), "the filter stays on the next page: {next}");
        let other = feed(api, &root, "&type=role.created").await;
        assert!(other.iter().all(|e| e["type"] == "role.created"));

        // Bad filters name their field.
        for (query, field) in
            [("type=tag.exploded", "type"), ("resourceKind=spaceship", "resourceKind"), ("resourceId=x", "resourceId")]
        {
            let (status, body) = api.get(&format!("/events?{query}"), &root).await;
            assert_error_body(api.backend, status, &body, 400);
            assert!(body["errors"][field].is_array(), "{query}: {body}");
        }
        // A cursor of an event older than the 30 days kept: 410, start again; garbage: 400.
        let old = new_id((workapi_store::clock::now_epoch() - RETENTION_SECS - 60) * 1000);
        let cursor = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(serde_json::to_vec(&json!({"p": "/events", "k": [old]})).unwrap());
        let (status, body) = api.get(&format!("/events?cursor={cursor}"), &root).await;
        assert_error_body(api.backend, status, &body, 410);
        assert!(body["message"].as_str().unwrap().contains("start again"), "{body}");
        let (status, body) = api.get("/events?cursor=nonsense", &root).await;
        assert_error_body(api.backend, status, &body, 400);
    })
    .await;
}

/// The feed lists an event once it has settled (docs/events.md, "A gapless feed"): not while a
/// change could still commit behind it, so a walk along the `Link`s misses nothing. A page that
/// holds events links to what follows, the last page too, so a poller can come back; a cursor
/// at an event not settled yet (another instance's, a webhook's id) answers an empty page.
#[tokio::test]
async fn the_feed_lists_an_event_once_it_has_settled() {
    const SETTLE_MS: u64 = 3_000;
    for backend in api_tests::backends().await {
        let api = TestApi::builder(&backend).events_settle_ms(SETTLE_MS as i64).start().await;
        let name = api.backend;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let (status, tag) =
            api.post("/tags/project/create", &root, json!({"name": format!("Settle {}", uuid::Uuid::new_v4())})).await;
        let made = std::time::Instant::now();
        assert_eq!(status, 200, "[{name}] {tag}");
        let path = format!("/events?resourceKind=tag&resourceId={}", tag["id"].as_str().unwrap());
        let (status, headers, events) = api.call(Method::GET, &path, Some(&root), None).await;
        assert_eq!(status, 200, "[{name}] {events}");
        // Asserted only while the event is surely unsettled (a loaded machine may be slower).
        if made.elapsed().as_millis() < (SETTLE_MS / 2) as u128 {
            assert_eq!(events, json!([]), "[{name}] not listed before it has settled");
            assert!(next_page(&headers).is_none(), "[{name}] an empty page has no next");
        }
        let unsettled = new_id(workapi_store::clock::now_epoch() * 1000);
        let cursor = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(serde_json::to_vec(&json!({"p": "/events", "k": [unsettled]})).unwrap());
        let (status, headers, page) =
            api.call(Method::GET, &format!("/events?cursor={cursor}"), Some(&root), None).await;
        assert_eq!((status, page.clone()), (200, json!([])), "[{name}] a cursor not settled yet: {page}");
        assert!(next_page(&headers).is_none());

        tokio::time::sleep(std::time::Duration::from_millis(SETTLE_MS + 300).saturating_sub(made.elapsed())).await;
        let (status, headers, events) = api.call(Method::GET, &path, Some(&root), None).await;
        assert_eq!(status, 200, "[{name}] {events}");
        assert_eq!(types_of(events.as_array().unwrap()), ["tag.created"], "[{name}] listed once settled");
        let next = next_page(&headers).expect("the last page links to what follows it");
        let next = next.strip_prefix(&api.base).expect("a link of this API");
        let (status, headers, after) = api.call(Method::GET, next, Some(&root), None).await;
        assert_eq!((status, after.clone()), (200, json!([])), "[{name}] nothing after it yet: {after}");
        assert!(next_page(&headers).is_none(), "[{name}] an empty page has no next");
    }
}

/// In imposter mode the event names the user acted as and the impersonating token owner.
#[tokio::test]
async fn an_imposters_change_names_both_users() {
    each_backend(async |_, api| {
        let (owner, root) = api.user(ROOT, UserKind::Employee).await;
        let (target, _) = api.user(STAFF, UserKind::Employee).await;
        let target_id = target.id.to_string();
        let body = json!({"name": format!("Imposter {}", uuid::Uuid::new_v4())});
        let header = [("LT_IMPOSTER_USER_ID", target_id.as_str())];
        let (status, _, tag) = api.send_with(Method::POST, "/tags/task/create", &root, &header, Some(body)).await;
        assert_eq!(status, 200, "{tag}");
        let events = feed(api, &root, &format!("&resourceKind=tag&resourceId={}", tag["id"].as_str().unwrap())).await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["actor"], json!({"userId": target_id, "impersonatedBy": owner.id.to_string()}));
    })
    .await;
}
