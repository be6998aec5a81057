//! Tags over HTTP with real tokens (spec §2.5, §4.6), on every store backend.

use api_tests::{assert_error_body, each_backend};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use workapi_domain::identity::{self, NewToken, UserKind};
use workapi_domain::permissions::{CEO, GUEST, ROOT, STAFF, TEAM_LEADER};

const TYPES: [&str; 7] =
    ["task", "project", "project-component", "organization", "object", "form-template", "project-documentation"];

fn unique(name: &str) -> String {
    format!("{name} {}", &uuid::Uuid::new_v4().simple().to_string()[..8])
}

#[tokio::test]
async fn create_returns_the_compact_tag_and_full_on_request() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let name = unique("Urgent");
        let (status, tag) = api.post("/tags/task/create", &token, json!({"name": name})).await;
        assert_eq!(status, 200, "[{}] {tag}", api.backend);
        assert_eq!(tag.as_object().unwrap().len(), 2, "[{}] compact default is id and name: {tag}", api.backend);
        assert_eq!(tag["name"], name.as_str());
        uuid::Uuid::parse_str(tag["id"].as_str().unwrap()).expect("id is a UUID");

        let (_, full) = api.post("/tags/task/create?responseShape=full", &token, json!({"name": name})).await;
        assert_eq!(
            full,
            json!({"id": tag["id"], "name": name, "color": null, "isDeleted": false}),
            "[{}]",
            api.backend
        );

        let response = api
            .http
            .post(api.url("/tags/task/create"))
            .bearer_auth(&token)
            .header("LT-Response-Shape", "full")
            .json(&json!({"name": name}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        assert!(response.headers()["content-type"].to_str().unwrap().starts_with("application/json"));
        assert_eq!(response.json::<Value>().await.unwrap(), full, "[{}] LT-Response-Shape: full", api.backend);

        let (_, picked) =
            api.post("/tags/task/create?fieldsToReturn=isDeleted,color,unknown", &token, json!({"name": name})).await;
        assert_eq!(picked, json!({"color": null, "isDeleted": false}), "[{}]", api.backend);
    })
    .await;
}

#[tokio::test]
async fn names_are_one_tag_under_canonical_equivalence_and_spoofing_characters_are_refused() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let suffix = unique("");
        let (status, composed) =
            api.post("/tags/task/create", &token, json!({"name": format!("Caf\u{e9}{suffix}")})).await;
        assert_eq!(status, 200, "[{}] {composed}", api.backend);
        let (_, decomposed) =
            api.post("/tags/task/create", &token, json!({"name": format!("CAFE\u{301}{suffix}")})).await;
        assert_eq!(decomposed["id"], composed["id"], "[{}] NFC and NFD spellings are one tag", api.backend);
        for spoof in ["\u{202e}lanif", "ur\u{200b}gent", "\u{2067}x\u{2069}", "\u{feff}bom"] {
            let (status, body) = api.post("/tags/task/create", &token, json!({"name": spoof})).await;
            assert_error_body(api.backend, status, &body, 400);
        }
    })
    .await;
}

#[tokio::test]
async fn invalid_projection_is_rejected_before_anything_is_created() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let name = unique("Never");
        let (status, body) = api.post("/tags/task/create?responseShape=tiny", &token, json!({"name": name})).await;
        assert_error_body(api.backend, status, &body, 400);
        assert!(body["errors"]["responseShape"].is_array(), "{body}");
        let (_, list) = api.get("/tags/task", &token).await;
        assert!(
            !list.as_array().unwrap().iter().any(|t| t["name"] == name.as_str()),
            "[{}] created anyway",
            api.backend
        );
    })
    .await;
}

