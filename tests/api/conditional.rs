//! Conditional reads (docs/conventions.md#conditional-requests): every JSON read answers a
//! strong `ETag` of its body; `If-None-Match` naming it gets 304 with no body; and since the
//! tag is of the answer itself, a change anywhere the answer depends on (here a parent role's
//! permissions, which a child inherits) gives a new tag and a full answer.

use crate::administration_api::{create_role, id, role_body};
use api_tests::{TestApi, each_backend};
use reqwest::Method;
use serde_json::json;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::{ROOT, STAFF};

/// GET `path` with `If-None-Match: if_none_match` (if any): status, ETag, body text.
async fn read(api: &TestApi, path: &str, token: &str, if_none_match: Option<&str>) -> (u16, String, String) {
    let mut request = api.http.get(api.url(path)).bearer_auth(token);
    if let Some(tags) = if_none_match {
        request = request.header("if-none-match", tags);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let etag = response.headers().get("etag").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    (status, etag, response.text().await.unwrap())
}

#[tokio::test]
async fn an_unchanged_read_is_304_without_a_body_and_a_changed_one_has_a_new_tag() {
    each_backend(async |_, api| {
        let b = api.backend;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let parent = id(&create_role(api, &root, role_body(Some(STAFF), json!({"Projects.edit": true}))).await);
        let child = id(&create_role(api, &root, role_body(Some(&parent), json!({}))).await);
        let path = format!("/administration/roles/{child}");

        let (status, tag, body) = read(api, &path, &root, None).await;
        assert_eq!(status, 200, "[{b}] {body}");
        assert!(tag.starts_with('"') && tag.ends_with('"') && tag.len() > 10, "[{b}] a strong tag: {tag:?}");
        assert_eq!(read(api, &path, &root, None).await.1, tag, "[{b}] the same answer, the same tag");

        for (sent, expected) in [
            (tag.clone(), 304),
            (format!("W/{tag}"), 304),
            (format!("\"stale\", {tag}"), 304),
            ("*".to_owned(), 304),
            ("\"stale\"".to_owned(), 200),
        ] {
            let (status, again, body) = read(api, &path, &root, Some(&sent)).await;
            assert_eq!(status, expected, "[{b}] If-None-Match: {sent}");
            assert_eq!(again, tag, "[{b}] the 304 names the tag too");
            if status == 304 {
                assert!(body.is_empty(), "[{b}] a 304 has no body: {body}");
            }
        }

        // The child's own item is untouched; what it inherits changes.
        let (status, _, changed) = api
            .call(
                Method::PATCH,
                &format!("/administration/roles/{parent}/permissions/Projects.edit"),
                Some(&root),
                Some(json!({"allow": false})),
            )
            .await;
        assert_eq!(status, 200, "[{b}] {changed}");
        let (status, new_tag, body) = read(api, &path, &root, Some(&tag)).await;
        assert_eq!(status, 200, "[{b}] the inherited permissions changed: not 304");
        assert_ne!(new_tag, tag, "[{b}]");
        assert!(!body.is_empty());

        // Lists too, page by page.
        let (status, list_tag, _) = read(api, "/administration/roles?limit=2", &root, None).await;
        assert_eq!(status, 200);
        assert_eq!(read(api, "/administration/roles?limit=2", &root, Some(&list_tag)).await.0, 304, "[{b}]");
    })
    .await;
}

/// `If-Match` on writes: a stale tag is 412 and changes nothing; the current one writes and the
/// answer names the new tag (the one the next read answers); of writers racing with the same
/// tag exactly one wins, because the check runs on the version the write is conditioned on.
#[tokio::test]
async fn a_write_with_a_stale_if_match_is_412_and_of_racing_writers_with_one_tag_one_wins() {
    each_backend(async |_, api| {
        let b = api.backend;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let (status, skill) = api.post("/agents/skills", &root, json!({"name": "Triage", "instructions": "x"})).await;
        assert_eq!(status, 201, "[{b}] {skill}");
        let path = format!("/agents/skills/{}", skill["id"].as_str().unwrap());
        let (_, tag, before) = read(api, &path, &root, None).await;
        let patch = async |if_match: &str, name: &str| {
            api.http
                .patch(api.url(&path))
                .bearer_auth(&root)
                .header("if-match", if_match)
                .json(&json!({"name": name}))
                .send()
                .await
                .unwrap()
        };

        for stale in ["\"stale\"", &format!("W/{tag}")] {
            let refused = patch(stale, "Refused").await;
            assert_eq!(refused.status(), 412, "[{b}] If-Match: {stale}");
            let body: serde_json::Value = refused.json().await.unwrap();
            api_tests::assert_error_body(b, 412, &body, 412);
            assert_eq!(read(api, &path, &root, None).await.2, before, "[{b}] nothing written");
        }

        let written = patch(&tag, "Renamed").await;
        assert_eq!(written.status(), 200, "[{b}]");
        let new_tag = written.headers()["etag"].to_str().unwrap().to_owned();
        let (_, read_tag, _) = read(api, &path, &root, None).await;
        assert_eq!(new_tag, read_tag, "[{b}] the write's ETag is the next read's");
        assert_eq!(patch(&tag, "Again").await.status(), 412, "[{b}] the old tag is stale now");

        let names: Vec<String> = (0..6).map(|i| format!("Racer {i}")).collect();
        let racers = futures::future::join_all(names.iter().map(|name| patch(&new_tag, name))).await;
        let statuses: Vec<u16> = racers.iter().map(|r| r.status().as_u16()).collect();
        assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 1, "[{b}] one winner: {statuses:?}");
        assert!(statuses.iter().all(|s| [200, 412].contains(s)), "[{b}] {statuses:?}");

        // A role's delete too; `*` passes while it exists.
        let role = id(&create_role(api, &root, role_body(Some(STAFF), json!({}))).await);
        let role_path = format!("/administration/roles/{role}");
        let delete = async |if_match: &str| {
            api.http.delete(api.url(&role_path)).bearer_auth(&root).header("if-match", if_match).send().await.unwrap()
        };
        assert_eq!(delete("\"stale\"").await.status(), 412, "[{b}]");
        assert_eq!(read(api, &role_path, &root, None).await.0, 200, "[{b}] the role is still there");
        assert_eq!(delete("*").await.status(), 200, "[{b}]");
        assert_eq!(read(api, &role_path, &root, None).await.0, 404, "[{b}]");
    })
    .await;
}

