//! `Idempotency-Key` on creating POSTs (docs/conventions.md#idempotency), on every backend:
//! concurrent duplicates create once, a replay returns the first response, another body is
//! 422, keys are per workspace and caller, and without the header nothing changes.

use api_tests::{TestApi, assert_error_body, each_backend};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;

const ACTIVITIES: &str = "/administration/task-settings/activities";

fn unique(name: &str) -> String {
    format!("{name} {}", &uuid::Uuid::new_v4().simple().to_string()[..8])
}

/// Status, headers and JSON body of a request with extra headers.
async fn send(
    api: &TestApi,
    method: Method,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, &[u8])],
    body: Option<Value>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = api.http.request(method, api.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    for (name, value) in headers {
        request = request.header(*name, reqwest::header::HeaderValue::from_bytes(value).unwrap());
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request reaches the server");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.bytes().await.unwrap();
    (status, headers, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

async fn create(
    api: &TestApi,
    token: &str,
    key: Option<&str>,
    body: Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let headers: Vec<(&str, &[u8])> = key.map(|k| ("Idempotency-Key", k.as_bytes())).into_iter().collect();
    send(api, Method::POST, &format!("{ACTIVITIES}?responseShape=full"), Some(token), &headers, Some(body)).await
}

async fn activities_named(api: &TestApi, token: &str, name: &str) -> usize {
    let (status, list) = api.get(ACTIVITIES, token).await;
    assert_eq!(status, 200, "{list}");
    list.as_array().unwrap().iter().filter(|a| a["name"] == name).count()
}

#[tokio::test]
async fn twenty_concurrent_identical_posts_create_exactly_one_resource() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let name = unique("Once");
        let key = uuid::Uuid::new_v4().to_string();
        let calls = (0..20).map(|_| create(api, &root, Some(&key), json!({"name": name})));
        let answers = futures::future::join_all(calls).await;
        let created: Vec<_> = answers.iter().filter(|(status, _, _)| *status != 409).collect();
        assert!(!created.is_empty(), "[{}] every request answered 409", api.backend);
        for (status, _, body) in &created {
            assert_eq!(*status, 201, "[{}] {body}", api.backend);
            assert_eq!(body, &created[0].2, "[{}] every answer is the first one", api.backend);
        }
        for (status, _, body) in answers.iter().filter(|(status, _, _)| *status == 409) {
            assert_error_body(api.backend, *status, body, 409);
        }
        assert_eq!(activities_named(api, &root, &name).await, 1, "[{}] one activity", api.backend);
        // Once completed, every retry is the replay.
        let (status, headers, body) = create(api, &root, Some(&key), json!({"name": name})).await;
        assert_eq!((status, &body), (201, &created[0].2), "[{}]", api.backend);
        assert_eq!(headers["idempotent-replayed"], "true", "[{}]", api.backend);
    })
    .await;
}

#[tokio::test]
async fn the_replay_is_the_first_response_even_after_the_resource_changed() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let key = uuid::Uuid::new_v4().to_string();
        let name = unique("First");
        let (status, headers, first) = create(api, &root, Some(&key), json!({"name": name})).await;
        assert_eq!(status, 201, "[{}] {first}", api.backend);
        assert!(headers.get("idempotent-replayed").is_none());
        let id = first["id"].as_str().unwrap();
        let rename = Some(json!({"name": unique("Renamed"), "translations": []}));
        let (status, _, renamed) = api.call(Method::PUT, &format!("{ACTIVITIES}/{id}"), Some(&root), rename).await;
        assert_eq!(status, 200, "[{}] {renamed}", api.backend);
        let (status, headers, replay) = create(api, &root, Some(&key), json!({"name": name})).await;
        assert_eq!(status, 201, "[{}] {replay}", api.backend);
        assert_eq!(replay, first, "[{}] the recorded body, not the current resource", api.backend);
        assert_eq!(headers["idempotent-replayed"], "true");
        assert!(headers["content-type"].to_str().unwrap().starts_with("application/json"));
        assert!(headers.contains_key("x-ratelimit-remaining"), "[{}] the shared headers still apply", api.backend);
        assert_eq!(activities_named(api, &root, &name).await, 0, "[{}] renamed, not re-created", api.backend);
    })
    .await;
}