#[tokio::test]
async fn same_name_in_any_case_returns_the_existing_tag() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let name = unique("Review");
        let (_, first) = api.post("/tags/project/create", &token, json!({"name": name})).await;
        for variant in [name.to_uppercase(), name.to_lowercase(), format!("  {name} ")] {
            let (status, again) = api.post("/tags/project/create", &token, json!({"name": variant})).await;
            assert_eq!(status, 200, "[{}]", api.backend);
            assert_eq!(again["id"], first["id"], "[{}] {variant:?} made a new tag", api.backend);
            assert_eq!(again["name"], name.as_str(), "[{}] the stored name is kept", api.backend);
        }
        // Another type is another name space.
        let (_, other) = api.post("/tags/task/create", &token, json!({"name": name})).await;
        assert_ne!(other["id"], first["id"]);
        let (_, list) = api.get("/tags/project", &token).await;
        assert_eq!(list.as_array().unwrap().iter().filter(|t| t["name"] == name.as_str()).count(), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_of_one_name_make_exactly_one_tag() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let name = unique("Race");
        let requests = (0..20).map(|i| {
            let variant = if i % 2 == 0 { name.to_uppercase() } else { name.clone() };
            let request =
                api.http.post(api.url("/tags/task/create")).bearer_auth(&token).json(&json!({"name": variant}));
            async move {
                let response = request.send().await.unwrap();
                (response.status().as_u16(), response.json::<Value>().await.unwrap())
            }
        });
        let results = futures::future::join_all(requests).await;
        let ids: HashSet<String> = results
            .iter()
            .map(|(status, tag)| {
                assert_eq!(*status, 200, "[{}] {tag}", api.backend);
                tag["id"].as_str().unwrap().to_owned()
            })
            .collect();
        assert_eq!(ids.len(), 1, "[{}] every caller gets the one tag: {ids:?}", api.backend);
        let (_, list) = api.get("/tags/task", &token).await;
        let matching =
            list.as_array().unwrap().iter().filter(|t| t["name"].as_str().unwrap().eq_ignore_ascii_case(&name));
        assert_eq!(matching.count(), 1, "[{}]", api.backend);
    })
    .await;
}

#[tokio::test]
async fn every_type_can_be_created_and_listed() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        for tag_type in TYPES {
            let name = unique(tag_type);
            let (status, tag) = api.post(&format!("/tags/{tag_type}/create"), &token, json!({"name": name})).await;
            assert_eq!(status, 200, "[{}] {tag_type}: {tag}", api.backend);
            let (status, list) = api.get(&format!("/tags/{tag_type}"), &token).await;
            assert_eq!(status, 200);
            assert!(list.as_array().unwrap().iter().any(|t| t["id"] == tag["id"]), "[{}] {tag_type}", api.backend);
        }
    })
    .await;
}

#[tokio::test]
async fn permissions_per_type() {
    each_backend(async |_, api| {
        // (role, kind, type, expected status)
        let cases = [
            (STAFF, UserKind::Employee, "task", 200),
            (STAFF, UserKind::Employee, "project", 200),
            (STAFF, UserKind::Employee, "project-component", 403),
            (STAFF, UserKind::Employee, "project-documentation", 200),
            (TEAM_LEADER, UserKind::Employee, "project-component", 200),
            (CEO, UserKind::Employee, "project-component", 200),
            (GUEST, UserKind::OrganizationMember, "task", 403),
            (GUEST, UserKind::OrganizationMember, "project", 403),
            (GUEST, UserKind::OrganizationMember, "project-documentation", 403),
            (GUEST, UserKind::OrganizationMember, "project-component", 403),
            (STAFF, UserKind::OrganizationMember, "task", 200),
            (STAFF, UserKind::OrganizationMember, "project", 403),
            (STAFF, UserKind::OrganizationMember, "organization", 403),
            (ROOT, UserKind::OrganizationMember, "object", 403),
            (ROOT, UserKind::Employee, "form-template", 200),
        ];
        for (role, kind, tag_type, expected) in cases {
            let (_, token) = api.user(role, kind).await;
            let (status, body) =
                api.post(&format!("/tags/{tag_type}/create"), &token, json!({"name": unique("p")})).await;
            assert_eq!(status, expected, "[{}] {role} {kind:?} {tag_type}: {body}", api.backend);
            if expected == 403 {
                assert_error_body(api.backend, status, &body, 403);
            }
            // Reading is open to every member with api:read.
            assert_eq!(api.get(&format!("/tags/{tag_type}"), &token).await.0, 200);
        }
    })
    .await;
}

