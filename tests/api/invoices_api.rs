//! Issuing invoices over HTTP, on every store backend (issue 36; docs/billing.md, "Issued
//! invoices"): a potential invoice issued with its ETag becomes an invoice numbered by the
//! workspace's sequence, its lines leave the potential invoices, the contingents' numbers and
//! the time's billed state follow, the quotation guard names it; a second issue is a 409; a
//! cancellation is a credit note with the next number that frees everything again; 20
//! parallel issues take the numbers 1 to 20.

use crate::administration_api::{create_role, role_body};
use crate::billing_api::{billings, get_at, invoice_id, invoice_path, seeded};
use api_tests::{TestApi, assert_error_body, each_backend};
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;
use workapi_domain::identity::{self, UserKind};
use workapi_domain::permissions::{ROOT, key};

const NOW: &str = "2026-04-02T12:00:00Z";

/// POST as of [`NOW`] with extra headers, answered whole (not the compact projection):
/// status, body, `Idempotent-Replayed`.
async fn post_at(api: &TestApi, path: &str, token: &str, headers: &[(&str, &str)]) -> (u16, Value, String) {
    post_on(api, NOW, path, token, headers).await
}

/// [`post_at`] as of the business instant `now`.
async fn post_on(api: &TestApi, now: &str, path: &str, token: &str, headers: &[(&str, &str)]) -> (u16, Value, String) {
    let mut all = vec![("LT_CUSTOM_NOW", now), ("LT-Response-Shape", "full")];
    all.extend_from_slice(headers);
    let (status, headers, body) = api.send_with(Method::POST, path, token, &all, None).await;
    let replayed = headers.get("idempotent-replayed").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    (status, body, replayed)
}

/// The potential invoice and its ETag, as of [`NOW`].
async fn read_potential(api: &TestApi, path: &str, token: &str) -> (u16, Value, String) {
    read_potential_on(api, NOW, path, token).await
}

/// [`read_potential`] as of the business instant `now`.
async fn read_potential_on(api: &TestApi, now: &str, path: &str, token: &str) -> (u16, Value, String) {
    let (status, headers, body) = api.send_with(Method::GET, path, token, &[("LT_CUSTOM_NOW", now)], None).await;
    let etag = headers.get("etag").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    (status, body, etag)
}

/// The contingents as (title, consumedHours, transferableFromPrevious, potentiallyUsedByTasks,
/// availableHours), as of [`NOW`].
async fn contingents(api: &TestApi, project: Uuid, token: &str) -> Vec<Value> {
    let (status, all) = get_at(api, &format!("/projects/{project}/support-contingents"), token, NOW).await;
    assert_eq!(status, 200, "[{}] {all}", api.backend);
    all.as_array()
        .unwrap()
        .iter()
        .filter(|c| c["isActive"] == true)
        .map(|c| {
            json!([
                c["title"],
                c["consumedHours"],
                c["transferableFromPrevious"],
                c["potentiallyUsedByTasks"],
                c["availableHours"]
            ])
        })
        .collect()
}

