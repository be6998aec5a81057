//! CORS (docs/conventions.md#cors): the public OAuth endpoints and discovery documents allow
//! any origin, the API routes the configured origins only; preflights need no credential and
//! are not rate-limited; the consent page has no CORS.

use api_tests::{TestApi, backends};
use reqwest::Method;
use reqwest::header::HeaderMap;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;
use workapi_kit::cors::AllowedOrigins;

const APP: &str = "https://app.example.com";
const EVIL: &str = "https://evil.example";

async fn preflight(api: &TestApi, path: &str, origin: &str, method: &str, headers: &str) -> (u16, HeaderMap) {
    let mut request = api
        .http
        .request(Method::OPTIONS, api.url(path))
        .header("Origin", origin)
        .header("Access-Control-Request-Method", method);
    if !headers.is_empty() {
        request = request.header("Access-Control-Request-Headers", headers);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.headers().clone())
}

fn allowed_headers(headers: &HeaderMap) -> Vec<String> {
    let value = headers.get("access-control-allow-headers").map(|v| v.to_str().unwrap()).unwrap_or_default();
    value.split(',').map(|h| h.trim().to_ascii_lowercase()).collect()
}

#[tokio::test]
async fn public_oauth_endpoints_allow_any_origin_without_credentials() {
    let backend = backends().await.into_iter().next().unwrap();
    // No origin configured: the public endpoints are open all the same.
    let api = TestApi::start(&backend).await;
    for (path, method) in [
        ("/.well-known/oauth-protected-resource", "GET"),
        ("/.well-known/oauth-authorization-server/api", "GET"),
        ("/api/.well-known/oauth-authorization-server", "GET"),
        ("/api/oauth/register", "POST"),
        ("/api/oauth/token", "POST"),
        ("/api/oauth/revoke", "POST"),
    ] {
        let (status, headers) = preflight(&api, path, EVIL, method, "content-type, authorization").await;
        assert_eq!(status, 204, "{path}");
        assert_eq!(headers["access-control-allow-origin"], "*", "{path}");
        assert!(headers.get("access-control-allow-credentials").is_none(), "{path}");
        assert!(headers["access-control-allow-methods"].to_str().unwrap().contains(method), "{path}");
        assert!(allowed_headers(&headers).contains(&"authorization".to_owned()), "{path}");
    }
    let response = api.http.get(api.url("/.well-known/oauth-protected-resource")).header("Origin", EVIL).send().await;
    let response = response.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["access-control-allow-origin"], "*");
    // The consent page is a navigation, never a cross-origin read.
    let (status, headers) = preflight(&api, "/api/oauth/authorize", EVIL, "POST", "").await;
    assert_eq!(status, 204);
    assert!(headers.get("access-control-allow-origin").is_none());
    // The API routes allow no origin by default.
    let (status, headers) = preflight(&api, "/tags/task", APP, "GET", "authorization").await;
    assert_eq!(status, 204, "a preflight is answered, not 405");
    assert!(headers.get("access-control-allow-origin").is_none());
    let (_, token) = api.user(ROOT, UserKind::Employee).await;
    let response = api.http.get(api.url("/tags/task")).bearer_auth(&token).header("Origin", APP).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn api_routes_allow_the_configured_origins_and_preflights_cost_nothing() {
    for backend in backends().await {
        let api = TestApi::builder(&backend)
            .cors_origins(AllowedOrigins::parse(&format!("{APP}, http://localhost:5173")).unwrap())
            .start()
            .await;
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        // Preflights, without a credential: answered, and never charged to a rate limit (a
        // charge is a store write).
        let writes = api.store_writes.load(std::sync::atomic::Ordering::SeqCst);
        for _ in 0..6 {
            let requested =
                "authorization, content-type, idempotency-key, lt-response-shape, lt_imposter_user_id, lt-custom-now";
            let (status, headers) = preflight(&api, "/tags/task/create", APP, "POST", requested).await;
            assert_eq!(status, 204, "[{}]", backend.name);
            assert_eq!(headers["access-control-allow-origin"], APP);
            assert!(headers.get("x-ratelimit-remaining").is_none(), "[{}] not counted", backend.name);
            let allowed = allowed_headers(&headers);
            for name in requested.split(", ") {
                assert!(allowed.contains(&name.to_owned()), "[{}] {name} in {allowed:?}", backend.name);
            }
            assert!(headers["vary"].to_str().unwrap().contains("Origin"));
        }
        assert_eq!(api.store_writes.load(std::sync::atomic::Ordering::SeqCst), writes, "[{}]", backend.name);
        let (_, headers) = preflight(&api, "/administration/roles", EVIL, "POST", "authorization").await;
        assert!(headers.get("access-control-allow-origin").is_none(), "[{}] an origin not configured", backend.name);
        // The real request: the origin echoed, the rate-limit headers readable.
        let response =
            api.http.get(api.url("/tags/task")).bearer_auth(&token).header("Origin", APP).send().await.unwrap();
        assert_eq!(response.status(), 200, "[{}]", backend.name);
        let headers = response.headers();
        assert_eq!(headers["access-control-allow-origin"], APP);
        assert!(headers.get("access-control-allow-credentials").is_none());
        let exposed = headers["access-control-expose-headers"].to_str().unwrap().to_ascii_lowercase();
        for name in ["x-ratelimit-limit", "x-ratelimit-remaining", "retry-after"] {
            assert!(exposed.contains(name), "[{}] {name} exposed: {exposed}", backend.name);
        }
        assert!(headers["vary"].to_str().unwrap().contains("Origin"));
        // Errors carry the headers too (a browser client must read a 401's challenge).
        let response = api.http.get(api.url("/tags/task")).header("Origin", "http://localhost:5173").send().await;
        let response = response.unwrap();
        assert_eq!(response.status(), 401);
        assert_eq!(response.headers()["access-control-allow-origin"], "http://localhost:5173");
        let response = api.http.get(api.url("/tags/task")).bearer_auth(&token).header("Origin", EVIL).send().await;
        assert!(response.unwrap().headers().get("access-control-allow-origin").is_none());
    }
}