#[tokio::test]
async fn invalid_input_gets_400_with_field_errors() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let (status, body) = api.post("/tags/tasks/create", &token, json!({"name": "x"})).await;
        assert_error_body(api.backend, status, &body, 400);
        assert!(body["errors"]["type"][0].as_str().unwrap().contains("task"), "{body}");
        assert_eq!(api.get("/tags/bogus", &token).await.0, 400);

        for bad in [
            json!({}),
            json!({"name": ""}),
            json!({"name": "   "}),
            json!({"name": 5}),
            json!({"name": null}),
            json!({"name": "x".repeat(101)}),
            json!({"name": "tab\u{0007}bell"}),
        ] {
            let (status, body) = api.post("/tags/task/create", &token, bad.clone()).await;
            assert_error_body(api.backend, status, &body, 400);
            assert!(body["errors"]["name"][0].is_string(), "[{}] {bad} → {body}", api.backend);
        }
        let (status, _) = api.post("/tags/task/create", &token, json!({"name": "é".repeat(100)})).await;
        assert_eq!(status, 200, "100 characters are allowed, whatever their byte length");

        let raw = |body: &'static str| {
            api.http
                .post(api.url("/tags/task/create"))
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .body(body)
        };
        for body in ["{\"name\":", "[1]", "\"x\"", ""] {
            let response = raw(body).send().await.unwrap();
            let status = response.status().as_u16();
            assert_error_body(api.backend, status, &response.json().await.unwrap(), 400);
        }
        let form = api
            .http
            .post(api.url("/tags/task/create"))
            .bearer_auth(&token)
            .header("content-type", "text/plain")
            .body("{}");
        let response = form.send().await.unwrap();
        assert_eq!(response.status().as_u16(), 415);
        let big = format!("{{\"name\":\"{}\"}}", "x".repeat(2 * 1024 * 1024));
        let response = api
            .http
            .post(api.url("/tags/task/create"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(big)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        assert_error_body(api.backend, status, &response.json().await.unwrap(), 413);
    })
    .await;
}

#[tokio::test]
async fn unknown_routes_and_methods_get_the_error_body() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let (status, _, body) = api.call(Method::GET, "/nothing/here", Some(&token), None).await;
        assert_error_body(api.backend, status, &body, 404);
        let (status, headers, body) = api.call(Method::PATCH, "/tags/task/create", Some(&token), None).await;
        assert_error_body(api.backend, status, &body, 405);
        assert_eq!(headers["allow"], "POST");
        assert!(
            headers.contains_key("x-ratelimit-remaining"),
            "[{}] rate-limit headers survive the rewrite",
            api.backend
        );
        let (status, _, body) =
            api.call(Method::PUT, "/tags/task/not-a-uuid/color", Some(&token), Some(json!({"color": "red"}))).await;
        assert_error_body(api.backend, status, &body, 400);
    })
    .await;
}

