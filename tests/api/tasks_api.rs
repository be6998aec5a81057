//! Tasks and express quotations over HTTP with real tokens (spec §2.3, §3, §4.3;
//! docs/tasks.md), on every store backend: creation by UUID and by shortNumber with the
//! amounts a calculator gives, every error case, race-free numbering, the decisions and their
//! at-most-one-Accepted rule, the seed's tasks section, and other workspaces' 404s.

use api_tests::{TestApi, assert_error_body, each_backend};
use serde_json::{Value, json};
use std::collections::HashSet;
use uuid::Uuid;
use workapi_domain::identity::{self, NewToken, UserKind};
use workapi_domain::permissions::{ROOT, TEAM_LEADER};

/// The ids of one seeded world: two projects (express quotations on and off), a customer with
/// an active contact (a project member), an inactive one, and a contact of another customer.
struct World {
    org: Uuid,
    contact: Uuid,
    inactive: Uuid,
    stranger: Uuid,
    enabled: Uuid,
    disabled: Uuid,
    /// #1: 12.5 h estimated at the project's 95/h; a 450 product with a 120 option; 40 × 4.5.
    checkout: Uuid,
    /// #2: 3.75 h at its own 110/h; 1.5 h × 95 with a 12.99 option.
    workshop: Uuid,
    /// #3, in the disabled project.
    upgrade: Uuid,
    /// #4: no estimate, no products.
    unestimated: Uuid,
}

fn seed_json(w: &World, members: &[Uuid]) -> Value {
    let tag = &Uuid::new_v4().simple().to_string()[..8];
    let other_org = Uuid::new_v4();
    json!({
        "version": 1,
        "organizations": [{"id": w.org, "name": "Acme"}, {"id": other_org, "name": "Globex"}],
        "contacts": [
            {"id": w.contact, "organizationId": w.org, "name": "Erika", "email": format!("e-{tag}@acme.example")},
            {"id": w.inactive, "organizationId": w.org, "name": "Max", "email": format!("m-{tag}@acme.example"),
             "isActive": false},
            {"id": w.stranger, "organizationId": other_org, "name": "Hank", "email": format!("h-{tag}@globex.example")}
        ],
        "projects": [
            {"id": w.enabled, "name": "Shop", "customerOrganizationId": w.org, "members": members,
             "hourRate": 95, "currency": "EUR", "taxRate": 19, "expressQuotationsEnabled": true},
            {"id": w.disabled, "name": "Internal", "members": members,
             "hourRate": 80, "currency": "EUR", "taxRate": 7, "expressQuotationsEnabled": false}
        ],
        "tasks": [
            {"id": w.checkout, "shortNumber": 1, "projectId": w.enabled, "title": "Checkout redesign",
             "description": "One **page**", "estimatedHours": 12.5, "products": [
                {"id": Uuid::new_v4(), "title": "Payment setup", "description": "Webhooks", "quantity": 1,
                 "unit": "Piece", "unitPrice": 450,
                 "options": [{"id": Uuid::new_v4(), "title": "Express", "unitPrice": 120}]},
                {"id": Uuid::new_v4(), "title": "Photo editing", "quantity": 40, "unit": "Piece", "unitPrice": 4.5}
             ]},
            {"id": w.workshop, "shortNumber": 2, "projectId": w.enabled, "title": "Workshop",
             "estimatedHours": 3.75, "hourRate": 110, "products": [
                {"id": Uuid::new_v4(), "title": "Follow-up", "quantity": 1.5, "unit": "Hour", "unitPrice": 95,
                 "options": [{"id": Uuid::new_v4(), "title": "Handout", "unitPrice": 12.99}]}
             ]},
            {"id": w.upgrade, "shortNumber": 3, "projectId": w.disabled, "title": "Upgrade", "estimatedHours": 6},
            {"id": w.unestimated, "shortNumber": 4, "projectId": w.enabled, "title": "Ideas"}
        ]
    })
}

fn new_world() -> World {
    World {
        org: Uuid::new_v4(),
        contact: Uuid::new_v4(),
        inactive: Uuid::new_v4(),
        stranger: Uuid::new_v4(),
        enabled: Uuid::new_v4(),
        disabled: Uuid::new_v4(),
        checkout: Uuid::new_v4(),
        workshop: Uuid::new_v4(),
        upgrade: Uuid::new_v4(),
        unestimated: Uuid::new_v4(),
    }
}