#[tokio::test]
async fn the_same_key_with_another_request_is_422() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let key = uuid::Uuid::new_v4().to_string();
        let name = unique("A");
        let (status, _, _) = create(api, &root, Some(&key), json!({"name": name})).await;
        assert_eq!(status, 201);
        let (status, _, body) = create(api, &root, Some(&key), json!({"name": unique("B")})).await;
        assert_error_body(api.backend, status, &body, 422);
        // The same JSON laid out differently is the same request.
        let (status, headers, _) = send(
            api,
            Method::POST,
            &format!("{ACTIVITIES}?responseShape=full"),
            Some(&root),
            &[("Idempotency-Key", key.as_bytes()), ("Content-Type", b"application/json")],
            None,
        )
        .await;
        assert_eq!(status, 422, "[{}] no body is another request", api.backend);
        assert!(headers.get("idempotent-replayed").is_none());
        // Another operation with the same key is another request too.
        let (status, _, body) = send(
            api,
            Method::POST,
            "/tags/task/create",
            Some(&root),
            &[("Idempotency-Key", key.as_bytes())],
            Some(json!({"name": name})),
        )
        .await;
        assert_error_body(api.backend, status, &body, 422);
        assert_eq!(activities_named(api, &root, &name).await, 1);
    })
    .await;
}

#[tokio::test]
async fn keys_are_scoped_to_the_workspace_and_the_caller() {
    each_backend(async |_, api| {
        let (_, alice) = api.user(ROOT, UserKind::Employee).await;
        let (_, bob) = api.user(ROOT, UserKind::Employee).await;
        let other_ws = workapi_domain::identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let (_, carol) = api.user_in(other_ws.id, ROOT, UserKind::Employee, &["api:read", "api:write"]).await;
        let key = uuid::Uuid::new_v4().to_string();
        let name = unique("Shared key");
        let mut ids = BTreeSet::new();
        for token in [&alice, &bob, &carol] {
            let (status, headers, body) = create(api, token, Some(&key), json!({"name": name})).await;
            assert_eq!(status, 201, "[{}] {body}", api.backend);
            assert!(headers.get("idempotent-replayed").is_none(), "[{}] not a replay", api.backend);
            ids.insert(body["id"].as_str().unwrap().to_owned());
        }
        assert_eq!(ids.len(), 3, "[{}] three independent creates", api.backend);
        assert_eq!(activities_named(api, &alice, &name).await, 2);
        assert_eq!(activities_named(api, &carol, &name).await, 1);
    })
    .await;
}

#[tokio::test]
async fn without_the_header_nothing_changes() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let name = unique("Twice");
        for _ in 0..2 {
            let (status, headers, body) = create(api, &root, None, json!({"name": name})).await;
            assert_eq!(status, 201, "{body}");
            assert!(headers.get("idempotent-replayed").is_none());
        }
        assert_eq!(activities_named(api, &root, &name).await, 2, "[{}]", api.backend);
    })
    .await;
}

#[tokio::test]
async fn failed_answers_are_not_recorded_and_keys_are_checked_after_authentication() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let key = uuid::Uuid::new_v4().to_string();
        // Anonymous: 401 whatever the key.
        let (status, _, body) =
            send(api, Method::POST, ACTIVITIES, None, &[("Idempotency-Key", &[b'x'; 300])], Some(json!({}))).await;
        assert_error_body(api.backend, status, &body, 401);
        // A 400 is not recorded: the corrected request with the same key runs.
        let (status, _, body) = create(api, &root, Some(&key), json!({"name": ""})).await;
        assert_error_body(api.backend, status, &body, 400);
        let name = unique("Fixed");
        let (status, _, body) = create(api, &root, Some(&key), json!({"name": name})).await;
        assert_eq!(status, 201, "[{}] {body}", api.backend);
        // Malformed keys: 400 naming the header.
        let long = vec![b'k'; 256];
        for bad in [&long[..], b"caf\xc3\xa9", b""] {
            let (status, _, body) = send(
                api,
                Method::POST,
                ACTIVITIES,
                Some(&root),
                &[("Idempotency-Key", bad)],
                Some(json!({"name": "x"})),
            )
            .await;
            assert_error_body(api.backend, status, &body, 400);
            assert!(body["errors"]["Idempotency-Key"].is_array(), "[{}] {body}", api.backend);
        }
        let (status, _, body) = send(
            api,
            Method::POST,
            ACTIVITIES,
            Some(&root),
            &[("Idempotency-Key", b"one"), ("Idempotency-Key", b"two")],
            Some(json!({"name": "x"})),
        )
        .await;
        assert_error_body(api.backend, status, &body, 400);
        assert_eq!(activities_named(api, &root, "x").await, 0);
    })
    .await;
}