/// The seeded world (billing_api's) on 2 April 2026: March's time invoice is issued and
/// cancelled, and the invoice, the potential invoices and the contingents follow each step.
#[tokio::test]
async fn an_issued_invoice_bills_its_time_moves_the_contingent_and_its_credit_note_frees_it() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        // Before (docs/billing.md's hand calculation, without the quotation): Retainer's period
        // 15 Mar – 14 Apr drew 3 h (RE-3), carried 3.5; unbilled time in it 1.5 + 4 + 0.75 =
        // 6.25; available 10 − 3 + 3.5 − 6.25 = 4.25. Small (from 1 March): April, 0.75 used.
        let before = [json!(["Retainer", 3, 3.5, 6.25, 4.25]), json!(["Small", 0, 0, 0.75, 4.25])];
        assert_eq!(contingents(api, w.project, &token).await, before, "[{}]", api.backend);

        let march = invoice_path(&invoice_id("time", w.project, "2026-03", "31"));
        let (status, potential, etag) = read_potential(api, &march, &token).await;
        assert_eq!(status, 200, "[{}] {potential}", api.backend);
        // Support 5 + 1.5 h × 100 = 650; the fixed-price fix's 4 h × 100 = 400 (no quotation).
        assert_eq!(potential["netTotal"], 1050, "[{}] {potential}", api.backend);
        // A stale ETag is the 412 of every conditional write; nothing is issued.
        let stale = [("If-Match", "\"stale\"")];
        let (status, refused, _) = post_at(api, &format!("{march}/issue"), &token, &stale).await;
        assert_error_body(api.backend, status, &refused, 412);

        let (status, invoice, _) = post_at(api, &format!("{march}/issue"), &token, &[("If-Match", &etag)]).await;
        assert_eq!(status, 201, "[{}] {invoice}", api.backend);
        // The first number of the workspace; the lines and totals as read; 19 % tax: 199.50.
        let summary =
            json!([invoice["type"], invoice["number"], invoice["netTotal"], invoice["tax"], invoice["total"]]);
        assert_eq!(summary, json!(["invoice", "1", 1050, 199.5, 1249.5]), "[{}] {invoice}", api.backend);
        assert_eq!((&invoice["tasks"], &invoice["potentialInvoiceId"]), (&potential["tasks"], &potential["id"]));
        assert_eq!(invoice["timeEntryIds"].as_array().unwrap().len(), 3, "[{}] {invoice}", api.backend);
        // The hours draw on the first contingent holding their days, per period: 14 March in
        // 15 Feb – 14 Mar (5 h), 15 and 20 March in the current period (1.5 + 4 = 5.5 h).
        let consumed: Vec<Value> = invoice["consumed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| json!([c["contingentId"], c["hours"], c["date"]]))
            .collect();
        let retainer = w.retainer.to_string();
        assert_eq!(consumed, [json!([retainer, 5, "2026-03-14"]), json!([retainer, 5.5, "2026-03-20"])]);
        let id = invoice["id"].as_str().unwrap().to_owned();
        // Read back, whole and projected.
        let (status, read) = api.get(&format!("/billing/invoices/{id}?responseShape=full"), &token).await;
        assert_eq!((status, &read), (200, &invoice), "[{}]", api.backend);
        let (_, compact) = api.get(&format!("/billing/invoices/{id}?fieldsToReturn=number,total"), &token).await;
        assert_eq!(compact, json!({"number": "1", "total": 1249.5}), "[{}]", api.backend);

        // The month is billed: its potential invoice is gone, a second issue is a 409 naming the
        // invoice, with or without the ETag read before.
        assert_eq!(read_potential(api, &march, &token).await.0, 404, "[{}]", api.backend);
        for headers in [vec![("If-Match", etag.as_str())], vec![]] {
            let (status, again, _) = post_at(api, &format!("{march}/issue"), &token, &headers).await;
            assert_error_body(api.backend, status, &again, 409);
            assert!(again["message"].as_str().unwrap().contains("invoice 1"), "[{}] {again}", api.backend);
        }
        // The contingent: the current period drew 3 + 5.5 = 8.5 h; February's period drew
        // 12.5 + 5 = 17.5, so nothing is carried (max(0, 10 + 6 − 17.5)); only April's 0.75 h
        // is unbilled: 10 − 8.5 + 0 − 0.75 = 0.75. Small's April is unchanged.
        let after = [json!(["Retainer", 8.5, 0, 0.75, 0.75]), json!(["Small", 0, 0, 0.75, 4.25])];
        assert_eq!(contingents(api, w.project, &token).await, after, "[{}]", api.backend);
        // Listed by project and date.
        let listed = format!("/billing/invoices?projectId={}&from=2026-04-02&to=2026-04-02", w.project);
        let (status, list) = api.get(&listed, &token).await;
        assert_eq!(status, 200, "[{}] {list}", api.backend);
        let numbers: Vec<&Value> = list.as_array().unwrap().iter().map(|i| &i["number"]).collect();
        assert_eq!(numbers, [&json!("1")], "[{}] {list}", api.backend);
        let (_, earlier) = api.get(&format!("/billing/invoices?projectId={}&to=2026-04-01", w.project), &token).await;
        let earlier: Vec<&Value> = earlier.as_array().unwrap().iter().map(|i| &i["number"]).collect();
        assert_eq!(earlier, [&json!("RE-1"), &json!("RE-2"), &json!("RE-3")], "[{}] seeded, by dateTo", api.backend);

        // Cancelled: a credit note with the next number reverses it; everything is free again.
        let (status, note, _) = post_at(api, &format!("/billing/invoices/{id}/cancel"), &token, &[]).await;
        assert_eq!(status, 201, "[{}] {note}", api.backend);
        let summary = json!([note["type"], note["number"], note["cancels"], note["netTotal"], note["total"]]);
        assert_eq!(summary, json!(["creditNote", "2", id, -1050, -1249.5]), "[{}] {note}", api.backend);
        let (_, cancelled) = api.get(&format!("/billing/invoices/{id}?responseShape=full"), &token).await;
        assert_eq!((&cancelled["cancelledBy"], &cancelled["total"]), (&note["id"], &json!(1249.5)));
        let (status, back, _) = read_potential(api, &march, &token).await;
        assert_eq!((status, &back), (200, &potential), "[{}] the month is potential again", api.backend);
        assert_eq!(contingents(api, w.project, &token).await, before, "[{}]", api.backend);
        let note_path = format!("/billing/invoices/{}/cancel", note["id"].as_str().unwrap());
        for path in [format!("/billing/invoices/{id}/cancel"), note_path] {
            let (status, refused, _) = post_at(api, &path, &token, &[]).await;
            assert_error_body(api.backend, status, &refused, 409);
        }
        // Issued again: the next number.
        let (status, again, _) = post_at(api, &format!("{march}/issue"), &token, &[]).await;
        assert_eq!((status, &again["number"]), (201, &json!("3")), "[{}] {again}", api.backend);
        // Another workspace sees none of it: 404 for the invoice, its cancel and the issue.
        let other = identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let (_, foreign) = api.user_in(other.id, ROOT, UserKind::Employee, &["api:read", "api:write"]).await;
        for (method, path) in [
            (Method::GET, format!("/billing/invoices/{id}")),
            (Method::POST, format!("/billing/invoices/{id}/cancel")),
            (Method::POST, format!("{march}/issue")),
        ] {
            let (status, _, answer) = api.send_with(method, &path, &foreign, &[], None).await;
            assert_error_body(api.backend, status, &answer, 404);
        }
        let (_, foreign_list) = api.get("/billing/invoices", &foreign).await;
        assert_eq!(foreign_list, json!([]), "[{}]", api.backend);
    })
    .await;
}

