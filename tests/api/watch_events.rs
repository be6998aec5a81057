//! `cargo lambda watch` (scripts/watch.sh) hands every HTTP request to its function as a
//! Function URL (API Gateway HTTP API, v2) event, built as cargo-lambda 1.9.2 builds it
//! (`trigger_router.rs`: `$default` stage, `127.0.0.1` source, text bodies for JSON and
//! `text/*`, base64 for the rest, cookies apart). Every event under `events/` stands for an HTTP
//! request: each goes once through its function as such a v2 event, on the state the function
//! binary builds from the environment watch.sh gives it, and once to the local server, each side
//! on a data directory of its own made by the local server's first start (demo workspace and
//! agents). The answers must agree: status, content type, cookies, error bodies exactly and the
//! shape of every other JSON body; and none may be a 5xx.

use axum::body::Body;
use axum::http::Request;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use lambda_http::lambda_runtime::{Context, LambdaEvent};
use lambda_http::request::LambdaRequest;
use lambda_http::tower::{Service, ServiceExt};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use workapi_kit::AppState;
use workapi_kit::app::TokenKeySource;
use workapi_kit::oauth::issuer::SiteUrl;

/// One request an event under `events/` stands for.
struct HttpRequest {
    method: String,
    path: String,
    query: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl HttpRequest {
    /// The request a REST API (v1) proxy event describes.
    fn of_rest_event(event: &Value) -> HttpRequest {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        for (name, values) in event["multiValueQueryStringParameters"].as_object().into_iter().flatten() {
            for value in values.as_array().unwrap() {
                query.append_pair(name, value.as_str().unwrap());
            }
        }
        let headers = event["multiValueHeaders"]
            .as_object()
            .into_iter()
            .flatten()
            .flat_map(|(name, values)| {
                values.as_array().unwrap().iter().map(|v| (name.to_ascii_lowercase(), v.as_str().unwrap().to_owned()))
            })
            .collect();
        let body = match event["body"].as_str() {
            None => Vec::new(),
            Some(text) if event["isBase64Encoded"] == true => BASE64.decode(text).unwrap(),
            Some(text) => text.as_bytes().to_vec(),
        };
        HttpRequest {
            method: event["httpMethod"].as_str().unwrap().to_owned(),
            path: event["path"].as_str().unwrap().to_owned(),
            query: query.finish(),
            headers,
            body,
        }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The Function URL event cargo lambda watch sends for this request.
    fn watch_event(&self, function: &str) -> Value {
        let text =
            self.header("content-type").is_none_or(|c| c.starts_with("text/") || c.starts_with("application/json"));
        let (body, is_base64) = if self.body.is_empty() {
            (Value::Null, false)
        } else if text {
            (json!(String::from_utf8(self.body.clone()).expect("a text body")), false)
        } else {
            (json!(BASE64.encode(&self.body)), true)
        };
        let mut headers = serde_json::Map::new();
        for (name, value) in &self.headers {
            headers.entry(name.clone()).or_insert_with(|| json!(value));
        }
        let cookies: Option<Vec<&str>> = self.header("cookie").map(|c| c.split("; ").map(str::trim).collect());
        json!({
            "version": "2.0",
            "routeKey": "$default",
            "rawPath": self.path,
            "rawQueryString": self.query,
            "headers": headers,
            "cookies": cookies,
            "queryStringParameters": url::form_urlencoded::parse(self.query.as_bytes()).into_owned().collect::<HashMap<_, _>>(),
            "pathParameters": {},
            "body": body,
            "isBase64Encoded": is_base64,
            "requestContext": {
                "stage": "$default",
                "routeKey": "$default",
                "requestId": uuid::Uuid::new_v4().to_string(),
                "domainName": "localhost",
                "domainPrefix": function,
                "http": {
                    "method": self.method,
                    "path": self.path,
                    "protocol": "http",
                    "sourceIp": "127.0.0.1",
                    "userAgent": "cargo-lambda",
                },
                "time": "26/Nov/2026:20:00:00 +0000",
                "timeEpoch": 1_795_723_200_i64,
            },
        })
    }

    fn into_http(self) -> Request<Body> {
        let uri = if self.query.is_empty() { self.path } else { format!("{}?{}", self.path, self.query) };
        let mut request = Request::builder().method(self.method.as_str()).uri(uri);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let mut request = request.body(Body::from(self.body)).unwrap();
        let peer: std::net::SocketAddr = "127.0.0.1:50000".parse().unwrap();
        request.extensions_mut().insert(axum::extract::ConnectInfo(peer));
        request
    }
}

/// What the test compares of an answer.
#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    content_type: Option<String>,
    cookies: usize,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Option<Value> {
        self.content_type.as_deref().filter(|c| c.starts_with("application/json"))?;
        serde_json::from_slice(&self.body).ok()
    }
}

/// The answer a Function URL (v2) response event stands for, as cargo lambda watch turns it
/// back into HTTP.
fn answer_of_watch_response(response: &Value) -> Answer {
    assert!(response.get("cookies").is_some(), "a Function URL (v2) response: {response}");
    let body = match response["body"].as_str() {
        None => Vec::new(),
        Some(text) if response["isBase64Encoded"] == true => BASE64.decode(text).unwrap(),
        Some(text) => text.as_bytes().to_vec(),
    };
    Answer {
        status: response["statusCode"].as_u64().unwrap() as u16,
        content_type: response["headers"]["content-type"].as_str().map(str::to_owned),
        cookies: response["cookies"].as_array().map_or(0, Vec::len),
        body,
    }
}

async fn answer_of_http(response: axum::response::Response) -> Answer {
    let headers = response.headers().clone();
    Answer {
        status: response.status().as_u16(),
        content_type: headers.get("content-type").map(|v| v.to_str().unwrap().to_owned()),
        cookies: headers.get_all("set-cookie").iter().count(),
        body: axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap().to_vec(),
    }
}

/// Types in place of values, and object keys: two bodies from two stores agree on this.
fn shape(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        Value::String(_) => json!("string"),
        Value::Number(_) => json!("number"),
        Value::Bool(_) => json!("bool"),
        Value::Null => Value::Null,
    }
}

