//! The local server as an operator sees it with `LT_LOG_FORMAT=json` (docs/operations.md): the
//! binary itself, on a fresh data directory, its stdout read whole. Every answer carries
//! `X-Request-Id`; every log line a request writes names it; every request writes one metric
//! document, valid against the Embedded Metric Format's schema (tools/emf.schema.json); no
//! credential reaches the logs.

use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};

/// The server, killed when dropped (also when an assertion fails).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `workapi serve` on a free port with JSON logs and a small per-token limit; returns the
/// server, its base URL and the demo admin token it printed.
fn start(data_dir: &std::path::Path) -> (Server, String, String, std::thread::JoinHandle<String>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_workapi"));
    command.arg("serve").stdout(Stdio::piped()).stderr(Stdio::piped()).stdin(Stdio::null());
    for name in ["LT_STORE", "LT_TOKEN_KEY", "LT_TOKEN_KEY_SECRET_ID", "LT_SESSION_KEYS", "LT_SESSION_KEYS_SECRET_ID"] {
        command.env_remove(name);
    }
    command
        .env("LT_LOG_FORMAT", "json")
        .env("LT_DATA_DIR", data_dir)
        .env("LT_OBJECTS", format!("dir:{}", data_dir.display()))
        .env("LT_SECRETS", format!("dir:{}", data_dir.join("secrets").display()))
        .env("LT_ADDR", "127.0.0.1:0")
        // Debug: a line per store call, which must name its request too.
        .env("RUST_LOG", "debug,hyper=info,h2=info,aws=info,rustls=info")
        .env("LT_RATE_LIMIT_TOKEN", "5")
        .env("LT_RATE_LIMIT_WINDOW_SECS", "3600");
    let mut child = Server(command.spawn().expect("the workapi binary starts"));
    let stdout = child.0.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(stdout).read_to_string(&mut text);
        text
    });
    let mut stderr = BufReader::new(child.0.stderr.take().unwrap());
    let (mut token, mut url, mut next_is_token) = (None, None, false);
    let mut line = String::new();
    while url.is_none() {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the server ended before listening");
        let trimmed = line.trim();
        if next_is_token && !trimmed.is_empty() {
            token = Some(trimmed.to_owned());
            next_is_token = false;
        }
        next_is_token |= trimmed.starts_with("Admin token");
        if let Some(rest) = trimmed.strip_prefix("workapi listening on ") {
            url = rest.split_whitespace().next().map(str::to_owned);
        }
    }
    // Keep draining stderr, so the server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, url.unwrap(), token.expect("a fresh data directory gets the demo token"), reader)
}

struct Answer {
    status: u16,
    request_id: String,
    body: String,
}

async fn send(request: reqwest::RequestBuilder) -> Answer {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let request_id = response
        .headers()
        .get("x-request-id")
        .unwrap_or_else(|| panic!("a {status} answer without X-Request-Id"))
        .to_str()
        .unwrap()
        .to_owned();
    Answer { status, request_id, body: response.text().await.unwrap() }
}