/// Issue 36: the withdraw-guard of an accepted quotation names an invoice issued through the
/// API; once that invoice is cancelled the acceptance may be withdrawn.
#[tokio::test]
async fn an_issued_invoice_that_billed_a_quotation_guards_its_acceptance_until_cancelled() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let quotations = format!("/tasks/{}/express-quotations", w.quoted);
        let (_, quotation) =
            api.post(&quotations, &token, json!({"contactUserId": w.contact, "includeEstimate": true})).await;
        let decision = |d: &str| format!("{quotations}/{}/{d}", quotation["id"].as_str().unwrap());
        assert_eq!(api.post(&decision("accept"), &token, json!({})).await.0, 200);
        let march = invoice_path(&invoice_id("time", w.project, "2026-03", "31"));
        let (status, invoice, _) = post_at(api, &format!("{march}/issue"), &token, &[]).await;
        assert_eq!(status, 201, "[{}] {invoice}", api.backend);
        // Support 650 and the quotation's 2 h × 100 = 200 for the fix's 4 h.
        assert_eq!(invoice["netTotal"], 850, "[{}] {invoice}", api.backend);
        let (status, refused) = api.post(&decision("reject"), &token, json!({})).await;
        assert_error_body(api.backend, status, &refused, 409);
        assert!(refused["message"].as_str().unwrap().contains("invoice 1"), "[{}] {refused}", api.backend);
        let cancel = format!("/billing/invoices/{}/cancel", invoice["id"].as_str().unwrap());
        assert_eq!(post_at(api, &cancel, &token, &[]).await.0, 201);
        assert_eq!(api.post(&decision("reject"), &token, json!({})).await.0, 200, "[{}]", api.backend);
    })
    .await;
}

/// A subscription invoice issued under an Idempotency-Key is issued once: the retry replays
/// it; its rows' line ids are listed and the month's potential invoice is gone.
#[tokio::test]
async fn an_issue_retried_with_its_idempotency_key_is_issued_once() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let billing = json!({"manualTitle": "Hosting", "fromDate": "2026-01-01", "toDate": "2026-12-31",
                             "frequency": 1, "payment": "fixed", "price": 10});
        assert_eq!(api.post(&billings(w.project), &token, billing).await.0, 201);
        let march = invoice_path(&invoice_id("subscription", w.project, "2026-03", "31"));
        // The recipient set on the potential invoice is the invoice's.
        let recipient = json!({"contactId": w.contact});
        let patch = api.send_with(Method::PATCH, &march, &token, &[("LT_CUSTOM_NOW", NOW)], Some(recipient)).await;
        assert_eq!(patch.0, 200, "[{}] {}", api.backend, patch.2);
        let (_, potential, _) = read_potential(api, &march, &token).await;
        let row = potential["subscriptions"][0]["lineId"].as_str().unwrap().to_owned();
        let key = [("Idempotency-Key", "issue-march")];
        let (status, first, _) = post_at(api, &format!("{march}/issue"), &token, &key).await;
        assert_eq!(status, 201, "[{}] {first}", api.backend);
        let (status, second, replayed) = post_at(api, &format!("{march}/issue"), &token, &key).await;
        assert_eq!((status, &second, replayed.as_str()), (201, &first, "true"), "[{}]", api.backend);
        assert_eq!((&first["lineIds"], &first["total"]), (&json!([row]), &json!(11.9)), "[{}]", api.backend);
        assert_eq!(first["contactId"], json!(w.contact), "[{}] the recipient", api.backend);
        assert_eq!(read_potential(api, &march, &token).await.0, 404, "[{}]", api.backend);
        let (_, list) = api.get(&format!("/billing/invoices?projectId={}&from=2026-04-02", w.project), &token).await;
        assert_eq!(list.as_array().unwrap().len(), 1, "[{}] {list}", api.backend);
        // April's row is not March's: its potential invoice is still there.
        let april = invoice_path(&invoice_id("subscription", w.project, "2026-04", "30"));
        let later = api.send_with(Method::GET, &april, &token, &[("LT_CUSTOM_NOW", "2026-05-02T00:00:00Z")], None);
        assert_eq!(later.await.0, 200, "[{}]", api.backend);
    })
    .await;
}

