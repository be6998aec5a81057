//! Every API Gateway event under `events/<function>/` goes through lambda_http's own adapter
//! (event JSON → request → router → API Gateway response JSON), exactly as on Lambda.
//!
//! Events carry `${TOKEN}` and `${TAG_ID}` placeholders (for `cargo lambda invoke`, replace
//! them by hand or with `envsubst`); this test fills them with a real token and tag.

use base64::Engine;
use lambda_http::lambda_runtime::{Context, LambdaEvent};
use lambda_http::request::LambdaRequest;
use lambda_http::tower::{Service, ServiceExt};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use workapi_domain::identity::{self, NewToken, NewUser, UserKind};
use workapi_domain::token::TokenKey;
use workapi_kit::AppState;
use workapi_kit::app::TokenKeySource;
use workapi_kit::oauth::issuer::SiteUrl;
use workapi_kit::ratelimit::{LoginLimits, RateLimits};
use workapi_store::sqlite::SqliteStore;

fn events_dir(function: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../events").join(function)
}

pub(crate) fn load_events(function: &str) -> BTreeMap<String, String> {
    std::fs::read_dir(events_dir(function))
        .expect("events directory")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| (path.file_stem().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&path).unwrap()))
        .collect()
}

/// Runs one event through the adapter `lambda_http::run` uses and returns the API Gateway
/// proxy response as JSON.
async fn invoke(router: axum::Router, event: &str) -> Value {
    let request: LambdaRequest = serde_json::from_str(event).expect("event is an API Gateway proxy event");
    let mut adapter = lambda_http::Adapter::from(router);
    let response = adapter.ready().await.unwrap().call(LambdaEvent::new(request, Context::default())).await.unwrap();
    serde_json::to_value(response).unwrap()
}

/// A fresh embedded store holding the demo workspace, as the local server's first start makes it.
async fn demo_state() -> (AppState, local::demo::Demo) {
    let store = Arc::new(SqliteStore::in_memory().unwrap());
    let key = TokenKey::generate();
    let demo = local::demo::ensure_demo(store.as_ref(), &key).await.unwrap().expect("an empty store");
    (state(store, key), demo)
}

/// A function's state with the spec's limits given explicitly, not read from the environment
/// (`LT_RATE_LIMIT_*`, `LT_LOGIN_LIMIT_*`), so what the tests assert cannot change with the shell
/// they run in.
fn state(store: Arc<SqliteStore>, key: TokenKey) -> AppState {
    state_at(store, key, SiteUrl::from_host())
}

fn state_at(store: Arc<SqliteStore>, key: TokenKey, site_url: SiteUrl) -> AppState {
    AppState::builder(store, TokenKeySource::Static(key))
        .rate_limits(RateLimits::default())
        .login_limits(LoginLimits::default())
        .site_url(site_url)
        .build()
}

/// As template.yaml sets it on every function: REST API events carry the stage in their path,
/// our routes do not. lambda_http reads the variable on every event, so it must be in the test
/// process's environment from the start (the repository's `.cargo/config.toml` sets it): setting
/// it here would race with the other tests' threads.
fn stage_ignored_as_deployed() {
    assert!(
        std::env::var_os("AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH").is_some(),
        "AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH is not set: run cargo from the repository (its .cargo/config.toml \
         sets it), or export AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH=true"
    );
}

fn body(response: &Value) -> Value {
    serde_json::from_str(response["body"].as_str().expect("a text body")).expect("a JSON body")
}

