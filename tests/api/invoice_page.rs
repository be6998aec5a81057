//! An issued invoice as a page (issue 36 item 5; docs/billing.md, "The invoice as a page"), on
//! every store backend: `GET /billing/invoices/{id}` asked for HTML renders it for a person,
//! with its policy and caching headers; JSON stays the default; an `Accept` that takes neither
//! is a 406; the page has the read's permission and its 404 for other workspaces.

use crate::billing_api::{invoice_id, invoice_path, seeded};
use api_tests::{TestApi, assert_error_body, each_backend};
use reqwest::Method;
use serde_json::{Value, json};
use workapi_domain::identity::{self, UserKind};
use workapi_domain::permissions::{ROOT, TEAM_LEADER};

const NOW: &str = "2026-04-02T12:00:00Z";
/// Chromium's Accept on a navigation.
const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

/// GET with an `Accept`: status, headers, body as text.
async fn get_as(api: &TestApi, path: &str, token: &str, accept: &str) -> (u16, reqwest::header::HeaderMap, String) {
    let response = reqwest::Client::new()
        .get(api.url(path))
        .bearer_auth(token)
        .header("Accept", accept)
        .send()
        .await
        .expect("request reaches the server");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().await.unwrap())
}

fn header<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> &'a str {
    headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
}

/// March's time invoice of billing_api's world, issued to its contact, then cancelled: both
/// pages, and every way the page is refused.
#[tokio::test]
async fn an_issued_invoice_reads_as_a_page_with_its_recipient_lines_and_totals() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, &[root.id]).await;
        let march = invoice_path(&invoice_id("time", w.project, "2026-03", "31"));
        let clock = [("LT_CUSTOM_NOW", NOW)];
        let (status, _, _) =
            api.send_with(Method::PATCH, &march, &token, &clock, Some(json!({"contactId": w.contact}))).await;
        assert_eq!(status, 200, "[{}]", api.backend);
        let issue = [("LT_CUSTOM_NOW", NOW), ("LT-Response-Shape", "full")];
        let (status, _, invoice) = api.send_with(Method::POST, &format!("{march}/issue"), &token, &issue, None).await;
        assert_eq!(status, 201, "[{}] {invoice}", api.backend);
        let path = format!("/billing/invoices/{}", invoice["id"].as_str().unwrap());

        let (status, headers, html) = get_as(api, &path, &token, BROWSER).await;
        assert_eq!(status, 200, "[{}] {html}", api.backend);
        assert_eq!(header(&headers, "content-type"), "text/html; charset=utf-8");
        assert!(header(&headers, "cache-control").starts_with("private"), "[{}] {headers:?}", api.backend);
        assert!(header(&headers, "content-security-policy").starts_with("default-src 'none'; style-src 'sha256-"));
        assert_eq!(header(&headers, "vary"), "Accept");
        assert!(headers.get("etag").is_none(), "[{}] the ETag is the JSON's", api.backend);
        // billing_api's world: Support 6.5 h × 100 and the fixed-price fix's 4 h × 100 (no
        // quotation accepted): 1050 net, 199.50 tax, 1249.50 (docs/billing.md).
        for shown in [
            "<h1>Invoice <bdi>1</bdi></h1>",
            "<dt>Issued on</dt><dd>2026-04-02</dd>",
            "<dt>Service period</dt><dd>2026-03-01 – 2026-03-31</dd>",
            "<dt>Project</dt><dd><bdi>Shop</bdi></dd>",
            "<address><bdi>Acme</bdi><br><bdi>Erika</bdi><br>",
            "#1 <bdi>Support</bdi>",
            "6.5\u{a0}h</td><td class=\"num\">100.00\u{a0}EUR",
            "<tr><th>Net</th><td class=\"num\">1,050.00\u{a0}EUR</td></tr>",
            "<tr><th>Tax 19\u{a0}%</th><td class=\"num\">199.50\u{a0}EUR</td></tr>",
            "<th>Total</th><td class=\"num\">1,249.50\u{a0}EUR</td>",
        ] {
            assert!(html.contains(shown), "[{}] {shown:?} in {html}", api.backend);
        }
        assert!(!html.contains("<script") && !html.contains("http"), "[{}] self-contained: {html}", api.backend);

        // JSON stays the default: no Accept, */*, application/json, a tie.
        for accept in ["*/*", "application/json", "text/html, application/json", "application/*"] {
            let (status, headers, body) = get_as(api, &path, &token, accept).await;
            assert_eq!(status, 200, "[{}] {accept}: {body}", api.backend);
            assert!(header(&headers, "content-type").starts_with("application/json"), "[{}] {accept}", api.backend);
            assert_eq!(header(&headers, "vary"), "Accept");
            let body: Value = serde_json::from_str(&body).unwrap();
            assert_eq!((&body["number"], &body["total"]), (&json!("1"), &json!(1249.5)), "[{}] {accept}", api.backend);
        }
        let (status, _, body) = api.call(Method::GET, &path, Some(&token), None).await;
        assert_eq!((status, &body["number"]), (200, &json!("1")), "[{}] no Accept: {body}", api.backend);
        // Neither JSON nor HTML: 406 in the error body.
        for accept in ["application/xml", "text/csv, image/png", "application/json;q=0"] {
            let (status, _, body) = get_as(api, &path, &token, accept).await;
            assert_error_body(api.backend, status, &serde_json::from_str(&body).unwrap(), 406);
        }

        // The credit note's page names the invoice it cancels; the invoice's, its credit note.
        let (status, note) = api.post(&format!("{path}/cancel"), &token, json!({})).await;
        assert_eq!(status, 201, "[{}] {note}", api.backend);
        let (_, _, html) =
            get_as(api, &format!("/billing/invoices/{}", note["id"].as_str().unwrap()), &token, BROWSER).await;
        assert!(html.contains("<h1>Credit note <bdi>2</bdi></h1>"), "[{}] {html}", api.backend);
        assert!(html.contains("This credit note cancels invoice <bdi>1</bdi>."), "[{}] {html}", api.backend);
        assert!(html.contains("<th>Total</th><td class=\"num\">-1,249.50\u{a0}EUR</td>"), "[{}] {html}", api.backend);
        let (_, _, html) = get_as(api, &path, &token, BROWSER).await;
        assert!(html.contains("Cancelled by credit note <bdi>2</bdi>."), "[{}] {html}", api.backend);

        // The read's permission and access: a Team Leader who is not a member 403, another
        // workspace 404, in either representation.
        let (_, leader) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let other = identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let (_, foreign) = api.user_in(other.id, ROOT, UserKind::Employee, &["api:read", "api:write"]).await;
        for accept in [BROWSER, "application/json"] {
            let (status, _, body) = get_as(api, &path, &leader, accept).await;
            assert_error_body(api.backend, status, &serde_json::from_str(&body).unwrap(), 403);
            let (status, _, body) = get_as(api, &path, &foreign, accept).await;
            assert_error_body(api.backend, status, &serde_json::from_str(&body).unwrap(), 404);
        }
    })
    .await;
}