async fn load(api: &TestApi, seed: &Value) -> Result<local::seed::Report, String> {
    let file = local::seed::parse(&seed.to_string()).map_err(|e| e.to_string())?;
    local::seed::load(api.store.as_ref(), api.workspace_id, &file).await.map_err(|e| e.to_string())
}

/// A seeded world whose projects have the active contact and `member` as members.
async fn seeded(api: &TestApi, member: Uuid) -> World {
    let world = new_world();
    load(api, &seed_json(&world, &[world.contact, member])).await.expect("seed loads");
    world
}

/// A read-write token of an existing user (a seeded contact).
async fn token_of(api: &TestApi, user: Uuid) -> String {
    let scopes = vec!["api:read".to_owned(), "api:write".to_owned()];
    let new = NewToken { name: "test", scopes, expires_at: None };
    identity::create_token(api.store.as_ref(), &api.key, api.workspace_id, user, new).await.expect("token").0
}

fn quotations(task: impl std::fmt::Display) -> String {
    format!("/tasks/{task}/express-quotations")
}

#[tokio::test]
async fn quotations_are_created_by_uuid_and_by_short_number_with_the_amounts_a_calculator_gives() {
    each_backend(async |_, api| {
        let (member, token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let w = seeded(api, member.id).await;
        let body = json!({"contactUserId": w.contact, "includeEstimate": true, "comment": "As **agreed**",
                          "language": "DE"});
        let (status, created) = api.post(&format!("{}?responseShape=full", quotations(w.checkout)), &token, body).await;
        assert_eq!(status, 201, "[{}] {created}", api.backend);
        let summary: Vec<Value> = created["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                let options: Vec<Value> =
                    i["options"].as_array().unwrap().iter().map(|o| json!([o["unitPrice"], o["totalPrice"]])).collect();
                json!([i["order"], i["title"], i["unit"], i["quantity"], i["unitPrice"], i["totalPrice"], options])
            })
            .collect();
        assert_eq!(
            summary,
            [
                json!([1, "Checkout redesign", "Hour", 12.5, 95, 1187.5, []]),
                json!([2, "Payment setup", "Piece", 1, 450, 450, [[120, 120]]]),
                json!([3, "Photo editing", "Piece", 40, 4.5, 180, []]),
            ],
            "[{}] {created}",
            api.backend
        );
        // 1187.5 + 450 + 120 + 180 = 1937.5; 19 % = 368.125 → 368.13.
        let amounts = json!([created["subTotal"], created["tax"], created["taxAmount"], created["total"]]);
        assert_eq!(amounts, json!([1937.5, 19, 368.13, 2305.63]), "[{}]", api.backend);
        assert_eq!(
            json!([
                created["shortNumber"],
                created["status"],
                created["statusChangedBy"],
                created["sentAt"],
                created["createdBy"],
                created["contactUserId"],
                created["language"],
                created["comment"],
                created["currency"],
                created["taskId"]
            ]),
            json!([
                1,
                "Pending",
                null,
                null,
                member.id,
                w.contact,
                "de",
                "<p>As <strong>agreed</strong></p>",
                "EUR",
                w.checkout
            ])
        );
        assert_eq!(created["items"][1]["description"], "<p>Webhooks</p>");

        // By shortNumber, without the estimate: 1.5 × 95 = 142.5, option 1.5 × 12.99 = 19.485 →
        // 19.49; 161.99 × 19 % = 30.7781 → 30.78.
        let body = json!({"contactUserId": w.contact, "includeEstimate": false, "language": null});
        let (status, by_number) = api.post(&format!("{}?responseShape=full", quotations(2)), &token, body).await;
        assert_eq!(status, 201, "[{}] {by_number}", api.backend);
        assert_eq!(
            json!([
                by_number["taskId"],
                by_number["shortNumber"],
                by_number["items"].as_array().unwrap().len(),
                by_number["items"][0]["options"][0]["totalPrice"],
                by_number["subTotal"],
                by_number["taxAmount"],
                by_number["total"],
                by_number["language"],
                by_number["comment"]
            ]),
            json!([w.workshop, 1, 1, 19.49, 161.99, 30.78, 192.77, null, "<p></p>"])
        );
        // With the estimate at the task's own rate: 3.75 × 110 = 412.5.
        let body = json!({"contactUserId": w.contact, "includeEstimate": true});
        let (_, with_estimate) = api.post(&format!("{}?responseShape=full", quotations(2)), &token, body).await;
        assert_eq!(
            json!([
                with_estimate["shortNumber"],
                with_estimate["items"][0]["unitPrice"],
                with_estimate["items"][0]["totalPrice"],
                with_estimate["subTotal"],
                with_estimate["total"]
            ]),
            json!([2, 110, 412.5, 574.49, 683.64])
        );
        // The compact default of the [P] create: 450 + 120 + 180 = 750; 19 % = 142.5.
        let body = json!({"contactUserId": member.id, "includeEstimate": false});
        let (status, compact) = api.post(&quotations(w.checkout), &token, body).await;
        assert_eq!(status, 201);
        assert_eq!(compact.as_object().unwrap().keys().collect::<Vec<_>>(), ["id", "shortNumber", "status", "total"]);
        assert_eq!((compact["shortNumber"].clone(), compact["total"].clone()), (json!(2), json!(892.5)));

        // Read back, by either identifier.
        let path = format!("{}/{}", quotations(1), created["id"].as_str().unwrap());
        let (status, read) = api.get(&path, &token).await;
        assert_eq!((status, &read), (200, &created), "[{}]", api.backend);
        let (_, listed) = api.get(&quotations(w.checkout), &token).await;
        let numbers: Vec<&Value> = listed.as_array().unwrap().iter().map(|q| &q["shortNumber"]).collect();
        assert_eq!(numbers, [&json!(1), &json!(2)]);
        assert_eq!(listed[0], created);

        let (status, task) = api.get("/tasks/1", &token).await;
        assert_eq!(status, 200, "{task}");
        let (_, same) = api.get(&format!("/tasks/{}", w.checkout), &token).await;
        assert_eq!(task, same);
        assert_eq!(
            json!([
                task["id"],
                task["title"],
                task["description"],
                task["estimatedHours"],
                task["hourRate"],
                task["effectiveHourRate"],
                task["products"][0]["options"][0]["unitPrice"]
            ]),
            json!([w.checkout, "Checkout redesign", "<p>One <strong>page</strong></p>", 12.5, null, 95, 120])
        );
        let (status, listed) = api.get(&format!("/projects/{}/tasks", w.enabled), &token).await;
        assert_eq!(status, 200);
        let numbers: Vec<&Value> = listed.as_array().unwrap().iter().map(|t| &t["shortNumber"]).collect();
        assert_eq!(numbers, [&json!(1), &json!(2), &json!(4)], "[{}] {listed}", api.backend);
        assert_eq!(listed[1]["effectiveHourRate"], 110);
    })
    .await;
}

