//! The agents function (docs/agents.md): managed-provider settings whose credentials live in
//! the secret store and never come back, project overrides and skills, on both store
//! backends; the secret store itself on the file backend and on Secrets Manager (moto).

use api_tests::{Backend, TestApi, assert_error_body, backends, each_backend, moto};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use uuid::Uuid;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::{ROOT, STAFF};
use workapi_kit::secrets::{SecretName, SecretStore, SecretValue, SecretsManagerSecrets};
use workapi_store::Query;

const VENDOR_KEY: &str = "sk-vendor-RAWKEY-0123456789-abcdefgh-Q9xz";
const BEARER: &str = "mcp-bearer-RAWTOKEN-5f3a1c";
const ACCESS: &str = "oauth-access-RAWTOKEN-77d1";
const REFRESH: &str = "oauth-refresh-RAWTOKEN-19ab";
const CLIENT_SECRET: &str = "oauth-client-RAWSECRET-ee02";
const RAW_VALUES: [&str; 5] = [VENDOR_KEY, BEARER, ACCESS, REFRESH, CLIENT_SECRET];
const SAVED_KEY: &str = "saved-provider-key-RAW-000111222333";

pub(crate) struct World {
    pub(crate) agent: Uuid,
    pub(crate) other_agent: Uuid,
    pub(crate) saved_key: Uuid,
    pub(crate) skill: Uuid,
    pub(crate) project: Uuid,
}

/// Agents, a saved key, a skill and a project, through the seed loader (as the local server
/// and the operator do).
pub(crate) async fn seeded(api: &TestApi, member: Uuid) -> World {
    let w = World {
        agent: Uuid::new_v4(),
        other_agent: Uuid::new_v4(),
        saved_key: Uuid::new_v4(),
        skill: Uuid::new_v4(),
        project: Uuid::new_v4(),
    };
    let seed = json!({
        "version": 1,
        "agents": [{"id": w.agent, "name": "Support triage"}, {"id": w.other_agent, "name": "Release assistant"}],
        "providerApiKeys": [{"id": w.saved_key, "label": "Team key", "key": SAVED_KEY}],
        "skills": [{"id": w.skill, "name": "Release notes", "instructions": "Group by **area**."}],
        "projects": [{"id": w.project, "name": "Agents project", "members": [member], "hourRate": 100,
            "currency": "EUR", "taxRate": 19}]
    });
    let file = local::seed::parse(&seed.to_string()).unwrap();
    let report = local::seed::load_with_secrets(api.store.as_ref(), api.secrets.as_ref(), api.workspace_id, &file)
        .await
        .unwrap();
    assert!(report.written() >= 5, "{report}");
    w
}

pub(crate) fn full_body(w: &World) -> Value {
    json!({
        "enabled": true,
        "vendorApiKey": VENDOR_KEY,
        "config": {
            "agentSource": "serviceManaged",
            "allowNetworkAccess": true,
            "customGuidance": "Reply in the customer's language.",
            "exposeRawApiCredentialToAgent": false,
            "toolMode": "full",
            "userVaultIds": ["vault_1"],
            "githubRepositoryDefaults": [{"id": 1296269, "name": "hello-world", "fullName": "octo-org/hello-world",
                "private": true, "url": "https://github.com/octo-org/hello-world", "cloneUrl": null}],
            "managedAgent": {
                "modelId": "claude-sonnet-4-5",
                "instructions": {"type": "doc", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "Triage"}]}]},
                "mcpServers": [
                    {"url": "https://mcp.example.com/mcp", "authMode": "bearer", "bearerToken": BEARER},
                    {"id": "github", "url": "https://oauth.example.com/mcp", "authMode": "oauth", "oauthCredential": {
                        "accessToken": ACCESS, "refreshToken": REFRESH, "clientId": "client-1",
                        "clientSecret": CLIENT_SECRET, "expiresAt": "2026-12-01T00:00:00Z", "scope": "repo",
                        "tokenEndpoint": "https://oauth.example.com/token", "tokenEndpointAuthType": "client_secret_post"}}
                ],
                "skills": [{"skillId": w.skill, "type": "custom", "version": null}, {"skillId": "pdf", "type": "vendor"}]
            }
        }
    })
}

