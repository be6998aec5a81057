//! Billing over HTTP with real tokens (spec §2.5a, §2.7, §4.7, §4.8; docs/billing.md), on every
//! store backend: subscription billings and their rows, created once under an
//! Idempotency-Key; potential invoices appearing as the business clock (`LT_CUSTOM_NOW`)
//! crosses period ends, their contact and row quantities; support contingents against a hand
//! calculation; the seed's billing sections; other workspaces' 404s.

use api_tests::{TestApi, assert_error_body, each_backend};
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;
use workapi_domain::identity::{self, UserKind};
use workapi_domain::permissions::{CEO, ROOT, TEAM_LEADER};

pub(crate) struct World {
    pub(crate) project: Uuid,
    pub(crate) contact: Uuid,
    pub(crate) inactive: Uuid,
    pub(crate) stranger: Uuid,
    /// #1, at the project's 100/h.
    pub(crate) support: Uuid,
    /// #2, 2 h estimated: its accepted quotation (200) replaces its time.
    pub(crate) quoted: Uuid,
    /// Monthly 10 h from 15 January 2026, transferable.
    pub(crate) retainer: Uuid,
    /// Monthly 5 h from 1 March 2026.
    pub(crate) small: Uuid,
    /// Quarterly 20 h through 2025: ended.
    pub(crate) ended: Uuid,
}

fn seed_json(w: &World, members: &[Uuid]) -> Value {
    let tag = &Uuid::new_v4().simple().to_string()[..8];
    let (org, other_org) = (Uuid::new_v4(), Uuid::new_v4());
    let entry = |task: Uuid, date: &str, hours: f64, billed: bool| json!({"id": Uuid::new_v4(), "taskId": task, "date": date, "hours": hours, "billed": billed});
    json!({
        "version": 1,
        "organizations": [{"id": org, "name": "Acme"}, {"id": other_org, "name": "Globex"}],
        "contacts": [
            {"id": w.contact, "organizationId": org, "name": "Erika", "email": format!("e-{tag}@acme.example")},
            {"id": w.inactive, "organizationId": org, "name": "Max", "email": format!("m-{tag}@acme.example"),
             "isActive": false},
            {"id": w.stranger, "organizationId": other_org, "name": "Hank", "email": format!("h-{tag}@globex.example")}
        ],
        "projects": [{"id": w.project, "name": "Shop", "customerOrganizationId": org, "members": members,
                      "hourRate": 100, "currency": "EUR", "taxRate": 19, "expressQuotationsEnabled": true}],
        "tasks": [
            {"id": w.support, "shortNumber": 1, "projectId": w.project, "title": "Support"},
            {"id": w.quoted, "shortNumber": 2, "projectId": w.project, "title": "Fixed-price fix", "estimatedHours": 2}
        ],
        "supportContingents": [
            {"id": w.retainer, "projectId": w.project, "title": "Retainer", "fromDate": "2026-01-15", "frequency": 1,
             "hours": 10, "transferable": true},
            {"id": w.small, "projectId": w.project, "title": "Small", "fromDate": "2026-03-01", "frequency": 1,
             "hours": 5},
            {"id": w.ended, "projectId": w.project, "title": "Last year", "fromDate": "2025-01-01",
             "toDate": "2025-12-31", "frequency": 3, "hours": 20, "transferable": true}
        ],
        "timeEntries": [
            entry(w.support, "2026-03-14", 5.0, false),
            entry(w.support, "2026-03-15", 1.5, false),
            entry(w.support, "2026-04-02", 0.75, false),
            entry(w.support, "2026-04-03", 10.0, false),
            entry(w.quoted, "2026-03-20", 4.0, false),
            entry(w.support, "2026-03-20", 8.0, true)
        ],
        "issuedInvoices": [
            {"id": Uuid::new_v4(), "projectId": w.project, "number": "RE-1", "dateFrom": "2026-01-15",
             "dateTo": "2026-02-14", "consumed": [{"contingentId": w.retainer, "hours": 4}]},
            {"id": Uuid::new_v4(), "projectId": w.project, "number": "RE-2", "dateFrom": "2026-02-15",
             "dateTo": "2026-02-15", "consumed": [{"contingentId": w.retainer, "hours": 12.5}]},
            {"id": Uuid::new_v4(), "projectId": w.project, "number": "RE-3", "dateFrom": "2026-03-15",
             "dateTo": "2026-04-01", "consumed": [{"contingentId": w.retainer, "hours": 3}]}
        ]
    })
}

fn new_world() -> World {
    World {
        project: Uuid::new_v4(),
        contact: Uuid::new_v4(),
        inactive: Uuid::new_v4(),
        stranger: Uuid::new_v4(),
        support: Uuid::new_v4(),
        quoted: Uuid::new_v4(),
        retainer: Uuid::new_v4(),
        small: Uuid::new_v4(),
        ended: Uuid::new_v4(),
    }
}

pub(crate) async fn load(api: &TestApi, seed: &Value) -> Result<local::seed::Report, String> {
    let file = local::seed::parse(&seed.to_string()).map_err(|e| e.to_string())?;
    local::seed::load(api.store.as_ref(), api.workspace_id, &file).await.map_err(|e| e.to_string())
}

pub(crate) async fn seeded(api: &TestApi, members: &[Uuid]) -> World {
    let world = new_world();
    load(api, &seed_json(&world, members)).await.expect("seed loads");
    world
}

/// GET as of a business instant.
pub(crate) async fn get_at(api: &TestApi, path: &str, token: &str, now: &str) -> (u16, Value) {
    let (status, _, body) = api.send_with(Method::GET, path, token, &[("LT_CUSTOM_NOW", now)], None).await;
    (status, body)
}

pub(crate) fn billings(project: Uuid) -> String {
    format!("/projects/{project}/subscription-billings")
}

