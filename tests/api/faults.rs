//! The cloud misbehaving (docs/reliability.md): the server's store, S3 and Secrets Manager
//! clients talk to DynamoDB Local and moto through the fault proxy (`api_tests::fault_proxy`),
//! which throttles, fails, stalls, resets and cuts their requests on cue.
//!
//! - What the client sees: a store failing beyond the retries answers 503 with `Retry-After`
//!   and the error body, in bounded time; a single fault is absorbed by the SDK's retries.
//! - What the store keeps: every multi-item write, with a fault injected at each of its store
//!   calls, leaves all of its change or none, and its retry (same `Idempotency-Key`) completes
//!   it exactly once ([`the_fault_table`], the table of docs/reliability.md).
//!
//! Needs `LT_DYNAMODB_ENDPOINT` (and `LT_MOTO_ENDPOINT` for S3 and Secrets Manager); skipped
//! loudly otherwise, a failure under `LT_REQUIRE_SERVICES=1`.

use api_tests::fault_proxy::{Fault, Rule};
use api_tests::{Backend, FAST_AWS, ProxiedDynamo, TestApi, assert_error_body, proxied_dynamo};
use aws_sdk_dynamodb::types::AttributeValue;
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use uuid::Uuid;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::{ROOT, STAFF, TEAM_LEADER};
use workapi_store::aws::AwsSettings;

/// Settings for suites whose faults answer at once (a 500, a reset connection), never hang:
/// the production retries with timeouts no loaded CI machine reaches (`FAST_AWS`'s 400 ms
/// attempt once timed out while the fault table was only setting up).
const PROMPT_FAULTS: AwsSettings =
    AwsSettings { attempt: Duration::from_secs(5), operation: Duration::from_secs(15), ..FAST_AWS };

/// One attempt per call: a fault injected at a store call fails exactly that call, so the
/// table test can aim at each step of a write.
const ONE_ATTEMPT: AwsSettings = AwsSettings { max_attempts: 1, ..PROMPT_FAULTS };

async fn proxied(settings: AwsSettings) -> Option<(ProxiedDynamo, TestApi)> {
    let px = proxied_dynamo("the fault suite", settings).await?;
    let api = start(&px).await;
    Some((px, api))
}

fn backend(px: &ProxiedDynamo) -> Backend {
    Backend { name: "dynamodb via the fault proxy", store: px.store.clone() }
}

/// A server on the proxied store whose harness writes (workspace, users, seeds) go straight
/// to DynamoDB Local: a fault is aimed at the server's calls only.
async fn start(px: &ProxiedDynamo) -> TestApi {
    TestApi::builder(&backend(px)).setup_store(px.direct.clone()).start().await
}

fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<&str> {
    headers.get("retry-after").and_then(|v| v.to_str().ok())
}

/// `GET /tags/task` while every store call meets `fault`, healed afterwards: it must answer 503
/// with `Retry-After: 2` and the error body within the operation timeout; returns the body.
async fn list_tags_while_failing(px: &ProxiedDynamo, api: &TestApi, token: &str, fault: &Fault) -> Value {
    px.proxy.inject(Rule::any(fault.clone()).always());
    let started = Instant::now();
    let (status, headers, body) = api.call(Method::GET, "/tags/task", Some(token), None).await;
    let took = started.elapsed();
    px.proxy.heal();
    assert_error_body(api.backend, status, &body, 503);
    assert_eq!(retry_after(&headers), Some("2"), "{fault:?}");
    assert!(took < FAST_AWS.operation + Duration::from_secs(1), "{fault:?} took {took:?}");
    body
}

#[tokio::test]
async fn a_store_failing_beyond_the_retries_answers_503_with_retry_after_quickly() {
    let Some((px, api)) = proxied(FAST_AWS).await else { return };
    let (_, token) = api.user(ROOT, UserKind::Employee).await;
    for fault in [Fault::Throttling, Fault::ProvisionedThroughputExceeded, Fault::Status(500), Fault::Status(503)] {
        px.proxy.reset_counts();
        let body = list_tags_while_failing(&px, &api, &token, &fault).await;
        assert!(!body.to_string().contains("Exception"), "{fault:?}: internals leaked: {body}");
        // The SDK retried (3 attempts of the first call), and gave up within the operation timeout.
        assert!(px.proxy.count("*") >= 3, "{fault:?}: no retries: {:?}", px.proxy.counts());
        assert_eq!(api.get("/tags/task", &token).await.0, 200, "{fault:?}: healed");
    }
}