#[test]
fn tags_events_run_through_the_lambda_adapter() {
    stage_ignored_as_deployed();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = Arc::new(SqliteStore::in_memory().unwrap());
        let key = TokenKey::generate();
        let ws = identity::create_workspace(store.as_ref(), "Lambda", "en").await.unwrap();
        let new_user =
            NewUser { email: "l@x.example", name: "L", role_id: "_root", kind: UserKind::Employee, language: "en" };
        let user = identity::create_user(store.as_ref(), ws.id, new_user).await.unwrap();
        let scopes = vec!["api:read".into(), "api:write".into()];
        let (token, _) = identity::create_token(
            store.as_ref(),
            &key,
            ws.id,
            user.id,
            NewToken { name: "l", scopes, expires_at: None },
        )
        .await
        .unwrap();
        let router = tags::FUNCTION.router(state(store, key));

        let events = load_events("tags");
        assert_eq!(events.keys().collect::<Vec<_>>(), ["color", "create", "delete", "list"], "one event per route");
        let fill = |name: &str, tag_id: &str| events[name].replace("${TOKEN}", &token).replace("${TAG_ID}", tag_id);

        let created = invoke(router.clone(), &fill("create", "")).await;
        assert_eq!(created["statusCode"], 200, "{created}");
        assert_eq!(created["multiValueHeaders"]["content-type"], json!(["application/json"]), "{created}");
        let tag = body(&created);
        assert_eq!(tag["name"], "Created through Lambda");
        assert_eq!(tag["isDeleted"], false, "responseShape=full from the query string: {tag}");
        let tag_id = tag["id"].as_str().unwrap().to_owned();
        // JSON answers go out as text, which API Gateway passes through whatever the request's
        // Accept (template.yaml's binary media type `*/*` decodes only base64-encoded answers).
        assert_eq!(created["isBase64Encoded"], false, "{created}");

        // As deployed (binary media type `*/*`, docs/files.md), API Gateway hands every request
        // body over base64-encoded: a JSON create reads the same.
        let mut encoded: Value = serde_json::from_str(&fill("create", "")).unwrap();
        let json_body = encoded["body"].as_str().unwrap().replace("Created through Lambda", "Sent as binary");
        encoded["body"] = json!(base64::engine::general_purpose::STANDARD.encode(json_body));
        encoded["isBase64Encoded"] = json!(true);
        let created_from_binary = invoke(router.clone(), &encoded.to_string()).await;
        assert_eq!(created_from_binary["statusCode"], 200, "{created_from_binary}");
        assert_eq!(body(&created_from_binary)["name"], "Sent as binary");
        let binary_id = body(&created_from_binary)["id"].as_str().unwrap().to_owned();
        let deleted_binary = invoke(router.clone(), &fill("delete", &binary_id)).await;
        assert_eq!(deleted_binary["statusCode"], 200, "{deleted_binary}");

        let listed = invoke(router.clone(), &fill("list", "")).await;
        assert_eq!(listed["statusCode"], 200, "{listed}");
        assert_eq!(body(&listed).as_array().unwrap().len(), 1);

        let coloured = invoke(router.clone(), &fill("color", &tag_id)).await;
        assert_eq!(coloured["statusCode"], 200, "{coloured}");
        assert_eq!(body(&coloured), json!({"id": tag_id, "name": "Created through Lambda"}));

        let deleted = invoke(router.clone(), &fill("delete", &tag_id)).await;
        assert_eq!((deleted["statusCode"].clone(), body(&deleted)), (json!(200), json!({"success": true})));

        // The unfilled event (placeholder token) is refused with the error body, not a crash.
        let unauthorised = invoke(router.clone(), &events["list"]).await;
        assert_eq!(unauthorised["statusCode"], 401);
        assert_eq!(body(&unauthorised)["statusCode"], 401);

        // The docs function: public, JSON and YAML, the reference page and its assets.
        let docs_router =
            docs::FUNCTION.router(state(Arc::new(SqliteStore::in_memory().unwrap()), TokenKey::generate()));
        let docs_events = load_events("docs");
        assert_eq!(
            docs_events.keys().collect::<Vec<_>>(),
            ["asset", "docs", "index", "json", "reference-page", "yaml"],
            "one event per route, and the page"
        );
        for name in ["index", "docs"] {
            let index = invoke(docs_router.clone(), &docs_events[name]).await;
            assert_eq!(index["statusCode"], 200, "{name}: {index}");
            assert_eq!(body(&index)["version"], "1.0", "{name}: {index}");
        }
        let json_doc = invoke(docs_router.clone(), &docs_events["json"]).await;
        assert_eq!(json_doc["statusCode"], 200, "{json_doc}");
        assert_eq!(body(&json_doc), serde_json::to_value(registry::document()).unwrap());
        // A browser's navigation gets the page, whose assets are under the site URL; an asset
        // comes gzip-compressed as it is stored, base64-encoded in the answer (a binary body).
        let page = invoke(docs_router.clone(), &docs_events["reference-page"]).await;
        assert_eq!(page["statusCode"], 200, "{page}");
        assert_eq!(page["multiValueHeaders"]["content-type"], json!(["text/html; charset=utf-8"]));
        let html = page["body"].as_str().unwrap();
        let css = &docs::reference::ASSETS[1];
        let css_url = format!("https://abc123.execute-api.eu-central-1.amazonaws.com/docs/assets/{}", css.name);
        assert!(html.contains(&css_url), "{html}");
        let asset = invoke(docs_router.clone(), &docs_events["asset"]).await;
        assert_eq!(asset["statusCode"], 200, "{asset}");
        assert!(
            docs_events["asset"].contains(&format!("\"/docs/assets/{}\"", css.name)),
            "the event asks for the current asset"
        );
        assert_eq!(asset["multiValueHeaders"]["content-encoding"], json!(["gzip"]));
        assert_eq!(asset["multiValueHeaders"]["cache-control"], json!(["public, max-age=31536000, immutable"]));
        assert_eq!(asset["isBase64Encoded"], true);
        let bytes = base64::engine::general_purpose::STANDARD.decode(asset["body"].as_str().unwrap()).unwrap();
        assert_eq!(bytes, css.bytes);
        let yaml_doc = invoke(docs_router, &docs_events["yaml"]).await;
        assert_eq!(yaml_doc["statusCode"], 200);
        assert_eq!(yaml_doc["multiValueHeaders"]["content-type"], json!(["application/yaml"]));
        assert!(yaml_doc["body"].as_str().unwrap().contains("openapi: 3.1.0"));
    });
}

