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

/// `/docs` in a browser is the reference page (docs/conventions.md#the-reference-page): HTML
/// with a policy that allows this origin only, every asset under a versioned URL of the site,
/// gzip-compressed and immutable, and, for readers without JavaScript, every operation listed.
#[tokio::test]
async fn docs_in_a_browser_is_the_reference_page_with_its_assets_from_this_origin() {
    let backend = backends().await.remove(0);
    let api = TestApi::start(&backend).await;
    let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
    let page = api.http.get(api.url("/docs")).header("accept", browser).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let headers = page.headers().clone();
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(headers["vary"], "Accept");
    assert_eq!(headers["content-security-policy"], docs::reference::CSP);
    assert!(
        docs::reference::CSP.contains("script-src 'self';") && docs::reference::CSP.contains("connect-src 'self';")
    );
    let html = page.text().await.unwrap();

    // Without JavaScript: one list entry per documented operation.
    let document: serde_json::Value = serde_json::from_str(docs::DOCUMENT_JSON).unwrap();
    let operations: usize =
        document["paths"].as_object().unwrap().values().map(|item| item.as_object().unwrap().len()).sum();
    assert_eq!(html.matches("<li><code>").count(), operations, "{html}");
    assert!(html.contains("<li><code>GET /docs/assets/{asset}</code> A file of the reference page</li>"), "{html}");

    // Every script and style sheet is one of this origin's assets, under its versioned name.
    let linked: Vec<&str> = html.split("=\"").skip(1).filter_map(|rest| rest.split('"').next()).collect();
    let sources: Vec<&&str> = linked.iter().filter(|url| url.ends_with(".js") || url.ends_with(".css")).collect();
    assert_eq!(sources.len(), 3, "{html}");
    for url in sources {
        let name =
            url.strip_prefix(&format!("{}/", api.url("/docs/assets"))).unwrap_or_else(|| panic!("{url} is not ours"));
        let asset = docs::reference::ASSETS.iter().find(|asset| asset.name == name).expect("a known asset");
        let response = api.http.get(*url).header("accept-encoding", "gzip, deflate, br").send().await.unwrap();
        assert_eq!(response.status(), 200, "{url}");
        assert_eq!(response.headers()["cache-control"], "public, max-age=31536000, immutable", "{url}");
        assert_eq!(response.headers()["content-type"], asset.content_type, "{url}");
        assert_eq!(response.headers().get("content-encoding").is_some(), asset.gzipped, "{url}");
        assert_eq!(response.bytes().await.unwrap(), asset.bytes, "{url}");
    }

    // Programs keep the JSON index; a client that refuses gzip is told why; unknown names are 404.
    let index = api.http.get(api.url("/docs")).header("accept", "application/json").send().await.unwrap();
    assert_eq!((index.status().as_u16(), index.headers()["vary"].to_str().unwrap()), (200, "Accept"));
    let bundle = &docs::reference::ASSETS[0];
    let refused = api
        .http
        .get(api.url(&format!("/docs/assets/{}", bundle.name)))
        .header("accept-encoding", "identity")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 406);
    let error: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(error["statusCode"], 406, "{error}");
    let (status, _, error) = api.call(Method::GET, "/docs/assets/swagger-ui-bundle-0.0.1.js", None, None).await;
    assert_eq!((status, &error["statusCode"]), (404, &serde_json::json!(404)), "{error}");
}