/// A data directory after the local server's first start (`cargo run -p local -- serve`): the
/// store with the demo workspace and its agents, the token key, the session keys. Returns the
/// demo admin's token.
async fn first_start(data_dir: &Path) -> (local::cli::Backend, String) {
    let args = local::cli::StoreArgs { store: None, data_dir: Some(data_dir.to_owned()), objects: None, secrets: None };
    let backend = args.open().await.unwrap();
    let key = backend.token_key().await.unwrap();
    let demo = local::demo::ensure_demo(backend.store().as_ref(), &key).await.unwrap().expect("an empty store");
    local::demo::seed_demo_agents(backend.store().as_ref(), backend.secrets().as_ref(), demo.workspace_id)
        .await
        .unwrap();
    backend.session_keys().await.unwrap();
    (backend, demo.token)
}

/// The environment scripts/watch.sh gives the functions for a data directory.
fn watch_environment(data_dir: &Path) -> HashMap<String, String> {
    let file = |name: &str| std::fs::read_to_string(data_dir.join(name)).unwrap();
    HashMap::from([
        ("LT_STORE".into(), format!("sqlite:{}", data_dir.join("local.db").display())),
        ("LT_TOKEN_KEY".into(), file("token.key")),
        ("LT_SESSION_KEYS".into(), file("session-keys.json")),
        ("LT_OBJECTS".into(), format!("dir:{}", data_dir.display())),
        ("LT_SECRETS".into(), format!("dir:{}", data_dir.join("secrets").display())),
    ])
}

fn temp_dir(what: &str) -> PathBuf {
    std::env::temp_dir().join(format!("workapi-{what}-{}", uuid::Uuid::new_v4().simple()))
}