fn assert_no_raw(text: &str, what: &str) {
    for raw in RAW_VALUES.iter().chain([&SAVED_KEY]) {
        assert!(!text.contains(raw), "{what} contains a raw credential ({raw}): {text}");
    }
}

/// Every item of the agents' partition, as JSON text.
async fn stored_text(api: &TestApi) -> String {
    let pk = format!("WS#{}#AGENTS", api.workspace_id);
    let items = workapi_store::query_all(api.store.as_ref(), Query::table(pk)).await.unwrap();
    serde_json::to_string(&items).unwrap()
}

/// Every secret name the stored settings of `agent` refer to.
async fn secret_names(api: &TestApi, agent: Uuid) -> Vec<SecretName> {
    let key = agents::managed::model::settings_key(workapi_store::keys::WsKeys::new(api.workspace_id), agent);
    let item = api.store.get(&key).await.unwrap().expect("stored settings");
    let record: agents::managed::model::ManagedProviderRecord = workapi_kit::entity::from_item(item).unwrap();
    record.secret_names()
}

async fn save_and_read_cycle(api: &TestApi, w: &World, token: &str) {
    let path = format!("/agents/{}/managed-provider?responseShape=full", w.agent);
    let (status, saved) = api.post(&path, token, full_body(w)).await;
    assert_eq!(status, 201, "[{}] {saved}", api.backend);
    assert_eq!(saved["credentialConfigured"], true);
    assert_eq!(saved["vendorApiKeyLastFour"], "Q9xz");
    let servers = &saved["config"]["managedAgent"]["mcpServers"];
    assert_eq!(servers[0]["name"], "mcp.example.com");
    assert_eq!(servers[0]["credentialConfigured"], true);
    assert_eq!(servers[1]["oauthCredential"]["accessTokenConfigured"], true);
    assert_eq!(servers[1]["oauthCredential"]["clientSecretConfigured"], true);
    assert_eq!(servers[1]["oauthCredential"]["clientId"], "client-1");
    assert!(servers[1]["oauthCredential"].get("accessToken").is_none());
    assert_eq!(saved["config"]["managedAgent"]["instructions"], "<p>Triage</p>");
    assert_no_raw(&saved.to_string(), "the save response");
    let (status, read) = api.get(&format!("/agents/{}/managed-provider", w.agent), token).await;
    assert_eq!(status, 200);
    assert_eq!(read, saved, "the read equals the save's full response");
    assert_no_raw(&read.to_string(), "the read");
}