#[test]
fn oauth_events_run_through_the_lambda_adapter() {
    stage_ignored_as_deployed();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        // The event carries the demo admin's documented credentials, so `cargo lambda invoke`
        // works against the local server's store as it is.
        let (state, _) = demo_state().await;
        let router = oauth::FUNCTION.router(state);

        let events = load_events("oauth");
        assert_eq!(
            events.keys().collect::<Vec<_>>(),
            [
                "authorization-server-metadata",
                "authorization-server-metadata-origin",
                "authorization-server-metadata-rfc8414",
                "authorize",
                "authorize-decision",
                "login",
                "protected-resource-metadata",
                "protected-resource-metadata-api",
                "protected-resource-metadata-mcp",
                "register",
                "register-delete",
                "register-read",
                "register-update",
                "revoke",
                "token",
            ],
            "one event per route"
        );
        let response = invoke(router.clone(), &events["login"]).await;
        assert_eq!(response["statusCode"], 200, "{response}");
        let session = body(&response);
        assert_eq!(session["tokenType"], "Bearer");
        assert!(session["accessToken"].as_str().unwrap().starts_with("eyJ"), "{session}");
        // The login limits count the API Gateway source IP of the event.
        assert_eq!(response["multiValueHeaders"]["x-ratelimit-limit"], json!(["10"]), "{response}");

        let wrong = events["login"].replace("workapi-demo-password", "not-the-password");
        let refused = invoke(router, &wrong).await;
        assert_eq!(refused["statusCode"], 401);
        assert_eq!(body(&refused), json!({"statusCode": 401, "message": "Invalid e-mail or password"}));
    });
}