/// The members a document's directives reference are at its root: dimensions as strings,
/// metrics as numbers (what the schema cannot say).
fn references_resolve(document: &Value) -> Result<(), String> {
    for directive in document["_aws"]["CloudWatchMetrics"].as_array().into_iter().flatten() {
        for set in directive["Dimensions"].as_array().into_iter().flatten() {
            for key in set.as_array().into_iter().flatten().filter_map(Value::as_str) {
                document[key].as_str().ok_or(format!("dimension {key} is not a string member"))?;
            }
        }
        for metric in directive["Metrics"].as_array().into_iter().flatten() {
            let name = metric["Name"].as_str().unwrap_or_default();
            document[name].as_f64().ok_or(format!("metric {name} is not a number member"))?;
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_names_its_request_and_its_lines_and_metrics_name_it_too() {
    let data_dir = std::env::temp_dir().join(format!("workapi-observability-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data_dir);
    let (server, url, token, stdout) = start(&data_dir);
    let client = reqwest::Client::new();
    let client_id = "client-chosen-id-0001";

    let mut answers = vec![
        send(client.get(format!("{url}/"))).await,
        send(client.get(format!("{url}/account/notifications")).header("X-Request-Id", client_id)).await,
        send(client.get(format!("{url}/no-such-route")).bearer_auth(&token)).await,
        send(
            client
                .request(reqwest::Method::OPTIONS, format!("{url}/account/notifications"))
                .header("Origin", "https://app.example")
                .header("Access-Control-Request-Method", "GET"),
        )
        .await,
        send(
            client
                .post(format!("{url}/administration/roles"))
                .bearer_auth(&token)
                .header("Content-Type", "application/json")
                .body("{not json"),
        )
        .await,
        send(client.post(format!("{url}/api/auth/login")).json(&serde_json::json!({
            "email": local::demo::DEMO_EMAIL, "password": local::demo::DEMO_PASSWORD,
        })))
        .await,
    ];
    let session = answers.last().unwrap().body.clone();
    // The token's limit is 5 a window: the sixth call at the latest is a 429.
    for _ in 0..7 {
        answers.push(send(client.get(format!("{url}/account/notifications")).bearer_auth(&token)).await);
    }
    drop(server);
    let stdout = stdout.join().unwrap();
    let _ = std::fs::remove_dir_all(&data_dir);

    let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    for status in [200, 401, 404, 400, 429] {
        assert!(statuses.contains(&status), "a {status} among {statuses:?}");
    }
    let ids: HashSet<&str> = answers.iter().map(|a| a.request_id.as_str()).collect();
    assert_eq!(ids.len(), answers.len(), "one id per request");
    for id in &ids {
        assert!(uuid::Uuid::parse_str(id).is_ok(), "{id} is a UUID the server made");
    }
    assert!(!ids.contains(client_id), "a client's X-Request-Id is never taken as ours");

    let schema: Value = serde_json::from_str(include_str!("../../../tools/emf.schema.json")).unwrap();
    let validator = jsonschema::draft7::new(&schema).unwrap();
    let mut documents: HashMap<String, Vec<Value>> = HashMap::new();
    let mut lines_of: HashMap<String, Vec<Value>> = HashMap::new();
    for line in stdout.lines() {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
        if value.get("_aws").is_some() {
            let errors: Vec<String> = validator.iter_errors(&value).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{line}: {errors:?}");
            references_resolve(&value).unwrap_or_else(|e| panic!("{line}: {e}"));
            documents.entry(value["requestId"].as_str().unwrap().to_owned()).or_default().push(value);
        } else if let Some(id) = value.get("requestId").and_then(Value::as_str) {
            lines_of.entry(id.to_owned()).or_default().push(value);
        }
    }
    for answer in &answers {
        let docs = documents.get(&answer.request_id).map(Vec::as_slice).unwrap_or_default();
        assert_eq!(docs.len(), 1, "one metric document for the {} answer {}", answer.status, answer.request_id);
        let doc = &docs[0];
        assert_eq!(doc["statusCode"], answer.status);
        assert_eq!(doc["Requests"], 1);
        assert_eq!(doc["Throttled"], u8::from(answer.status == 429));
        assert_eq!(doc["ClientErrors"], u8::from((400..500).contains(&answer.status)));
        assert_eq!(doc["ServerErrors"], 0);
    }
    let operation = |answer: &Answer| documents[&answer.request_id][0]["operationId"].as_str().unwrap().to_owned();
    assert_eq!(operation(&answers[0]), "apiIndex");
    assert_eq!(documents[&answers[0].request_id][0]["function"], "docs");
    assert_eq!(operation(&answers[1]), "listNotifications");
    assert_eq!(operation(&answers[2]), "unrouted");
    let cold: u64 = documents.values().flatten().map(|d| d["ColdStart"].as_u64().unwrap()).sum();
    assert_eq!(cold, 1, "one cold start: the first request's");
    assert_eq!(documents[&answers[0].request_id][0]["ColdStart"], 1);
    // No line names a request that was not made; the store calls' lines name theirs, and the
    // line of a request sent with its own X-Request-Id keeps that as clientRequestId.
    assert!(lines_of.keys().all(|id| ids.contains(id.as_str())), "{:?}", lines_of.keys());
    let store_lines = lines_of.values().flatten().filter(|l| l["message"] == "store call").count();
    assert!(store_lines > 0, "the store calls' lines name their request:\n{stdout}");
    let with_client_id = &lines_of[&answers[1].request_id];
    assert!(with_client_id.iter().all(|l| l["clientRequestId"] == client_id), "{with_client_id:?}");

    // No credential reaches the logs: the admin token, the password, the session token.
    let session: Value = serde_json::from_str(&session).unwrap();
    assert!(session["accessToken"].as_str().is_some_and(|t| t.len() > 20), "the login answered a session: {session}");
    let access_token = session["accessToken"].as_str().unwrap();
    for secret in [token.as_str(), local::demo::DEMO_PASSWORD, access_token] {
        assert!(!stdout.contains(secret), "a credential in the logs: {secret}");
    }
}