#[tokio::test]
async fn managed_provider_settings_keep_every_credential_in_the_secret_store() {
    each_backend(async |backend: &Backend, api: &TestApi| {
        let (admin, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, admin.id).await;
        save_and_read_cycle(api, &w, &token).await;

        // The table holds names only; the secret store holds the values.
        let table = stored_text(api).await;
        assert_no_raw(&table, "the table");
        let names = secret_names(api, w.agent).await;
        assert_eq!(names.len(), 5, "[{}] vendor key, bearer, access, refresh, client secret", backend.name);
        let mut values = Vec::new();
        for name in &names {
            values.push(api.secrets.get(name).await.unwrap().expect("the secret exists").expose().to_owned());
        }
        values.sort();
        let mut expected: Vec<String> = RAW_VALUES.iter().map(|s| s.to_string()).collect();
        expected.sort();
        assert_eq!(values, expected);

        // Saving again without any credential keeps every stored one, and creates none.
        let mut body = full_body(&w);
        body.as_object_mut().unwrap().remove("vendorApiKey");
        let agent = &mut body["config"]["managedAgent"];
        agent["mcpServers"][0].as_object_mut().unwrap().remove("bearerToken");
        for field in ["accessToken", "refreshToken", "clientSecret"] {
            agent["mcpServers"][1]["oauthCredential"].as_object_mut().unwrap().remove(field);
        }
        let path = format!("/agents/{}/managed-provider?responseShape=full", w.agent);
        let (status, again) = api.post(&path, &token, body.clone()).await;
        assert_eq!(status, 201, "{again}");
        assert_eq!(again["version"], 2);
        assert_eq!(again["vendorApiKeyConfigured"], true);
        assert_eq!(again["config"]["managedAgent"]["mcpServers"][1]["oauthCredential"]["refreshTokenConfigured"], true);
        assert_eq!(secret_names(api, w.agent).await, names, "the same secrets");

        // Null clears: the secret is deleted from the store; a saved key replaces a raw one.
        body["vendorApiKey"] = Value::Null;
        body["providerApiKeyId"] = json!(w.saved_key);
        body["config"]["managedAgent"]["mcpServers"][0]["bearerToken"] = Value::Null;
        body["config"]["managedAgent"]["mcpServers"][0]["authMode"] = json!("none");
        let (status, cleared) = api.post(&path, &token, body).await;
        assert_eq!(status, 201, "{cleared}");
        assert_eq!(cleared["vendorApiKeyConfigured"], false);
        assert_eq!(cleared["vendorApiKeyLastFour"], Value::Null);
        assert_eq!(cleared["providerApiKeyId"], json!(w.saved_key));
        assert_eq!(cleared["credentialConfigured"], true);
        let left = secret_names(api, w.agent).await;
        assert_eq!(left.len(), 3);
        for gone in names.iter().filter(|n| !left.contains(n)) {
            assert!(api.secrets.get(gone).await.unwrap().is_none(), "a cleared secret is deleted");
        }

        // The compact default, and the agent list.
        let (_, compact) =
            api.post(&format!("/agents/{}/managed-provider", w.other_agent), &token, full_body(&w)).await;
        let mut fields: Vec<&str> = compact.as_object().unwrap().keys().map(String::as_str).collect();
        fields.sort();
        assert_eq!(fields, ["agentId", "credentialConfigured", "enabled", "version"]);
        let (status, agents) = api.get("/agents", &token).await;
        assert_eq!(status, 200);
        assert_eq!(agents.as_array().unwrap().len(), 2);
        assert_eq!(agents[0]["name"], "Release assistant");
        assert_eq!(agents[0]["managedProviderConfigured"], true);
        let (status, keys) = api.get("/agents/provider-api-keys", &token).await;
        assert_eq!(
            (status, keys[0]["label"].clone(), keys[0]["lastFour"].clone()),
            (200, json!("Team key"), json!("2333"))
        );
        assert_no_raw(&keys.to_string(), "the key list");
    })
    .await;
}

#[tokio::test]
async fn bad_settings_are_refused_field_by_field() {
    each_backend(async |_backend: &Backend, api: &TestApi| {
        let (admin, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, admin.id).await;
        let path = format!("/agents/{}/managed-provider", w.agent);
        let refused = async |body: Value, field: &str| {
            let (status, error) = api.post(&path, &token, body).await;
            assert_error_body(api.backend, status, &error, 400);
            assert!(error["errors"][field].is_array(), "{field}: {error}");
            assert_no_raw(&error.to_string(), "an error");
        };
        let mut many = full_body(&w);
        many["config"]["managedAgent"]["skills"] =
            json!((0..21).map(|i| json!({"skillId": format!("s{i}"), "type": "vendor"})).collect::<Vec<_>>());
        refused(many, "config.managedAgent.skills").await;
        let mut existing = full_body(&w);
        existing["config"]["agentSource"] = json!("existing");
        existing["config"]["agentId"] = json!("agent_1");
        existing["config"]["environmentId"] = json!("env_1");
        refused(existing, "config.managedAgent.skills").await;
        let mut unknown_skill = full_body(&w);
        unknown_skill["config"]["managedAgent"]["skills"] = json!([{"skillId": Uuid::new_v4(), "type": "custom"}]);
        refused(unknown_skill, "config.managedAgent.skills[0].skillId").await;
        let mut key = full_body(&w);
        key["providerApiKeyId"] = json!(Uuid::new_v4());
        key.as_object_mut().unwrap().remove("vendorApiKey");
        refused(key, "providerApiKeyId").await;
        let mut http = full_body(&w);
        http["config"]["managedAgent"]["mcpServers"][0]["url"] = json!("http://mcp.example.com/");
        refused(http, "config.managedAgent.mcpServers[0].url").await;
        let mut short = full_body(&w);
        short["vendorApiKey"] = json!("short");
        refused(short, "vendorApiKey").await;
        let mut repo = full_body(&w);
        repo["config"]["githubRepositoryDefaults"][0]["fullName"] = json!("no-slash");
        refused(repo, "config.githubRepositoryDefaults[0].fullName").await;

        // Nothing was saved by any of those, and no secret was left behind.
        let (status, _) = api.get(&path, &token).await;
        assert_eq!(status, 404);
        // Unknown agent, another workspace's agent: 404. A staff member: 403.
        let (status, _) =
            api.post(&format!("/agents/{}/managed-provider", Uuid::new_v4()), &token, full_body(&w)).await;
        assert_eq!(status, 404);
        let other = workapi_domain::identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let (_, stranger) = api.user_in(other.id, ROOT, UserKind::Employee, &["api:read", "api:write"]).await;
        let (status, _) = api.post(&path, &stranger, full_body(&w)).await;
        assert_eq!(status, 404);
        let (_, staff) = api.user(STAFF, UserKind::Employee).await;
        let (status, _) = api.post(&path, &staff, full_body(&w)).await;
        assert_eq!(status, 403);
    })
    .await;
}