#[tokio::test]
async fn bad_credentials_get_401_and_forgeries_never_read_the_store() {
    each_backend(async |_, api| {
        let (user, token) = api.user(ROOT, UserKind::Employee).await;
        let other_key = workapi_domain::token::TokenKey::generate();
        let forged = workapi_domain::token::mint(&other_key);
        let mut flipped = token.clone().into_bytes();
        flipped[10] = if flipped[10] == b'a' { b'b' } else { b'a' };
        let flipped = String::from_utf8(flipped).unwrap();
        for (what, header) in [
            ("missing", None),
            ("empty", Some("Bearer ".to_owned())),
            ("basic scheme", Some(format!("Basic {token}"))),
            ("malformed", Some("Bearer not-a-token".to_owned())),
            ("forged", Some(format!("Bearer {forged}"))),
            ("one character changed", Some(format!("Bearer {flipped}"))),
        ] {
            let before = api.store_reads.load(Ordering::SeqCst);
            let mut request = api.http.get(api.url("/tags/task"));
            if let Some(header) = header {
                request = request.header("authorization", header);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status().as_u16(), 401, "[{}] {what}", api.backend);
            assert!(response.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
            let body: Value = response.json().await.unwrap();
            assert_error_body(api.backend, 401, &body, 401);
            assert_eq!(api.store_reads.load(Ordering::SeqCst), before, "[{}] {what} token read the store", api.backend);
        }

        // Well-formed and correctly tagged, but never issued: one credential read, then 401.
        let unknown = workapi_domain::token::mint(&api.key);
        assert_eq!(api.get("/tags/task", &unknown).await.0, 401);

        let store = api.store.as_ref();
        let new = |expires_at| NewToken { name: "t", scopes: vec!["api:read".into()], expires_at };
        let (expired, _) = identity::create_token(
            store,
            &api.key,
            api.workspace_id,
            user.id,
            new(Some(workapi_store::clock::now_epoch() - 1)),
        )
        .await
        .unwrap();
        let (status, body) = api.get("/tags/task", &expired).await;
        assert_error_body(api.backend, status, &body, 401);
        assert!(body["message"].as_str().unwrap().contains("expired"));

        let (revoked, record) =
            identity::create_token(store, &api.key, api.workspace_id, user.id, new(None)).await.unwrap();
        assert_eq!(api.get("/tags/task", &revoked).await.0, 200);
        identity::revoke_token(store, api.workspace_id, user.id, record.id).await.unwrap();
        let (status, body) = api.get("/tags/task", &revoked).await;
        assert_error_body(api.backend, status, &body, 401);
        assert!(body["message"].as_str().unwrap().contains("revoked"));
    })
    .await;
}

#[tokio::test]
async fn a_read_only_token_cannot_write() {
    each_backend(async |_, api| {
        let (_, reader) = api.user_in(api.workspace_id, ROOT, UserKind::Employee, &["api:read"]).await;
        assert_eq!(api.get("/tags/task", &reader).await.0, 200);
        let (status, body) = api.post("/tags/task/create", &reader, json!({"name": "nope"})).await;
        assert_error_body(api.backend, status, &body, 403);
        assert!(body["message"].as_str().unwrap().contains("api:write"));
        let (_, writer) = api.user_in(api.workspace_id, ROOT, UserKind::Employee, &["api:write"]).await;
        assert_eq!(api.get("/tags/task", &writer).await.0, 403, "writing does not imply reading");
    })
    .await;
}

#[tokio::test]
async fn colours_are_saved_validated_and_cleared() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let (_, tag) = api.post("/tags/organization/create", &token, json!({"name": unique("Colour")})).await;
        let path = format!("/tags/organization/{}/color?responseShape=full", tag["id"].as_str().unwrap());
        let put = async |body: Value| {
            let (status, _, body) = api.call(Method::PUT, &path, Some(&token), Some(body)).await;
            (status, body)
        };
        for color in ["default", "red", "yellow", "green", "blue", "purple", "fuchsia", "pink", "magenta"] {
            let (status, saved) = put(json!({"color": color})).await;
            assert_eq!((status, saved["color"].as_str()), (200, Some(color)), "[{}] {saved}", api.backend);
        }
        for bad in [json!({"color": "teal"}), json!({"color": "RED"}), json!({"color": 1}), json!({})] {
            let (status, body) = put(bad).await;
            assert_error_body(api.backend, status, &body, 400);
            assert!(body["errors"]["color"].is_array());
        }
        let (status, cleared) = put(json!({"color": null})).await;
        assert_eq!((status, &cleared["color"]), (200, &Value::Null), "[{}]", api.backend);
        let (_, list) = api.get("/tags/organization", &token).await;
        let listed = list.as_array().unwrap().iter().find(|t| t["id"] == tag["id"]).unwrap();
        assert_eq!(listed["color"], Value::Null);

        let missing = format!("/tags/organization/{}/color", uuid::Uuid::new_v4());
        let (status, _, body) = api.call(Method::PUT, &missing, Some(&token), Some(json!({"color": "red"}))).await;
        assert_error_body(api.backend, status, &body, 404);
        // The id exists, but under another type.
        let wrong_type = format!("/tags/task/{}/color", tag["id"].as_str().unwrap());
        let (status, _, _) = api.call(Method::PUT, &wrong_type, Some(&token), Some(json!({"color": "red"}))).await;
        assert_eq!(status, 404);
    })
    .await;
}