pub(crate) fn invoice_path(id: &str) -> String {
    format!("/billing/potential-invoices/{}", id.replace(':', "%3A"))
}

pub(crate) fn invoice_id(kind: &str, project: Uuid, month: &str, last: &str) -> String {
    format!("{kind}::{project}::{month}-01::{month}-{last}")
}

#[tokio::test]
async fn subscription_billings_generate_their_rows_and_are_created_once() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let monthly = json!({"manualTitle": "Hosting", "fromDate": "2026-01-15", "toDate": "2026-03-10",
                             "frequency": 1, "payment": "fixed", "price": 99.5});
        let (status, created) = api.post(&billings(w.project), &token, monthly).await;
        assert_eq!((status, &created), (201, &json!({"success": true})), "[{}]", api.backend);
        let quarterly = json!({"manualTitle": "Seats", "fromDate": "2026-01-01", "toDate": "2026-07-31",
                               "frequency": 3, "payment": "perUnit", "price": 300, "quantity": 2,
                               "billingTiming": "advance"});
        let key = [("Idempotency-Key", "seats-2026")];
        let first = api.send_with(Method::POST, &billings(w.project), &token, &key, Some(quarterly.clone())).await;
        let again = api.send_with(Method::POST, &billings(w.project), &token, &key, Some(quarterly)).await;
        assert_eq!((first.0, again.0), (201, 201), "[{}] {} {}", api.backend, first.2, again.2);
        assert_eq!(again.1.get("Idempotent-Replayed").map(|v| v.to_str().unwrap()), Some("true"));

        let (status, list) = api.get(&billings(w.project), &token).await;
        assert_eq!(status, 200, "[{}] {list}", api.backend);
        let list = list.as_array().unwrap();
        assert_eq!(list.len(), 2, "[{}] the replay created nothing: {list:?}", api.backend);
        let rows = |b: &Value| -> Vec<Value> {
            b["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| json!([r["periodStart"], r["periodEnd"], r["months"], r["quantity"], r["amount"]]))
                .collect()
        };
        let hosting = list.iter().find(|b| b["manualTitle"] == "Hosting").unwrap();
        assert_eq!(
            rows(hosting),
            [
                json!(["2026-01-01", "2026-01-31", 1, 1, 99.5]),
                json!(["2026-02-01", "2026-02-28", 1, 1, 99.5]),
                json!(["2026-03-01", "2026-03-31", 1, 1, 99.5])
            ],
            "[{}]",
            api.backend
        );
        assert_eq!(
            (&hosting["billingTiming"], &hosting["type"], &hosting["currency"]),
            (&json!("arrears"), &json!("manual"), &json!("EUR"))
        );
        let seats = list.iter().find(|b| b["manualTitle"] == "Seats").unwrap();
        // 300 × 2 per quarter; July alone is a third of a quarter: 200.
        assert_eq!(
            rows(seats),
            [
                json!(["2026-01-01", "2026-03-31", 3, 2, 600]),
                json!(["2026-04-01", "2026-06-30", 3, 2, 600]),
                json!(["2026-07-01", "2026-07-31", 1, 2, 200])
            ],
            "[{}]",
            api.backend
        );
    })
    .await;
}

#[tokio::test]
async fn invalid_billings_name_their_fields_and_create_nothing() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let valid = json!({"manualTitle": "Hosting", "fromDate": "2026-01-15", "toDate": "2026-03-10",
                           "frequency": 1, "payment": "fixed", "price": 10});
        let cases = [
            ("toDate", json!("2026-01-14")),
            ("toDate", json!("2036-01-01")),
            ("frequency", json!(0)),
            ("frequency", json!(13)),
            ("price", json!(0)),
            ("payment", json!("weekly")),
            ("billingTiming", json!("later")),
            ("fromDate", json!("15.01.2026")),
        ];
        for (field, value) in cases {
            let mut body = valid.clone();
            body[field] = value.clone();
            let (status, answer) = api.post(&billings(w.project), &token, body).await;
            assert_error_body(api.backend, status, &answer, 400);
            assert!(answer["errors"][field].is_array(), "[{}] {field}={value}: {answer}", api.backend);
        }
        let mut one_time = valid.clone();
        one_time["payment"] = json!("oneTime");
        let (status, answer) = api.post(&billings(w.project), &token, one_time).await;
        assert_error_body(api.backend, status, &answer, 400);
        assert!(answer["errors"]["quantity"].is_array(), "[{}] {answer}", api.backend);
        let (_, list) = api.get(&billings(w.project), &token).await;
        assert_eq!(list, json!([]), "[{}]", api.backend);

        // Permissions: Team Leaders lack Invoices.manage (403); an unknown project is a 404.
        let (_, leader) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let (status, answer) = api.post(&billings(w.project), &leader, valid.clone()).await;
        assert_error_body(api.backend, status, &answer, 403);
        let (status, answer) = api.post(&billings(Uuid::new_v4()), &token, valid.clone()).await;
        assert_error_body(api.backend, status, &answer, 404);
        let (status, answer) = api.post("/projects/not-a-uuid/subscription-billings", &token, valid).await;
        assert_error_body(api.backend, status, &answer, 400);
    })
    .await;
}