#[tokio::test]
async fn skills_are_created_read_and_patched_without_losing_updates() {
    each_backend(async |_backend: &Backend, api: &TestApi| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let (status, created) = api
            .post(
                "/agents/skills?responseShape=full",
                &token,
                json!({"name": "Triage", "instructions": "Be **brief**"}),
            )
            .await;
        assert_eq!(status, 201, "{created}");
        assert_eq!((created["version"].clone(), created["enabled"].clone()), (json!(1), json!(true)));
        assert_eq!(created["instructions"], "<p>Be <strong>brief</strong></p>");
        let id = created["id"].as_str().unwrap().to_owned();
        let path = format!("/agents/skills/{id}");

        // Twelve concurrent patches, each of its own field value: every one lands.
        let patches = (0..12).map(|i| {
            let body =
                if i % 2 == 0 { json!({"description": format!("d{i}")}) } else { json!({"enabled": i % 4 == 1}) };
            let (api, path, token) = (&api, &path, &token);
            async move { api.call(reqwest::Method::PATCH, path, Some(token), Some(body)).await.0 }
        });
        let statuses = futures::future::join_all(patches).await;
        assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
        let (_, skill) = api.get(&path, &token).await;
        assert_eq!(skill["version"], 13, "one version per patch: none lost");
        assert_eq!(skill["name"], "Triage", "fields not sent are kept");

        // A stale pinned version: 409, nothing changed. The current one: applied.
        let (status, _, body) =
            api.call(reqwest::Method::PATCH, &path, Some(&token), Some(json!({"name": "Renamed", "version": 2}))).await;
        assert_error_body(api.backend, status, &body, 409);
        let (status, _, body) = api
            .call(
                reqwest::Method::PATCH,
                &format!("{path}?responseShape=full"),
                Some(&token),
                Some(json!({"name": "Renamed", "description": null, "version": 13})),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            (body["name"].clone(), body["description"].clone(), body["version"].clone()),
            (json!("Renamed"), Value::Null, json!(14))
        );
        let (status, list) = api.get("/agents/skills", &token).await;
        assert_eq!((status, list.as_array().unwrap().len()), (200, 1));
        let (status, _, _) = api
            .call(
                reqwest::Method::PATCH,
                &format!("/agents/skills/{}", Uuid::new_v4()),
                Some(&token),
                Some(json!({"enabled": false})),
            )
            .await;
        assert_eq!(status, 404);
        let (status, _, body) = api.call(reqwest::Method::PATCH, &path, Some(&token), Some(json!({"name": ""}))).await;
        assert_error_body(api.backend, status, &body, 400);
    })
    .await;
}