/// Registration (RFC 7591/7592) and discovery events: register, read, update and delete the
/// client with the registration access token the first event returned, then the metadata
/// documents: their issuer follows the event's Host when no site URL is configured, and the
/// configured one (`LT_SITE_URL` as deployed) whatever the Host says.
#[test]
fn oauth_registration_events_run_through_the_lambda_adapter() {
    stage_ignored_as_deployed();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = Arc::new(SqliteStore::in_memory().unwrap());
        let router = oauth::FUNCTION.router(state(store, TokenKey::generate()));
        let events = load_events("oauth");

        let created = invoke(router.clone(), &events["register"]).await;
        assert_eq!(created["statusCode"], 201, "{created}");
        let client = body(&created);
        assert!(client["client_secret"].is_string(), "{client}");
        let fill = |name: &str| {
            events[name]
                .replace("${CLIENT_ID}", client["client_id"].as_str().unwrap())
                .replace("${REGISTRATION_TOKEN}", client["registration_access_token"].as_str().unwrap())
        };
        let read = invoke(router.clone(), &fill("register-read")).await;
        assert_eq!(read["statusCode"], 200, "{read}");
        assert_eq!(body(&read)["client_id"], client["client_id"]);
        let updated = invoke(router.clone(), &fill("register-update")).await;
        assert_eq!(updated["statusCode"], 200, "{updated}");
        assert_eq!(body(&updated)["client_uri"], "https://app.example");
        let deleted = invoke(router.clone(), &fill("register-delete")).await;
        assert_eq!(deleted["statusCode"], 204, "{deleted}");
        let gone = invoke(router.clone(), &fill("register-read")).await;
        assert_eq!(gone["statusCode"], 401, "{gone}");

        let issuer = "https://abc123.execute-api.eu-central-1.amazonaws.com/api";
        let spec = body(&invoke(router.clone(), &events["authorization-server-metadata"]).await);
        let rfc = body(&invoke(router.clone(), &events["authorization-server-metadata-rfc8414"]).await);
        let origin = body(&invoke(router.clone(), &events["authorization-server-metadata-origin"]).await);
        assert_eq!(spec, rfc);
        assert_eq!(spec, origin, "the origin's well-known path serves the same document");
        assert_eq!(spec["issuer"], issuer);
        for name in
            ["protected-resource-metadata", "protected-resource-metadata-api", "protected-resource-metadata-mcp"]
        {
            let resource = body(&invoke(router.clone(), &events[name]).await);
            assert_eq!(resource["authorization_servers"], json!([issuer]), "{name}");
        }
        let mcp = body(&invoke(router.clone(), &events["protected-resource-metadata-mcp"]).await);
        assert_eq!(mcp["resource"], "https://abc123.execute-api.eu-central-1.amazonaws.com/mcp");

        let configured = SiteUrl::configured("https://work.example.com").unwrap();
        let store = Arc::new(SqliteStore::in_memory().unwrap());
        let router = oauth::FUNCTION.router(state_at(store, TokenKey::generate(), configured));
        let spec = body(&invoke(router.clone(), &events["authorization-server-metadata"]).await);
        assert_eq!(spec["issuer"], "https://work.example.com/api", "the configured site URL, not the Host");
        let resource = body(&invoke(router, &events["protected-resource-metadata"]).await);
        assert_eq!(resource["resource"], "https://work.example.com");
    });
}

/// The MCP function's events (docs/mcp.md): the 2025-11-25 `initialize`, and the 2026-07-28
/// `tools/list` (of the default surface, and of the read-only tags toolset through the
/// gateway's `/mcp/{proxy+}`) and `tools/call` with their headers, as the demo admin.
#[test]
fn mcp_events_run_through_the_lambda_adapter() {
    stage_ignored_as_deployed();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let (state, demo) = demo_state().await;
        let router = mcp::FUNCTION.router(state);
        let events = load_events("mcp");
        assert_eq!(events.keys().collect::<Vec<_>>(), ["initialize", "tools-call", "tools-list", "tools-list-toolset"]);
        let fill = |name: &str| events[name].replace("${TOKEN}", &demo.token);
        let run = async |name: &str| invoke(router.clone(), &fill(name)).await;
        let initialized = run("initialize").await;
        assert_eq!(initialized["statusCode"], 200, "{initialized}");
        assert_eq!(body(&initialized)["result"]["protocolVersion"], "2025-11-25");
        let listed = run("tools-list").await;
        assert_eq!(listed["statusCode"], 200, "{listed}");
        let names = |answer: &Value| -> Vec<String> {
            let tools = body(answer)["result"]["tools"].as_array().unwrap().clone();
            tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
        };
        assert_eq!(names(&listed).len(), 2 + mcp::surface::DEFAULT_OPERATIONS.len(), "{listed}");
        let toolset = run("tools-list-toolset").await;
        assert_eq!(toolset["statusCode"], 200, "{toolset}");
        assert_eq!(names(&toolset), ["searchOperations", "callOperation", "listTags"], "{toolset}");
        let called = body(&run("tools-call").await);
        assert_eq!(called["result"]["isError"], false, "{called}");
        assert!(called["result"]["structuredContent"]["result"].is_array(), "{called}");
    });
}