/// 20 potential invoices of one project issued at once take the numbers 1 to 20, each once.
#[tokio::test]
async fn twenty_parallel_issues_take_the_numbers_1_to_20() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        // 20 monthly rows, January 2024 to August 2025: 20 subscription potential invoices.
        let billing = json!({"manualTitle": "Hosting", "fromDate": "2024-01-01", "toDate": "2025-08-31",
                             "frequency": 1, "payment": "fixed", "price": 10});
        assert_eq!(api.post(&billings(w.project), &token, billing).await.0, 201);
        let months: Vec<String> = (0..20)
            .map(|k: u32| {
                let (year, month) = (2024 + k / 12, k % 12 + 1);
                let leap = year % 4 == 0;
                let last = match month {
                    2 if leap => 29,
                    2 => 28,
                    4 | 6 | 9 | 11 => 30,
                    _ => 31,
                };
                let month = format!("{year}-{month:02}");
                invoice_path(&invoice_id("subscription", w.project, &month, &last.to_string()))
            })
            .collect();
        let token = &token;
        // A 409 ("being issued concurrently; retry") is the documented answer when an issue
        // loses its race for longer than the server's retry budget (a loaded machine): retried,
        // as a client is told to.
        let issues = months.iter().map(|path| async move {
            let path = format!("{path}/issue");
            let mut answer = post_at(api, &path, token, &[]).await;
            for _ in 0..3 {
                if answer.0 != 409 {
                    break;
                }
                answer = post_at(api, &path, token, &[]).await;
            }
            answer
        });
        let answers = futures::future::join_all(issues).await;
        let mut numbers: Vec<i64> = answers
            .iter()
            .map(|(status, body, _)| {
                assert_eq!(*status, 201, "[{}] {body}", api.backend);
                body["number"].as_str().unwrap().parse().unwrap()
            })
            .collect();
        numbers.sort();
        assert_eq!(numbers, (1..=20).collect::<Vec<_>>(), "[{}]", api.backend);

        // The list pages through the store's invoice list (docs/billing.md, "Reading
        // invoices"): 7 a page, each once, by day then number; the day filter is a key range.
        let walk = async |first: String| {
            let (mut numbers, mut pages, mut next) = (Vec::new(), 0, Some(first));
            while let Some(path) = next.take() {
                let (status, headers, page) = api.send_with(Method::GET, &path, token, &[], None).await;
                assert_eq!(status, 200, "[{}] {path}: {page}", api.backend);
                let number = |i: &Value| i["number"].as_str().and_then(|n| n.parse::<i64>().ok());
                numbers.extend(page.as_array().unwrap().iter().map(|i| number(i).unwrap_or_else(|| panic!("{page}"))));
                pages += 1;
                next = api_tests::next_page(&headers).map(|url| url.strip_prefix(&api.base).unwrap().to_owned());
            }
            (numbers, pages)
        };
        let day = &NOW[..10];
        let all = walk(format!("/billing/invoices?limit=7&from={day}&to={day}")).await;
        assert_eq!(all, ((1..=20).collect::<Vec<_>>(), 3), "[{}] pages of the day", api.backend);
        let of_project = walk(format!("/billing/invoices?projectId={}&limit=7&from={day}", w.project)).await;
        assert_eq!(of_project, all, "[{}] pages of the project", api.backend);
        let (status, none) = api.get(&format!("/billing/invoices?from={day}&to=2026-04-01"), token).await;
        assert_error_body(api.backend, status, &none, 400);
        assert!(none["errors"]["from"].is_array(), "[{}] {none}", api.backend);
        let (status, later) = api.get("/billing/invoices?from=2026-04-03", token).await;
        assert_eq!((status, later), (200, json!([])), "[{}] after the day", api.backend);
        // One who may manage invoices but sees only their projects sees none of these.
        let body = role_body(Some(workapi_domain::permissions::STAFF), json!({key::INVOICES_MANAGE: true}));
        let role = create_role(api, token, body).await;
        let (_, outsider) = api.user(role["id"].as_str().unwrap(), UserKind::Employee).await;
        let (status, unseen) = api.get("/billing/invoices", &outsider).await;
        assert_eq!((status, unseen), (200, json!([])), "[{}] a member of no project", api.backend);
    })
    .await;
}