#[tokio::test]
async fn a_store_that_hangs_resets_or_cuts_every_answer_gives_503_in_bounded_time() {
    let Some((px, api)) = proxied(FAST_AWS).await else { return };
    let (_, token) = api.user(ROOT, UserKind::Employee).await;
    for fault in [Fault::Hang, Fault::Reset, Fault::Truncate, Fault::Latency(Duration::from_secs(3))] {
        list_tags_while_failing(&px, &api, &token, &fault).await;
    }
}

#[tokio::test]
async fn a_single_fault_is_absorbed_by_the_retries() {
    let Some((px, api)) = proxied(FAST_AWS).await else { return };
    let (_, token) = api.user(ROOT, UserKind::Employee).await;
    for fault in [
        Fault::Throttling,
        Fault::ProvisionedThroughputExceeded,
        Fault::Status(500),
        Fault::Status(503),
        Fault::Reset,
        Fault::Truncate,
        Fault::Hang,
        Fault::Latency(Duration::from_millis(100)),
    ] {
        px.proxy.reset_counts();
        px.proxy.inject(Rule::any(fault.clone()));
        let (status, body) = api.get("/tags/task", &token).await;
        px.proxy.heal();
        assert_eq!(status, 200, "{fault:?}: {body}");
        assert_eq!(px.proxy.injected("*"), 1, "{fault:?}");
    }
}

#[tokio::test]
async fn a_transaction_cancelled_by_a_conflict_is_retried_or_answers_503_and_never_half_written() {
    let Some((px, api)) = proxied(FAST_AWS).await else { return };
    let (_, token) = api.user(ROOT, UserKind::Employee).await;
    // Once: the role edit's read-modify-write retry (entity::retry_on_conflict) absorbs it.
    let role = crate::administration_api::create_role(
        &api,
        &token,
        crate::administration_api::role_body(Some(STAFF), json!({})),
    )
    .await;
    let role = crate::administration_api::id(&role);
    px.proxy.reset_counts();
    px.proxy.inject(Rule::on("TransactWriteItems", Fault::TransactionConflict));
    let toggle = format!("/administration/roles/{role}/permissions/Projects.edit");
    let (status, _, body) = api.call(Method::PATCH, &toggle, Some(&token), Some(json!({"allow": true}))).await;
    px.proxy.heal();
    assert_eq!(status, 200, "retried after the conflict: {body}");
    assert_eq!(px.proxy.injected("TransactWriteItems"), 1, "the role edit is a transaction");
    assert!(px.proxy.count("TransactWriteItems") >= 2, "and it was retried");
    // Always, on a create: after the retry helper's budget, 409 "retry" (a create that
    // re-reads) or 503 (nothing written), and the retry with the same key creates it once.
    let name = format!("conflict-{}", Uuid::new_v4().simple());
    px.proxy.inject(Rule::on("TransactWriteItems", Fault::TransactionConflict).always());
    let key = [("Idempotency-Key", "conflict-1")];
    let (status, headers, body) =
        api.send_with(Method::POST, "/tags/task/create", &token, &key, Some(json!({"name": name}))).await;
    px.proxy.heal();
    assert!(status == 409 || status == 503, "{status} {body}");
    assert_error_body(api.backend, status, &body, status);
    if status == 503 {
        assert_eq!(retry_after(&headers), Some("2"));
    }
    let (status, _, _) =
        api.send_with(Method::POST, "/tags/task/create", &token, &key, Some(json!({"name": name}))).await;
    assert!(status == 200 || status == 201, "{status}");
    let (_, list) = api.get("/tags/task", &token).await;
    let found = list.as_array().unwrap().iter().filter(|t| t["name"] == json!(name)).count();
    assert_eq!(found, 1, "created exactly once");
}