#[tokio::test]
async fn soft_deleted_tags_leave_lists_and_free_their_name() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let name = unique("Old");
        let (_, tag) = api.post("/tags/task/create", &token, json!({"name": name})).await;
        let path = format!("/tags/task/{}", tag["id"].as_str().unwrap());
        let (status, _, body) = api.call(Method::DELETE, &path, Some(&token), None).await;
        assert_eq!((status, body), (200, json!({"success": true})), "[{}]", api.backend);
        let (_, list) = api.get("/tags/task", &token).await;
        assert!(!list.as_array().unwrap().iter().any(|t| t["id"] == tag["id"]), "[{}]", api.backend);
        let (status, _, _) = api.call(Method::DELETE, &path, Some(&token), None).await;
        assert_eq!(status, 404, "deleting twice");
        let recolour = format!("{path}/color");
        assert_eq!(api.call(Method::PUT, &recolour, Some(&token), Some(json!({"color": "red"}))).await.0, 404);
        let (_, fresh) = api.post("/tags/task/create", &token, json!({"name": name})).await;
        assert_ne!(fresh["id"], tag["id"], "[{}] the name is free again", api.backend);
    })
    .await;
}

#[tokio::test]
async fn workspaces_never_see_each_others_tags() {
    each_backend(async |backend, api| {
        let (_, token_a) = api.user(ROOT, UserKind::Employee).await;
        let other = identity::create_workspace(backend.store.as_ref(), "Other", "en").await.unwrap();
        let (_, token_b) = api.user_in(other.id, ROOT, UserKind::Employee, &["api:read", "api:write"]).await;
        let name = unique("Private");
        let (_, tag_a) = api.post("/tags/task/create", &token_a, json!({"name": name})).await;
        let (_, list_b) = api.get("/tags/task", &token_b).await;
        assert!(list_b.as_array().unwrap().is_empty(), "[{}] {list_b}", api.backend);
        let (_, tag_b) = api.post("/tags/task/create", &token_b, json!({"name": name})).await;
        assert_ne!(tag_b["id"], tag_a["id"], "[{}] same name, own tag", api.backend);
        let steal = format!("/tags/task/{}/color", tag_a["id"].as_str().unwrap());
        let (status, _, body) = api.call(Method::PUT, &steal, Some(&token_b), Some(json!({"color": "red"}))).await;
        assert_error_body(api.backend, status, &body, 404);
        let delete = format!("/tags/task/{}", tag_a["id"].as_str().unwrap());
        assert_eq!(api.call(Method::DELETE, &delete, Some(&token_b), None).await.0, 404);
        let (_, list_a) = api.get("/tags/task", &token_a).await;
        assert_eq!(list_a.as_array().unwrap().len(), 1, "[{}] A's tag untouched", api.backend);
    })
    .await;
}