#[tokio::test]
async fn project_overrides_need_project_access_and_round_trip() {
    each_backend(async |_backend: &Backend, api: &TestApi| {
        let (admin, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(api, admin.id).await;
        let body = json!({"projectId": w.project, "agentId": w.agent, "enabled": false, "toolMode": "basic",
            "customGuidance": "Formal English.", "userVaultIds": ["v1"]});
        let (status, saved) =
            api.post("/agents/project-agent-provider-settings?responseShape=full", &token, body.clone()).await;
        assert_eq!(status, 201, "{saved}");
        assert_eq!((saved["enabled"].clone(), saved["allowNetworkAccess"].clone()), (json!(false), Value::Null));
        let (_, again) = api.post("/agents/project-agent-provider-settings", &token, body).await;
        assert_eq!(again, json!({"projectId": w.project, "agentId": w.agent, "version": 2}));
        let (status, list) =
            api.get(&format!("/agents/project-agent-provider-settings?projectId={}", w.project), &token).await;
        assert_eq!(status, 200);
        assert_eq!(list.as_array().unwrap().len(), 1);
        assert_eq!(list[0]["customGuidance"], "Formal English.");

        let unknown_agent = json!({"projectId": w.project, "agentId": Uuid::new_v4()});
        let (status, error) = api.post("/agents/project-agent-provider-settings", &token, unknown_agent).await;
        assert_error_body(api.backend, status, &error, 400);
        assert!(error["errors"]["agentId"].is_array());
        let (status, _) = api
            .post(
                "/agents/project-agent-provider-settings",
                &token,
                json!({"projectId": Uuid::new_v4(), "agentId": w.agent}),
            )
            .await;
        assert_eq!(status, 404);
        // A staff member who is not a member of the project: no access.
        let (_, staff) = api.user(STAFF, UserKind::Employee).await;
        let (status, _) =
            api.get(&format!("/agents/project-agent-provider-settings?projectId={}", w.project), &staff).await;
        assert_eq!(status, 403);
    })
    .await;
}

/// A writer that keeps every log line of this thread.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every event of the process at TRACE while a capture is on: the API's, the store's, the
/// secret store's and the libraries' (a global subscriber, installed once; thread-local ones
/// miss events whose callsite interest another thread cached first).
fn capture() -> &'static Captured {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt;
    static CAPTURE: std::sync::OnceLock<Captured> = std::sync::OnceLock::new();
    CAPTURE.get_or_init(|| {
        let captured = Captured::default();
        let writer = captured.clone();
        let layer = tracing_subscriber::fmt::layer().json().with_writer(move || writer.clone()).with_filter(
            tracing_subscriber::filter::filter_fn(|_| CAPTURING.load(std::sync::atomic::Ordering::SeqCst) > 0),
        );
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::set_global_default(subscriber).expect("no other global subscriber in the test binary");
        captured
    })
}

static CAPTURING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A whole save-and-read cycle (and an invalid save) on each backend, with every log line of
/// the process captured, holds no credential.
#[tokio::test]
async fn no_log_line_of_a_save_and_read_cycle_carries_a_credential() {
    let captured = capture();
    CAPTURING.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    for backend in backends().await {
        let api = TestApi::start(&backend).await;
        let (admin, token) = api.user(ROOT, UserKind::Employee).await;
        let w = seeded(&api, admin.id).await;
        save_and_read_cycle(&api, &w, &token).await;
        // An invalid save too: its 400 names fields, never values.
        let mut bad = full_body(&w);
        bad["config"]["managedAgent"]["mcpServers"][0]["url"] = json!("ftp://x.example");
        assert_eq!(api.post(&format!("/agents/{}/managed-provider", w.agent), &token, bad).await.0, 400);
    }
    CAPTURING.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    if let Ok(path) = std::env::var("LT_AGENTS_LOG_DUMP") {
        std::fs::write(path, &text).unwrap();
    }
    assert!(text.contains("managed-provider settings saved"), "the capture works: {}", &text[..text.len().min(2000)]);
    assert_no_raw(&text, "the logs");
}

async fn secret_store_conformance(store: &dyn SecretStore) {
    let name = SecretName::new(format!("conformance/{}", Uuid::new_v4().simple())).unwrap();
    assert!(store.get(&name).await.unwrap().is_none());
    store.create(&name, &SecretValue::new("value-1")).await.unwrap();
    let again = store.create(&name, &SecretValue::new("value-2")).await;
    assert!(matches!(again, Err(workapi_kit::secrets::SecretError::Exists(_))), "{again:?}");
    assert_eq!(store.get(&name).await.unwrap().unwrap().expose(), "value-1");
    store.delete(&name).await.unwrap();
    assert!(store.get(&name).await.unwrap().is_none());
    store.delete(&name).await.unwrap();
}