/// The authorization-code flow as events: the consent page, the demo admin's approval, the
/// code for tokens (Basic client authentication), and revocation. The client comes from the
/// `register` event; the PKCE pair is RFC 7636's example.
#[test]
fn oauth_authorization_events_run_through_the_lambda_adapter() {
    use base64::Engine;
    stage_ignored_as_deployed();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let (state, _) = demo_state().await;
        let router = oauth::FUNCTION.router(state);
        let events = load_events("oauth");
        let client = body(&invoke(router.clone(), &events["register"]).await);
        let client_id = client["client_id"].as_str().unwrap();
        let credentials = base64::engine::general_purpose::STANDARD
            .encode(format!("{client_id}:{}", client["client_secret"].as_str().unwrap()));
        let fill =
            |name: &str| events[name].replace("${CLIENT_ID}", client_id).replace("${CLIENT_CREDENTIALS}", &credentials);

        let page = invoke(router.clone(), &fill("authorize")).await;
        assert_eq!(page["statusCode"], 200, "{page}");
        assert!(page["body"].as_str().unwrap().contains("Lambda event client"), "{page}");
        let approved = invoke(router.clone(), &fill("authorize-decision")).await;
        assert_eq!(approved["statusCode"], 302, "{approved}");
        let location = approved["multiValueHeaders"]["location"][0].as_str().unwrap().to_owned();
        let location = url::Url::parse(&location).unwrap();
        assert!(location.as_str().starts_with("https://app.example/callback?code="), "{location}");
        let code = location.query_pairs().find(|(k, _)| k == "code").unwrap().1.into_owned();

        let issued = invoke(router.clone(), &fill("token").replace("${CODE}", &code)).await;
        assert_eq!(issued["statusCode"], 200, "{issued}");
        let tokens = body(&issued);
        assert_eq!(tokens["token_type"], "Bearer");
        let refresh = tokens["refresh_token"].as_str().unwrap();
        let revoked = invoke(router.clone(), &fill("revoke").replace("${REFRESH_TOKEN}", refresh)).await;
        assert_eq!(revoked["statusCode"], 200, "{revoked}");
    });
}

#[test]
fn administration_events_run_through_the_lambda_adapter() {
    stage_ignored_as_deployed();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let (state, demo) = demo_state().await;
        let router = administration::FUNCTION.router(state);
        let events = load_events("administration");
        assert_eq!(
            events.keys().collect::<Vec<_>>(),
            [
                "create-activity",
                "create-catalog-product",
                "create-role",
                "delete-role",
                "get-catalog-product",
                "get-role",
                "list-activities",
                "list-catalog-categories",
                "list-catalog-products",
                "list-roles",
                "replace-activity",
                "replace-permissions",
                "replace-role",
                "set-permission",
                "update-role",
            ],
            "one event per route"
        );
        let run = async |name: &str, ids: &[(&str, &str)]| {
            let mut event = events[name].replace("${TOKEN}", &demo.token);
            for (placeholder, value) in ids {
                event = event.replace(placeholder, value);
            }
            let response = invoke(router.clone(), &event).await;
            let status = response["statusCode"].as_u64().unwrap();
            (status, body(&response))
        };

        let (status, role) = run("create-role", &[]).await;
        assert_eq!(status, 201, "{role}");
        assert_eq!(role["parentId"], "_staff", "responseShape=full from the query string: {role}");
        let role_id = role["id"].as_str().unwrap().to_owned();
        let ids = [("${ROLE_ID}", role_id.as_str())];
        for (name, expected) in
            [("get-role", 200), ("list-roles", 200), ("replace-role", 200), ("replace-permissions", 200)]
        {
            let (status, body) = run(name, &ids).await;
            assert_eq!(status, expected, "{name}: {body}");
        }
        let (_, updated) = run("update-role", &ids).await;
        assert_eq!(updated, json!({"id": role_id, "description": "Review and approve project work"}));
        let (_, toggled) = run("set-permission", &ids).await;
        assert_eq!(toggled["effectivePermissions"]["Invoices.manage"], true, "{toggled}");
        assert_eq!(run("delete-role", &ids).await, (200, json!({"success": true})));

        let (status, activity) = run("create-activity", &[]).await;
        assert_eq!(status, 201, "{activity}");
        let activity_id = activity["id"].as_str().unwrap().to_owned();
        let (status, replaced) = run("replace-activity", &[("${ACTIVITY_ID}", &activity_id)]).await;
        assert_eq!(status, 200, "{replaced}");
        assert_eq!(replaced["translations"][1], json!({"language": "fr", "name": "Développement"}));
        let (status, list) = run("list-activities", &[]).await;
        assert_eq!(status, 200);
        assert!(list.as_array().unwrap().iter().any(|a| a["id"] == activity_id.as_str()));

        // The catalog events name the demo seed's categories and products.
        let (status, product) = run("create-catalog-product", &[]).await;
        assert_eq!(status, 200, "{product}");
        let (status, categories) = run("list-catalog-categories", &[]).await;
        assert_eq!((status, categories.as_array().unwrap().len()), (200, 2), "{categories}");
        let (status, hosting) = run("list-catalog-products", &[]).await;
        assert_eq!(status, 200, "{hosting}");
        assert!(hosting.as_array().unwrap().iter().any(|p| p["id"] == product["id"]), "{hosting}");
        let (status, seeded) = run("get-catalog-product", &[]).await;
        assert_eq!((status, seeded["name"].as_str()), (200, Some("Managed hosting")), "{seeded}");
    });
}