/// docs/billing.md, "Store round trips": issuing reads what the potential invoice reads with
/// the contingents beside it, then the sequence, and writes one transaction; reading and
/// cancelling are a few reads and (cancel) one transaction. Counted beyond authentication
/// (the seeded world: unbilled time on two tasks, a guard and a task read each).
#[tokio::test]
async fn issuing_reading_and_cancelling_make_the_documented_store_round_trips() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let count = async |method: Method, path: &str| {
            let headers = [("LT_CUSTOM_NOW", NOW), ("LT-Response-Shape", "full")];
            let (trips, (status, _, response)) =
                api.round_trips(api.send_with(method, path, &token, &headers, None)).await;
            assert!(status < 300, "[{}] {path}: {response}", api.backend);
            ((trips.reads, trips.writes), response)
        };
        count(Method::GET, "/projects").await;
        let ((reads, auth_writes), _) = count(Method::GET, &format!("/projects/{}", w.project)).await;
        let auth_reads = reads - 1;
        let net = |(reads, writes): (usize, usize)| (reads - auth_reads, writes - auth_writes);
        let march = invoice_path(&invoice_id("time", w.project, "2026-03", "31"));
        let (trips, invoice) = count(Method::POST, &format!("{march}/issue")).await;
        // Project, 7 queries (billings, time, invoices, settings, positions, products,
        // contingents), 2 guards, 2 tasks, the sequence; one transaction.
        assert_eq!(net(trips), (1 + 7 + 2 + 2 + 1, 1), "[{}] issue", api.backend);
        let id = invoice["id"].as_str().unwrap().to_owned();
        let (trips, _) = count(Method::GET, &format!("/billing/invoices/{id}")).await;
        assert_eq!(net(trips), (3, 0), "[{}] get: index, project, item", api.backend);
        let (trips, _) = count(Method::GET, &format!("/billing/invoices?projectId={}", w.project)).await;
        assert_eq!(net(trips), (2, 0), "[{}] list: project, its invoices", api.backend);
        let (trips, _) = count(Method::POST, &format!("/billing/invoices/{id}/cancel")).await;
        assert_eq!(net(trips), (4, 1), "[{}] cancel: the get's 3, the sequence; one transaction", api.backend);
    })
    .await;
}

/// Issue 36: an imported product's charge and a manual position issued through the API are
/// listed by their line ids and leave the potential invoices; the credit note brings them back.
/// The business clock is the wall clock (a position is due from the day it was created).
#[tokio::test]
async fn issued_product_charges_and_positions_leave_the_potential_invoices_until_cancelled() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let (category, hours) = (Uuid::new_v4(), Uuid::new_v4());
        let catalog = json!({"version": 1,
            "catalogCategories": [{"id": category, "name": "Support"}],
            "catalogProducts": [{"id": hours, "name": "Support hours", "categoryId": category, "description": "Hours",
                "pricePerUnit": 95, "priceUnitName": "hour", "priceFrequency": 1,
                "variants": [{"name": "Standard", "description": null}], "options": []}]});
        crate::billing_api::load(api, &catalog).await.expect("the catalog loads");
        // 2.5 hours at 95 for February 2026 only: 237.50 on February's subscription invoice.
        let body = json!({"productId": hours, "quantity": 2.5, "options": [], "customPrices": {},
            "activeFromType": "FixedDate", "activeFromFixedDate": "2026-02-01", "contractPeriodMonths": 1,
            "renewalMode": "Stops"});
        let (status, import) = api.post(&format!("/projects/{}/products", w.project), &token, body).await;
        assert_eq!(status, 201, "[{}] {import}", api.backend);
        let positions = format!("/projects/{}/manual-positions?responseShape=full", w.project);
        let body = json!({"name": "Setup", "price": 250, "discountType": "Fixed", "discountAmount": 30});
        let (status, setup) = api.post(&positions, &token, body).await;
        assert_eq!(status, 200, "[{}] {setup}", api.backend);
        let month = &setup["createdAt"].as_str().unwrap()[..7];
        let last = match &month[5..] {
            "02" => "28",
            "04" | "06" | "09" | "11" => "30",
            _ => "31",
        };
        let full = [("LT-Response-Shape", "full")];
        let issue = async |path: &str| {
            let (status, _, invoice) = api.send_with(Method::POST, &format!("{path}/issue"), &token, &full, None).await;
            assert_eq!(status, 201, "[{}] {path}: {invoice}", api.backend);
            invoice
        };
        let february = invoice_path(&invoice_id("subscription", w.project, "2026-02", "28"));
        let (_, before) = api.get(&february, &token).await;
        let charge = before["products"][0]["lineId"].clone();
        assert_eq!((&before["products"][0]["amount"], &before["netTotal"]), (&json!(237.5), &json!(237.5)));
        let invoice = issue(&february).await;
        assert_eq!((&invoice["lineIds"], &invoice["products"]), (&json!([charge]), &before["products"]));
        assert_eq!(api.get(&february, &token).await.0, 404, "[{}] the charge is billed", api.backend);
        // The position: 250 − 30 on the time invoice of the month it was created.
        let time = invoice_path(&invoice_id("time", w.project, month, last));
        let (_, potential) = api.get(&time, &token).await;
        let line = format!("position:{}", setup["id"].as_str().unwrap());
        let position = potential["positions"].as_array().unwrap().iter().find(|l| l["lineId"] == line.as_str());
        assert_eq!(position.map(|l| &l["amount"]), Some(&json!(220)), "[{}] {potential}", api.backend);
        let billed = issue(&time).await;
        assert!(billed["lineIds"].as_array().unwrap().contains(&json!(line)), "[{}] {billed}", api.backend);
        let (status, after) = api.get(&time, &token).await;
        let still =
            status == 200 && after["positions"].as_array().unwrap().iter().any(|l| l["lineId"] == line.as_str());
        assert!(!still, "[{}] the position is billed: {after}", api.backend);
        // Cancelled: the charge is potential again.
        let cancel = format!("/billing/invoices/{}/cancel", invoice["id"].as_str().unwrap());
        assert_eq!(api.post(&cancel, &token, json!({})).await.0, 201, "[{}]", api.backend);
        let (status, again) = api.get(&february, &token).await;
        assert_eq!((status, &again), (200, &before), "[{}]", api.backend);
    })
    .await;
}