#[tokio::test]
async fn every_error_case_answers_with_the_spec_error_body() {
    each_backend(async |_, api| {
        let (member, token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let w = seeded(api, member.id).await;
        let (_, outsider) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let valid = json!({"contactUserId": w.contact, "includeEstimate": true});
        let b = api.backend;

        for identifier in ["abc", "0", "-1", "1.5", "%20"] {
            let (status, body) = api.post(&quotations(identifier), &token, valid.clone()).await;
            assert_error_body(b, status, &body, 400);
            assert!(body["errors"]["identifier"].is_array(), "[{b}] {identifier}: {body}");
        }
        for identifier in [Uuid::new_v4().to_string(), "99".into()] {
            let (status, body) = api.post(&quotations(&identifier), &token, valid.clone()).await;
            assert_error_body(b, status, &body, 404);
            let (status, body) = api.get(&format!("/tasks/{identifier}"), &token).await;
            assert_error_body(b, status, &body, 404);
        }
        let (status, body) = api.post(&quotations(w.checkout), &outsider, valid.clone()).await;
        assert_error_body(b, status, &body, 403);
        let (status, body) = api.get(&quotations(1), &outsider).await;
        assert_error_body(b, status, &body, 403);
        let contact = token_of(api, w.contact).await;
        let (status, body) = api.post(&quotations(1), &contact, valid.clone()).await;
        assert_error_body(b, status, &body, 403);
        assert!(body["message"].as_str().unwrap().contains("employees"), "[{b}] contacts receive quotations: {body}");
        let (status, body) = api.post(&quotations(3), &token, valid.clone()).await;
        assert_error_body(b, status, &body, 403);
        assert!(body["message"].as_str().unwrap().contains("disabled"), "[{b}] {body}");

        let field_errors = [
            (json!({"includeEstimate": true}), "contactUserId"),
            (json!({"contactUserId": "nope", "includeEstimate": true}), "contactUserId"),
            (json!({"contactUserId": Uuid::new_v4(), "includeEstimate": true}), "contactUserId"),
            (json!({"contactUserId": w.inactive, "includeEstimate": true}), "contactUserId"),
            (json!({"contactUserId": w.stranger, "includeEstimate": true}), "contactUserId"),
            (json!({"contactUserId": w.contact}), "includeEstimate"),
            (json!({"contactUserId": w.contact, "includeEstimate": "yes"}), "includeEstimate"),
            (json!({"contactUserId": w.contact, "includeEstimate": true, "language": "deu"}), "language"),
            (json!({"contactUserId": w.contact, "includeEstimate": true, "comment": 5}), "comment"),
        ];
        for (body, field) in field_errors {
            let (status, answer) = api.post(&quotations(1), &token, body.clone()).await;
            assert_error_body(b, status, &answer, 400);
            assert!(answer["errors"][field].is_array(), "[{b}] {body} names {field}: {answer}");
        }
        let (status, answer) = api.post(&quotations(4), &token, valid.clone()).await;
        assert_error_body(b, status, &answer, 400);
        assert!(answer["errors"]["includeEstimate"].is_array(), "[{b}] {answer}");
        let (status, answer) =
            api.post(&quotations(4), &token, json!({"contactUserId": w.contact, "includeEstimate": false})).await;
        assert_eq!((status, answer["total"].clone()), (201, json!(0)), "[{b}] no estimate and no products: {answer}");

        let (status, _, body) = api.call(reqwest::Method::POST, &quotations(1), None, Some(valid.clone())).await;
        assert_error_body(b, status, &body, 401);
        let (status, body) = api.get(&format!("{}/{}", quotations(1), Uuid::new_v4()), &token).await;
        assert_error_body(b, status, &body, 404);
        let (status, body) = api.get(&format!("{}/not-a-uuid", quotations(1)), &token).await;
        assert_error_body(b, status, &body, 400);
        // A quotation is reached through its own task only.
        let (_, created) = api.post(&quotations(1), &token, valid.clone()).await;
        let (status, body) = api.get(&format!("{}/{}", quotations(2), created["id"].as_str().unwrap()), &token).await;
        assert_error_body(b, status, &body, 404);
        // Nothing was numbered by the refused requests.
        assert_eq!(created["shortNumber"], 1, "[{b}] {created}");
    })
    .await;
}

#[tokio::test]
async fn twenty_concurrent_creates_on_one_task_get_exactly_1_to_20() {
    each_backend(async |_, api| {
        let (member, token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let w = seeded(api, member.id).await;
        let creates = (0..20).map(|i| {
            let identifier = if i % 2 == 0 { w.checkout.to_string() } else { "1".to_owned() };
            let body = json!({"contactUserId": w.contact, "includeEstimate": i % 3 == 0});
            let token = token.clone();
            async move { api.post(&quotations(identifier), &token, body).await }
        });
        let answers = futures::future::join_all(creates).await;
        let mut numbers: Vec<i64> = answers
            .iter()
            .map(|(status, body)| {
                assert_eq!(*status, 201, "[{}] {body}", api.backend);
                body["shortNumber"].as_i64().unwrap()
            })
            .collect();
        numbers.sort();
        assert_eq!(numbers, (1..=20).collect::<Vec<_>>(), "[{}]", api.backend);
        let (_, listed) = api.get(&quotations(1), &token).await;
        assert_eq!(listed.as_array().unwrap().len(), 20);
    })
    .await;
}

#[tokio::test]
async fn ten_concurrent_accepts_of_one_task_s_quotations_leave_exactly_one_accepted() {
    each_backend(async |_, api| {
        let (member, token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let w = seeded(api, member.id).await;
        let mut ids = Vec::new();
        for _ in 0..10 {
            let (_, q) =
                api.post(&quotations(1), &token, json!({"contactUserId": w.contact, "includeEstimate": true})).await;
            ids.push(q["id"].as_str().unwrap().to_owned());
        }
        let accepts = ids.iter().map(|id| {
            let path = format!("{}/{id}/accept", quotations(w.checkout));
            let token = token.clone();
            async move { api.post(&path, &token, json!({})).await }
        });
        let answers = futures::future::join_all(accepts).await;
        let accepted: Vec<&Value> = answers.iter().filter(|(s, _)| *s == 200).map(|(_, b)| b).collect();
        assert_eq!(accepted.len(), 1, "[{}] {answers:?}", api.backend);
        for (status, body) in answers.iter().filter(|(s, _)| *s != 200) {
            assert_error_body(api.backend, *status, body, 409);
            assert!(body["message"].as_str().unwrap().contains("already accepted"), "[{}] {body}", api.backend);
        }
        let (_, listed) = api.get(&quotations(1), &token).await;
        let statuses: Vec<&str> = listed.as_array().unwrap().iter().map(|q| q["status"].as_str().unwrap()).collect();
        assert_eq!(statuses.iter().filter(|s| **s == "Accepted").count(), 1, "[{}] {statuses:?}", api.backend);
        assert_eq!(statuses.iter().filter(|s| **s == "Pending").count(), 9);
    })
    .await;
}

#[tokio::test]
async fn decisions_follow_the_documented_transitions() {
    each_backend(async |_, api| {
        let (member, token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let w = seeded(api, member.id).await;
        let b = api.backend;
        let create = async || {
            let body = json!({"contactUserId": w.contact, "includeEstimate": false});
            api.post(&quotations(1), &token, body).await.1["id"].as_str().unwrap().to_owned()
        };
        let (first, second) = (create().await, create().await);
        let decide = async |id: &str, decision: &str, token: &str| {
            api.post(&format!("{}/{id}/{decision}?responseShape=full", quotations(1)), token, json!({})).await
        };

        let (status, accepted) = decide(&first, "accept", &token).await;
        assert_eq!(
            (status, accepted["status"].clone(), accepted["statusChangedBy"].clone()),
            (200, json!("Accepted"), json!(member.id)),
            "[{b}] {accepted}"
        );
        assert!(accepted["updatedAt"].as_str() >= accepted["createdAt"].as_str());
        // Repeating a decision changes nothing.
        let (status, again) = decide(&first, "accept", &token).await;
        assert_eq!((status, &again), (200, &accepted), "[{b}]");
        // Another one while the first is Accepted: 409 naming it.
        let (status, body) = decide(&second, "accept", &token).await;
        assert_error_body(b, status, &body, 409);
        assert!(body["message"].as_str().unwrap().contains("Quotation 1 "), "[{b}] {body}");
        // Withdrawing the acceptance frees the task for another.
        let (status, withdrawn) = decide(&first, "reject", &token).await;
        assert_eq!((status, withdrawn["status"].clone()), (200, json!("Rejected")), "[{b}] {withdrawn}");
        let (status, body) = decide(&second, "accept", &token).await;
        assert_eq!((status, body["status"].clone()), (200, json!("Accepted")), "[{b}] {body}");
        // A rejected quotation is final.
        let (status, body) = decide(&first, "accept", &token).await;
        assert_error_body(b, status, &body, 409);
        let (status, body) = decide(&first, "reject", &token).await;
        assert_eq!((status, body["status"].clone()), (200, json!("Rejected")));
        let (status, body) = decide(&Uuid::new_v4().to_string(), "accept", &token).await;
        assert_error_body(b, status, &body, 404);

        // A contact decides only on quotations addressed to them.
        let contact = token_of(api, w.contact).await;
        let third = create().await;
        let body = json!({"contactUserId": member.id, "includeEstimate": false});
        let (_, to_member) = api.post(&quotations(1), &token, body).await;
        let (status, body) = decide(to_member["id"].as_str().unwrap(), "reject", &contact).await;
        assert_error_body(b, status, &body, 403);
        let (status, body) = decide(&third, "reject", &contact).await;
        assert_eq!(
            (status, body["status"].clone(), body["statusChangedBy"].clone()),
            (200, json!("Rejected"), json!(w.contact)),
            "[{b}] {body}"
        );
    })
    .await;
}

#[tokio::test]
async fn in_imposter_mode_the_impersonated_user_creates_and_decides() {
    each_backend(async |_, api| {
        let (member, _) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, member.id).await;
        let request = |path: String| {
            api.http
                .post(api.url(&path))
                .bearer_auth(&root)
                .header("LT_IMPOSTER_USER_ID", member.id.to_string())
                .json(&json!({"contactUserId": w.contact, "includeEstimate": true}))
        };
        let created: Value =
            request(format!("{}?responseShape=full", quotations(1))).send().await.unwrap().json().await.unwrap();
        assert_eq!(created["createdBy"], json!(member.id), "[{}] {created}", api.backend);
        let path = format!("{}/{}/accept?responseShape=full", quotations(1), created["id"].as_str().unwrap());
        let accepted: Value = request(path).send().await.unwrap().json().await.unwrap();
        assert_eq!(accepted["statusChangedBy"], json!(member.id), "[{}] {accepted}", api.backend);
    })
    .await;
}

#[tokio::test]
async fn a_repeated_idempotency_key_creates_one_quotation() {
    each_backend(async |_, api| {
        let (member, token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let w = seeded(api, member.id).await;
        let send = || {
            api.http
                .post(api.url(&quotations(1)))
                .bearer_auth(&token)
                .header("Idempotency-Key", "quote-checkout-1")
                .json(&json!({"contactUserId": w.contact, "includeEstimate": true}))
                .send()
        };
        let first = send().await.unwrap();
        assert_eq!(first.status(), 201);
        let first: Value = first.json().await.unwrap();
        let replay = send().await.unwrap();
        assert_eq!(replay.headers()["idempotent-replayed"], "true");
        assert_eq!(replay.json::<Value>().await.unwrap(), first);
        let (_, listed) = api.get(&quotations(1), &token).await;
        assert_eq!(listed.as_array().unwrap().len(), 1, "[{}]", api.backend);
    })
    .await;
}

#[tokio::test]
async fn another_workspace_s_tasks_and_quotations_answer_404() {
    each_backend(async |_, api| {
        let (member, token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let w = seeded(api, member.id).await;
        let body = json!({"contactUserId": w.contact, "includeEstimate": true});
        let (_, created) = api.post(&quotations(1), &token, body.clone()).await;
        let quotation = created["id"].as_str().unwrap();
        let other = identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let (_, foreign) = api.user_in(other.id, ROOT, UserKind::Employee, &["api:read", "api:write"]).await;
        for path in [
            format!("/tasks/{}", w.checkout),
            "/tasks/1".to_owned(),
            quotations(w.checkout),
            format!("{}/{quotation}", quotations(w.checkout)),
            format!("/projects/{}/tasks", w.enabled),
        ] {
            let (status, answer) = api.get(&path, &foreign).await;
            assert_error_body(api.backend, status, &answer, 404);
        }
        for path in [
            quotations(w.checkout),
            quotations(1),
            format!("{}/{quotation}/accept", quotations(w.checkout)),
            format!("{}/{quotation}/reject", quotations(1)),
        ] {
            let (status, answer) = api.post(&path, &foreign, body.clone()).await;
            assert_error_body(api.backend, status, &answer, 404);
        }
        let (_, read) = api.get(&format!("{}/{quotation}", quotations(1)), &token).await;
        assert_eq!(read["status"], "Pending", "[{}] untouched", api.backend);
    })
    .await;
}

#[tokio::test]
async fn the_seed_s_tasks_load_idempotently_and_every_problem_is_named() {
    each_backend(async |_, api| {
        let (member, _) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let world = new_world();
        let seed = seed_json(&world, &[member.id]);
        let first = load(api, &seed).await.unwrap();
        assert_eq!(first.0["tasks"], (4, 0), "[{}] {first}", api.backend);
        let second = load(api, &seed).await.unwrap();
        assert_eq!(second.written(), 0, "[{}] {second}", api.backend);
        // A renumbered task moves its number: the old one is free, the new one finds it.
        let mut renumbered = seed.clone();
        renumbered["tasks"][3]["shortNumber"] = json!(40);
        assert_eq!(load(api, &renumbered).await.unwrap().0["tasks"], (1, 3));
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let (status, _) = api.get("/tasks/4", &token).await;
        assert_eq!(status, 404, "[{}]", api.backend);
        let (status, task) = api.get("/tasks/40", &token).await;
        assert_eq!((status, task["id"].clone()), (200, json!(world.unestimated)));

        let mut bad = seed_json(&new_world(), &[]);
        bad["tasks"][0]["projectId"] = json!(Uuid::new_v4());
        bad["tasks"][1]["shortNumber"] = json!(3);
        bad["tasks"][1]["products"][0]["quantity"] = json!(-1);
        bad["tasks"][1]["products"][0]["options"][0]["unitPrice"] = json!(1.001);
        bad["tasks"][3]["shortNumber"] = json!(40);
        bad["tasks"][2]["title"] = json!(" ");
        bad["tasks"][0]["estimatedHours"] = json!(100_001);
        let error = load(api, &bad).await.unwrap_err();
        for expected in [
            "tasks[0].projectId: no such project",
            "tasks[0].estimatedHours: must be from 0",
            "tasks[2].shortNumber: 3 appears twice in the file",
            "tasks[1].products[0].quantity: must be from 0",
            "tasks[1].products[0].options[0].unitPrice: at most two decimal places",
            "tasks[2].title: must hold 1 to 200 characters",
            "tasks[3].shortNumber: 40 belongs to another task of the workspace",
        ] {
            assert!(error.contains(expected), "[{}] {expected:?} in {error}", api.backend);
        }
        let unknown = json!({"version": 1, "tasks": [{"id": Uuid::new_v4(), "shortNumber": 9, "projectId": world.enabled,
                                                       "title": "x", "estimate": 3}]});
        assert!(load(api, &unknown).await.unwrap_err().contains("estimate"));
        let tasks: HashSet<Value> = api
            .get(&format!("/projects/{}/tasks", world.enabled), &token)
            .await
            .1
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["shortNumber"].clone())
            .collect();
        assert_eq!(tasks, HashSet::from([json!(1), json!(2), json!(40)]), "[{}] nothing of the refused files", api.backend);
    })
    .await;
}

/// The store calls of the task operations beyond authentication and rate limiting, as
/// docs/tasks.md lists them ("Store round trips").
#[tokio::test]
async fn each_operation_makes_the_documented_store_round_trips() {
    use reqwest::Method;
    each_backend(async |_, api| {
        let (member, token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let w = seeded(api, member.id).await;
        let count = async |method: Method, path: &str, body: Option<Value>| {
            let (trips, (status, _, response)) = api.round_trips(api.call(method, path, Some(&token), body)).await;
            assert!(status < 300, "[{}] {path}: {response}", api.backend);
            (trips.reads, trips.writes, response)
        };
        // Warm up (the token's lastUsedAt), then measure authentication and rate limiting: a
        // project get is that plus one read.
        count(Method::GET, "/projects", None).await;
        let (reads, auth_writes, _) = count(Method::GET, &format!("/projects/{}", w.enabled), None).await;
        let auth_reads = reads - 1;
        let body = json!({"contactUserId": w.contact, "includeEstimate": true});
        // The first create of a task finds no counter: it lists the task's quotations and makes it.
        let (reads, writes, first) = count(Method::POST, &quotations(w.checkout), Some(body.clone())).await;
        assert_eq!((reads - auth_reads, writes - auth_writes), (4, 4), "[{}]", api.backend);
        let id = first["id"].as_str().unwrap();
        let cases = [
            (Method::POST, quotations(w.checkout), Some(body.clone()), (3, 2)),
            (Method::POST, quotations(1), Some(body), (4, 2)),
            (Method::GET, format!("/tasks/{}", w.checkout), None, (2, 0)),
            (Method::GET, "/tasks/1".to_owned(), None, (3, 0)),
            (Method::GET, quotations(1), None, (4, 0)),
            (Method::GET, format!("{}/{id}", quotations(w.checkout)), None, (3, 0)),
            (Method::POST, format!("{}/{id}/accept", quotations(w.checkout)), None, (3, 1)),
            // Withdrawing an acceptance also queries the project's issued invoices (docs/tasks.md).
            (Method::POST, format!("{}/{id}/reject", quotations(w.checkout)), None, (4, 1)),
        ];
        for (method, path, body, expected) in cases {
            let (reads, writes, _) = count(method.clone(), &path, body).await;
            assert_eq!((reads - auth_reads, writes - auth_writes), expected, "[{}] {method} {path}", api.backend);
        }
    })
    .await;
}