#[tokio::test]
async fn both_secret_stores_behave_alike() {
    secret_store_conformance(api_tests::temp_secrets().as_ref()).await;
    let Some(client) = moto("the agents' Secrets Manager store").await else { return };
    let prefix = format!("workapi-test-{}/", Uuid::new_v4().simple());
    secret_store_conformance(&SecretsManagerSecrets::new(&prefix)).await;

    // The whole cycle on Secrets Manager: the values are there, under the prefix, and nowhere else.
    let secrets = Arc::new(SecretsManagerSecrets::new(&prefix));
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::builder(&backend).secrets(secrets.clone()).start().await;
    let (admin, token) = api.user(ROOT, UserKind::Employee).await;
    let w = seeded(&api, admin.id).await;
    save_and_read_cycle(&api, &w, &token).await;
    for name in secret_names(&api, w.agent).await {
        let id = secrets.secret_id(&name);
        assert!(id.starts_with(&prefix));
        let value = client.get_secret_value().secret_id(&id).send().await.unwrap();
        assert!(RAW_VALUES.contains(&value.secret_string().unwrap()));
    }
    assert_no_raw(&stored_text(&api).await, "the table");
}

/// Every agents event through lambda_http's adapter, as on Lambda, against the demo workspace
/// with its agents (as the local server's first start makes it): the demo ids in the events
/// name real records.
#[tokio::test]
async fn agents_events_run_through_the_lambda_adapter() {
    use lambda_http::lambda_runtime::{Context, LambdaEvent};
    use lambda_http::request::LambdaRequest;
    use lambda_http::tower::{Service, ServiceExt};
    let store = Arc::new(workapi_store::sqlite::SqliteStore::in_memory().unwrap());
    let key = workapi_domain::token::TokenKey::generate();
    let demo = local::demo::ensure_demo(store.as_ref(), &key).await.unwrap().expect("an empty store");
    let secrets = api_tests::temp_secrets();
    local::demo::seed_demo_agents(store.as_ref(), secrets.as_ref(), demo.workspace_id).await.unwrap();
    let state =
        workapi_kit::AppState::builder(store, workapi_kit::app::TokenKeySource::Static(key)).secrets(secrets).build();
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../events/agents");
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    assert_eq!(names.len(), 10, "one event per route");
    // Writes first, so the reads find what they wrote.
    names.sort_by_key(|p| !p.file_name().unwrap().to_string_lossy().starts_with("save"));
    for path in names {
        let text = std::fs::read_to_string(&path).unwrap().replace("${TOKEN}", &demo.token);
        let request: LambdaRequest = serde_json::from_str(&text).unwrap();
        let mut adapter = lambda_http::Adapter::from(agents::FUNCTION.router(state.clone()));
        let response =
            adapter.ready().await.unwrap().call(LambdaEvent::new(request, Context::default())).await.unwrap();
        let response = serde_json::to_value(response).unwrap();
        let status = response["statusCode"].as_u64().unwrap();
        assert!(status == 200 || status == 201, "{}: {response}", path.display());
    }
}

/// Store round trips of the agents' operations (docs/performance.md), counted on the store trait
/// so they hold on DynamoDB too. Authentication and rate limiting: 3 reads, 2 writes.
#[tokio::test]
async fn store_round_trips_per_operation() {
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let (admin, token) = api.user(ROOT, UserKind::Employee).await;
    let w = seeded(&api, admin.id).await;
    assert_eq!(api.get("/agents", &token).await.0, 200, "warm-up: the token's first use writes lastUsedAt");
    let count = async |method: reqwest::Method, path: String, body: Option<Value>| {
        let (trips, (status, _, _)) = api.round_trips(api.call(method, &path, Some(&token), body)).await;
        assert!(status < 300, "{path}: {status}");
        (trips.reads, trips.writes)
    };
    let settings = format!("/agents/{}/managed-provider", w.agent);
    let mut lines = Vec::new();
    let mut measure = async |what: &str, counted: (usize, usize), expected: (usize, usize)| {
        lines.push(format!("{what}: {} reads, {} writes", counted.0, counted.1));
        assert_eq!(counted, expected, "{what}");
    };
    use reqwest::Method;
    measure("list agents", count(Method::GET, "/agents".into(), None).await, (5, 2)).await;
    // agent, settings, the skills (a custom skill is named): 3 reads; one put.
    measure("first save (5 secrets)", count(Method::POST, settings.clone(), Some(full_body(&w))).await, (6, 3)).await;
    let mut again = full_body(&w);
    again.as_object_mut().unwrap().remove("vendorApiKey");
    measure("save keeping the raw key", count(Method::POST, settings.clone(), Some(again)).await, (6, 3)).await;
    measure("read settings", count(Method::GET, settings.clone(), None).await, (5, 2)).await;
    let skill = format!("/agents/skills/{}", w.skill);
    measure(
        "create a skill",
        count(Method::POST, "/agents/skills".into(), Some(json!({"name": "S", "instructions": "x"}))).await,
        (3, 3),
    )
    .await;
    measure("patch a skill", count(Method::PATCH, skill, Some(json!({"enabled": false}))).await, (4, 3)).await;
    let overrides = json!({"projectId": w.project, "agentId": w.agent, "toolMode": "full"});
    measure(
        "save project overrides",
        count(Method::POST, "/agents/project-agent-provider-settings".into(), Some(overrides)).await,
        (6, 3),
    )
    .await;
    eprintln!("{}", lines.join("\n"));
}