#[test]
fn projects_and_contacts_events_run_through_the_lambda_adapter() {
    stage_ignored_as_deployed();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let (state, demo) = demo_state().await;
        for (function, expected) in [
            (
                &projects::FUNCTION,
                &[
                    ("create-manual-position", 200),
                    ("get-project", 200),
                    ("import-project-product", 201),
                    ("list-manual-position-categories", 200),
                    ("list-manual-positions", 200),
                    ("list-project-products", 200),
                    ("list-project-tasks", 200),
                    ("list-projects", 200),
                ][..],
            ),
            (&contacts::FUNCTION, &[("list-contacts", 200)][..]),
        ] {
            let router = function.router(state.clone());
            let events = load_events(function.name);
            let names: Vec<&str> = expected.iter().map(|(name, _)| *name).collect();
            assert_eq!(events.keys().map(String::as_str).collect::<Vec<_>>(), names, "one event per route");
            for (name, status) in expected {
                let response = invoke(router.clone(), &events[*name].replace("${TOKEN}", &demo.token)).await;
                assert_eq!(response["statusCode"], *status, "{name}: {response}");
            }
        }
    });
}

/// The tasks events act on the demo seed's first task: a quotation is created by shortNumber,
/// read, accepted and withdrawn.
#[test]
fn tasks_events_run_through_the_lambda_adapter() {
    stage_ignored_as_deployed();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let (state, demo) = demo_state().await;
        let router = tasks::FUNCTION.router(state);
        let events = load_events("tasks");
        let run = async |name: &str, quotation: &str| {
            let event = events[name].replace("${TOKEN}", &demo.token).replace("${QUOTATION_ID}", quotation);
            let response = invoke(router.clone(), &event).await;
            (response["statusCode"].as_u64().unwrap(), body(&response))
        };
        let (status, task) = run("get-task", "").await;
        assert_eq!((status, task["shortNumber"].as_i64()), (200, Some(1)), "{task}");
        let (status, created) = run("create-express-quotation", "").await;
        assert_eq!(status, 201, "{created}");
        let id = created["id"].as_str().unwrap().to_owned();
        let (status, read) = run("get-express-quotation", &id).await;
        assert_eq!((status, read["total"].clone()), (200, json!(2305.63)), "{read}");
        let (status, listed) = run("list-express-quotations", "").await;
        assert_eq!((status, listed.as_array().map(Vec::len)), (200, Some(1)));
        let (status, accepted) = run("accept-express-quotation", &id).await;
        assert_eq!((status, accepted["status"].as_str()), (200, Some("Accepted")), "{accepted}");
        let (status, rejected) = run("reject-express-quotation", &id).await;
        assert_eq!((status, rejected["status"].as_str()), (200, Some("Rejected")), "{rejected}");
        let names: Vec<&str> = events.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "accept-express-quotation",
                "create-express-quotation",
                "get-express-quotation",
                "get-task",
                "list-express-quotations",
                "reject-express-quotation"
            ],
            "one event per route"
        );
    });
}

