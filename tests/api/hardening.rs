//! Findings of the black-box review (issue 12) closed in the shared HTTP layer: repeated
//! identity headers, the headers of every response, and authentication before routing.

use api_tests::{TestApi, assert_error_body, each_backend};
use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::Value;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;

async fn send(api: &TestApi, method: Method, path: &str, headers: &[(&str, &str)]) -> (u16, HeaderMap, Value) {
    let mut request = api.http.request(method, api.url(path));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, headers, body)
}

#[tokio::test]
async fn repeated_identity_headers_are_400_before_anything_else() {
    each_backend(async |_, api| {
        let (alice, a) = api.user(ROOT, UserKind::Employee).await;
        let (bob, b) = api.user(ROOT, UserKind::Employee).await;
        let (bearer_a, bearer_b) = (format!("Bearer {a}"), format!("Bearer {b}"));
        let (id_a, id_b) = (alice.id.to_string(), bob.id.to_string());
        let cases: Vec<Vec<(&str, &str)>> = vec![
            vec![("Authorization", &bearer_b), ("Authorization", &bearer_a)],
            vec![("Authorization", "Bearer garbage"), ("Authorization", "Bearer garbage")],
            vec![("Authorization", &bearer_a), ("LT_IMPOSTER_USER_ID", &id_b), ("LT-Imposter-User-Id", &id_a)],
            vec![("Authorization", &bearer_a), ("lt_imposter_user_id", &id_b), ("LT_IMPOSTER_USER_ID", &id_b)],
            vec![("Authorization", &bearer_a), ("LT_CUSTOM_NOW", "2026-01-01"), ("lt-custom-now", "2026-02-01")],
            vec![("LT_CUSTOM_NOW", "2026-01-01"), ("LT_CUSTOM_NOW", "2026-01-01")],
        ];
        for headers in &cases {
            for path in ["/tags/task", "/nope", "/docs/json"] {
                let (status, _, body) = send(api, Method::GET, path, headers).await;
                assert_error_body(api.backend, status, &body, 400);
            }
        }
        // One of each is fine.
        let one = [("Authorization", bearer_a.as_str()), ("LT_IMPOSTER_USER_ID", id_b.as_str())];
        assert_eq!(send(api, Method::GET, "/tags/task", &one).await.0, 200, "[{}]", api.backend);
    })
    .await;
}

#[tokio::test]
async fn every_response_says_nosniff_and_api_responses_are_not_stored() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let bearer = format!("Bearer {token}");
        let auth = [("Authorization", bearer.as_str())];
        // (method, path, authenticated): 200, 400, 401, 400, 404, 405, 200, the document, and
        // the token endpoint's OAuth error.
        let requests = [
            (Method::GET, "/tags/task", true),
            (Method::POST, "/tags/task/create", true),
            (Method::GET, "/tags/task", false),
            (Method::GET, "/tags/nope", true),
            (Method::GET, "/nope", true),
            (Method::PATCH, "/tags/task", true),
            (Method::GET, "/administration/roles", true),
            (Method::GET, "/docs/json", false),
            (Method::POST, "/api/oauth/token", false),
        ];
        for (method, path, authenticated) in requests {
            let headers: &[(&str, &str)] = if authenticated { &auth } else { &[] };
            let (status, headers, _) = send(api, method.clone(), path, headers).await;
            let what = format!("[{}] {method} {path} ({status})", api.backend);
            assert_eq!(headers["x-content-type-options"], "nosniff", "{what}");
            assert_eq!(headers["cache-control"], "no-store", "{what}");
        }
        // Discovery documents keep their deliberate public caching.
        let (status, headers, _) = send(api, Method::GET, "/.well-known/oauth-protected-resource", &[]).await;
        assert_eq!(status, 200);
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert!(headers["cache-control"].to_str().unwrap().starts_with("public"), "{headers:?}");
    })
    .await;
}

#[tokio::test]
async fn without_credentials_unknown_paths_and_methods_are_401_like_the_rest() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let bearer = format!("Bearer {token}");
        for (method, path) in [
            (Method::GET, "/tags/task"),
            (Method::DELETE, "/tags/task"),
            (Method::GET, "/nope"),
            (Method::PATCH, "/administration/roles"),
            (Method::GET, "/administration/nothing/here"),
        ] {
            for headers in [vec![], vec![("Authorization", "Bearer lt_pat_forged")]] {
                let (status, response_headers, body) = send(api, method.clone(), path, &headers).await;
                assert_error_body(api.backend, status, &body, 401);
                let challenge = response_headers["www-authenticate"].to_str().unwrap();
                assert!(challenge.starts_with("Bearer"), "{challenge}");
                assert!(
                    response_headers.get("allow").is_none(),
                    "[{}] {method} {path}: no Allow on a 401",
                    api.backend
                );
            }
        }
        // Authenticated: the route's answer.
        let auth = [("Authorization", bearer.as_str())];
        let (status, headers, body) = send(api, Method::DELETE, "/tags/task", &auth).await;
        assert_error_body(api.backend, status, &body, 405);
        assert_eq!(headers["allow"], "GET,HEAD");
        let (status, _, body) = send(api, Method::GET, "/nope", &auth).await;
        assert_error_body(api.backend, status, &body, 404);
        // Public paths keep their own answers.
        let (status, _, body) = send(api, Method::GET, "/docs/nope", &[]).await;
        assert_error_body(api.backend, status, &body, 404);
        let (status, headers, body) = send(api, Method::DELETE, "/docs/json", &[]).await;
        assert_error_body(api.backend, status, &body, 405);
        assert!(headers.contains_key("allow"));
        let (status, _, _) = send(api, Method::GET, "/api/oauth/nope", &[]).await;
        assert_eq!(status, 404);
    })
    .await;
}