#[tokio::test]
async fn due_rows_appear_in_potential_invoices_as_the_business_clock_moves() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let monthly = json!({"manualTitle": "Hosting", "fromDate": "2026-01-01", "toDate": "2026-03-31",
                             "frequency": 1, "payment": "perUnit", "price": 100});
        let quarterly = json!({"manualTitle": "Licence", "fromDate": "2026-01-01", "toDate": "2026-06-30",
                               "frequency": 3, "payment": "fixed", "price": 300, "billingTiming": "advance"});
        for body in [monthly, quarterly] {
            assert_eq!(api.post(&billings(w.project), &token, body).await.0, 201);
        }
        let list = format!("/billing/potential-invoices?projectId={}", w.project);
        let subscriptions = |invoices: &Value| -> Vec<Value> {
            invoices
                .as_array()
                .unwrap()
                .iter()
                .filter(|i| i["type"] == "subscription")
                .map(|i| {
                    let titles: Vec<Value> =
                        i["subscriptions"].as_array().unwrap().iter().map(|l| l["title"].clone()).collect();
                    json!([i["dateFrom"], titles, i["netTotal"]])
                })
                .collect()
        };
        // 31 January: the advance quarter is due from its first day; the arrears January row
        // only once January has ended.
        let (status, at) = get_at(api, &list, &token, "2026-01-31T23:59:59Z").await;
        assert_eq!(status, 200, "[{}] {at}", api.backend);
        assert_eq!(subscriptions(&at), [json!(["2026-01-01", ["Licence"], 300])], "[{}]", api.backend);
        let (_, at) = get_at(api, &list, &token, "2026-02-01T00:00:00Z").await;
        assert_eq!(subscriptions(&at), [json!(["2026-01-01", ["Hosting", "Licence"], 400])], "[{}]", api.backend);
        let (_, at) = get_at(api, &list, &token, "2026-04-01T08:00:00+02:00").await;
        assert_eq!(
            subscriptions(&at),
            [
                json!(["2026-01-01", ["Hosting", "Licence"], 400]),
                json!(["2026-02-01", ["Hosting"], 100]),
                json!(["2026-03-01", ["Hosting"], 100]),
                json!(["2026-04-01", ["Licence"], 300])
            ],
            "[{}] 08:00 at +02:00 is 06:00 UTC on 1 April: March has ended",
            api.backend
        );

        // Contact, billed range and a row's quantity, read back.
        let january = invoice_id("subscription", w.project, "2026-01", "31");
        let path = invoice_path(&january);
        let now = [("LT_CUSTOM_NOW", "2026-02-15T00:00:00Z")];
        let patch =
            json!({"contactId": w.contact, "billedFrom": "2026-01-05", "billedTo": "2026-01-31T22:00:00-05:00"});
        let (status, _, answer) = api.send_with(Method::PATCH, &path, &token, &now, Some(patch)).await;
        assert_eq!((status, &answer), (200, &json!({"success": true})), "[{}]", api.backend);
        let (status, read) = get_at(api, &path, &token, "2026-02-15T00:00:00Z").await;
        assert_eq!(status, 200, "[{}] {read}", api.backend);
        assert_eq!(
            json!([read["id"], read["contactId"], read["billedFrom"], read["billedTo"]]),
            json!([january, w.contact, "2026-01-05", "2026-01-31"]),
            "[{}]",
            api.backend
        );
        for contact in [w.stranger, w.inactive, Uuid::new_v4(), root.id] {
            let body = json!({"contactId": contact});
            let (status, _, answer) = api.send_with(Method::PATCH, &path, &token, &now, Some(body)).await;
            assert_error_body(api.backend, status, &answer, 404);
        }
        let (status, _, answer) =
            api.send_with(Method::PATCH, &path, &token, &now, Some(json!({"billedTo": "2026-01-01"}))).await;
        assert_error_body(api.backend, status, &answer, 400);
        let (status, _, _) = api.send_with(Method::PATCH, &path, &token, &now, Some(json!({"contactId": null}))).await;
        assert_eq!(status, 200);
        let (_, read) = get_at(api, &path, &token, "2026-02-15T00:00:00Z").await;
        assert_eq!(
            (&read["contactId"], &read["billedFrom"]),
            (&Value::Null, &json!("2026-01-05")),
            "[{}]",
            api.backend
        );

        let hosting = read["subscriptions"].as_array().unwrap().iter().find(|l| l["title"] == "Hosting").unwrap();
        let row = hosting["billingId"].as_str().unwrap().to_owned();
        let quantity = format!("{path}/subscriptions/{row}/quantity");
        let (status, _, _) = api.send_with(Method::POST, &quantity, &token, &now, Some(json!({"value": 3}))).await;
        assert_eq!(status, 200, "[{}]", api.backend);
        let (_, read) = get_at(api, &path, &token, "2026-02-15T00:00:00Z").await;
        let line = read["subscriptions"].as_array().unwrap().iter().find(|l| l["billingId"] == row.as_str()).unwrap();
        assert_eq!(
            json!([
                line["quantity"],
                line["defaultQuantity"],
                line["customQuantity"],
                line["amount"],
                read["netTotal"]
            ]),
            json!([3, 1, true, 300, 600]),
            "[{}]",
            api.backend
        );
        let (_, list_now) = api.get(&billings(w.project), &token).await;
        assert!(
            list_now.as_array().unwrap().iter().all(|b| b["rows"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["quantity"] != 3)),
            "[{}] the subscription keeps its quantity",
            api.backend
        );
        for bad in [json!({"value": -1}), json!({"value": 1.5}), json!({"value": "3"})] {
            let (status, _, answer) = api.send_with(Method::POST, &quantity, &token, &now, Some(bad)).await;
            assert_error_body(api.backend, status, &answer, 400);
        }
        let (status, _, _) = api.send_with(Method::POST, &quantity, &token, &now, Some(json!({}))).await;
        assert_eq!(status, 200);
        let (_, read) = get_at(api, &path, &token, "2026-02-15T00:00:00Z").await;
        assert_eq!(read["netTotal"], 400, "[{}] the default is back", api.backend);

        // Unknown rows and invoices are 404s; malformed ids 400s.
        let stray = format!("{path}/subscriptions/{}/quantity", Uuid::new_v4());
        let (status, _, answer) = api.send_with(Method::POST, &stray, &token, &now, Some(json!({"value": 1}))).await;
        assert_error_body(api.backend, status, &answer, 404);
        let may = invoice_path(&invoice_id("subscription", w.project, "2026-05", "31"));
        let (status, answer) = get_at(api, &may, &token, "2026-02-15T00:00:00Z").await;
        assert_error_body(api.backend, status, &answer, 404);
        let foreign = invoice_path(&invoice_id("subscription", Uuid::new_v4(), "2026-01", "31"));
        let (status, answer) = get_at(api, &foreign, &token, "2026-02-15T00:00:00Z").await;
        assert_error_body(api.backend, status, &answer, 404);
        for bad in [
            "invoice::x",
            "subscription::x::2026-01-01::2026-01-31",
            "time::00000000-0000-0000-0000-000000000000::2026-02-01::2026-01-31",
        ] {
            let (status, answer) = api.get(&invoice_path(bad), &token).await;
            assert_error_body(api.backend, status, &answer, 400);
        }
        // Invoices.manage is needed to read and change potential invoices.
        let (_, leader) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let (status, answer) = api.get(&list, &leader).await;
        assert_error_body(api.backend, status, &answer, 403);
    })
    .await;
}