fn fill(event: &str, token: &str) -> Value {
    serde_json::from_str(&event.replace("${TOKEN}", token)).unwrap()
}

#[tokio::test]
async fn every_function_answers_watch_events_as_the_local_server_does() {
    // The local server, as `serve` builds it (the site URL from the Host, as a function binary
    // without LT_SITE_URL has it, so the OAuth documents compare too).
    let local_dir = temp_dir("local-server");
    let (backend, local_token) = first_start(&local_dir).await;
    let local_state = AppState::builder(backend.store(), TokenKeySource::Static(backend.token_key().await.unwrap()))
        .session_keys(backend.session_keys().await.unwrap())
        .objects(backend.objects())
        .secrets(backend.secrets())
        .site_url(SiteUrl::from_host())
        .build();
    let local_app = local::app(local_state);

    // The functions under watch: the state each binary builds from watch.sh's environment.
    let watch_dir = temp_dir("watch");
    let (watch_backend, watch_token) = first_start(&watch_dir).await;
    drop(watch_backend);
    let environment = watch_environment(&watch_dir);
    let watch_state =
        AppState::from_vars(&|name| environment.get(name).cloned()).await.expect("watch.sh's environment");

    let functions: Vec<_> = local::functions().collect();
    let template = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../template.yaml")).unwrap();
    // All but the events' dispatcher, which serves no HTTP (docs/events.md#delivery).
    let dispatcher = usize::from(template.contains("\n  DispatchFunction:\n"));
    assert_eq!(
        functions.len(),
        template.matches("Type: AWS::Serverless::Function\n").count() - dispatcher,
        "every deployed function serving HTTP"
    );
    let mut seen = Vec::new();
    for function in functions {
        let events = crate::lambda_events::load_events(function.name);
        assert!(!events.is_empty(), "{}: no events", function.name);
        for (name, event) in &events {
            let what = format!("{}/{name}", function.name);
            let watch_request = HttpRequest::of_rest_event(&fill(event, &watch_token));
            let v2: LambdaRequest = serde_json::from_value(watch_request.watch_event(function.name)).unwrap();
            assert!(matches!(v2, LambdaRequest::ApiGatewayV2(_)), "{what}: parsed as a Function URL event");
            let mut adapter = lambda_http::Adapter::from(function.router(watch_state.clone()));
            let response = adapter.ready().await.unwrap().call(LambdaEvent::new(v2, Context::default())).await;
            let watched = answer_of_watch_response(&serde_json::to_value(response.unwrap()).unwrap());

            let local_request = HttpRequest::of_rest_event(&fill(event, &local_token)).into_http();
            let served = answer_of_http(local_app.clone().oneshot(local_request).await.unwrap()).await;

            assert!(watched.status < 500, "{what}: {} {}", watched.status, String::from_utf8_lossy(&watched.body));
            assert_eq!(
                (watched.status, &watched.content_type, watched.cookies),
                (served.status, &served.content_type, served.cookies),
                "{what}: watch answered {}, the local server {}",
                String::from_utf8_lossy(&watched.body),
                String::from_utf8_lossy(&served.body)
            );
            match (watched.json(), served.json()) {
                (Some(w), Some(s)) if watched.status >= 400 => assert_eq!(w, s, "{what}"),
                (Some(w), Some(s)) => assert_eq!(shape(&w), shape(&s), "{what}: {w} against {s}"),
                (w, s) => assert_eq!(w.is_some(), s.is_some(), "{what}"),
            }
            seen.push((what, watched.status));
        }
    }
    // What the review found failing under watch: an upload (object store) and a managed-provider
    // save (secret store) succeed.
    let status = |what: &str| seen.iter().find(|(w, _)| w == what).map(|(_, s)| *s);
    assert_eq!(status("workspace/upload"), Some(201));
    assert_eq!(status("agents/save-managed-provider"), Some(201));
    for dir in [local_dir, watch_dir] {
        std::fs::remove_dir_all(dir).ok();
    }
}