/// Through the HTTP API only: a keyed create whose write was applied but whose answer was lost
/// (the store's answer reset, no SDK retry left: the client gets 503) is not run again by the
/// client's retry with the same key: the retry is the replay of the create, and the list holds
/// it once. Before, the 503 deleted the idempotency record and the retry created a second one.
/// A create that was not applied (500) runs afresh on the retry, once.
#[tokio::test]
async fn a_keyed_create_retried_after_its_answer_was_lost_is_not_duplicated() {
    let Some((px, api)) = proxied(ONE_ATTEMPT).await else { return };
    let (_, token) = api.user(ROOT, UserKind::Employee).await;
    const ACTIVITIES: &str = "/administration/task-settings/activities";
    let named = async |name: &str| {
        let (status, list) = api.get(ACTIVITIES, &token).await;
        assert_eq!(status, 200, "{list}");
        list.as_array().unwrap().iter().filter(|a| a["name"] == name).map(|a| a["id"].clone()).collect::<Vec<_>>()
    };
    for (fault, applied) in [(Fault::Reset, true), (Fault::Status(500), false)] {
        let name = format!("Lost answer {}", Uuid::new_v4().simple());
        let key = [("Idempotency-Key", Uuid::new_v4().to_string())];
        let key = [(key[0].0, key[0].1.as_str())];
        px.proxy.reset_counts();
        px.proxy.inject(Rule::on("TransactWriteItems", fault.clone()));
        let (status, headers, body) =
            api.send_with(Method::POST, ACTIVITIES, &token, &key, Some(json!({"name": name}))).await;
        px.proxy.heal();
        assert_eq!(px.proxy.injected("TransactWriteItems"), 1, "{fault:?}: the create is one transaction");
        assert_error_body(api.backend, status, &body, 503);
        assert_eq!(retry_after(&headers), Some("2"));
        let kept = named(&name).await;
        assert_eq!(kept.len(), usize::from(applied), "{fault:?}: applied or not, never half: {kept:?}");
        let (status, headers, created) =
            api.send_with(Method::POST, ACTIVITIES, &token, &key, Some(json!({"name": name}))).await;
        assert_eq!(status, 201, "{fault:?}: {created}");
        let replayed = headers.get("idempotent-replayed").is_some_and(|v| v == "true");
        assert_eq!(replayed, applied, "{fault:?}: the applied create is replayed, the other one runs");
        let listed = named(&name).await;
        assert_eq!(listed, vec![created["id"].clone()], "{fault:?}: exactly one activity, the one answered");
        if applied {
            assert_eq!(listed, kept, "{fault:?}: the one the lost answer created");
        }
    }
}

// ------------------------------------------------------------------ what the store keeps

/// The workspace's items as DynamoDB Local keeps them (read directly, not through the proxy),
/// without the bookkeeping that every request writes (rate-limit windows, idempotency records).
async fn snapshot(px: &ProxiedDynamo, workspace: Uuid) -> BTreeMap<(String, String), Value> {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .http_client(workapi_store::aws::https_client())
        .endpoint_url(&px.endpoint)
        .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_dynamodb::config::Credentials::new("test", "test", None, None, "faults"))
        .build();
    let client = aws_sdk_dynamodb::Client::from_conf(config);
    let mut items = BTreeMap::new();
    let mut start = None;
    loop {
        let page = client
            .scan()
            .table_name(&px.table)
            .filter_expression("contains(PK, :ws)")
            .expression_attribute_values(":ws", AttributeValue::S(workspace.to_string()))
            .set_exclusive_start_key(start)
            .send()
            .await
            .expect("scan DynamoDB Local");
        for item in page.items() {
            let item: serde_json::Map<String, Value> =
                item.iter().map(|(k, v)| (k.clone(), workapi_store::dynamo::from_attr(v))).collect();
            let entity = item.get("entity").and_then(Value::as_str).unwrap_or_default();
            if matches!(entity, "IdempotencyRecord" | "RateLimitWindow") {
                continue;
            }
            let key = (item["PK"].as_str().unwrap().to_owned(), item["SK"].as_str().unwrap().to_owned());
            items.insert(key, Value::Object(item));
        }
        start = page.last_evaluated_key.clone();
        if start.is_none() {
            return items;
        }
    }
}

/// A change by entity type: `+Type`, `-Type`, `~Type` for each added, removed, changed item
/// (ids differ between runs; what was written does not).
fn change(before: &BTreeMap<(String, String), Value>, after: &BTreeMap<(String, String), Value>) -> Vec<String> {
    let kind = |v: &Value| v["entity"].as_str().unwrap_or("?").to_owned();
    let mut out = Vec::new();
    for (key, item) in after {
        match before.get(key) {
            None => out.push(format!("+{}", kind(item))),
            Some(old) if old != item => out.push(format!("~{}", kind(item))),
            _ => {}
        }
    }
    for (key, item) in before {
        if !after.contains_key(key) {
            out.push(format!("-{}", kind(item)));
        }
    }
    out.sort();
    out
}

/// A multi-item write of the table: how to prepare it and the request that makes it.
struct Write {
    name: &'static str,
    prepare: fn(&TestApi) -> std::pin::Pin<Box<dyn std::future::Future<Output = Request> + Send + '_>>,
    /// A creating POST declared `idempotent(…)`: its retry with the same key replays the
    /// recorded response whenever the create was kept.
    creates: bool,
}