/// A seeded invoice can be cancelled like any other (its credit note takes the sequence's
/// first number), and loading the seed again keeps the cancellation.
#[tokio::test]
async fn a_seeded_invoice_cancelled_stays_cancelled_when_the_seed_is_loaded_again() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let id = Uuid::new_v4();
        let seed = json!({"version": 1, "issuedInvoices": [{"id": id, "projectId": w.project, "number": "RE-7",
            "dateFrom": "2026-01-01", "dateTo": "2026-01-31"}]});
        crate::billing_api::load(api, &seed).await.expect("the invoice loads");
        let (status, note, _) = post_at(api, &format!("/billing/invoices/{id}/cancel"), &token, &[]).await;
        assert_eq!(
            (status, &note["number"], &note["total"]),
            (201, &json!("1"), &json!(0)),
            "[{}] {note}",
            api.backend
        );
        crate::billing_api::load(api, &seed).await.expect("the seed loads again");
        let (_, invoice) = api.get(&format!("/billing/invoices/{id}?responseShape=full"), &token).await;
        assert_eq!((&invoice["number"], &invoice["cancelledBy"]), (&json!("RE-7"), &note["id"]), "[{}]", api.backend);
    })
    .await;
}

/// Issue 36's "Done when", from the demo seed as the local server's first start loads it
/// (embedded store only: the demo needs an empty store), on 27 November 2026: a client lists
/// the web-shop project's potential invoices and sees the seed's manual positions on
/// November's time invoice (beside the time of 20 November) and the imported Support hours on
/// November's subscription invoice; issues both to the seed's contact; reads them back; and
/// sees the retainer's consumed hours and the potential invoices change.
#[tokio::test]
async fn the_demo_seed_bills_its_positions_and_imported_product_and_the_numbers_move() {
    let key = workapi_domain::token::TokenKey::generate();
    let backend = api_tests::Backend {
        name: "embedded",
        store: std::sync::Arc::new(workapi_store::sqlite::SqliteStore::in_memory().unwrap()),
    };
    let demo = local::demo::ensure_demo(backend.store.as_ref(), &key).await.unwrap().expect("an empty store");
    let api = TestApi::builder(&backend).token_key(key).start().await;
    let token = demo.token.as_str();
    const NOVEMBER: &str = "2026-11-27T12:00:00Z";
    let (project, erika) = ("01e53df4-07b4-4a44-8242-85272b83de6a", "feba6268-1a6d-44ce-bd62-936a18e5d37a");
    let project_id: Uuid = project.parse().unwrap();
    let get = async |path: &str| get_at(&api, path, token, NOVEMBER).await;
    let ids = |all: &Value| -> Vec<String> {
        all.as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap().to_owned()).collect()
    };

    // The project's potential invoices, and November's two.
    let list = format!("/billing/potential-invoices?projectId={project}");
    let (status, before) = get(&list).await;
    assert_eq!(status, 200, "{before}");
    let (time_id, subscription_id) =
        (invoice_id("time", project_id, "2026-11", "30"), invoice_id("subscription", project_id, "2026-11", "30"));
    assert!(ids(&before).contains(&time_id) && ids(&before).contains(&subscription_id), "{before}");
    let (time, subscription) = (invoice_path(&time_id), invoice_path(&subscription_id));
    // Time: task #2's 1.5 h of 20 November at its 110 = 165; the positions 120 less 10 % = 108
    // and 250 less a fixed 30 = 220; 493 net.
    let (_, potential) = get(&time).await;
    let lines = |all: &Value, name: &str| -> Vec<Value> {
        all.as_array().unwrap().iter().map(|l| json!([l[name], l["amount"]])).collect()
    };
    assert_eq!(
        lines(&potential["positions"], "name"),
        [json!(["SSL certificate, one year", 108]), json!(["Payment provider onboarding fee", 220])],
        "{potential}"
    );
    assert_eq!(lines(&potential["tasks"], "title"), [json!(["Shipping rules workshop", 165])], "{potential}");
    assert_eq!(potential["netTotal"], 493, "{potential}");
    // Subscription: Support hours imported with 4 hours a month at a custom 90 from 1 November.
    let (_, charges) = get(&subscription).await;
    let product = &charges["products"][0];
    assert_eq!(
        json!([product["name"], product["charge"], product["quantity"], product["unitPrice"], product["amount"]]),
        json!(["Support hours", "perUnit", 4, 90, 360]),
        "{charges}"
    );
    assert_eq!((charges["products"].as_array().unwrap().len(), &charges["netTotal"]), (1, &json!(360)));

    // The retainer (monthly 10 h from 1 January): November's 1.5 h are potentially used.
    let retainer = async || {
        let (_, all) = get(&format!("/projects/{project}/support-contingents")).await;
        let retainer = all.as_array().unwrap().iter().find(|c| c["title"] == "Support retainer").unwrap().clone();
        json!([retainer["consumedHours"], retainer["potentiallyUsedByTasks"], retainer["availableHours"]])
    };
    let contingent_before = retainer().await;
    assert_eq!((&contingent_before[0], &contingent_before[1]), (&json!(0), &json!(1.5)), "{contingent_before}");

    // Issued to the seed's contact, each with the ETag it was read with.
    let issue = async |path: &str| {
        let clock = [("LT_CUSTOM_NOW", NOVEMBER)];
        let (status, _, _) = api.send_with(Method::PATCH, path, token, &clock, Some(json!({"contactId": erika}))).await;
        assert_eq!(status, 200, "{path}");
        let (_, _, etag) = read_potential_on(&api, NOVEMBER, path, token).await;
        let (status, invoice, _) =
            post_on(&api, NOVEMBER, &format!("{path}/issue"), token, &[("If-Match", &etag)]).await;
        assert_eq!(status, 201, "{path}: {invoice}");
        invoice
    };
    let invoice = issue(&time).await;
    assert_eq!(
        json!([invoice["number"], invoice["contactId"], invoice["netTotal"], invoice["tax"], invoice["total"]]),
        json!(["1", erika, 493, 93.67, 586.67]),
        "{invoice}"
    );
    assert_eq!(invoice["positions"], potential["positions"], "the lines as they were read");
    let billed = invoice["lineIds"].as_array().unwrap();
    assert!(billed.contains(&json!("position:c3d4e5f6-0001-4a7b-8c9d-0e1f2a3b4c01")), "{invoice}");
    assert!(billed.contains(&json!("position:c3d4e5f6-0002-4a7b-8c9d-0e1f2a3b4c02")), "{invoice}");
    let product_invoice = issue(&subscription).await;
    assert_eq!(
        json!([product_invoice["number"], product_invoice["total"], product_invoice["products"]]),
        json!(["2", 428.4, charges["products"]]),
        "{product_invoice}"
    );

    // Read back: by id as issued, and in the project's list beside the seed's January invoice.
    for issued in [&invoice, &product_invoice] {
        let (status, read) =
            get(&format!("/billing/invoices/{}?responseShape=full", issued["id"].as_str().unwrap())).await;
        assert_eq!((status, &read), (200, issued));
    }
    let (_, invoices) = get(&format!("/billing/invoices?projectId={project}")).await;
    let numbers: Vec<&Value> = invoices.as_array().unwrap().iter().map(|i| &i["number"]).collect();
    assert_eq!(numbers, [&json!("RE-2026-001"), &json!("1"), &json!("2")], "{invoices}");

    // The numbers move: the 1.5 h are consumed now, no longer potentially used; what is
    // available stays (issuing the current period's own time).
    let contingent_after = retainer().await;
    assert_eq!(contingent_after, json!([1.5, 0, contingent_before[2]]), "{contingent_before} → {contingent_after}");
    // November's potential invoices are gone; the earlier months' unbilled time stays.
    for path in [&time, &subscription] {
        assert_eq!(get(path).await.0, 404, "{path}");
    }
    let (_, after) = get(&list).await;
    let expected: Vec<String> =
        ids(&before).into_iter().filter(|id| *id != time_id && *id != subscription_id).collect();
    assert_eq!(ids(&after), expected, "{after}");
    assert!(!expected.is_empty(), "February's and March's time stay potential: {after}");
}