/// `method path` with `If-Match` and a JSON body: status, ETag (or ""), body.
async fn write(
    api: &TestApi,
    method: Method,
    path: &str,
    token: &str,
    if_match: &str,
    body: Option<serde_json::Value>,
) -> (u16, String, serde_json::Value) {
    let (status, headers, body) = api.send_with(method, path, token, &[("If-Match", if_match)], body).await;
    let etag = headers.get("etag").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    (status, etag, body)
}

#[tokio::test]
async fn creates_answer_the_tag_their_first_write_sends_and_tags_and_activities_take_if_match() {
    each_backend(async |_, api| {
        let b = api.backend;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;

        // A create's ETag is the one its read answers.
        let (status, headers, skill) = api
            .send_with(Method::POST, "/agents/skills", &root, &[], Some(json!({"name": "Tagged", "instructions": "x"})))
            .await;
        assert_eq!(status, 201, "[{b}] {skill}");
        let created_tag = headers["etag"].to_str().unwrap().to_owned();
        let (_, read_tag, _) =
            read(api, &format!("/agents/skills/{}", skill["id"].as_str().unwrap()), &root, None).await;
        assert_eq!(created_tag, read_tag, "[{b}] the create's ETag is the read's");

        // Tags have no single read: the create's and the colour's answers carry the tag.
        let (status, headers, tag) =
            api.send_with(Method::POST, "/tags/task/create", &root, &[], Some(json!({"name": "Conditional"}))).await;
        assert_eq!(status, 200, "[{b}] {tag}");
        let created = headers["etag"].to_str().unwrap().to_owned();
        let colour = format!("/tags/task/{}/color", tag["id"].as_str().unwrap());
        let (status, _, refused) =
            write(api, Method::PUT, &colour, &root, "\"stale\"", Some(json!({"color": "red"}))).await;
        api_tests::assert_error_body(b, status, &refused, 412);
        let listed = api.list_all("/tags/task", &root).await;
        let stored = listed.iter().find(|t| t["id"] == tag["id"]).cloned().unwrap_or_default();
        assert_eq!(stored["color"], serde_json::Value::Null, "[{b}] nothing written");
        let (status, recoloured, _) =
            write(api, Method::PUT, &colour, &root, &created, Some(json!({"color": "red"}))).await;
        assert_eq!(status, 200, "[{b}]");
        let delete = format!("/tags/task/{}", tag["id"].as_str().unwrap());
        let (status, _, refused) = write(api, Method::DELETE, &delete, &root, &created, None).await;
        api_tests::assert_error_body(b, status, &refused, 412);
        assert_eq!(write(api, Method::DELETE, &delete, &root, &recoloured, None).await.0, 200, "[{b}]");

        // A work activity's replace.
        let activities = "/administration/task-settings/activities";
        let (status, headers, activity) =
            api.send_with(Method::POST, activities, &root, &[], Some(json!({"name": "Review"}))).await;
        assert_eq!(status, 201, "[{b}] {activity}");
        let created = headers["etag"].to_str().unwrap().to_owned();
        let path = format!("{activities}/{}", activity["id"].as_str().unwrap());
        let body = |name: &str| Some(json!({"name": name, "translations": []}));
        let (status, _, refused) = write(api, Method::PUT, &path, &root, "\"stale\"", body("Refused")).await;
        api_tests::assert_error_body(b, status, &refused, 412);
        let (status, replaced, answer) = write(api, Method::PUT, &path, &root, &created, body("Reviewed")).await;
        assert_eq!((status, answer["name"].as_str()), (200, Some("Reviewed")), "[{b}]");
        assert_ne!(replaced, created, "[{b}]");
        assert_eq!(write(api, Method::PUT, &path, &root, &created, body("Again")).await.0, 412, "[{b}] stale now");
    })
    .await;
}