struct Request {
    method: Method,
    path: String,
    token: String,
    body: Value,
}

fn role_edit(api: &TestApi) -> std::pin::Pin<Box<dyn std::future::Future<Output = Request> + Send + '_>> {
    Box::pin(async move {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let body = crate::administration_api::role_body(Some(STAFF), json!({}));
        let role = crate::administration_api::id(&crate::administration_api::create_role(api, &token, body).await);
        let body = json!({"name": format!("Edited {}", Uuid::new_v4().simple()), "icon": "fa-b", "type": "normal",
                          "parentId": STAFF, "permissions": {"Projects.edit": true}});
        Request { method: Method::PUT, path: format!("/administration/roles/{role}"), token, body }
    })
}

fn tag_create(api: &TestApi) -> std::pin::Pin<Box<dyn std::future::Future<Output = Request> + Send + '_>> {
    Box::pin(async move {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let body = json!({"name": format!("tag-{}", Uuid::new_v4().simple())});
        Request { method: Method::POST, path: "/tags/task/create".into(), token, body }
    })
}

fn manual_position(api: &TestApi) -> std::pin::Pin<Box<dyn std::future::Future<Output = Request> + Send + '_>> {
    Box::pin(async move {
        let (member, token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let world = crate::projects_api::seeded(api, Some(member.id)).await;
        let path = format!("/projects/{}/manual-positions", world.shared_project);
        Request { method: Method::POST, path, token, body: json!({"name": "Domain", "price": 24.9}) }
    })
}

fn product_import(api: &TestApi) -> std::pin::Pin<Box<dyn std::future::Future<Output = Request> + Send + '_>> {
    Box::pin(async move {
        let (member, token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let world = crate::projects_api::seeded(api, Some(member.id)).await;
        let (_, catalog) = api.get(&format!("/administration/product-catalog/{}", world.product), &token).await;
        let region = &catalog["options"][0];
        let options = json!([{"id": region["id"].clone(), "value": [region["values"][1]["id"].clone()]}]);
        let path = format!("/projects/{}/products", world.shared_project);
        let body = json!({"productId": world.product, "quantity": 2, "activeFromType": "FixedDate",
                          "options": options, "customPrices": {},
                          "activeFromFixedDate": "2027-01-01", "contractPeriodMonths": 12, "renewalMode": "Stops"});
        Request { method: Method::POST, path, token, body }
    })
}

fn quotation_accept(api: &TestApi) -> std::pin::Pin<Box<dyn std::future::Future<Output = Request> + Send + '_>> {
    Box::pin(async move {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = crate::billing_api::seeded(api, &[root.id]).await;
        let quotations = format!("/tasks/{}/express-quotations", w.quoted);
        let (status, quotation) =
            api.post(&quotations, &token, json!({"contactUserId": w.contact, "includeEstimate": true})).await;
        assert_eq!(status, 201, "{quotation}");
        let path = format!("{quotations}/{}/accept", quotation["id"].as_str().unwrap());
        Request { method: Method::POST, path, token, body: json!({}) }
    })
}

fn role_create(api: &TestApi) -> std::pin::Pin<Box<dyn std::future::Future<Output = Request> + Send + '_>> {
    Box::pin(async move {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let body = crate::administration_api::role_body(Some(STAFF), json!({"Projects.edit": true}));
        Request { method: Method::POST, path: "/administration/roles".into(), token, body }
    })
}

fn quotation_create(api: &TestApi) -> std::pin::Pin<Box<dyn std::future::Future<Output = Request> + Send + '_>> {
    Box::pin(async move {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = crate::billing_api::seeded(api, &[root.id]).await;
        let path = format!("/tasks/{}/express-quotations", w.quoted);
        Request {
            method: Method::POST,
            path,
            token,
            body: json!({"contactUserId": w.contact, "includeEstimate": true}),
        }
    })
}

fn billing_create(api: &TestApi) -> std::pin::Pin<Box<dyn std::future::Future<Output = Request> + Send + '_>> {
    Box::pin(async move {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = crate::billing_api::seeded(api, &[root.id]).await;
        let path = format!("/projects/{}/subscription-billings", w.project);
        let body = json!({"manualTitle": "Hosting", "fromDate": "2026-01-15", "toDate": "2026-03-10",
                          "frequency": 1, "payment": "fixed", "price": 99.5});
        Request { method: Method::POST, path, token, body }
    })
}