/// The seed's `manualPositions` and `projectProducts` (docs/seed.md): loaded through the API's
/// own bodies and rules, once; listed as the API lists them; billed on the potential invoices
/// of their months; every problem named.
#[tokio::test]
async fn the_seed_s_positions_and_imports_load_once_bill_their_months_and_name_every_problem() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let (category, hours, position, import) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let seed = json!({"version": 1,
            "catalogCategories": [{"id": category, "name": "Support"}],
            "catalogProducts": [{"id": hours, "name": "Support hours", "categoryId": category, "description": "Hours",
                "pricePerUnit": 95, "priceUnitName": "hour", "priceFrequency": 1,
                "variants": [{"name": "Standard", "description": null}], "options": []}],
            "manualPositions": [{"id": position, "projectId": w.project, "createdAt": "2026-03-05T10:00:00Z",
                "name": "Setup", "description": "Once", "price": 250, "discountType": "Fixed", "discountAmount": 30}],
            "projectProducts": [{"id": import, "projectId": w.project, "createdAt": "2026-03-02T08:00:00Z",
                "productId": hours, "quantity": 2, "options": [], "customPrices": {}}]});
        let first = crate::billing_api::load(api, &seed).await.unwrap();
        assert_eq!(
            (first.0["manualPositions"], first.0["projectProducts"]),
            ((1, 0), (1, 0)),
            "[{}] {first}",
            api.backend
        );
        let second = crate::billing_api::load(api, &seed).await.unwrap();
        assert_eq!(second.written(), 0, "[{}] {second}", api.backend);
        let (_, positions) = api.get(&format!("/projects/{}/manual-positions", w.project), &token).await;
        let listed = &positions[0];
        assert_eq!(
            json!([listed["id"], listed["name"], listed["description"], listed["sort"], listed["createdAt"]]),
            json!([position, "Setup", "<p>Once</p>", 1, "2026-03-05T10:00:00Z"]),
            "[{}] {positions}",
            api.backend
        );
        let (_, products) = api.get(&format!("/projects/{}/products", w.project), &token).await;
        let listed = &products[0];
        assert_eq!(
            json!([
                listed["id"],
                listed["productId"],
                listed["quantity"],
                listed["activeFromType"],
                listed["createdAt"]
            ]),
            json!([import, hours, 2, "Immediately", "2026-03-02T08:00:00Z"]),
            "[{}] {products}",
            api.backend
        );
        // March's invoices as of 2 April: the position (250 − 30) on the time invoice, the
        // product's first month (2 March – 1 April, 2 × 95) on the subscription invoice.
        let (_, time) = get_at(api, &invoice_path(&invoice_id("time", w.project, "2026-03", "31")), &token, NOW).await;
        let setup = time["positions"].as_array().unwrap().iter().find(|l| l["positionId"] == json!(position));
        assert_eq!(setup.map(|l| &l["amount"]), Some(&json!(220)), "[{}] {time}", api.backend);
        let subscription = invoice_path(&invoice_id("subscription", w.project, "2026-03", "31"));
        let (_, charges) = get_at(api, &subscription, &token, NOW).await;
        let charge = &charges["products"][0];
        assert_eq!(
            json!([charge["projectProductId"], charge["periodStart"], charge["periodEnd"], charge["amount"]]),
            json!([import, "2026-03-02", "2026-04-01", 190]),
            "[{}] {charges}",
            api.backend
        );

        let mut bad = seed.clone();
        bad["manualPositions"][0]["price"] = json!(-1);
        bad["manualPositions"][0]["categoryId"] = json!(Uuid::new_v4());
        bad["projectProducts"][0]["options"] = json!([{"id": Uuid::new_v4(), "value": [Uuid::new_v4()]}]);
        let entry = |changes: Value| {
            let mut entry = seed["projectProducts"][0].clone();
            entry["id"] = json!(Uuid::new_v4());
            for (key, value) in changes.as_object().unwrap() {
                entry[key] = value.clone();
            }
            entry
        };
        bad["projectProducts"] = json!([
            bad["projectProducts"][0],
            entry(json!({"createdAt": "yesterday"})),
            entry(json!({"productId": Uuid::new_v4()})),
            entry(json!({"projectId": Uuid::new_v4(), "quantity": 0}))
        ]);
        let error = crate::billing_api::load(api, &bad).await.unwrap_err();
        for expected in [
            "manualPositions[0].price",
            "manualPositions[0].categoryId",
            "projectProducts[0].options[0].id",
            "projectProducts[1].createdAt",
            "projectProducts[2].productId: no such catalog product",
            "projectProducts[3].projectId: no such project",
            "projectProducts[3].quantity",
        ] {
            assert!(error.contains(expected), "[{}] {expected} in {error}", api.backend);
        }
    })
    .await;
}