/// The 500-skills cap holds under concurrency, on every backend: the count is an item written
/// in the same transaction as each skill, conditioned on the cap (docs/agents.md). 480 skills
/// stored before the counter existed (written as an older release or a plain put did), ten
/// creates one by one (the first counts the stored ones), then thirty at once at 490: exactly
/// ten more land, the rest are 400, and the workspace holds 500.
#[tokio::test]
async fn the_skill_cap_holds_when_creates_race() {
    use agents::skills::{self, MAX_SKILLS, SkillRecord};
    use futures::StreamExt;
    each_backend(async |backend: &Backend, api: &TestApi| {
        let b = backend.name;
        let (admin, token) = api.user(ROOT, UserKind::Employee).await;
        let keys = workapi_store::keys::WsKeys::new(api.workspace_id);
        let instructions =
            workapi_richtext::to_idoc_json(&json!("Be brief"), workapi_richtext::Profile::Agent).unwrap();
        let stored_before = MAX_SKILLS - 20;
        futures::stream::iter(0..stored_before)
            .for_each_concurrent(16, |i| {
                let record = SkillRecord {
                    id: Uuid::new_v4(),
                    name: format!("Stored {i}"),
                    description: None,
                    instructions: instructions.clone(),
                    enabled: true,
                    version: 1,
                    created_at: workapi_store::clock::now_rfc3339(),
                    updated_at: workapi_store::clock::now_rfc3339(),
                    created_by: admin.id,
                    updated_by: admin.id,
                };
                let item = workapi_kit::entity::to_item(&record, keys).unwrap();
                async move { api.store.put(item, workapi_store::Condition::NotExists).await.unwrap() }
            })
            .await;
        let create = |name: String| {
            let token = &token;
            async move { api.post("/agents/skills", token, json!({"name": name, "instructions": "x"})).await }
        };
        for i in 0..10 {
            let (status, body) = create(format!("One by one {i}")).await;
            assert_eq!(status, 201, "[{b}] {body}");
        }
        let answers = futures::future::join_all((0..30).map(|i| create(format!("Racing {i}")))).await;
        let created = answers.iter().filter(|(status, _)| *status == 201).count();
        assert_eq!(created, 10, "[{b}] {:?}", answers.iter().map(|(s, _)| s).collect::<Vec<_>>());
        for (status, body) in answers.iter().filter(|(status, _)| *status != 201) {
            assert_error_body(b, *status, body, 400);
            assert!(body["errors"]["body"][0].as_str().unwrap().contains("at most 500 skills"), "[{b}] {body}");
        }
        assert_eq!(api.list_all("/agents/skills", &token).await.len(), MAX_SKILLS, "[{b}]");
        let counted: Option<skills::SkillCount> =
            workapi_kit::entity::get(api.store.as_ref(), &skills::count_key(keys)).await.unwrap();
        assert_eq!(counted.map(|c| c.count), Some(MAX_SKILLS as i64), "[{b}] the count equals the skills stored");
        // Full: one more is refused.
        let (status, body) = create("One too many".into()).await;
        assert_error_body(b, status, &body, 400);
    })
    .await;
}

