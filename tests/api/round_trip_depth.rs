//! Authentication and rate limiting wait for at most two store round trips before the handler
//! runs, whatever the credential (docs/performance.md, "Round trips"): the credential record is
//! read beside the IP counter, then the grant, the user, the token's counter, the custom roles
//! and the imposter target all at once. Every store call is delayed here, so calls made
//! concurrently overlap and sequential ones do not (`api_tests::sequential_depth`).

use crate::oauth_flow;
use api_tests::{TestApi, backends};
use serde_json::{Value, json};
use std::time::Duration;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::{ROOT, STAFF};

/// `GET /tags/task` makes one query of its own: two round trips before it, three in all.
const LIST_TAGS_DEPTH: usize = 3;

async fn depth(api: &TestApi, token: &str, headers: &[(&str, &str)]) -> usize {
    let (trips, (status, _, body)) =
        api.round_trips(api.send_with(reqwest::Method::GET, "/tags/task", token, headers, None)).await;
    assert_eq!(status, 200, "[{}] {body}", api.backend);
    trips.depth
}

#[tokio::test]
async fn authentication_waits_for_two_store_round_trips_at_most() {
    for backend in backends().await {
        let api = TestApi::builder(&backend).store_latency(Duration::from_millis(20)).start().await;
        let name = api.backend;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        assert_eq!(depth(&api, &root, &[]).await, LIST_TAGS_DEPTH, "[{name}] a personal token's first use");
        assert_eq!(depth(&api, &root, &[]).await, LIST_TAGS_DEPTH, "[{name}] a personal token");

        let role = json!({"name": "Depth", "icon": "fa-eye", "type": "normal", "parentId": STAFF});
        let (status, role) = api.post("/administration/roles", &root, role).await;
        assert_eq!(status, 201, "[{name}] {role}");
        let (_, holder) = api.user(role["id"].as_str().unwrap(), UserKind::Employee).await;
        assert_eq!(depth(&api, &holder, &[]).await, LIST_TAGS_DEPTH, "[{name}] a custom role's holder");

        let (staff, _) = api.user(STAFF, UserKind::Employee).await;
        let target = staff.id.to_string();
        let imposter = [("LT_IMPOSTER_USER_ID", target.as_str())];
        assert_eq!(depth(&api, &root, &imposter).await, LIST_TAGS_DEPTH, "[{name}] imposter mode");

        let (_, email) = oauth_flow::user(&api).await;
        let login = json!({"email": email, "password": oauth_flow::PASSWORD});
        let (status, _, session) = api.call(reqwest::Method::POST, "/api/auth/login", None, Some(login)).await;
        assert_eq!(status, 200, "[{name}] {session}");
        let session = session["accessToken"].as_str().unwrap().to_owned();
        assert_eq!(depth(&api, &session, &[]).await, LIST_TAGS_DEPTH, "[{name}] a session");

        let client = oauth_flow::register(&api, "Depth", "none").await;
        let tokens: Value = oauth_flow::tokens(&api, &client, &email, "api:read").await;
        let access = tokens["access_token"].as_str().unwrap();
        assert_eq!(depth(&api, access, &[]).await, LIST_TAGS_DEPTH, "[{name}] an OAuth access token");
    }
}
