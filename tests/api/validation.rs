//! One 400 with every error (docs/conventions.md, "Request bodies"): a body that breaks rules of
//! different kinds (type, bound, a rule across fields, a rule that needs the store) gets every
//! field named at once, on every creating operation; and every refusal of the JSON itself
//! (malformed, not an object, another content type, a key twice, an inexact number) and a
//! request target over the limit get the spec's body `{statusCode, message, errors}`.

use api_tests::{TestApi, each_backend};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use uuid::Uuid;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;

struct World {
    project: Uuid,
    catalog_category: Uuid,
    product: Uuid,
    task: Uuid,
}

async fn seeded(api: &TestApi, member: Uuid) -> World {
    let w = World {
        project: Uuid::new_v4(),
        catalog_category: Uuid::new_v4(),
        product: Uuid::new_v4(),
        task: Uuid::new_v4(),
    };
    let seed = json!({
        "version": 1,
        "catalogCategories": [{"id": w.catalog_category, "name": "Hosting"}],
        "projects": [{"id": w.project, "name": "Alpha", "customerOrganizationId": null, "members": [member],
            "hourRate": 90, "currency": "EUR", "taxRate": 19, "expressQuotationsEnabled": true,
            "manualPositionCategories": [{"id": Uuid::new_v4(), "name": "Licences"}]}],
        "catalogProducts": [{"id": w.product, "name": "Hosting", "categoryId": w.catalog_category, "description": "x",
            "priceSubscription": 10, "priceFrequency": 1, "variants": [{"name": "S", "description": null}],
            "options": [{"name": "Region", "isMultiple": false, "isRequired": true, "values": [{"name": "FRA"}]}]}],
        "tasks": [{"id": w.task, "shortNumber": 1, "projectId": w.project, "title": "Not estimated", "products": []}]
    });
    let file = local::seed::parse(&seed.to_string()).expect("seed parses");
    local::seed::load(api.store.as_ref(), api.workspace_id, &file).await.expect("seed loads");
    w
}

fn fields(body: &Value) -> BTreeSet<String> {
    body["errors"].as_object().map(|e| e.keys().cloned().collect()).unwrap_or_default()
}

fn assert_names(backend: &str, what: &str, status: u16, body: &Value, expected: &[&str]) {
    assert_eq!(status, 400, "[{backend}] {what}: {body}");
    assert_eq!(body["statusCode"], 400, "[{backend}] {what}: {body}");
    assert!(body["message"].is_string(), "[{backend}] {what}: {body}");
    let named = fields(body);
    for field in expected {
        assert!(named.contains(*field), "[{backend}] {what}: {field} not named in {body}");
    }
}

#[tokio::test]
async fn a_body_breaking_rules_of_different_kinds_gets_every_field_named() {
    each_backend(async |_, api: &TestApi| {
        let (admin, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, admin.id).await;
        let unknown = Uuid::new_v4();
        let cases: Vec<(&str, String, Value, Vec<&str>)> = vec![
            (
                // The issue's example: a type error, a rule across fields, a collection rule; and
                // a reference to a missing category.
                "catalog product",
                "/administration/product-catalog".into(),
                json!({"name": "Hosting", "categoryId": unknown, "description": "x", "priceFrequency": 5,
                       "pricePerUnit": 3, "variants": [], "options": []}),
                vec!["priceFrequency", "priceUnitName", "variants", "categoryId"],
            ),
            (
                "manual position",
                format!("/projects/{}/manual-positions", w.project),
                json!({"name": "Domain", "price": -1, "discountType": "Percentage", "discountAmount": 150,
                       "categoryId": unknown}),
                vec!["price", "discountAmount", "categoryId"],
            ),
            (
                "product import",
                format!("/projects/{}/products", w.project),
                json!({"productId": w.product, "quantity": 0, "options": [{"id": unknown, "value": [unknown]}],
                       "customPrices": {}, "activeFromType": "FixedDate"}),
                vec!["quantity", "activeFromFixedDate", "options[0].id"],
            ),
            (
                "express quotation",
                format!("/tasks/{}/express-quotations", w.task),
                json!({"contactUserId": unknown, "includeEstimate": true, "language": "zz"}),
                vec!["contactUserId", "includeEstimate", "language"],
            ),
            (
                "role",
                "/administration/roles".into(),
                json!({"name": "", "icon": 5, "type": "weird"}),
                vec!["name", "icon", "type"],
            ),
            (
                "work activity",
                "/administration/task-settings/activities".into(),
                json!({"name": "", "translations": [{"language": "xx"}]}),
                vec!["name", "translations[0].language", "translations[0].name"],
            ),
            // A tag's body has one field: its one error is all there is.
            ("tag", "/tags/task/create".into(), json!({"name": ""}), vec!["name"]),
            (
                // Issue 31: a type error and two rules across fields (a price that is not
                // positive, a range that ends before it starts) in one 400.
                "subscription billing",
                format!("/projects/{}/subscription-billings", w.project),
                json!({"manualTitle": "Hosting", "fromDate": "2026-03-01", "toDate": "2026-01-31",
                       "frequency": 13, "payment": "fixed", "price": 0}),
                vec!["frequency", "price", "toDate"],
            ),
            (
                "subscription billing, a price below the bound",
                format!("/projects/{}/subscription-billings", w.project),
                json!({"manualTitle": "Hosting", "fromDate": "2026-03-01", "toDate": "2026-01-31",
                       "frequency": 13, "payment": "fixed", "price": -5}),
                vec!["frequency", "price", "toDate"],
            ),
            (
                "subscription billing, dates outside the plain form and the range",
                format!("/projects/{}/subscription-billings", w.project),
                json!({"manualTitle": "", "fromDate": "+2026-01-01", "toDate": "-0001-01-01",
                       "frequency": 1, "payment": "oneTime", "price": 1, "quantity": 0}),
                vec!["manualTitle", "fromDate", "toDate", "quantity"],
            ),
        ];
        for (what, path, body, expected) in cases {
            let (status, answer) = api.post(&path, &token, body).await;
            assert_names(api.backend, what, status, &answer, &expected);
        }
        // The potential invoice's writes read their body before looking the invoice up, so an
        // id that names nothing due still gets the body's 400 (docs/billing.md).
        let invoice =
            format!("/billing/potential-invoices/subscription%3A%3A{}%3A%3A2026-01-01%3A%3A2026-01-31", w.project);
        let (status, _, answer) = api
            .call(
                reqwest::Method::PATCH,
                &invoice,
                Some(&token),
                Some(json!({"billedFrom": "0000-01-01", "billedTo": 5, "contactId": "nobody"})),
            )
            .await;
        assert_names(api.backend, "potential invoice", status, &answer, &["billedFrom", "billedTo", "contactId"]);
        let reversed = json!({"billedFrom": "2026-01-20", "billedTo": "2026-01-10T12:00:00Z", "contactId": 5});
        let (status, _, answer) = api.call(reqwest::Method::PATCH, &invoice, Some(&token), Some(reversed)).await;
        assert_names(api.backend, "potential invoice, reversed range", status, &answer, &["billedTo", "contactId"]);
        let quantity = format!("{invoice}/subscriptions/{unknown}/quantity");
        let (status, answer) = api.post(&quantity, &token, json!({"value": -1})).await;
        assert_names(api.backend, "row quantity", status, &answer, &["value"]);
        // A valid body reaches the lookups: nothing is due, so the 404.
        let (status, answer) = api.post(&quantity, &token, json!({"value": 1})).await;
        assert_eq!(status, 404, "[{}] {answer}", api.backend);
    })
    .await;
}