#[tokio::test]
async fn support_contingents_and_time_invoices_match_a_hand_calculation() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        // The quoted task's quotation (2 h × 100 = 200), accepted: it replaces the task's time.
        let quotations = format!("/tasks/{}/express-quotations", w.quoted);
        let (status, quotation) =
            api.post(&quotations, &token, json!({"contactUserId": w.contact, "includeEstimate": true})).await;
        assert_eq!(status, 201, "[{}] {quotation}", api.backend);
        let accept = format!("{quotations}/{}/accept", quotation["id"].as_str().unwrap());
        assert_eq!(api.post(&accept, &token, json!({})).await.0, 200);

        let path = format!("/projects/{}/support-contingents", w.project);
        let (status, all) = get_at(api, &path, &token, "2026-04-02T12:00:00Z").await;
        assert_eq!(status, 200, "[{}] {all}", api.backend);
        let summary: Vec<Value> = all
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                json!([
                    c["title"],
                    c["isActive"],
                    c["currentPeriodStart"],
                    c["currentPeriodEnd"],
                    c["consumedHours"],
                    c["availableByContract"],
                    c["transferableFromPrevious"],
                    c["potentiallyUsedByTasks"],
                    c["availableHours"]
                ])
            })
            .collect();
        // Retainer (monthly 10 h from 15 January, transferable), today 2 April: periods
        // 15 Jan–14 Feb (RE-1: 4 h), 15 Feb–14 Mar (RE-2: 12.5 h), 15 Mar–14 Apr (RE-3: 3 h).
        // Carried: max(0, 10 − 4) = 6 into February's, max(0, 10 + 6 − 12.5) = 3.5 into this one.
        // Unbilled time from 15 March to today: 1.5 + 0.75 (the 5 h of 14 March are in the
        // previous period, the 10 h of 3 April after today, the 8 h billed, the quoted task's
        // 4 h replaced by its quotation). Available: (10 − 3) + 3.5 − 2.25 = 8.25.
        // Small (monthly 5 h from 1 March): April's period, 0.75 h used: 4.25.
        // Last year: ended, no current period; listed last.
        assert_eq!(
            summary,
            [
                json!(["Retainer", true, "2026-03-15", "2026-04-14", 3, 7, 3.5, 2.25, 8.25]),
                json!(["Small", true, "2026-04-01", "2026-04-30", 0, 5, 0, 0.75, 4.25]),
                json!(["Last year", false, null, null, 0, 0, 0, 0, 0]),
            ],
            "[{}] {all}",
            api.backend
        );
        assert_eq!(all[0]["currentPeriodHasNoEndDate"], false);
        assert!(all[2].get("currentPeriodHasNoEndDate").is_none(), "[{}]", api.backend);
        assert_eq!(all[2]["toDate"], "2025-12-31");

        // Time invoices, same day: March holds the support task's 6.5 h × 100 and the quoted
        // task's quotation (200) in place of its 4 h; April the 0.75 h booked by today.
        let list = format!("/billing/potential-invoices?projectId={}", w.project);
        let (_, invoices) = get_at(api, &list, &token, "2026-04-02T12:00:00Z").await;
        let time: Vec<Value> = invoices
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["type"] == "time")
            .map(|i| {
                let lines: Vec<Value> = i["tasks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| json!([l["shortNumber"], l["hours"], l["amount"], l["expressQuotationId"].is_string()]))
                    .collect();
                json!([i["id"], lines, i["netTotal"]])
            })
            .collect();
        assert_eq!(
            time,
            [
                json!([invoice_id("time", w.project, "2026-03", "31"), [[1, 6.5, 650, false], [2, 4, 200, true]], 850]),
                json!([invoice_id("time", w.project, "2026-04", "30"), [[1, 0.75, 75, false]], 75]),
            ],
            "[{}] {invoices}",
            api.backend
        );

        // Access: a Team Leader who is not a member gets 403; another workspace 404.
        let (_, leader) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let (status, answer) = api.get(&path, &leader).await;
        assert_error_body(api.backend, status, &answer, 403);
        let other = identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let (_, foreign) = api.user_in(other.id, ROOT, UserKind::Employee, &["api:read", "api:write"]).await;
        for path in [path.clone(), billings(w.project), invoice_path(&invoice_id("time", w.project, "2026-03", "31"))] {
            let (status, answer) = api.get(&path, &foreign).await;
            assert_error_body(api.backend, status, &answer, 404);
        }
        let body = json!({"manualTitle": "x", "fromDate": "2026-01-01", "toDate": "2026-01-31", "frequency": 1,
                          "payment": "fixed", "price": 1});
        let (status, answer) = api.post(&billings(w.project), &foreign, body).await;
        assert_error_body(api.backend, status, &answer, 404);
        let (_, foreign_list) = api.get("/billing/potential-invoices", &foreign).await;
        assert_eq!(foreign_list, json!([]), "[{}]", api.backend);
        let (_, ceo) = api.user(CEO, UserKind::Employee).await;
        let (status, _) = api.get(&path, &ceo).await;
        assert_eq!(status, 200, "[{}] Projects.viewAll reads every project", api.backend);
    })
    .await;
}

