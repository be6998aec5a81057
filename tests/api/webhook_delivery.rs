//! Webhook delivery (docs/events.md#delivery) on every store backend, with the dispatcher
//! reading the backend's change feed (the embedded store's, DynamoDB Local's stream): a
//! subscribed event reaches a receiver signed (checked here with HMAC-SHA256 written out, not
//! with the server's signer; tests/webhooks/delivery_flow.py checks with the official library),
//! its `webhook-id` the event's id; what the endpoint does not take is not sent; a failed attempt
//! is retried with the same id and logged; a redelivery is one attempt more; a 410, or 5 days of
//! failures, disables the endpoint and tells its creator; an accepted quotation reaches its
//! creator's notifications.

use api_tests::{Backend, TestApi, backends_with_feeds, eventually};
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use uuid::Uuid;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;
use workapi_kit::net::WebhookTargets;

/// A receiver on 127.0.0.1 that answers each request with the next of `answers` (then 204),
/// keeping what it received.
#[derive(Clone)]
struct Receiver {
    url: String,
    received: Arc<Mutex<Vec<(HeaderMap, Bytes)>>>,
    answers: Arc<Mutex<Vec<u16>>>,
}

impl Receiver {
    async fn start(answers: &[u16]) -> Receiver {
        let received = Arc::new(Mutex::new(Vec::new()));
        let answers = Arc::new(Mutex::new(answers.iter().rev().copied().collect::<Vec<_>>()));
        let (kept, planned) = (received.clone(), answers.clone());
        let app = axum::Router::new().route(
            "/hooks",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let (kept, planned) = (kept.clone(), planned.clone());
                async move {
                    kept.lock().unwrap().push((headers, body));
                    let status = planned.lock().unwrap().pop().unwrap_or(204);
                    StatusCode::from_u16(status).unwrap()
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hooks", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.ok() });
        Receiver { url, received, answers }
    }

    fn received(&self) -> Vec<(HeaderMap, Bytes)> {
        self.received.lock().unwrap().clone()
    }

    /// Waits until `count` requests arrived (at most 60 s: the first retry comes after 5 s, and
    /// DynamoDB Local's stream lags behind a loaded machine).
    async fn wait_for(&self, count: usize) -> Vec<(HeaderMap, Bytes)> {
        eventually(Duration::from_secs(60), &format!("{count} deliveries to {}", self.url), async || {
            let received = self.received();
            if received.len() >= count { Ok(received) } else { Err(format!("{}", received.len())) }
        })
        .await
    }
}

/// The signature the Standard Webhooks specification defines, computed here.
fn expected_signature(secret: &str, id: &str, timestamp: &str, body: &[u8]) -> String {
    let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
}

async fn dispatching(backend: &Backend, feed: Arc<dyn workapi_store::changes::ChangeFeed>) -> TestApi {
    // The dispatcher's warnings (a failed event or job) in the test's output.
    let _ = tracing_subscriber::fmt().with_max_level(tracing::Level::WARN).with_test_writer().try_init();
    TestApi::builder(backend).webhook_targets(WebhookTargets { allow_private: true }).dispatch(feed).start().await
}

async fn endpoint(api: &TestApi, token: &str, receiver: &Receiver, types: &[&str]) -> Value {
    let (status, created) = api.post("/webhooks", token, json!({"url": receiver.url, "eventTypes": types})).await;
    assert_eq!(status, 201, "[{}] {created}", api.backend);
    created
}

async fn create_tag(api: &TestApi, token: &str, name: &str) -> Value {
    let (status, tag) = api.post("/tags/task/create", token, json!({"name": name})).await;
    assert_eq!(status, 200, "[{}] {tag}", api.backend);
    tag
}

/// The event the API recorded for a resource.
async fn event_of(api: &TestApi, token: &str, kind: &str, id: &str) -> Value {
    let events = api.list_all(&format!("/events?resourceKind={kind}&resourceId={id}"), token).await;
    events.into_iter().next().unwrap_or_else(|| panic!("[{}] no event of {kind} {id}", api.backend))
}

#[tokio::test]
async fn a_subscribed_event_arrives_signed_and_nothing_else_does() {
    for (backend, feed) in backends_with_feeds().await {
        let api = dispatching(&backend, feed).await;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let receiver = Receiver::start(&[]).await;
        let created = endpoint(&api, &root, &receiver, &["tag.created"]).await;
        let secret = created["secret"].as_str().unwrap();

        let tag = create_tag(&api, &root, "Delivered").await;
        let tag_id = tag["id"].as_str().unwrap();
        // Not taken by the endpoint: a color change is tag.updated.
        let color = json!({"color": "red"});
        let (status, _, _) =
            api.call(reqwest::Method::PUT, &format!("/tags/task/{tag_id}/color"), Some(&root), Some(color)).await;
        assert_eq!(status, 200);
        let event = event_of(&api, &root, "tag", tag_id).await;
        let received = receiver.wait_for(1).await;
        let (headers, body) = &received[0];
        let id = header(headers, "webhook-id");
        assert_eq!(id, event["id"], "[{}] the webhook-id is the event's id", backend.name);
        let timestamp = header(headers, "webhook-timestamp");
        let sent_at: i64 = timestamp.parse().unwrap();
        assert!((sent_at - time::OffsetDateTime::now_utc().unix_timestamp()).abs() < 60);
        assert_eq!(header(headers, "webhook-signature"), expected_signature(secret, id, timestamp, body));
        assert_eq!(header(headers, "content-type"), "application/json");
        let payload: Value = serde_json::from_slice(body).unwrap();
        assert_eq!(payload["type"], "tag.created");
        assert_eq!(payload["timestamp"], event["timestamp"]);
        assert_eq!(payload["data"]["id"], tag_id);
        assert_eq!(payload.as_object().unwrap().len(), 3, "{{type, timestamp, data}}: {payload}");

        // The delivery log: one attempt, delivered.
        let log = api.list_all(&format!("/webhooks/{}/deliveries", created["id"].as_str().unwrap()), &root).await;
        assert_eq!(log.len(), 1, "[{}] {log:?}", backend.name);
        assert_eq!((log[0]["id"].as_str(), log[0]["status"].as_str()), (Some(id), Some("delivered")));
        assert_eq!(log[0]["attempts"][0]["responseStatus"], 204);
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(receiver.received().len(), 1, "[{}] tag.updated is not delivered", backend.name);
    }
}

#[tokio::test]
async fn a_failure_is_retried_with_the_same_id_and_a_redelivery_is_one_more_attempt() {
    for (backend, feed) in backends_with_feeds().await {
        let api = dispatching(&backend, feed).await;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let receiver = Receiver::start(&[503]).await;
        let created = endpoint(&api, &root, &receiver, &["tag.created"]).await;
        let endpoint_id = created["id"].as_str().unwrap();
        create_tag(&api, &root, "Retried").await;

        let received = receiver.wait_for(2).await;
        let ids: Vec<&str> = received.iter().map(|(h, _)| header(h, "webhook-id")).collect();
        assert_eq!(ids[0], ids[1], "[{}] a retry keeps the webhook-id", backend.name);
        assert_eq!(received[0].1, received[1].1, "the same body");
        let log = api.list_all(&format!("/webhooks/{endpoint_id}/deliveries"), &root).await;
        let attempts: Vec<(Value, Value)> = log[0]["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| (a["number"].clone(), a["responseStatus"].clone()))
            .collect();
        assert_eq!(attempts, [(json!(1), json!(503)), (json!(2), json!(204))], "[{}] {log:?}", backend.name);
        assert_eq!(log[0]["status"], "delivered");

        // Asked for: a third attempt, now, with the same id.
        let path = format!("/webhooks/{endpoint_id}/deliveries/{}/redeliver", ids[0]);
        let (status, answer) = api.post(&path, &root, json!(null)).await;
        assert_eq!(status, 202, "[{}] {answer}", backend.name);
        assert_eq!(answer["status"], "pending");
        let received = receiver.wait_for(3).await;
        assert_eq!(header(&received[2].0, "webhook-id"), ids[0]);
        let log = api.list_all(&format!("/webhooks/{endpoint_id}/deliveries"), &root).await;
        let last = &log[0]["attempts"][2];
        assert_eq!((last["number"].as_u64(), last["trigger"].as_str()), (Some(3), Some("redelivery")), "{log:?}");
        let (status, _) = api
            .post(
                &format!("/webhooks/{endpoint_id}/deliveries/evt_01M8EYNCEG0KW8Y1CTB8JX9AF6/redeliver"),
                &root,
                json!(null),
            )
            .await;
        assert_eq!(status, 404, "an unknown delivery");
    }
}

#[tokio::test]
async fn a_gone_endpoint_is_disabled() {
    for (backend, feed) in backends_with_feeds().await {
        let api = dispatching(&backend, feed).await;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let receiver = Receiver::start(&[410]).await;
        let created = endpoint(&api, &root, &receiver, &["tag.created"]).await;
        let endpoint_id = created["id"].as_str().unwrap();
        create_tag(&api, &root, "Gone").await;
        receiver.wait_for(1).await;
        eventually(Duration::from_secs(30), &format!("[{}] the endpoint disabled", backend.name), async || {
            let (_, read) = api.get(&format!("/webhooks/{endpoint_id}"), &root).await;
            if read["enabled"] == false { Ok(()) } else { Err(read.to_string()) }
        })
        .await;
        let log = api.list_all(&format!("/webhooks/{endpoint_id}/deliveries"), &root).await;
        assert_eq!(log[0]["status"], "failed");
        create_tag(&api, &root, "Not sent").await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(receiver.received().len(), 1, "[{}] a disabled endpoint gets nothing", backend.name);
        let (status, refused) = api
            .post(
                &format!("/webhooks/{endpoint_id}/deliveries/{}/redeliver", log[0]["id"].as_str().unwrap()),
                &root,
                json!(null),
            )
            .await;
        assert_eq!(status, 409, "{refused}");
        drop(receiver.answers);
    }
}

/// DynamoDB's JSON form of a value (`{"S": …}`), as a stream record carries an image.
fn dynamodb_json(value: &Value) -> Value {
    match value {
        Value::Null => json!({"NULL": true}),
        Value::Bool(b) => json!({"BOOL": b}),
        Value::Number(n) => json!({"N": n.to_string()}),
        Value::String(s) => json!({"S": s}),
        Value::Array(items) => json!({"L": items.iter().map(dynamodb_json).collect::<Vec<_>>()}),
        Value::Object(map) => {
            json!({"M": map.iter().map(|(k, v)| (k.clone(), dynamodb_json(v))).collect::<serde_json::Map<_, _>>()})
        }
    }
}

fn sample(name: &str, placeholder: &str, value: &Value) -> Value {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../events/dispatch").join(name);
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text.replace(&format!("\"${{{placeholder}}}\""), &value.to_string())).unwrap()
}

/// The Lambda entry (`dispatch::lambda::handle`) on the sample events of `events/dispatch/`: a
/// stream record of an inserted event item creates its delivery and queues its attempt; the
/// queue's message makes the attempt; a record that cannot be handled is reported by its
/// sequence number, for Lambda to retry from there.
#[tokio::test]
async fn the_lambda_dispatcher_reads_stream_and_queue_records() {
    use workapi_store::changes::PolledQueue;
    let backend =
        Backend { name: "embedded", store: Arc::new(workapi_store::sqlite::SqliteStore::in_memory().unwrap()) };
    let api = TestApi::builder(&backend).webhook_targets(WebhookTargets { allow_private: true }).start().await;
    let (_, root) = api.user(ROOT, UserKind::Employee).await;
    let receiver = Receiver::start(&[]).await;
    endpoint(&api, &root, &receiver, &["tag.created"]).await;
    let tag = create_tag(&api, &root, "Via Lambda").await;
    let event = event_of(&api, &root, "tag", tag["id"].as_str().unwrap()).await;
    let key = workapi_store::Key::new(
        format!("WS#{}#EVENTS", api.workspace_id),
        format!("EVT#{}", event["id"].as_str().unwrap()),
    );
    let item = Value::Object(api.store.get(&key).await.unwrap().expect("the event item"));

    let state =
        workapi_kit::AppState::builder(api.store.clone(), workapi_kit::app::TokenKeySource::Static(api.key.clone()))
            .secrets(api.secrets.clone())
            .webhook_targets(WebhookTargets { allow_private: true })
            .build();
    let queue = Arc::new(workapi_store::sqlite::SqliteStore::in_memory().unwrap());
    let dispatcher = dispatch::Dispatcher::new(state, queue.clone()).unwrap();
    let stream = sample("stream-insert.json", "NEW_IMAGE", &dynamodb_json(&item)["M"]);
    let answer = dispatch::lambda::handle(&dispatcher, &stream).await;
    assert_eq!(answer, json!({"batchItemFailures": []}));
    let jobs = queue.receive(10, Duration::from_secs(30)).await.unwrap();
    assert_eq!(jobs.len(), 1, "the first attempt queued");
    let job: Value = serde_json::from_str(&jobs[0].body).unwrap();
    assert_eq!((job["event"].as_str(), job["attempt"].as_u64()), (event["id"].as_str(), Some(1)));

    // The same record again (Lambda retries a batch): nothing new is queued.
    dispatch::lambda::handle(&dispatcher, &stream).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(queue.receive(10, Duration::from_secs(30)).await.unwrap().is_empty(), "queued once");

    let message = sample("delivery-job.json", "JOB", &Value::String(jobs[0].body.clone()));
    assert_eq!(dispatch::lambda::handle(&dispatcher, &message).await, json!({"batchItemFailures": []}));
    let received = receiver.wait_for(1).await;
    assert_eq!(header(&received[0].0, "webhook-id"), event["id"]);

    // An event item outside a workspace's partition cannot be dispatched: reported.
    let mut stray = item.clone();
    stray["PK"] = json!("NOT-A-WORKSPACE");
    let stream = sample("stream-insert.json", "NEW_IMAGE", &dynamodb_json(&stray)["M"]);
    let answer = dispatch::lambda::handle(&dispatcher, &stream).await;
    assert_eq!(answer, json!({"batchItemFailures": [{"itemIdentifier": "111100000000012345678901"}]}));
}

/// The deployed queue (SQS, here moto's): a job is sent with its delay and read back whole.
#[tokio::test]
async fn jobs_go_through_sqs_with_their_delay() {
    use workapi_store::changes::Queue;
    let Some((queue, client, url)) = api_tests::moto_sqs("the SQS delivery queue").await else { return };
    queue.send(r#"{"attempt":1}"#, Duration::ZERO).await.unwrap();
    queue.send(r#"{"attempt":2}"#, Duration::from_secs(3600)).await.unwrap();
    let got = client.receive_message().queue_url(&url).max_number_of_messages(10).send().await.unwrap();
    let bodies: Vec<&str> = got.messages().iter().filter_map(|m| m.body()).collect();
    assert_eq!(bodies, [r#"{"attempt":1}"#], "the delayed job is not visible yet (at most 15 minutes of delay)");
}

/// An endpoint whose deliveries have failed for 5 days is disabled at its next failure, and the
/// user who created it is told (a notification in their list).
#[tokio::test]
async fn an_endpoint_failing_for_five_days_is_disabled_and_its_creator_told() {
    for (backend, feed) in backends_with_feeds().await {
        let api = dispatching(&backend, feed).await;
        let (_, creator_token) = api.user(ROOT, UserKind::Employee).await;
        let (_, other) = api.user(ROOT, UserKind::Employee).await;
        let receiver = Receiver::start(&[500]).await;
        let created = endpoint(&api, &creator_token, &receiver, &["tag.created"]).await;
        let endpoint_id = created["id"].as_str().unwrap();
        // Failing since five days and a second ago (as the dispatcher records it).
        let key =
            workapi_store::Key::new(format!("WS#{}#WEBHOOKS", api.workspace_id), format!("WEBHOOK#{endpoint_id}"));
        let since = time::OffsetDateTime::now_utc().unix_timestamp() - 5 * 24 * 3600 - 1;
        let update = workapi_store::Update::default().set("failingSince", since);
        api.store.update(&key, update, workapi_store::Condition::Exists).await.unwrap();

        create_tag(&api, &other, "Still failing").await;
        receiver.wait_for(1).await;
        let told = format!("[{}] the creator told", backend.name);
        let notification = eventually(Duration::from_secs(30), &told, async || {
            let (_, listed) = api.get("/account/notifications", &creator_token).await;
            let items = listed["items"].as_array().cloned().unwrap_or_default();
            items.into_iter().find(|n| n["title"] == "Webhook endpoint disabled").ok_or_else(|| listed.to_string())
        })
        .await;
        assert!(notification["body"].as_str().unwrap().contains(&receiver.url), "{notification}");
        let (_, read) = api.get(&format!("/webhooks/{endpoint_id}"), &creator_token).await;
        assert_eq!(read["enabled"], false, "[{}] {read}", backend.name);
    }
}

/// The issue's story, through the running dispatcher (not a direct call): a quotation A created
/// and B accepted puts "Quotation accepted" in A's list within seconds, and nothing in B's.
#[tokio::test]
async fn an_accepted_quotation_reaches_its_creator_through_the_dispatcher() {
    for (backend, feed) in backends_with_feeds().await {
        let api = dispatching(&backend, feed).await;
        let (creator, creator_token) = api.user(workapi_domain::permissions::TEAM_LEADER, UserKind::Employee).await;
        let (decider, decider_token) = api.user(workapi_domain::permissions::TEAM_LEADER, UserKind::Employee).await;
        let (org, contact, project, task) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let seed = json!({"version": 1,
            "organizations": [{"id": org, "name": "Acme"}],
            "contacts": [{"id": contact, "organizationId": org, "name": "Erika", "email": format!("e-{}@acme.example", contact.simple())}],
            "projects": [{"id": project, "name": "Shop", "customerOrganizationId": org,
                "members": [creator.id, decider.id, contact], "hourRate": 95, "currency": "EUR", "taxRate": 19,
                "expressQuotationsEnabled": true}],
            "tasks": [{"id": task, "shortNumber": 1, "projectId": project, "title": "Checkout redesign", "estimatedHours": 2}]
        });
        let file = local::seed::parse(&seed.to_string()).expect("seed parses");
        local::seed::load(api.store.as_ref(), api.workspace_id, &file).await.expect("seed loads");
        let path = format!("/tasks/{task}/express-quotations");
        let (status, created) =
            api.post(&path, &creator_token, json!({"contactUserId": contact, "includeEstimate": true})).await;
        assert_eq!(status, 201, "[{}] {created}", backend.name);
        let id = created["id"].as_str().unwrap();
        let (status, _) = api.post(&format!("{path}/{id}/accept"), &decider_token, json!({})).await;
        assert_eq!(status, 200);
        eventually(Duration::from_secs(30), &format!("[{}] the creator told", backend.name), async || {
            let (_, page) = api.get("/account/notifications", &creator_token).await;
            let titles: Vec<Value> = page["items"].as_array().unwrap().iter().map(|n| n["title"].clone()).collect();
            if titles.contains(&json!("Quotation accepted")) { Ok(()) } else { Err(page.to_string()) }
        })
        .await;
        let (_, page) = api.get("/account/notifications", &decider_token).await;
        assert_eq!(page["items"], json!([]), "[{}] never the actor", backend.name);
    }
}