async fn raw(api: &TestApi, token: &str, content_type: Option<&str>, body: &'static str) -> (u16, Value) {
    let mut request = api.http.post(api.url("/tags/task/create")).bearer_auth(token).body(body);
    if let Some(content_type) = content_type {
        request = request.header("Content-Type", content_type);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn every_refusal_of_the_json_has_the_validation_body() {
    each_backend(async |_, api: &TestApi| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let json = Some("application/json");
        for (body, field) in [
            (r#"{"name":"#, "body"),
            ("[1]", "body"),
            ("\"Urgent\"", "body"),
            ("", "body"),
            (r#"{"name": "a", "name": "b"}"#, "name"),
            (r#"{"name": "a", "x": {"y": 1, "y": 2}}"#, "x.y"),
            (r#"{"name": 1e-400}"#, "name"),
        ] {
            let (status, answer) = raw(api, &token, json, body).await;
            assert_names(api.backend, body, status, &answer, &[field]);
        }
        let (status, answer) = raw(api, &token, Some("text/plain"), r#"{"name": "a"}"#).await;
        assert_eq!((status, answer["statusCode"].clone()), (415, json!(415)), "[{}] {answer}", api.backend);
        assert!(fields(&answer).contains("body"), "[{}] {answer}", api.backend);
        // Nothing was created by the refused bodies.
        let (_, tags) = api.get("/tags/task", &token).await;
        assert_eq!(tags, json!([]), "[{}]", api.backend);
    })
    .await;
}

#[tokio::test]
async fn an_inexact_number_is_refused_by_its_field_and_an_exact_exponent_is_read() {
    each_backend(async |_, api: &TestApi| {
        let (admin, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, admin.id).await;
        let path = format!("/projects/{}/manual-positions?responseShape=full", w.project);
        let send = |price: &'static str| {
            api.http
                .post(api.url(&path))
                .bearer_auth(&token)
                .header("Content-Type", "application/json")
                .body(format!(r#"{{"name": "Domain", "price": {price}}}"#))
                .send()
        };
        for inexact in ["1e-400", "0.1000000000000000000001", "0.001"] {
            let response = send(inexact).await.unwrap();
            let status = response.status().as_u16();
            let answer: Value = response.json().await.unwrap();
            assert_names(api.backend, inexact, status, &answer, &["price"]);
        }
        let response = send("2.49E1").await.unwrap();
        assert_eq!(response.status().as_u16(), 200, "[{}]", api.backend);
        let created: Value = response.json().await.unwrap();
        assert_eq!(created["price"], json!(24.9), "[{}] {created}", api.backend);
    })
    .await;
}

#[tokio::test]
async fn a_request_target_over_the_limit_gets_414_with_the_error_body() {
    each_backend(async |_, api: &TestApi| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let long = format!("/tags/task?fieldsToReturn={}", "a".repeat(workapi_kit::http::MAX_URI_BYTES));
        let (status, _, answer) = api.call(reqwest::Method::GET, &long, Some(&token), None).await;
        assert_eq!((status, answer["statusCode"].clone()), (414, json!(414)), "[{}] {answer}", api.backend);
        assert!(fields(&answer).contains("uri"), "[{}] {answer}", api.backend);
    })
    .await;
}