/// The document says the managed provider's rules across fields (docs/conventions.md, "What the
/// document says"): each body below is valid against the documented request schema exactly
/// when the API takes it, and a body the API refuses names the field the rule is about.
#[tokio::test]
async fn the_documented_body_says_what_each_agent_source_and_auth_mode_takes() {
    let document = serde_json::to_value(registry::document()).unwrap();
    let schema = json!({
        "$ref": "#/components/schemas/SaveManagedProviderBody",
        "components": {"schemas": document["components"]["schemas"].clone()}
    });
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let (admin, token) = api.user(ROOT, UserKind::Employee).await;
    let w = seeded(&api, admin.id).await;
    let existing = |extra: Value| {
        let mut config = json!({"agentSource": "existing", "agentId": "agent_01", "environmentId": "env_01"});
        config.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        json!({"enabled": false, "config": config})
    };
    let managed = |agent: Value, extra: Value| {
        let mut config = json!({"agentSource": "serviceManaged", "managedAgent": agent});
        config.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        json!({"enabled": false, "config": config})
    };
    let server = |server: Value| managed(json!({"modelId": "m", "mcpServers": [server]}), json!({}));
    let mut saved_key = managed(json!({"modelId": "m"}), json!({}));
    saved_key["providerApiKeyId"] = json!(w.saved_key);
    saved_key["vendorApiKey"] = Value::Null;
    let mut both_keys = saved_key.clone();
    both_keys["vendorApiKey"] = json!(VENDOR_KEY);
    let taken = [
        existing(json!({})),
        existing(json!({"managedAgent": {"modelId": "m", "skills": []}})),
        existing(json!({"managedAgent": null})),
        managed(json!({"modelId": "m"}), json!({"agentId": null, "environmentId": null})),
        managed(json!({"modelId": "m", "skills": [{"skillId": "pdf", "type": "vendor"}]}), json!({})),
        server(json!({"url": "https://a.example/mcp", "bearerToken": null, "oauthCredential": null})),
        server(json!({"url": "https://a.example/mcp", "authMode": "bearer", "bearerToken": "t"})),
        server(json!({"url": "https://a.example/mcp", "authMode": "oauth", "oauthCredential": {"accessToken": "a"}})),
        saved_key,
        full_body(&w),
    ];
    for body in taken {
        assert!(validator.is_valid(&body), "the document admits {body}");
        let (status, answer) = api.post(&format!("/agents/{}/managed-provider", w.agent), &token, body.clone()).await;
        assert!(status < 300, "the API takes {body}: {status} {answer}");
    }
    let refused = [
        (existing(json!({"environmentId": null})), "config.environmentId"),
        (json!({"enabled": false, "config": {"agentSource": "existing", "agentId": "a"}}), "config.environmentId"),
        (
            existing(json!({"managedAgent": {"modelId": "m", "skills": [{"skillId": "pdf", "type": "vendor"}]}})),
            "config.managedAgent.skills",
        ),
        (managed(json!({"modelId": "m"}), json!({"agentId": "a"})), "config.agentId"),
        (json!({"enabled": false, "config": {"agentSource": "serviceManaged"}}), "config.managedAgent"),
        (managed(Value::Null, json!({})), "config.managedAgent"),
        (both_keys, "vendorApiKey"),
        (
            server(json!({"url": "https://a.example/mcp", "bearerToken": "t"})),
            "config.managedAgent.mcpServers[0].bearerToken",
        ),
        (
            server(json!({"url": "https://a.example/mcp", "authMode": "bearer", "bearerToken": null})),
            "config.managedAgent.mcpServers[0].bearerToken",
        ),
        (
            server(
                json!({"url": "https://a.example/mcp", "authMode": "oauth", "oauthCredential": {"accessToken": "a"}, "bearerToken": "t"}),
            ),
            "config.managedAgent.mcpServers[0].bearerToken",
        ),
        (
            server(
                json!({"url": "https://a.example/mcp", "authMode": "bearer", "bearerToken": "t", "oauthCredential": {"accessToken": "a"}}),
            ),
            "config.managedAgent.mcpServers[0].oauthCredential",
        ),
        (
            server(json!({"url": "https://a.example/mcp", "authMode": "oauth", "oauthCredential": null})),
            "config.managedAgent.mcpServers[0].oauthCredential",
        ),
        (managed(json!({"modelId": "m"}), json!({"userVaultIds": ["v1", "v1"]})), "config.userVaultIds[1]"),
    ];
    for (body, field) in refused {
        assert!(!validator.is_valid(&body), "the document refuses {body}");
        let (status, answer) = api.post(&format!("/agents/{}/managed-provider", w.agent), &token, body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert!(answer["errors"].get(field).is_some(), "{body}: the 400 names {field}: {answer}");
    }
}
