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
