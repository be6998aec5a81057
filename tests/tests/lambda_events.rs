//! Every API Gateway event under `events/<function>/` goes through lambda_http's own adapter
//! (event JSON → request → router → API Gateway response JSON), exactly as on Lambda.
//!
//! Events carry `${TOKEN}` and `${TAG_ID}` placeholders (for `cargo lambda invoke`, replace
//! them by hand or with `envsubst`); this test fills them with a real token and tag.

use lambda_http::lambda_runtime::{Context, LambdaEvent};
use lambda_http::request::LambdaRequest;
use lambda_http::tower::{Service, ServiceExt};
use serde_json::{Value, json};
use shared::AppState;
use shared::app::TokenKeySource;
use shared::auth::pat::TokenKey;
use shared::identity::{self, NewToken, NewUser, UserKind};
use shared::store::sqlite::SqliteStore;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

fn events_dir(function: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../events").join(function)
}

fn load_events(function: &str) -> BTreeMap<String, String> {
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

fn body(response: &Value) -> Value {
    serde_json::from_str(response["body"].as_str().expect("a text body")).expect("a JSON body")
}

#[test]
fn tags_events_run_through_the_lambda_adapter() {
    // As template.yaml sets it: REST API events carry the stage, our routes do not.
    // SAFETY: set before any thread of this test process reads the environment here.
    unsafe { std::env::set_var("AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH", "true") };
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
        let router = tags::router(AppState::new(store, TokenKeySource::Static(key)));

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

        // The docs function: public, JSON and YAML.
        let docs_router = docs::router(AppState::new(
            Arc::new(SqliteStore::in_memory().unwrap()),
            TokenKeySource::Static(TokenKey::generate()),
        ));
        let docs_events = load_events("docs");
        assert_eq!(docs_events.keys().collect::<Vec<_>>(), ["json", "yaml"], "one event per route");
        let json_doc = invoke(docs_router.clone(), &docs_events["json"]).await;
        assert_eq!(json_doc["statusCode"], 200, "{json_doc}");
        assert_eq!(&body(&json_doc), docs::document());
        let yaml_doc = invoke(docs_router, &docs_events["yaml"]).await;
        assert_eq!(yaml_doc["statusCode"], 200);
        assert_eq!(yaml_doc["multiValueHeaders"]["content-type"], json!(["application/yaml"]));
        assert!(yaml_doc["body"].as_str().unwrap().contains("openapi: 3.1.0"));
    });
}

#[test]
fn oauth_events_run_through_the_lambda_adapter() {
    // SAFETY: set before any thread of this test process reads the environment here.
    unsafe { std::env::set_var("AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH", "true") };
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        // The event carries the demo admin's documented credentials, so `cargo lambda invoke`
        // works against the local server's store as it is.
        let store = Arc::new(SqliteStore::in_memory().unwrap());
        let key = TokenKey::generate();
        local::demo::ensure_demo(store.as_ref(), &key).await.unwrap().expect("an empty store");
        let router = oauth::router(AppState::new(store, TokenKeySource::Static(key)));

        let events = load_events("oauth");
        assert_eq!(events.keys().collect::<Vec<_>>(), ["login"], "one event per route");
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

#[test]
fn administration_events_run_through_the_lambda_adapter() {
    // SAFETY: set before any thread of this test process reads the environment here.
    unsafe { std::env::set_var("AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH", "true") };
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = Arc::new(SqliteStore::in_memory().unwrap());
        let key = TokenKey::generate();
        let demo = local::demo::ensure_demo(store.as_ref(), &key).await.unwrap().expect("an empty store");
        let router = administration::router(AppState::new(store, TokenKeySource::Static(key)));
        let events = load_events("administration");
        assert_eq!(
            events.keys().collect::<Vec<_>>(),
            [
                "create-activity",
                "create-role",
                "delete-role",
                "get-role",
                "list-activities",
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
    });
}