/// The issue of the seeded billing world's March time invoice (its time stays on its month
/// whatever the clock): the invoice, the sequence, the potential invoice's settings record.
fn invoice_issue(api: &TestApi) -> std::pin::Pin<Box<dyn std::future::Future<Output = Request> + Send + '_>> {
    Box::pin(async move {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = crate::billing_api::seeded(api, &[root.id]).await;
        let march = crate::billing_api::invoice_id("time", w.project, "2026-03", "31");
        let path = format!("{}/issue", crate::billing_api::invoice_path(&march));
        Request { method: Method::POST, path, token, body: json!({}) }
    })
}

/// The cancellation of an issued invoice: the credit note, the invoice's mark, the sequence.
fn invoice_cancel(api: &TestApi) -> std::pin::Pin<Box<dyn std::future::Future<Output = Request> + Send + '_>> {
    Box::pin(async move {
        let issue = invoice_issue(api).await;
        let (status, invoice) = api.post(&issue.path, &issue.token, json!({})).await;
        assert_eq!(status, 201, "{invoice}");
        let path = format!("/billing/invoices/{}/cancel", invoice["id"].as_str().unwrap());
        Request { method: Method::POST, path, token: issue.token, body: json!({}) }
    })
}

/// A skill create once the workspace's skill count exists (its first create made it).
fn skill_create(api: &TestApi) -> std::pin::Pin<Box<dyn std::future::Future<Output = Request> + Send + '_>> {
    Box::pin(async move {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let body = json!({"name": "Release notes", "instructions": "Group by **area**."});
        let (status, first) = api.post("/agents/skills", &token, body.clone()).await;
        assert_eq!(status, 201, "{first}");
        Request { method: Method::POST, path: "/agents/skills".into(), token, body }
    })
}

const WRITES: &[Write] = &[
    Write { name: "role edit", prepare: role_edit, creates: false },
    Write { name: "role create (role, parent chain pinned, record)", prepare: role_create, creates: true },
    Write { name: "tag create, new name (tag, name index, record)", prepare: tag_create, creates: true },
    Write { name: "manual-position append (counter, position, record)", prepare: manual_position, creates: true },
    Write { name: "product import (product, record)", prepare: product_import, creates: true },
    Write { name: "quotation create (counter, quotation, record)", prepare: quotation_create, creates: true },
    Write {
        name: "subscription-billing create (billing with its rows, record)",
        prepare: billing_create,
        creates: true,
    },
    Write { name: "quotation accept", prepare: quotation_accept, creates: false },
    Write { name: "skill create (skill, count, record)", prepare: skill_create, creates: true },
    Write {
        name: "invoice issue (invoice, sequence, potential-invoice record, record)",
        prepare: invoice_issue,
        creates: true,
    },
    Write {
        name: "invoice cancel (credit note, invoice's mark, sequence, record)",
        prepare: invoice_cancel,
        creates: true,
    },
];

async fn send(api: &TestApi, request: &Request, key: &str) -> (u16, reqwest::header::HeaderMap, Value) {
    let headers = [("Idempotency-Key", key)];
    api.send_with(request.method.clone(), &request.path, &request.token, &headers, Some(request.body.clone())).await
}

/// For every write: the store calls of a clean run are counted through the proxy; then, on a
/// fresh world each time, a fault hits the 1st, 2nd, … of them:
/// - `Status(500)` with one attempt per call: the call fails and is not applied;
/// - `Reset` with the production retry shape (3 attempts): the call is applied, its answer is
///   lost, and the SDK sends it again;
/// - for creates, `Reset` with one attempt per call: the call is applied and its answer lost
///   beyond the retries, so the handler answers 503 although its write was applied (at the
///   creating transaction: the create and its recorded response are kept).
///
/// The answer must be the write's success or a 503; the store must hold all of the clean run's
/// change or none of it; and the retry with the same `Idempotency-Key` must leave exactly the
/// clean run's change (one item of each kind: nothing created twice). For creates, the retry of
/// a kept create is the recorded response (`Idempotent-Replayed: true`) naming the item kept;
/// the retry of a create not kept runs afresh. Printed as the table of docs/reliability.md.
#[tokio::test]
async fn the_fault_table() {
    let _alone = api_tests::heavy_dynamo_suite().await;
    // The writes run concurrently, each with proxies of its own (a rule's "nth request" counts
    // one write's requests only).
    let Some(rows) =
        futures::future::join_all(WRITES.iter().map(table_rows)).await.into_iter().collect::<Option<Vec<_>>>()
    else {
        return;
    };
    println!("| write | store call hit | fault | answer | store keeps | retry, same key |");
    println!("|---|---|---|---|---|---|");
    for row in rows.concat() {
        println!("{row}");
    }
}