/// Names as hostile as a seed or a client can make them reach the page escaped: a task title
/// with markup, a contact and a project whose names carry quotes and a right-to-left override.
#[tokio::test]
async fn hostile_names_reach_the_page_escaped() {
    each_backend(async |_, api| {
        let (root, token) = api.user(ROOT, UserKind::Employee).await;
        let tag = &uuid::Uuid::new_v4().simple().to_string()[..8];
        let (org, contact, project, task) =
            (uuid::Uuid::new_v4(), uuid::Uuid::new_v4(), uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
        let seed = json!({"version": 1,
            "organizations": [{"id": org, "name": "<b>Org</b> & Co"}],
            "contacts": [{"id": contact, "organizationId": org, "name": "\u{202e}Eve \"x\" 'y'",
                          "email": format!("eve-{tag}@example.com")}],
            "projects": [{"id": project, "name": "<img src=x onerror=alert(1)>", "customerOrganizationId": org,
                          "members": [root.id], "hourRate": 100, "currency": "JPY", "taxRate": 10}],
            "tasks": [{"id": task, "shortNumber": 1, "projectId": project,
                       "title": "<script>alert(1)</script>"}],
            "timeEntries": [{"id": uuid::Uuid::new_v4(), "taskId": task, "date": "2026-03-10", "hours": 1.5}]});
        crate::billing_api::load(api, &seed).await.expect("the seed loads");
        let march = invoice_path(&invoice_id("time", project, "2026-03", "31"));
        let clock = [("LT_CUSTOM_NOW", NOW)];
        api.send_with(Method::PATCH, &march, &token, &clock, Some(json!({"contactId": contact}))).await;
        let (status, _, invoice) = api.send_with(Method::POST, &format!("{march}/issue"), &token, &clock, None).await;
        assert_eq!(status, 201, "[{}] {invoice}", api.backend);
        let path = format!("/billing/invoices/{}", invoice["id"].as_str().unwrap());
        let (status, _, html) = get_as(api, &path, &token, BROWSER).await;
        assert_eq!(status, 200, "[{}] {html}", api.backend);
        assert!(!html.contains("<script>alert") && !html.contains("<img") && !html.contains("<b>Org"), "{html}");
        for shown in [
            "<bdi>&lt;script&gt;alert(1)&lt;/script&gt;</bdi>",
            "<dd><bdi>&lt;img src=x onerror=alert(1)&gt;</bdi></dd>",
            "<address><bdi>&lt;b&gt;Org&lt;/b&gt; &amp; Co</bdi><br><bdi>\u{202e}Eve &quot;x&quot; &#39;y&#39;</bdi><br>",
            // 1.5 h × 100 JPY: no minor unit.
            "<th>Total</th><td class=\"num\">165\u{a0}JPY</td>",
        ] {
            assert!(html.contains(shown), "[{}] {shown:?} in {html}", api.backend);
        }
    })
    .await;
}
