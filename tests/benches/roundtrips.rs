//! Store round trips per request, route by route (DESIGN §7): `cargo bench -p api-tests --bench roundtrips`.
//! Counts calls on the embedded store (DynamoDB makes exactly the same calls: one trait), and the
//! sequential depth: how many of them the request waited for one after another.

use api_tests::{RoundTrips, TestApi, backends};
use reqwest::Method;
use serde_json::{Value, json};
use shared::identity::UserKind;
use shared::permissions::ROOT;
use std::time::Duration;

/// One measured request: name, method, path, bearer token, JSON body.
struct Case<'a>(&'a str, Method, String, Option<&'a str>, Option<Value>);

#[tokio::main]
async fn main() {
    let backend = backends().await.into_iter().next().expect("the embedded backend");
    // Each store call is delayed, so that concurrent calls overlap and the depth shows.
    let api = TestApi::builder(&backend).store_latency(Duration::from_millis(5)).start().await;
    let (_, token) = api.user(ROOT, UserKind::Employee).await;
    // First use records lastUsedAt (at most once an hour); do it before counting.
    api.get("/tags/task", &token).await;
    let (_, tag) = api.post("/tags/task/create", &token, json!({"name": "Existing"})).await;
    let id = tag["id"].as_str().unwrap().to_owned();
    let forged = shared::token::mint(&shared::token::TokenKey::generate());
    let role_body = json!({"name": "Reviewers", "icon": "fa-eye", "type": "normal", "parentId": "_staff"});
    let (_, role) = api.post("/administration/roles", &token, role_body.clone()).await;
    let role_id = role["id"].as_str().unwrap().to_owned();
    let (_, holder) = api.user(&role_id, UserKind::Employee).await;
    api.get("/tags/task", &holder).await;
    let (_, activity) = api.post("/administration/task-settings/activities", &token, json!({"name": "Dev"})).await;
    let activity_id = activity["id"].as_str().unwrap().to_owned();

    let cases = vec![
        Case("list tags", Method::GET, "/tags/task".into(), Some(&token), None),
        Case("create a new tag", Method::POST, "/tags/task/create".into(), Some(&token), Some(json!({"name": "New"}))),
        Case(
            "create an existing name",
            Method::POST,
            "/tags/task/create".into(),
            Some(&token),
            Some(json!({"name": "existing"})),
        ),
        Case(
            "save a colour",
            Method::PUT,
            format!("/tags/task/{id}/color"),
            Some(&token),
            Some(json!({"color": "red"})),
        ),
        Case("soft-delete", Method::DELETE, format!("/tags/task/{id}"), Some(&token), None),
        Case("list tags as a custom-role holder", Method::GET, "/tags/task".into(), Some(&holder), None),
        Case("list roles", Method::GET, "/administration/roles".into(), Some(&token), None),
        Case("create a role", Method::POST, "/administration/roles".into(), Some(&token), Some(role_body)),
        Case(
            "patch a role",
            Method::PATCH,
            format!("/administration/roles/{role_id}"),
            Some(&token),
            Some(json!({"name": "Reviewers 2"})),
        ),
        Case(
            "toggle a permission",
            Method::PATCH,
            format!("/administration/roles/{role_id}/permissions/Projects.edit"),
            Some(&token),
            Some(json!({"allow": true})),
        ),
        Case(
            "replace a work activity",
            Method::PUT,
            format!("/administration/task-settings/activities/{activity_id}"),
            Some(&token),
            Some(json!({"name": "Development", "translations": [{"language": "de", "name": "Entwicklung"}]})),
        ),
        Case("OpenAPI document", Method::GET, "/docs/json".into(), None, None),
        Case("no token (401)", Method::GET, "/tags/task".into(), None, None),
        Case("forged token (401)", Method::GET, "/tags/task".into(), Some(&forged), None),
        Case("unknown route (404)", Method::GET, "/nope".into(), Some(&token), None),
    ];
    println!("| Request | Status | Store reads | Store writes | Total | Sequential depth |");
    println!("|---|---|---|---|---|---|");
    for Case(name, method, path, auth, body) in cases {
        let (trips, (status, _, _)) = api.round_trips(api.call(method, &path, auth, body)).await;
        let RoundTrips { reads, writes, depth } = trips;
        println!("| {name} | {status} | {reads} | {writes} | {} | {depth} |", reads + writes);
    }
}