/// The operations the document marks with the optional `Idempotency-Key` parameter, with a
/// path filled from the documented examples.
fn declared_operations() -> Vec<(String, String)> {
    let doc = serde_json::to_value(registry::document()).unwrap();
    let mut found = Vec::new();
    for (template, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let parameters = operation["parameters"].as_array().cloned().unwrap_or_default();
            let Some(key) = parameters.iter().find(|p| p["name"] == "Idempotency-Key") else { continue };
            assert_eq!(method, "post", "{template}: only POSTs that create are idempotent");
            assert_eq!(key["in"], "header");
            assert_eq!(key["required"], false);
            assert!(operation["responses"]["422"].is_object(), "{template}: documents the 422");
            let mut path = template.clone();
            for p in parameters.iter().filter(|p| p["in"] == "path") {
                let example = p["example"].as_str().or_else(|| p["schema"]["examples"][0].as_str()).unwrap();
                path = path.replace(&format!("{{{}}}", p["name"].as_str().unwrap()), example);
            }
            found.push((operation["operationId"].as_str().unwrap().to_owned(), path));
        }
    }
    found
}

#[tokio::test]
async fn every_declared_operation_has_the_layer_and_only_posts_are_declared() {
    let operations = declared_operations();
    let ids: BTreeSet<_> = operations.iter().map(|(id, _)| id.as_str()).collect();
    for expected in ["createTag", "createRole", "createWorkActivity", "uploadFile"] {
        assert!(ids.contains(expected), "{expected} is declared idempotent: {ids:?}");
    }
    let backend = api_tests::backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let (_, root) = api.user(ROOT, UserKind::Employee).await;
    for (id, path) in &operations {
        // A malformed key is refused by the layer, before the handler sees the request.
        let (status, _, body) =
            send(&api, Method::POST, path, Some(&root), &[("Idempotency-Key", &[b'k'; 256])], Some(json!({}))).await;
        assert_eq!(status, 400, "{id}: {body}");
        assert!(body["errors"]["Idempotency-Key"].is_array(), "{id}: {body}");
    }
}

#[tokio::test]
async fn tag_and_role_creates_replay_too() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let key = uuid::Uuid::new_v4().to_string();
        let role = json!({"name": unique("Role"), "icon": "fa-star", "type": "normal", "parentId": "_staff", "permissions": {}});
        let path = "/administration/roles";
        let (status, _, first) =
            send(api, Method::POST, path, Some(&root), &[("Idempotency-Key", key.as_bytes())], Some(role.clone())).await;
        assert_eq!(status, 201, "[{}] {first}", api.backend);
        let (status, headers, again) =
            send(api, Method::POST, path, Some(&root), &[("Idempotency-Key", key.as_bytes())], Some(role)).await;
        assert_eq!((status, &again), (201, &first), "[{}]", api.backend);
        assert_eq!(headers["idempotent-replayed"], "true");
        let tag = json!({"name": unique("Tag")});
        let (status, _, first) = send(
            api,
            Method::POST,
            "/tags/project/create",
            Some(&root),
            &[("Idempotency-Key", key.as_bytes())],
            Some(tag.clone()),
        )
        .await;
        assert_eq!(status, 422, "[{}] the key is taken by the role create: {first}", api.backend);
        let key = uuid::Uuid::new_v4().to_string();
        let headers_of = [("Idempotency-Key", key.as_bytes())];
        let (s1, _, b1) = send(api, Method::POST, "/tags/project/create", Some(&root), &headers_of, Some(tag.clone())).await;
        let (s2, h2, b2) = send(api, Method::POST, "/tags/project/create", Some(&root), &headers_of, Some(tag)).await;
        assert_eq!((s1, &b1), (s2, &b2), "[{}]", api.backend);
        assert_eq!(h2["idempotent-replayed"], "true");
    })
    .await;
}

/// The layer reads the body within the route's own limit: the API's 1 MiB here (the upload's
/// 4 MiB: tests/api/upload.rs), with or without a key.
#[tokio::test]
async fn a_keyed_body_over_the_route_limit_is_413() {
    let backend = api_tests::backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let (_, root) = api.user(ROOT, UserKind::Employee).await;
    let name = "x".repeat(workapi_kit::http::MAX_BODY_BYTES);
    let (status, _, body) = send(
        &api,
        Method::POST,
        "/tags/task/create",
        Some(&root),
        &[("Idempotency-Key", b"over-the-limit")],
        Some(json!({ "name": name })),
    )
    .await;
    assert_error_body(api.backend, status, &body, 413);
}