#[tokio::test]
async fn the_seed_s_billing_sections_load_idempotently_and_every_problem_is_named() {
    each_backend(async |_, api| {
        let (root, _) = api.user(ROOT, UserKind::Employee).await;
        let world = new_world();
        let seed = seed_json(&world, &[root.id]);
        let first = load(api, &seed).await.unwrap();
        assert_eq!(
            (first.0["supportContingents"], first.0["timeEntries"], first.0["issuedInvoices"]),
            ((3, 0), (6, 0), (3, 0)),
            "[{}] {first}",
            api.backend
        );
        let second = load(api, &seed).await.unwrap();
        assert_eq!(second.written(), 0, "[{}] {second}", api.backend);
        let mut bad = seed.clone();
        bad["supportContingents"][0]["frequency"] = json!(13);
        bad["supportContingents"][1]["toDate"] = json!("2026-02-01");
        bad["timeEntries"][0]["taskId"] = json!(Uuid::new_v4());
        bad["timeEntries"][1]["date"] = json!("2026-13-01");
        bad["issuedInvoices"][0]["consumed"][0]["contingentId"] = json!(Uuid::new_v4());
        bad["issuedInvoices"][1]["taskIds"] = json!([Uuid::new_v4()]);
        let error = load(api, &bad).await.unwrap_err();
        for expected in [
            "supportContingents[0].frequency",
            "supportContingents[1].toDate",
            "timeEntries[0].taskId",
            "timeEntries[1].date",
            "issuedInvoices[0].consumed[0].contingentId",
            "issuedInvoices[1].taskIds[0]",
        ] {
            assert!(error.contains(expected), "[{}] {expected} in {error}", api.backend);
        }
    })
    .await;
}

#[tokio::test]
async fn an_invoiced_task_s_accepted_quotation_cannot_be_withdrawn() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let quotations = format!("/tasks/{}/express-quotations", w.quoted);
        let (_, quotation) =
            api.post(&quotations, &token, json!({"contactUserId": w.contact, "includeEstimate": true})).await;
        let decision = |d: &str| format!("{quotations}/{}/{d}", quotation["id"].as_str().unwrap());
        assert_eq!(api.post(&decision("accept"), &token, json!({})).await.0, 200);
        // Not invoiced yet: the acceptance may be withdrawn and given again.
        assert_eq!(api.post(&decision("reject"), &token, json!({})).await.0, 200);
        let (_, second) =
            api.post(&quotations, &token, json!({"contactUserId": w.contact, "includeEstimate": true})).await;
        let accept = format!("{quotations}/{}/accept", second["id"].as_str().unwrap());
        assert_eq!(api.post(&accept, &token, json!({})).await.0, 200);
        let invoice = json!({"version": 1, "issuedInvoices": [{"id": Uuid::new_v4(), "projectId": w.project,
            "number": "RE-9", "dateFrom": "2026-03-01", "dateTo": "2026-03-31", "taskIds": [w.quoted]}]});
        load(api, &invoice).await.expect("an invoice of the seeded task loads");
        let reject = format!("{quotations}/{}/reject", second["id"].as_str().unwrap());
        let (status, answer) = api.post(&reject, &token, json!({})).await;
        assert_error_body(api.backend, status, &answer, 409);
        assert!(answer["message"].as_str().unwrap().contains("RE-9"), "[{}] {answer}", api.backend);
        let (_, read) = api.get(&format!("{quotations}/{}", second["id"].as_str().unwrap()), &token).await;
        assert_eq!(read["status"], "Accepted", "[{}]", api.backend);
        // Invoiced: the quotation's amount is no longer on a potential invoice.
        let march = invoice_path(&invoice_id("time", w.project, "2026-03", "31"));
        let (_, march) = get_at(api, &march, &token, "2026-04-02T00:00:00Z").await;
        let quoted = march["tasks"].as_array().unwrap().iter().find(|l| l["taskId"] == w.quoted.to_string()).unwrap();
        assert_eq!((&quoted["hours"], &quoted["amount"]), (&json!(4), &json!(0)), "[{}] {march}", api.backend);
    })
    .await;
}

#[tokio::test]
async fn each_operation_makes_the_documented_store_round_trips() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let count = async |method: Method, path: &str, body: Option<Value>| {
            let headers = [("LT_CUSTOM_NOW", "2026-04-02T12:00:00Z")];
            let (trips, (status, _, response)) =
                api.round_trips(api.send_with(method, path, &token, &headers, body)).await;
            assert!(status < 300, "[{}] {path}: {response}", api.backend);
            (trips.reads, trips.writes)
        };
        // Authentication and rate limiting: a project get is that plus one read.
        count(Method::GET, "/projects", None).await;
        let (reads, auth_writes) = count(Method::GET, &format!("/projects/{}", w.project), None).await;
        let auth_reads = reads - 1;
        let body = json!({"manualTitle": "Hosting", "fromDate": "2026-01-01", "toDate": "2026-12-31",
                          "frequency": 1, "payment": "fixed", "price": 10});
        let invoices = format!("/billing/potential-invoices?projectId={}", w.project);
        let march = invoice_path(&invoice_id("subscription", w.project, "2026-03", "31"));
        // docs/billing.md, "Store round trips": the seeded world has unbilled time on two tasks
        // (a guard get and a task get each) and no accepted quotation.
        let cases = [
            (Method::POST, billings(w.project), Some(body), (1, 1)),
            (Method::GET, billings(w.project), None, (2, 0)),
            (Method::GET, format!("/projects/{}/support-contingents", w.project), None, (1 + 3 + 2, 0)),
            (Method::GET, invoices, None, (1 + 6 + 2 + 2, 0)),
            (Method::GET, march.clone(), None, (1 + 6 + 2 + 2, 0)),
            (Method::PATCH, march.clone(), Some(json!({"contactId": w.contact})), (1 + 6 + 2 + 2 + 1 + 1, 1)),
        ];
        for (method, path, body, expected) in cases {
            let (reads, writes) = count(method.clone(), &path, body).await;
            assert_eq!((reads - auth_reads, writes - auth_writes), expected, "[{}] {method} {path}", api.backend);
        }
    })
    .await;
}