/// The upload event carries a multipart body base64-encoded (`isBase64Encoded`), as API Gateway
/// delivers every body under the binary media type `*/*` (template.yaml); the file-content
/// event fetches the upload at its signed local URL and gets the bytes back base64-encoded; the
/// delete-file event deletes it.
#[test]
fn workspace_events_run_through_the_lambda_adapter() {
    stage_ignored_as_deployed();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = Arc::new(SqliteStore::in_memory().unwrap());
        let key = TokenKey::generate();
        let demo = local::demo::ensure_demo(store.as_ref(), &key).await.unwrap().expect("an empty store");
        let state = AppState::builder(store, TokenKeySource::Static(key))
            .rate_limits(RateLimits::default())
            .login_limits(LoginLimits::default())
            .objects(api_tests::temp_objects())
            .build();
        let router = workspace::FUNCTION.router(state);
        let events = load_events("workspace");
        assert_eq!(events.keys().collect::<Vec<_>>(), ["delete-file", "file-content", "upload"], "one event per route");

        let uploaded = invoke(router.clone(), &events["upload"].replace("${TOKEN}", &demo.token)).await;
        assert_eq!(uploaded["statusCode"], 201, "{uploaded}");
        let file = body(&uploaded);
        assert_eq!(
            (file["contentType"].clone(), file["width"].clone(), file["height"].clone()),
            (json!("image/png"), json!(3), json!(2))
        );

        let url = url::Url::parse(file["url"].as_str().unwrap()).unwrap();
        let query: BTreeMap<String, String> = url.query_pairs().into_owned().collect();
        let filled = events["file-content"]
            .replace("${FILE_ID}", file["id"].as_str().unwrap())
            .replace("${WORKSPACE_ID}", &query["workspace"])
            .replace("${EXPIRES}", &query["expires"])
            .replace("${SIGNATURE}", &query["signature"]);
        let served = invoke(router.clone(), &filled).await;
        assert_eq!(served["statusCode"], 200, "{served}");
        assert_eq!(served["isBase64Encoded"], true, "{served}");
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD.decode(served["body"].as_str().unwrap()).unwrap();
        assert_eq!(bytes, workspace::image::samples::bytes(workspace::image::samples::PNG));

        // The delete: the file is gone, its URL 404, and a second delete 404.
        let delete =
            events["delete-file"].replace("${TOKEN}", &demo.token).replace("${FILE_ID}", file["id"].as_str().unwrap());
        let deleted = invoke(router.clone(), &delete).await;
        assert_eq!(
            (deleted["statusCode"].clone(), body(&deleted)),
            (json!(200), json!({"success": true})),
            "{deleted}"
        );
        assert_eq!(invoke(router.clone(), &filled).await["statusCode"], 404);
        assert_eq!(invoke(router.clone(), &delete).await["statusCode"], 404);

        // Unfilled placeholders: 401 for the upload and the delete, 400 for the content's
        // malformed path.
        assert_eq!(invoke(router.clone(), &events["upload"]).await["statusCode"], 401);
        assert_eq!(invoke(router.clone(), &events["delete-file"]).await["statusCode"], 401);
        assert_eq!(invoke(router, &events["file-content"]).await["statusCode"], 400);
    });
}

/// Issue 37: on Lambda, the answer names the request by API Gateway's id
/// (`requestContext.requestId`, the access log's), whatever the answer (here a 401: the event's
/// token placeholder is no credential), and never by the client's own `X-Request-Id`.
#[tokio::test]
async fn the_answer_names_api_gateways_request_id_not_the_clients() {
    stage_ignored_as_deployed();
    let (state, _demo) = demo_state().await;
    let events = load_events("tags");
    let (name, text) = events.iter().next().expect("a tags event");
    let mut event: Value = serde_json::from_str(text).unwrap();
    let gateway_id = uuid::Uuid::new_v4().to_string();
    event["requestContext"]["requestId"] = json!(gateway_id);
    event["headers"]["X-Request-Id"] = json!("chosen-by-the-client");
    event["multiValueHeaders"]["X-Request-Id"] = json!(["chosen-by-the-client"]);
    let response = invoke(tags::FUNCTION.router(state), &event.to_string()).await;
    assert_eq!(response["statusCode"], 401, "{name}: {response}");
    let header = response["headers"]["x-request-id"]
        .as_str()
        .or_else(|| response["multiValueHeaders"]["x-request-id"][0].as_str());
    assert_eq!(header, Some(gateway_id.as_str()), "{name}: {response}");
}