/// The create and its recorded response are one write (docs/reliability.md): a keyed create
/// makes exactly one store write more than the same create without a key — the in-flight
/// record's claim — and no separate write completing the record afterwards; its retry is the
/// replay of that response. A get-or-create that finds its resource writes nothing to record the
/// answer in: there, and only there, the layer records it with a write of its own.
#[tokio::test]
async fn a_keyed_create_records_its_response_in_its_own_transaction() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let projects = crate::projects_api::seeded(api, Some(root.id)).await;
        let billing = crate::billing_api::seeded(api, &[root.id]).await;
        let positions = format!("/projects/{}/manual-positions", projects.shared_project);
        let quotations = format!("/tasks/{}/express-quotations", billing.quoted);
        let billings = format!("/projects/{}/subscription-billings", billing.project);
        type Body = Box<dyn Fn() -> Value>;
        let creates: Vec<(&str, String, Body)> = vec![
            ("tag, new name", "/tags/task/create".into(), Box::new(|| json!({"name": unique("Tag")}))),
            (
                "role",
                "/administration/roles".into(),
                Box::new(|| crate::administration_api::role_body(Some(workapi_domain::permissions::STAFF), json!({}))),
            ),
            ("work activity", ACTIVITIES.into(), Box::new(|| json!({"name": unique("Activity")}))),
            ("manual position", positions, Box::new(|| json!({"name": unique("Domain"), "price": 24.9}))),
            (
                "quotation",
                quotations,
                Box::new(move || json!({"contactUserId": billing.contact, "includeEstimate": true})),
            ),
            (
                "subscription billing",
                billings,
                Box::new(|| {
                    json!({"manualTitle": unique("Hosting"), "fromDate": "2026-01-15", "toDate": "2026-03-10",
                           "frequency": 1, "payment": "fixed", "price": 99.5})
                }),
            ),
            (
                "skill",
                "/agents/skills".into(),
                Box::new(|| json!({"name": unique("Skill"), "instructions": "Be brief"})),
            ),
        ];
        let post = |path: &str, key: Option<String>, body: Value| {
            let path = path.to_owned();
            let token = token.clone();
            async move {
                let headers: Vec<(&str, &[u8])> =
                    key.as_ref().map(|k| ("Idempotency-Key", k.as_bytes())).into_iter().collect();
                send(api, Method::POST, &path, Some(&token), &headers, Some(body)).await
            }
        };
        for (name, path, body) in &creates {
            // Warm: the first create of a collection starts its counter, and the token's
            // last-used time is written at most once a while.
            let (status, _, first) = post(path, None, body()).await;
            assert!((200..300).contains(&status), "[{}] {name}: {status} {first}", api.backend);
            let (plain, (status, _, _)) = api.round_trips(post(path, None, body())).await;
            assert!((200..300).contains(&status), "[{}] {name}", api.backend);
            let key = uuid::Uuid::new_v4().to_string();
            let sent = body();
            let (keyed, (status, headers, created)) =
                api.round_trips(post(path, Some(key.clone()), sent.clone())).await;
            assert!((200..300).contains(&status), "[{}] {name}: {status} {created}", api.backend);
            assert!(headers.get(workapi_kit::idempotency::REPLAYED_HEADER).is_none());
            assert_eq!(
                keyed.writes,
                plain.writes + 1,
                "[{}] {name}: the claim, and the create with its completion in one transaction \
                 (no separate update); keyed {keyed:?}, plain {plain:?}",
                api.backend
            );
            let (replayed, (again, headers, replay)) = api.round_trips(post(path, Some(key), sent)).await;
            assert_eq!((again, &replay), (status, &created), "[{}] {name}: the replay", api.backend);
            assert_eq!(headers[workapi_kit::idempotency::REPLAYED_HEADER], "true", "[{}] {name}", api.backend);
            let (read, _) = api.round_trips(api.get("/tags/task", &token)).await;
            assert_eq!(
                replayed.writes,
                read.writes + 1,
                "[{}] {name}: a replay writes what any request does (rate limits) and the claim's refused put",
                api.backend
            );
        }
        // A get-or-create that finds its resource (a tag of an existing name) writes nothing but
        // the claim and the separate completion.
        let name = unique("Existing");
        let (status, _, existing) = post("/tags/task/create", None, json!({"name": name})).await;
        assert_eq!(status, 200, "[{}] {existing}", api.backend);
        let (plain, _) = api.round_trips(post("/tags/task/create", None, json!({"name": name}))).await;
        let key = uuid::Uuid::new_v4().to_string();
        let (keyed, (status, _, found)) =
            api.round_trips(post("/tags/task/create", Some(key.clone()), json!({"name": name}))).await;
        assert_eq!((status, &found), (200, &existing), "[{}]", api.backend);
        assert_eq!(keyed.writes, plain.writes + 2, "[{}] the claim and the separate completion", api.backend);
        let (status, headers, replay) = post("/tags/task/create", Some(key), json!({"name": name})).await;
        assert_eq!((status, &replay), (200, &existing), "[{}]", api.backend);
        assert_eq!(headers[workapi_kit::idempotency::REPLAYED_HEADER], "true", "[{}]", api.backend);
    })
    .await;
}