/// The potential invoices read a project's inputs at once, then every task with unbilled time
/// (and its quotation) at once: the depth does not grow with the number of tasks
/// (docs/billing.md, "Store round trips"). Two round trips of authentication, the project's
/// access, the time-entry query (beside the other five input queries), the quotation guards,
/// the tasks: 6; an update then reads and writes the invoice's record: 8. Before, each task
/// added two (its guard, then the task itself).
#[tokio::test]
async fn potential_invoices_read_their_tasks_in_one_round_trip() {
    for backend in api_tests::backends().await {
        let api = TestApi::builder(&backend).store_latency(std::time::Duration::from_millis(20)).start().await;
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(&api, &[root.id]).await;
        let headers = [("LT_CUSTOM_NOW", "2026-04-02T12:00:00Z")];
        let billing = json!({"manualTitle": "Hosting", "fromDate": "2026-01-01", "toDate": "2026-12-31",
                             "frequency": 1, "payment": "fixed", "price": 10});
        let (status, created) = api.post(&billings(w.project), &token, billing).await;
        assert_eq!(status, 201, "[{}] {created}", api.backend);
        // Manual positions are one query beside the others, however many there are.
        for name in ["Setup", "Training", "Licence"] {
            let path = format!("/projects/{}/manual-positions", w.project);
            let (status, created) = api.post(&path, &token, json!({"name": name, "price": 10})).await;
            assert_eq!(status, 200, "[{}] {created}", api.backend);
        }
        let march = invoice_path(&invoice_id("subscription", w.project, "2026-03", "31"));
        let list = format!("/billing/potential-invoices?projectId={}", w.project);
        let patch = Some(json!({"contactId": w.contact}));
        let cases = [(Method::GET, &list, None, 6), (Method::GET, &march, None, 6), (Method::PATCH, &march, patch, 8)];
        for (method, path, body, depth) in cases {
            let (trips, (status, _, response)) =
                api.round_trips(api.send_with(method.clone(), path, &token, &headers, body)).await;
            assert!(status < 300, "[{}] {method} {path}: {response}", api.backend);
            assert_eq!(trips.depth, depth, "[{}] {method} {path}", api.backend);
        }
    }
}

/// Issue 31: the business clock and every date read by billing stay in the calendar's range
/// (docs/conventions.md, "Dates"). A clock at the end of time is a 400 naming the header, as
/// are the spellings outside ISO 8601's plain form; at the range's edges the contingents and
/// potential invoices are computed and answered, also for a contingent that starts on the
/// range's first day.
#[tokio::test]
async fn the_business_clock_is_bounded_and_answers_at_the_edges_of_the_range() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = new_world();
        let mut seed = seed_json(&w, &[root.id]);
        seed["supportContingents"][0]["fromDate"] = json!("1900-01-01");
        load(api, &seed).await.expect("seed loads");
        let contingents = format!("/projects/{}/support-contingents", w.project);
        let invoices = format!("/billing/potential-invoices?projectId={}", w.project);
        for now in [
            "9999-12-31",
            "9999-12-31T00:00:00Z",
            "3000-01-01",
            "2999-12-31T23:00:00-05:00",
            "1899-12-31",
            "0000-01-01",
            "-0001-01-01",
            "+2026-01-01",
        ] {
            for path in [&contingents, &invoices] {
                let (status, answer) = get_at(api, path, &token, now).await;
                assert_error_body(api.backend, status, &answer, 400);
                assert!(answer["errors"]["LT_CUSTOM_NOW"].is_array(), "[{}] {now}: {answer}", api.backend);
            }
        }
        let (status, at_end) = get_at(api, &contingents, &token, "2999-12-31T23:59:59Z").await;
        assert_eq!(status, 200, "[{}] {at_end}", api.backend);
        let retainer = at_end.as_array().unwrap().iter().find(|c| c["id"] == w.retainer.to_string()).unwrap();
        // Monthly from 1 January 1900: 13,199 periods before the current one, each 10 h; the
        // 19.5 h the invoices drew in 2026 leave 131,970.5 carried.
        assert_eq!(
            json!([retainer["currentPeriodStart"], retainer["currentPeriodEnd"], retainer["transferableFromPrevious"]]),
            json!(["2999-12-01", "2999-12-31", 131_970.5]),
            "[{}] {retainer}",
            api.backend
        );
        let (status, at_start) = get_at(api, &contingents, &token, "1900-01-01").await;
        assert_eq!(status, 200, "[{}] {at_start}", api.backend);
        let retainer = at_start.as_array().unwrap().iter().find(|c| c["id"] == w.retainer.to_string()).unwrap();
        assert_eq!(retainer["currentPeriodStart"], "1900-01-01", "[{}] {retainer}", api.backend);
        for now in ["2999-12-31T23:59:59Z", "1900-01-01T00:00:00Z"] {
            let (status, answer) = get_at(api, &invoices, &token, now).await;
            assert_eq!(status, 200, "[{}] {now}: {answer}", api.backend);
        }
        // A potential-invoice id is read by the same parser: `+2026` is no alias of `2026`.
        let alias = invoice_path(&format!("time::{}::+2026-03-01::2026-03-31", w.project));
        let (status, answer) = get_at(api, &alias, &token, "2026-04-02T00:00:00Z").await;
        assert_error_body(api.backend, status, &answer, 400);
        // The quantity's body before its row's lookup: 400, then (a valid body) the 404.
        let stray = format!(
            "{}/subscriptions/{}/quantity",
            invoice_path(&invoice_id("time", w.project, "2026-03", "31")),
            Uuid::new_v4()
        );
        let now = [("LT_CUSTOM_NOW", "2026-04-02T00:00:00Z")];
        let (status, _, answer) = api.send_with(Method::POST, &stray, &token, &now, Some(json!({"value": -1}))).await;
        assert_error_body(api.backend, status, &answer, 400);
        assert!(answer["errors"]["value"].is_array(), "[{}] {answer}", api.backend);
        let (status, _, answer) = api.send_with(Method::POST, &stray, &token, &now, Some(json!({"value": 1}))).await;
        assert_error_body(api.backend, status, &answer, 404);
        // The seed reads dates with the same parser.
        let mut outside = seed_json(&new_world(), &[root.id]);
        outside["supportContingents"][0]["fromDate"] = json!("+2026-01-15");
        let refused = load(api, &outside).await.expect_err("a seed date outside the plain form is refused");
        assert!(refused.contains("fromDate"), "{refused}");
    })
    .await;
}