/// How a fault meets a call: whether the call is applied, and whether the SDK retries it.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// `Status(500)`, one attempt: not applied.
    Failed,
    /// `Reset`, three attempts: applied, answer lost, sent again.
    AppliedRetried,
    /// `Reset`, one attempt: applied, answer lost, not sent again.
    AppliedUnanswered,
}

impl Mode {
    fn label(self) -> &'static str {
        match self {
            Mode::Failed => "500",
            Mode::AppliedRetried => "Reset (SDK retries)",
            Mode::AppliedUnanswered => "Reset, answer lost",
        }
    }
}

/// The rows of one write; None after a loud skip.
async fn table_rows(write: &Write) -> Option<Vec<String>> {
    let one_attempt = proxied_dynamo("the fault suite", ONE_ATTEMPT).await?;
    let retried = proxied_dynamo("the fault suite", PROMPT_FAULTS).await?;
    let is_write = |op: &str| matches!(op, "PutItem" | "UpdateItem" | "DeleteItem" | "TransactWriteItems");
    let mut modes =
        vec![(Mode::Failed, Fault::Status(500), &one_attempt), (Mode::AppliedRetried, Fault::Reset, &retried)];
    if write.creates {
        modes.push((Mode::AppliedUnanswered, Fault::Reset, &one_attempt));
    }
    let mut table = Vec::new();
    for (mode, fault, px) in modes {
        // Each run on a workspace of its own (a fresh server), so worlds never collide.
        let api = &start(px).await;
        let request = (write.prepare)(api).await;
        let before = snapshot(px, api.workspace_id).await;
        px.proxy.reset_counts();
        let (status, _, body) = send(api, &request, &Uuid::new_v4().to_string()).await;
        assert!((200..300).contains(&status), "{}: the clean run: {status} {body}", write.name);
        let steps = px.proxy.sequence();
        let expected = change(&before, &snapshot(px, api.workspace_id).await);
        assert!(!expected.is_empty(), "{}: the clean run changed nothing", write.name);
        for (step, operation) in steps.iter().enumerate().map(|(i, op)| (i + 1, op)) {
            // An applied call whose answer is lost matters only for writes (a read is sent
            // again and nothing changes); a failed call matters at every step.
            if mode != Mode::Failed && !is_write(operation) {
                continue;
            }
            let api = &start(px).await;
            let request = (write.prepare)(api).await;
            let before = snapshot(px, api.workspace_id).await;
            let key = Uuid::new_v4().to_string();
            px.proxy.reset_counts();
            px.proxy.inject(Rule::any(fault.clone()).nth(step));
            let (status, headers, body) = send(api, &request, &key).await;
            px.proxy.heal();
            let first_calls = px.proxy.sequence();
            let kept_items = snapshot(px, api.workspace_id).await;
            let kept = change(&before, &kept_items);
            let ok = (200..300).contains(&status);
            assert!(
                ok || status == 503,
                "{} step {step} {}: {status} {body} (a fault answers 503 or does not matter)",
                write.name,
                mode.label()
            );
            if status == 503 {
                assert_eq!(retry_after(&headers), Some("2"));
            }
            // A sequence counter is an allocator: a number taken by a write that then failed
            // is not given back (a gap in the sorts or numbers), as with database sequences.
            let without_counters =
                |c: &[String]| -> Vec<String> { c.iter().filter(|x| !x.ends_with("Sequence")).cloned().collect() };
            let (outcome, whole) = if kept.is_empty() {
                ("none", false)
            } else if without_counters(&kept).is_empty() {
                ("none (the counter advanced)", false)
            } else if without_counters(&kept) == without_counters(&expected) {
                ("all", true)
            } else {
                panic!("{} step {step} {}: half-written: {kept:?}, whole change {expected:?}", write.name, mode.label())
            };
            // The client's retry, with the same key; sent again after a 503 as its Retry-After
            // asks, as a client does: on a loaded machine (DynamoDB Local serving the other suites)
            // one call of the retry can outlast the one-attempt settings' 5 s.
            let (mut retried, mut retry_headers, mut retry_body) = send(api, &request, &key).await;
            for _ in 0..2 {
                if retried != 503 {
                    break;
                }
                tokio::time::sleep(Duration::from_secs(2)).await;
                (retried, retry_headers, retry_body) = send(api, &request, &key).await;
            }
            let finally = change(&before, &snapshot(px, api.workspace_id).await);
            assert!(
                (200..300).contains(&retried),
                "{} step {step} {}: the retry: {retried} {retry_body}; the first answer {status} {body}; calls {first_calls:?}",
                write.name,
                mode.label()
            );
            assert_eq!(
                without_counters(&finally),
                without_counters(&expected),
                "{} step {step} {}: the retry completes it exactly once; calls {first_calls:?}",
                write.name,
                mode.label()
            );
            let replayed = retry_headers.get("idempotent-replayed").is_some_and(|v| v == "true");
            if write.creates {
                // A kept create was recorded with it: the retry replays it, naming the kept
                // item (the first answer's body when there was one). A create not kept runs
                // again.
                assert_eq!(
                    replayed,
                    whole,
                    "{} step {step} {}: the retry of a create {} is {}replayed: {retried} {retry_body}",
                    write.name,
                    mode.label(),
                    if whole { "kept" } else { "not kept" },
                    if replayed { "" } else { "not " }
                );
                if ok {
                    assert_eq!(retry_body, body, "{} step {step} {}: the first answer again", write.name, mode.label());
                }
                if let Some(id) = retry_body["id"].as_str() {
                    let named = kept_items
                        .values()
                        .chain(snapshot(px, api.workspace_id).await.values())
                        .any(|item| item["id"] == id);
                    assert!(
                        named,
                        "{} step {step} {}: the retry names {id}, not the item created",
                        write.name,
                        mode.label()
                    );
                }
            }
            table.push(format!(
                "| {} | {step}/{}: {operation} | {} | {status} | {outcome} | {retried}{}, exactly once |",
                write.name,
                steps.len(),
                mode.label(),
                if replayed { " replayed" } else { "" }
            ));
        }
    }
    Some(table)
}

