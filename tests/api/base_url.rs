//! The base URL and `/docs` (docs/conventions.md#the-base-url): public, they name the API and
//! its version and link the document, so that whoever opens them learns where to go next.

use api_tests::{TestApi, backends};
use reqwest::Method;

#[tokio::test]
async fn the_base_url_and_docs_answer_publicly_with_the_api_and_its_document() {
    let backend = backends().await.remove(0);
    let api = TestApi::start(&backend).await;
    for path in ["/", "/docs"] {
        let (status, headers, body) = api.call(Method::GET, path, None, None).await;
        assert_eq!(status, 200, "GET {path} without a token: {body}");
        assert!(headers["content-type"].to_str().unwrap().starts_with("application/json"), "{headers:?}");
        assert_eq!(body["name"], "workapi", "{body}");
        assert_eq!(body["version"], "1.0", "{body}");
        assert_eq!(body["documentation"]["json"], api.url("/docs/json"), "{body}");
        assert_eq!(body["documentation"]["yaml"], api.url("/docs/yaml"), "{body}");
        assert_eq!(body["authorizationServer"], api.url("/api/.well-known/oauth-authorization-server"));

        // The links work, without a token.
        let (status, _, document) = api.call(Method::GET, "/docs/json", None, None).await;
        assert_eq!((status, &document["info"]["version"]), (200, &body["version"]));
        let (status, _, _) = api.call(Method::GET, "/api/.well-known/oauth-authorization-server", None, None).await;
        assert_eq!(status, 200);

        // A credential, valid or not, changes nothing; other methods are 405 (public paths).
        let (status, _, same) = api.call(Method::GET, path, Some("not-a-token"), None).await;
        assert_eq!((status, &same), (200, &body), "{path}");
        let (status, _, error) = api.call(Method::POST, path, None, None).await;
        assert_eq!(status, 405, "POST {path}: {error}");
    }
    // Paths beside them stay protected or unknown.
    let (status, _, _) = api.call(Method::GET, "/docsx", None, None).await;
    assert_eq!(status, 401);
}