#[tokio::test]
async fn a_potential_invoice_patch_with_a_stale_if_match_is_412_and_changes_nothing() {
    each_backend(async |_, api| {
        let b = api.backend;
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let monthly = json!({"manualTitle": "Hosting", "fromDate": "2026-01-01", "toDate": "2026-03-31",
                             "frequency": 1, "payment": "perUnit", "price": 100});
        assert_eq!(api.post(&billings(w.project), &token, monthly).await.0, 201, "[{b}]");
        let path = invoice_path(&invoice_id("subscription", w.project, "2026-01", "31"));
        let now = [("LT_CUSTOM_NOW", "2026-02-15T00:00:00Z")];
        let read = async || {
            let (status, headers, body) = api.send_with(Method::GET, &path, &token, &now, None).await;
            assert_eq!(status, 200, "[{b}] {body}");
            (headers["etag"].to_str().unwrap().to_owned(), body)
        };
        let patch = async |if_match: &str, from: &str| {
            let headers = [now[0], ("If-Match", if_match)];
            let body = Some(json!({"billedFrom": from}));
            api.send_with(Method::PATCH, &path, &token, &headers, body).await
        };
        let (tag, before) = read().await;

        let (status, _, refused) = patch("\"stale\"", "2026-01-03").await;
        assert_error_body(b, status, &refused, 412);
        assert_eq!(read().await.1, before, "[{b}] nothing written");

        let (status, _, answer) = patch(&tag, "2026-01-05").await;
        assert_eq!((status, &answer), (200, &json!({"success": true})), "[{b}]");
        let (new_tag, after) = read().await;
        assert_eq!(after["billedFrom"], "2026-01-05", "[{b}]");
        assert_ne!(new_tag, tag, "[{b}] a new tag for the changed invoice");
        let (status, _, refused) = patch(&tag, "2026-01-07").await;
        assert_error_body(b, status, &refused, 412);
        assert_eq!(read().await.1["billedFrom"], "2026-01-05", "[{b}] the old tag is stale now");
    })
    .await;
}