// ------------------------------------------------------------------ S3 and Secrets Manager

/// A client of moto through a fault proxy with the fault suite's settings, and the proxy.
fn moto_endpoint(suite: &str) -> Option<String> {
    // api_tests::moto_s3 skips loudly (or fails under LT_REQUIRE_SERVICES=1) when moto is absent.
    std::env::var("LT_MOTO_ENDPOINT").ok().or_else(|| {
        api_tests::loud_skip(&format!("{suite} (LT_MOTO_ENDPOINT not set)"));
        assert!(
            std::env::var("LT_REQUIRE_SERVICES").map_or(true, |v| v != "1"),
            "LT_REQUIRE_SERVICES=1 but LT_MOTO_ENDPOINT is not set"
        );
        None
    })
}

async fn s3_via(proxy: &api_tests::fault_proxy::FaultProxy, bucket: &str) -> workapi_store::s3::S3Objects {
    use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .http_client(workapi_store::aws::https_client())
        .endpoint_url(proxy.url())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "faults"))
        .force_path_style(true)
        .timeout_config(FAST_AWS.timeouts())
        .retry_config(FAST_AWS.retries())
        .build();
    workapi_store::s3::S3Objects::new(aws_sdk_s3::Client::from_conf(config), bucket)
}

/// S3 failing during an upload: 503, no file record, the quota given back, and no object
/// left behind (the bytes are deleted when their record certainly does not exist).
#[tokio::test]
async fn an_upload_while_s3_or_the_store_fails_answers_503_and_leaves_no_record_and_no_object() {
    let Some(moto) = moto_endpoint("the upload fault suite") else { return };
    let Some(px) = proxied_dynamo("the upload fault suite", FAST_AWS).await else { return };
    let Some((_, direct_s3)) = api_tests::moto_s3("the upload fault suite").await else { return };
    let bucket = format!("workapi-faults-{}", Uuid::new_v4().simple());
    direct_s3.create_bucket().bucket(&bucket).send().await.expect("bucket");
    let s3_proxy = api_tests::fault_proxy::FaultProxy::start(&moto).await;
    let objects = std::sync::Arc::new(s3_via(&s3_proxy, &bucket).await);
    let api = TestApi::builder(&backend(&px)).objects(objects).start().await;
    let (_, token) = api.user(ROOT, UserKind::Employee).await;
    let png = workspace::image::samples::bytes(workspace::image::samples::PNG);
    let objects_in_bucket = async || {
        let listed = direct_s3.list_objects_v2().bucket(&bucket).send().await.expect("list");
        listed.contents().len()
    };
    let file_items = async || snapshot(&px, api.workspace_id).await.values().filter(|i| i["entity"] == "File").count();
    let usage = async || {
        let keys = workapi_store::keys::WsKeys::new(api.workspace_id);
        workspace::quota::stored(px.direct.as_ref(), keys).await.expect("usage")
    };

    // S3 refuses every PutObject: 503, nothing anywhere, the reserved bytes given back.
    s3_proxy.inject(Rule::on("S3:PUT", Fault::Status(503)).always());
    let (status, body) = crate::upload::upload(&api, &token, &[crate::upload::image_part(&png, "a.png")]).await;
    s3_proxy.heal();
    assert_error_body(api.backend, status, &body, 503);
    assert!(s3_proxy.count("S3:PUT") >= 3, "the SDK retried: {:?}", s3_proxy.counts());
    assert_eq!((file_items().await, objects_in_bucket().await, usage().await), (0, 0, 0));

    // The bytes stored, then the record's write (a transaction with its event) fails: 503, the
    // bytes deleted again.
    px.proxy.inject(Rule::on("TransactWriteItems", Fault::Status(500)).always());
    let (status, body) = crate::upload::upload(&api, &token, &[crate::upload::image_part(&png, "b.png")]).await;
    px.proxy.heal();
    assert_error_body(api.backend, status, &body, 503);
    assert_eq!(s3_proxy.count("S3:DELETE"), 1, "the orphan's bytes deleted");
    assert_eq!((file_items().await, objects_in_bucket().await, usage().await), (0, 0, 0));

    // Healed: the upload works, one record naming one object.
    let (status, body) = crate::upload::upload(&api, &token, &[crate::upload::image_part(&png, "c.png")]).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!((file_items().await, objects_in_bucket().await), (1, 1));
}

/// Secrets Manager failing: operations that store a new secret answer 503 and write nothing;
/// operations that need no secret go on.
#[tokio::test]
async fn with_secrets_manager_down_new_secrets_answer_503_and_the_rest_keeps_working() {
    use aws_sdk_secretsmanager::config::{BehaviorVersion, Credentials, Region};
    let Some(moto) = moto_endpoint("the Secrets Manager fault suite") else { return };
    let Some(px) = proxied_dynamo("the Secrets Manager fault suite", FAST_AWS).await else { return };
    let proxy = api_tests::fault_proxy::FaultProxy::start(&moto).await;
    let config = aws_sdk_secretsmanager::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .http_client(workapi_store::aws::https_client())
        .endpoint_url(proxy.url())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "faults"))
        .timeout_config(FAST_AWS.timeouts())
        .retry_config(FAST_AWS.retries())
        .build();
    let prefix = format!("workapi-faults-{}/", Uuid::new_v4().simple());
    let secrets = workapi_kit::secrets::SecretsManagerSecrets::with_client(
        prefix,
        aws_sdk_secretsmanager::Client::from_conf(config),
    );
    let api = TestApi::builder(&backend(&px)).secrets(std::sync::Arc::new(secrets)).start().await;
    let (admin, token) = api.user(ROOT, UserKind::Employee).await;
    let w = crate::agents_api::seeded(&api, admin.id).await;

    for fault in [Fault::Status(503), Fault::Hang, Fault::Reset] {
        proxy.inject(Rule::any(fault.clone()).always());
        let path = format!("/agents/{}/managed-provider", w.agent);
        let (status, headers, body) =
            api.call(Method::POST, &path, Some(&token), Some(crate::agents_api::full_body(&w))).await;
        assert_error_body(api.backend, status, &body, 503);
        assert_eq!(retry_after(&headers), Some("2"), "{fault:?}");
        // Nothing saved: the agent still has no settings.
        let (status, read) = api.get(&path, &token).await;
        assert_eq!(status, 404, "{fault:?}: half-saved settings: {read}");
        // What needs no secret goes on.
        assert_eq!(api.get("/agents", &token).await.0, 200, "{fault:?}");
        assert_eq!(api.get("/tags/task", &token).await.0, 200, "{fault:?}");
        proxy.heal();
    }
    // One CreateSecret applied and its answer lost: the SDK's retry finds the secret it
    // created, and the save completes.
    proxy.reset_counts();
    proxy.inject(Rule::on("CreateSecret", Fault::Reset));
    let path = format!("/agents/{}/managed-provider", w.agent);
    let (status, saved) = api.post(&path, &token, crate::agents_api::full_body(&w)).await;
    assert_eq!(status, 201, "{saved}");
    assert_eq!(proxy.injected("CreateSecret"), 1);
    assert_eq!(api.get(&path, &token).await.0, 200);
}