/// Issue 36, item 1 (docs/billing.md, "Positions and products"): a project's manual positions
/// and its imported catalog products are lines of its potential invoices, with the amounts
/// computed by hand there; a line an issued invoice lists (`lineIds`) no longer appears.
#[tokio::test]
async fn manual_positions_and_imported_products_are_potential_invoice_lines() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let (category, hosting, hours) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let catalog = json!({"version": 1,
        "catalogCategories": [{"id": category, "name": "Hosting"}],
        "catalogProducts": [
            {"id": hosting, "name": "Managed hosting", "categoryId": category, "description": "Hosting",
             "priceFixed": 99, "priceSubscription": 49.9, "priceFrequency": 1,
             "variants": [{"name": "Small", "description": null, "priceSubscription": 29.9}],
             "options": [{"name": "Region", "isMultiple": false, "isRequired": true,
                          "values": [{"name": "Frankfurt", "extraPriceFixed": 10, "extraPriceSubscription": 5}]}]},
            {"id": hours, "name": "Support hours", "categoryId": category, "description": "Hours",
             "pricePerUnit": 95, "priceUnitName": "hour", "priceFrequency": 1,
             "variants": [{"name": "Standard", "description": null}], "options": []}
        ]});
        load(api, &catalog).await.expect("the catalog loads");
        let (_, product) = api.get(&format!("/administration/product-catalog/{hosting}"), &token).await;
        let small = product["variants"][0]["id"].as_str().unwrap().to_owned();
        let region = &product["options"][0];
        let imports = format!("/projects/{}/products", w.project);
        // Small at a custom 25 a quarter, Frankfurt +10 once and +5 a quarter, from 15 January
        // 2026 for 4 months.
        let body = json!({"productId": hosting, "quantity": 1,
            "options": [{"id": region["id"], "value": [region["values"][0]["id"]]}],
            "customPrices": {format!("variant_{small}"): {"priceSubscription": 25}}, "activeVariantId": small,
            "activeFromType": "FixedDate", "activeFromFixedDate": "2026-01-15", "priceFrequency": 3,
            "contractPeriodMonths": 4, "renewalMode": "Stops"});
        let (status, answer) = api.post(&imports, &token, body).await;
        assert_eq!(status, 201, "[{}] {answer}", api.backend);
        // 2.5 hours at a custom 90 for February 2026 only.
        let body = json!({"productId": hours, "quantity": 2.5, "options": [],
            "customPrices": {"base": {"pricePerUnit": 90}}, "activeFromType": "FixedDate",
            "activeFromFixedDate": "2026-02-01", "contractPeriodMonths": 1, "renewalMode": "Stops"});
        let (status, answer) = api.post(&imports, &token, body).await;
        assert_eq!(status, 201, "[{}] {answer}", api.backend);
        let positions = format!("/projects/{}/manual-positions?responseShape=full", w.project);
        let (status, domain) = api
            .post(
                &positions,
                &token,
                json!({"name": "Domain registration", "price": 199.99,
                "discountType": "Percentage", "discountAmount": 12.5}),
            )
            .await;
        assert_eq!(status, 200, "[{}] {domain}", api.backend);
        let body = json!({"name": "Setup", "price": 250, "discountType": "Fixed", "discountAmount": 30});
        let (status, setup) = api.post(&positions, &token, body).await;
        assert_eq!(status, 200, "[{}] {setup}", api.backend);

        // The business clock is the wall clock: the positions are on the time invoice of the
        // month they were created.
        let list = format!("/billing/potential-invoices?projectId={}", w.project);
        let find = |invoices: &Value, kind: &str, from: &str| -> Value {
            let all = invoices.as_array().unwrap();
            let found = all.iter().find(|i| i["type"] == kind && i["dateFrom"] == from);
            found.cloned().unwrap_or_else(|| panic!("[{}] no {kind} invoice from {from}: {invoices}", api.backend))
        };
        let products = |invoice: &Value| -> Vec<Value> {
            let lines = invoice["products"].as_array().unwrap();
            lines
                .iter()
                .map(|l| {
                    let extras: Vec<Value> =
                        l["extras"].as_array().unwrap().iter().map(|e| e["amount"].clone()).collect();
                    json!([
                        l["name"],
                        l["charge"],
                        l["periodStart"],
                        l["quantity"],
                        l["unitPrice"],
                        l["baseAmount"],
                        extras,
                        l["amount"]
                    ])
                })
                .collect()
        };
        let (status, invoices) = api.get(&list, &token).await;
        assert_eq!(status, 200, "[{}] {invoices}", api.backend);
        // January: once 99 + Frankfurt 10 = 109; 15 Jan – 14 Apr: 25 + 5 = 30; 139 in all.
        let january = find(&invoices, "subscription", "2026-01-01");
        assert_eq!(
            products(&january),
            [
                json!(["Managed hosting", "oneTime", null, 1, 99, 99, [10], 109]),
                json!(["Managed hosting", "subscription", "2026-01-15", 1, 25, 25, [5], 30])
            ],
            "[{}] {january}",
            api.backend
        );
        assert_eq!((&january["netTotal"], &january["products"][1]["variantName"]), (&json!(139), &json!("Small")));
        // February: 2.5 h × 90 = 225.
        let february = find(&invoices, "subscription", "2026-02-01");
        assert_eq!(products(&february), [json!(["Support hours", "perUnit", "2026-02-01", 2.5, 90, 225, [], 225])]);
        assert_eq!(february["netTotal"], 225);
        // April: 15 Apr – 14 May is 1 month of the quarter: 25 ÷ 3 = 8.333… → 8.33, 5 ÷ 3 =
        // 1.666… → 1.67; 10.
        let april = find(&invoices, "subscription", "2026-04-01");
        assert_eq!(
            products(&april),
            [json!(["Managed hosting", "subscription", "2026-04-15", 1, 25, 8.33, [1.67], 10])]
        );
        assert_eq!((&april["netTotal"], &april["products"][0]["months"]), (&json!(10), &json!(1)));
        // The positions: 199.99 − 12.5 % (24.99875 → 25) = 174.99; 250 − 30 = 220; 394.99.
        let month = &domain["createdAt"].as_str().unwrap()[..7];
        let time = find(&invoices, "time", &format!("{month}-01"));
        let lines: Vec<Value> = time["positions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| json!([l["lineId"], l["name"], l["price"], l["discount"], l["amount"]]))
            .collect();
        let (domain_line, setup_line) = (
            format!("position:{}", domain["id"].as_str().unwrap()),
            format!("position:{}", setup["id"].as_str().unwrap()),
        );
        assert_eq!(
            lines,
            [
                json!([domain_line, "Domain registration", 199.99, 25, 174.99]),
                json!([setup_line, "Setup", 250, 30, 220])
            ],
            "[{}] {time}",
            api.backend
        );
        assert_eq!(time["netTotal"], json!(394.99), "[{}]", api.backend);
        // One invoice read alone is the same.
        let (status, alone) = api.get(&invoice_path(january["id"].as_str().unwrap()), &token).await;
        assert_eq!((status, &alone), (200, &january), "[{}]", api.backend);

        // An issued invoice that lists the one-time charge and a position: they are gone.
        let one_time = january["products"][0]["lineId"].as_str().unwrap().to_owned();
        let issued = |line_ids: Value| {
            json!({"version": 1, "issuedInvoices": [{"id": Uuid::new_v4(), "projectId": w.project,
            "number": "RE-9", "dateFrom": "2026-06-10", "dateTo": "2026-06-10", "lineIds": line_ids}]})
        };
        let refused = load(api, &issued(json!(["position:42"]))).await.unwrap_err();
        assert!(refused.contains("issuedInvoices[0].lineIds[0]"), "[{}] {refused}", api.backend);
        load(api, &issued(json!([one_time, domain_line]))).await.expect("the invoice loads");
        let (_, invoices) = api.get(&list, &token).await;
        let january = find(&invoices, "subscription", "2026-01-01");
        assert_eq!(products(&january), [json!(["Managed hosting", "subscription", "2026-01-15", 1, 25, 25, [5], 30])]);
        assert_eq!(january["netTotal"], 30, "[{}]", api.backend);
        let time = find(&invoices, "time", &format!("{month}-01"));
        assert_eq!(time["positions"].as_array().unwrap().len(), 1, "[{}] {time}", api.backend);
        assert_eq!((&time["positions"][0]["lineId"], &time["netTotal"]), (&json!(setup_line), &json!(220)));
    })
    .await;
}
