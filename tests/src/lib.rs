//! Test harness for the black-box suites in `tests/`: the store backends under test, and the
//! merged API served over real HTTP on a random port.
//!
//! Backends: the embedded store always; DynamoDB when `LT_DYNAMODB_ENDPOINT` names a running
//! DynamoDB Local (the README test command starts one). Without it the DynamoDB runs are
//! skipped with a loud message, unless `LT_REQUIRE_SERVICES=1`, which turns the absence into
//! a failure so CI can never pass by skipping.

pub mod capacity;
pub mod cost;
pub mod document_server;
pub mod dynamo_stream;
pub mod fault_proxy;
pub mod operations;
pub mod response_check;

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use capacity::Capacity;
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use uuid::Uuid;
use workapi_domain::identity::{self, NewToken, NewUser, User, UserKind};
use workapi_domain::token::TokenKey;
use workapi_kit::AppState;
use workapi_kit::app::TokenKeySource;
use workapi_kit::cors::AllowedOrigins;
use workapi_kit::oauth::issuer::SiteUrl;
use workapi_kit::ratelimit::{LoginLimits, RateLimits};
use workapi_kit::secrets::{DirectorySecrets, SecretStore};
use workapi_kit::session::{SessionKeySet, SessionKeySource};
use workapi_store::aws::AwsSettings;
use workapi_store::changes::ChangeFeed;
use workapi_store::dynamo::DynamoStore;
use workapi_store::objects::{DirectoryObjects, ObjectStore};
use workapi_store::s3::S3Objects;
use workapi_store::sqlite::SqliteStore;
use workapi_store::{Condition, Item, Key, Page, Query, Store, StoreResult, TxOp, Update};

pub struct Backend {
    pub name: &'static str,
    pub store: Arc<dyn Store>,
}

fn services_required() -> bool {
    std::env::var("LT_REQUIRE_SERVICES").is_ok_and(|v| v == "1")
}

/// One table per test process; each test uses fresh ids, so tests never see each other's data.
fn table_name() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| format!("workapi-test-{}", Uuid::new_v4().simple()))
}

/// A DynamoDB store on DynamoDB Local, with static fake credentials so the SDK never probes
/// for real ones.
pub async fn dynamo_store(endpoint: &str) -> DynamoStore {
    let store = dynamo_store_with(endpoint, AwsSettings::PRODUCTION);
    store.create_table().await.expect("create the test table on DynamoDB Local");
    store
}

/// A DynamoDB store of the test table reaching DynamoDB through `endpoint` (a fault proxy) with
/// the given retries and timeouts; the table is not created.
pub fn dynamo_store_with(endpoint: &str, settings: AwsSettings) -> DynamoStore {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .http_client(workapi_store::aws::https_client())
        .endpoint_url(endpoint)
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "workapi-tests"))
        .timeout_config(settings.timeouts())
        .retry_config(settings.retries())
        .build();
    DynamoStore::new(aws_sdk_dynamodb::Client::from_conf(config), table_name())
}

/// The test's workspace. Setting up is not what a test tests: on a loaded machine the first
/// write can outlast a short attempt timeout (`FAST_AWS`'s 400 ms), so a transient failure is
/// retried a few times. A retry after an attempt that
/// did land leaves one more empty workspace, which nothing reads.
async fn test_workspace(store: &dyn Store) -> identity::Workspace {
    let mut retries = 0;
    loop {
        match identity::create_workspace(store, "Test workspace", "en").await {
            Ok(workspace) => return workspace,
            Err(identity::IdentityError::Store(e)) if e.is_transient() && retries < 5 => {
                retries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            Err(e) => panic!("workspace: {e:?}"),
        }
    }
}

/// The fault suite's settings: the production shape (standard retries, 3 attempts) with small
/// timeouts so that a hanging dependency costs a test about a second, not five.
pub const FAST_AWS: AwsSettings = AwsSettings {
    connect: std::time::Duration::from_millis(500),
    attempt: std::time::Duration::from_millis(400),
    operation: std::time::Duration::from_millis(1500),
    max_attempts: 3,
    initial_backoff: std::time::Duration::from_millis(10),
};

/// DynamoDB Local behind a [`fault_proxy::FaultProxy`]: `store` talks through the proxy with
/// `settings`, `direct` bypasses it (to seed and check what the store kept). None after a
/// loud skip naming `suite` (a failure under `LT_REQUIRE_SERVICES=1`).
pub struct ProxiedDynamo {
    pub proxy: fault_proxy::FaultProxy,
    pub store: Arc<dyn Store>,
    pub direct: Arc<dyn Store>,
    /// DynamoDB Local's own URL (for a raw client that scans what the store kept).
    pub endpoint: String,
    pub table: String,
}

pub async fn proxied_dynamo(suite: &str, settings: AwsSettings) -> Option<ProxiedDynamo> {
    let Ok(endpoint) = std::env::var("LT_DYNAMODB_ENDPOINT") else {
        if services_required() {
            panic!("LT_REQUIRE_SERVICES=1 but LT_DYNAMODB_ENDPOINT is not set: DynamoDB Local is required");
        }
        loud_skip(&format!("{suite} (LT_DYNAMODB_ENDPOINT not set)"));
        return None;
    };
    dynamo_store(&endpoint).await; // creates the table
    let direct = Arc::new(dynamo_store_with(&endpoint, PATIENT_AWS));
    let proxy = fault_proxy::FaultProxy::start(&endpoint).await;
    let store = Arc::new(dynamo_store_with(&proxy.url(), settings));
    Some(ProxiedDynamo { proxy, store, direct, endpoint, table: table_name().to_owned() })
}

/// The backends every suite runs against.
pub async fn backends() -> Vec<Backend> {
    let mut all = vec![Backend { name: "embedded", store: Arc::new(SqliteStore::in_memory().expect("open SQLite")) }];
    match std::env::var("LT_DYNAMODB_ENDPOINT") {
        Ok(endpoint) => all.push(Backend { name: "dynamodb", store: Arc::new(dynamo_store(&endpoint).await) }),
        Err(_) if services_required() => {
            panic!("LT_REQUIRE_SERVICES=1 but LT_DYNAMODB_ENDPOINT is not set: DynamoDB Local is required")
        }
        Err(_) => loud_skip("the DynamoDB backend run (LT_DYNAMODB_ENDPOINT not set)"),
    }
    all
}

/// The backends with their change feeds (for [`TestApiBuilder::dispatch`]): the embedded
/// store's, and DynamoDB Local's stream of the test table.
pub async fn backends_with_feeds() -> Vec<(Backend, Arc<dyn ChangeFeed>)> {
    let embedded = SqliteStore::in_memory().expect("open SQLite");
    let mut all: Vec<(Backend, Arc<dyn ChangeFeed>)> =
        vec![(Backend { name: "embedded", store: Arc::new(embedded.clone()) }, Arc::new(embedded.changes()))];
    match std::env::var("LT_DYNAMODB_ENDPOINT") {
        Ok(endpoint) => {
            let store = dynamo_store(&endpoint).await;
            let arn = store.stream_arn().await.expect("describe the test table").expect("the test table's stream");
            let feed = dynamo_stream::DynamoStreamFeed::new(&endpoint, &arn).await.expect("read the stream");
            all.push((Backend { name: "dynamodb", store: Arc::new(store) }, Arc::new(feed)));
        }
        Err(_) if services_required() => {
            panic!("LT_REQUIRE_SERVICES=1 but LT_DYNAMODB_ENDPOINT is not set: DynamoDB Local is required")
        }
        Err(_) => loud_skip("the DynamoDB backend run (LT_DYNAMODB_ENDPOINT not set)"),
    }
    all
}

/// A feed of one workspace's items: the tests share DynamoDB Local's table and its stream.
struct WorkspaceFeed {
    inner: Arc<dyn ChangeFeed>,
    prefix: String,
}

#[async_trait::async_trait]
impl ChangeFeed for WorkspaceFeed {
    async fn next(&self, max: usize) -> StoreResult<Vec<Item>> {
        let items = self.inner.next(max).await?;
        let ours = |item: &Item| {
            item.get(workapi_store::PK).and_then(|pk| pk.as_str()).is_some_and(|pk| pk.starts_with(&self.prefix))
        };
        Ok(items.into_iter().filter(ours).collect())
    }

    async fn done(&self) -> StoreResult<()> {
        self.inner.done().await
    }
}

/// The harness's own patience with DynamoDB Local (seeding, bulk writes, checking what the store
/// kept): it takes more than the API's 5 s for some calls while other suites run.
const PATIENT_AWS: AwsSettings =
    AwsSettings { attempt: Duration::from_secs(120), operation: Duration::from_secs(120), ..AwsSettings::PRODUCTION };

/// The backend's store with a bulk writer's patience (the large-workspace generator).
pub fn bulk_store(backend: &Backend) -> Arc<dyn Store> {
    match std::env::var("LT_DYNAMODB_ENDPOINT") {
        Ok(endpoint) if backend.name == "dynamodb" => Arc::new(dynamo_store_with(&endpoint, PATIENT_AWS)),
        _ => backend.store.clone(),
    }
}

/// Held by the two suites that load DynamoDB Local most (the large workspace's generation and
/// walk, the fault table's hundreds of fresh servers), so that they do not run at once: the
/// fault table's one-attempt settings are about faults, not about a DynamoDB Local saturated by
/// the other suite.
pub async fn heavy_dynamo_suite() -> tokio::sync::MutexGuard<'static, ()> {
    static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    HEAVY.lock().await
}

/// Runs a test against the whole API once per backend, each on a fresh server.
/// An HTTP client on an address of its own (127.x.y.z), so per-IP limits start fresh.
pub fn client_from_own_address() -> reqwest::Client {
    let bytes = Uuid::new_v4().into_bytes();
    let ip = std::net::Ipv4Addr::new(127, bytes[0], bytes[1], bytes[2].max(2));
    reqwest::Client::builder().local_address(std::net::IpAddr::V4(ip)).build().unwrap()
}

pub async fn each_backend(test: impl AsyncFn(&Backend, &TestApi)) {
    for backend in backends().await {
        let api = TestApi::start(&backend).await;
        test(&backend, &api).await;
    }
}

/// A Secrets Manager client on moto's server (`LT_MOTO_ENDPOINT`), or None after a loud skip
/// naming `suite`; under `LT_REQUIRE_SERVICES=1` a missing moto is a failure.
pub async fn moto(suite: &str) -> Option<aws_sdk_secretsmanager::Client> {
    use aws_sdk_secretsmanager::config::{BehaviorVersion, Credentials, Region};
    let endpoint = moto_endpoint(suite, "Secrets Manager")?;
    // The code under test builds its own client exactly as deployed (`aws_config::load_from_env`
    // in workapi_kit::app and workapi_kit::session), so the suites reach moto through the SDK's own
    // endpoint setting, AWS_ENDPOINT_URL_SECRETS_MANAGER, and the fake credentials that
    // scripts/test.sh exports: the configuration path production uses is the one tested. This
    // client only seeds and rotates secrets.
    assert!(
        std::env::var("AWS_ENDPOINT_URL_SECRETS_MANAGER").is_ok(),
        "the functions find Secrets Manager through the SDK's own settings: set AWS_ENDPOINT_URL_SECRETS_MANAGER too"
    );
    let config = aws_sdk_secretsmanager::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .http_client(workapi_store::aws::https_client())
        .endpoint_url(endpoint)
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "workapi-tests"))
        .build();
    Some(aws_sdk_secretsmanager::Client::from_conf(config))
}

/// An S3 object store on moto's server (`LT_MOTO_ENDPOINT`) in a fresh bucket, with
/// path-style addressing (moto serves no virtual-host buckets on 127.0.0.1), and its client;
/// None after a loud skip naming `suite`, a failure under `LT_REQUIRE_SERVICES=1`.
pub async fn moto_s3(suite: &str) -> Option<(Arc<S3Objects>, aws_sdk_s3::Client)> {
    let config = moto_config(&moto_endpoint(suite, "S3")?);
    let client =
        aws_sdk_s3::Client::from_conf(aws_sdk_s3::config::Builder::from(&config).force_path_style(true).build());
    let bucket = format!("workapi-test-files-{}", Uuid::new_v4().simple());
    client.create_bucket().bucket(&bucket).send().await.expect("create the test bucket in moto");
    Some((Arc::new(S3Objects::new(client.clone(), bucket)), client))
}

/// A fresh SQS queue in moto, as the deployed delivery queue (`workapi_store::sqs`), and a
/// client to read it. None after a loud skip naming `suite` (a failure under
/// `LT_REQUIRE_SERVICES=1`).
pub async fn moto_sqs(suite: &str) -> Option<(workapi_store::sqs::SqsQueue, aws_sdk_sqs::Client, String)> {
    let client = aws_sdk_sqs::Client::new(&moto_config(&moto_endpoint(suite, "SQS")?));
    let name = format!("workapi-test-deliveries-{}", Uuid::new_v4().simple());
    let created = client.create_queue().queue_name(&name).send().await.expect("create the test queue in moto");
    let url = created.queue_url.expect("the queue's URL");
    Some((workapi_store::sqs::SqsQueue::new(client.clone(), url.clone()), client, url))
}

/// The SDK configuration of a client of moto at `endpoint`: static test credentials, the
/// project's one HTTP client.
fn moto_config(endpoint: &str) -> aws_config::SdkConfig {
    aws_config::SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .http_client(workapi_store::aws::https_client())
        .endpoint_url(endpoint)
        .region(Region::new("us-east-1"))
        .credentials_provider(aws_sdk_dynamodb::config::SharedCredentialsProvider::new(Credentials::new(
            "test",
            "test",
            None,
            None,
            "workapi-tests",
        )))
        .build()
}

/// moto's URL, or None after a loud skip naming `suite` (a failure under
/// `LT_REQUIRE_SERVICES=1`, naming the `service` required).
fn moto_endpoint(suite: &str, service: &str) -> Option<String> {
    let Ok(endpoint) = std::env::var("LT_MOTO_ENDPOINT") else {
        if services_required() {
            panic!("LT_REQUIRE_SERVICES=1 but LT_MOTO_ENDPOINT is not set: moto's {service} is required");
        }
        loud_skip(&format!("{suite} (LT_MOTO_ENDPOINT not set)"));
        return None;
    };
    Some(endpoint)
}

/// A fresh directory object store under the system's temporary directory.
pub fn temp_objects() -> Arc<DirectoryObjects> {
    Arc::new(DirectoryObjects::new(
        std::env::temp_dir().join(format!("workapi-test-files-{}", Uuid::new_v4().simple())),
    ))
}

/// A fresh directory secret store under the system's temporary directory.
pub fn temp_secrets() -> Arc<DirectorySecrets> {
    Arc::new(DirectorySecrets::new(
        std::env::temp_dir().join(format!("workapi-test-secrets-{}", Uuid::new_v4().simple())),
    ))
}

/// Creates a secret with a fresh name starting with `prefix` and returns the name.
pub async fn create_secret(client: &aws_sdk_secretsmanager::Client, prefix: &str, value: &str) -> String {
    let name = format!("{prefix}-{}", Uuid::new_v4().simple());
    client.create_secret().name(&name).secret_string(value).send().await.expect("create the secret in moto");
    name
}

/// Reports a skipped part on the real stderr, past the test harness's output capture, so a
/// passing run still shows what it did not cover.
pub fn loud_skip(what: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n*** SKIPPED: {what}. Run the README test command to include it. ***");
}

/// The whole API served over HTTP on 127.0.0.1 with one workspace ready.
pub struct TestApi {
    pub backend: &'static str,
    /// Store reads (get, query) made by the server, not by the harness.
    pub store_reads: Arc<AtomicUsize>,
    /// Store writes (put, update, delete, transact, increment) made by the server.
    pub store_writes: Arc<AtomicUsize>,
    /// When each store call of the server started and ended ([`TestApi::round_trips`]).
    store_calls: Arc<Mutex<Vec<(Instant, Instant)>>>,
    /// The capacity units the server's store calls consumed ([`capacity`]).
    store_capacity: Arc<Mutex<Capacity>>,
    store_partitions: Arc<Mutex<PartitionUnits>>,
    pub base: String,
    pub http: reqwest::Client,
    pub store: Arc<dyn Store>,
    pub key: TokenKey,
    pub workspace_id: Uuid,
    /// Where the server keeps uploaded files' bytes.
    pub objects: Arc<dyn ObjectStore>,
    /// Where the server keeps secret values.
    pub secrets: Arc<dyn SecretStore>,
    /// The merged router the server serves, on the same state (store, keys, limits), without the
    /// harness's response check: for in-process calls (`tower::ServiceExt::oneshot`, the
    /// handler bench). Requests need a `ConnectInfo<SocketAddr>` extension, as served.
    pub router: axum::Router,
    /// Whether [`TestApi::round_trips`] measures with the roles this container read in the last
    /// second ([`TestApiBuilder::warm_roles_cache`]) rather than without (the default).
    warm_roles: bool,
}

impl TestApi {
    /// Limits high enough that no functional test meets them (the rate-limit suite sets its own).
    pub const GENEROUS: RateLimits = RateLimits { per_token: 1_000_000, per_ip: 1_000_000, window_secs: 60 };
    /// The same for the login limits.
    pub const GENEROUS_LOGIN: LoginLimits =
        LoginLimits { per_ip: 1_000_000, per_email: 1_000_000, registrations_per_ip: 1_000_000, window_secs: 60 };

    /// The API on `backend` with every default: `TestApi::builder(backend).start()`.
    pub async fn start(backend: &Backend) -> TestApi {
        Self::builder(backend).start().await
    }

    /// Configures a server on `backend`; see [`TestApiBuilder`] for the knobs and defaults.
    pub fn builder(backend: &Backend) -> TestApiBuilder<'_> {
        TestApiBuilder {
            backend,
            token_key: None,
            rate_limits: Self::GENEROUS,
            session_keys: None,
            login_limits: Self::GENEROUS_LOGIN,
            site_url: SiteUrl::from_host(),
            cors_origins: AllowedOrigins::none(),
            objects: None,
            secrets: None,
            metadata_fetch: Default::default(),
            webhook_targets: Default::default(),
            store_latency: None,
            setup_store: None,
            warm_roles: false,
            dispatch: None,
            events_settle_ms: 0,
        }
    }

    /// A new user of the test workspace with a read-write token.
    pub async fn user(&self, role: &str, kind: UserKind) -> (User, String) {
        self.user_in(self.workspace_id, role, kind, &["api:read", "api:write"]).await
    }

    pub async fn user_in(&self, workspace: Uuid, role: &str, kind: UserKind, scopes: &[&str]) -> (User, String) {
        let email = format!("{}@test.example", Uuid::new_v4().simple());
        let new = NewUser { email: &email, name: "Test User", role_id: role, kind, language: "en" };
        let user = identity::create_user(self.store.as_ref(), workspace, new).await.expect("user");
        let scopes = scopes.iter().map(|s| (*s).to_owned()).collect();
        let (token, _) = identity::create_token(
            self.store.as_ref(),
            &self.key,
            workspace,
            user.id,
            NewToken { name: "test", scopes, expires_at: None },
        )
        .await
        .expect("token");
        (user, token)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends a request and returns status, headers and the body: JSON, a string for other
    /// content, Null when empty.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, reqwest::header::HeaderMap, Value) {
        let mut request = self.http.request(method, self.url(path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request reaches the server");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.expect("body");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            // Non-JSON bodies (YAML documents) come back as a string.
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
        };
        (status, headers, body)
    }

    /// Sends a request with extra headers (`LT_CUSTOM_NOW`, an imposter, an `Idempotency-Key`)
    /// and returns status, headers and the JSON body (Null when it is none).
    pub async fn send_with(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> (u16, reqwest::header::HeaderMap, Value) {
        let mut request = self.http.request(method, self.url(path)).bearer_auth(token);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request reaches the server");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.json::<Value>().await.unwrap_or(Value::Null);
        (status, headers, body)
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> (u16, Value) {
        let (status, _, body) = self.call(reqwest::Method::POST, path, Some(token), Some(body)).await;
        (status, body)
    }

    pub async fn get(&self, path: &str, token: &str) -> (u16, Value) {
        let (status, _, body) = self.call(reqwest::Method::GET, path, Some(token), None).await;
        (status, body)
    }

    /// Every item of a paged list (docs/conventions.md#paging): the pages of `path`, following
    /// each answer's `Link: <…>; rel="next"` to the end.
    pub async fn list_all(&self, path: &str, token: &str) -> Vec<Value> {
        let mut items = Vec::new();
        let mut next = Some(path.to_owned());
        while let Some(path) = next.take() {
            let (status, headers, body) = self.call(reqwest::Method::GET, &path, Some(token), None).await;
            assert_eq!(status, 200, "GET {path}: {body}");
            items.extend(body.as_array().unwrap_or_else(|| panic!("GET {path}: not an array: {body}")).iter().cloned());
            next = next_page(&headers).map(|url| url.strip_prefix(&self.base).expect("a link of this API").to_owned());
        }
        items
    }

    /// The capacity units the server's store calls have consumed so far, by partition.
    pub fn partition_units(&self) -> PartitionUnits {
        self.store_partitions.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The store calls the server made while `request` ran, with their sequential depth; run
    /// one request at a time.
    ///
    /// Unless built with [`TestApiBuilder::warm_roles_cache`], the request is measured as one
    /// whose container read the workspace's custom roles more than a second ago (the most a
    /// request reads; `workapi_kit::auth::roles_cache`), so counts do not depend on timing.
    pub async fn round_trips<T>(&self, request: impl Future<Output = T>) -> (RoundTrips, T) {
        if !self.warm_roles {
            workapi_kit::auth::roles_cache::forget(self.workspace_id);
        }
        let (reads, writes) = (self.store_reads.load(Ordering::SeqCst), self.store_writes.load(Ordering::SeqCst));
        let capacity = *self.store_capacity.lock().unwrap_or_else(|p| p.into_inner());
        self.store_calls.lock().unwrap_or_else(|p| p.into_inner()).clear();
        let out = request.await;
        let calls = self.store_calls.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let trips = RoundTrips {
            reads: self.store_reads.load(Ordering::SeqCst) - reads,
            writes: self.store_writes.load(Ordering::SeqCst) - writes,
            depth: sequential_depth(&calls),
            capacity: self.store_capacity.lock().unwrap_or_else(|p| p.into_inner()).since(capacity),
        };
        (trips, out)
    }
}

/// Builds a [`TestApi`]: `TestApi::builder(&backend).rate_limits(..).start().await`. Every knob
/// is optional, and all configuration is passed in, none read from the environment. Defaults:
/// a random static token key (also the one the harness mints with), a random session key set,
/// the generous limits and no CORS origins.
pub struct TestApiBuilder<'a> {
    backend: &'a Backend,
    /// What the server verifies tokens with, and the key the harness mints them with.
    token_key: Option<(TokenKeySource, TokenKey)>,
    rate_limits: RateLimits,
    session_keys: Option<SessionKeySource>,
    login_limits: LoginLimits,
    site_url: SiteUrl,
    cors_origins: AllowedOrigins,
    objects: Option<Arc<dyn ObjectStore>>,
    secrets: Option<Arc<dyn SecretStore>>,
    metadata_fetch: workapi_kit::oauth::MetadataFetchForTests,
    webhook_targets: workapi_kit::net::WebhookTargets,
    store_latency: Option<Duration>,
    setup_store: Option<Arc<dyn Store>>,
    warm_roles: bool,
    dispatch: Option<Arc<dyn ChangeFeed>>,
    /// The feed's settle window: none by default, so a test sees its events at once; the
    /// feed's own test sets one.
    events_settle_ms: i64,
}

impl TestApiBuilder<'_> {
    /// How long the event feed waits before it lists an event (docs/events.md, "A gapless feed").
    pub fn events_settle_ms(mut self, settle_ms: i64) -> Self {
        self.events_settle_ms = settle_ms;
        self
    }

    /// Runs the events' dispatcher (notifications, webhook deliveries: docs/events.md#delivery)
    /// on `feed`, the backend's change feed ([`backends_with_feeds`]), for the test's workspace
    /// only: other tests share the table.
    pub fn dispatch(mut self, feed: Arc<dyn ChangeFeed>) -> Self {
        self.dispatch = Some(feed);
        self
    }

    /// Where the harness's own writes go (the test's workspace, users, seeds: `TestApi::store`),
    /// default the server's store. The fault suite sets DynamoDB Local directly: the setup is
    /// not what it tests, and its one 400 ms attempt timed out on a loaded CI machine.
    pub fn setup_store(mut self, store: Arc<dyn Store>) -> Self {
        self.setup_store = Some(store);
        self
    }

    /// Delays every store call of the server by `latency` (default none), so that the bench can
    /// tell concurrent calls from sequential ones ([`TestApi::round_trips`]).
    /// [`TestApi::round_trips`] leaves the container's cached roles as they are (the round-trip
    /// bench: a busy container reads them once a second).
    pub fn warm_roles_cache(mut self) -> Self {
        self.warm_roles = true;
        self
    }

    pub fn store_latency(mut self, latency: Duration) -> Self {
        self.store_latency = Some(latency);
        self
    }

    /// Where secret values go (default: a fresh directory, [`temp_secrets`]).
    pub fn secrets(mut self, secrets: Arc<dyn SecretStore>) -> Self {
        self.secrets = Some(secrets);
        self
    }

    /// Where uploaded files go (default: a fresh directory, [`temp_objects`]).
    pub fn objects(mut self, objects: Arc<dyn ObjectStore>) -> Self {
        self.objects = Some(objects);
        self
    }

    /// The public site URL (default: each request's `Host`, as the server serves on a random
    /// port).
    pub fn site_url(mut self, site_url: SiteUrl) -> Self {
        self.site_url = site_url;
        self
    }

    /// The server holds `key` and the harness mints tokens with it; servers built with the same
    /// key accept each other's tokens (as Lambda instances do).
    pub fn token_key(self, key: TokenKey) -> Self {
        self.token_key_source(TokenKeySource::Static(key.clone()), key)
    }

    /// The server takes its token key from `source` (e.g. Secrets Manager); the harness mints
    /// tokens with `mint_with`, which need not be the key `source` yields.
    pub fn token_key_source(mut self, source: TokenKeySource, mint_with: TokenKey) -> Self {
        self.token_key = Some((source, mint_with));
        self
    }

    /// The API's rate limits (default [`TestApi::GENEROUS`]).
    pub fn rate_limits(mut self, limits: RateLimits) -> Self {
        self.rate_limits = limits;
        self
    }

    /// Where the session JWT keys come from (default: a fixed random key set, kid `test`).
    pub fn session_keys(mut self, source: SessionKeySource) -> Self {
        self.session_keys = Some(source);
        self
    }

    /// The login limits (default [`TestApi::GENEROUS_LOGIN`]).
    pub fn login_limits(mut self, limits: LoginLimits) -> Self {
        self.login_limits = limits;
        self
    }

    /// The origins the API routes allow (CORS; default none, as an unconfigured deployment).
    pub fn cors_origins(mut self, origins: AllowedOrigins) -> Self {
        self.cors_origins = origins;
        self
    }

    /// Relaxes the fetch of client metadata documents (loopback, a test root): test-only.
    /// Where webhook endpoints may point (default: public https URLs only, whatever the
    /// environment says).
    pub fn webhook_targets(mut self, targets: workapi_kit::net::WebhookTargets) -> Self {
        self.webhook_targets = targets;
        self
    }

    pub fn metadata_fetch(mut self, relaxed: workapi_kit::oauth::MetadataFetchForTests) -> Self {
        self.metadata_fetch = relaxed;
        self
    }

    /// Serves the merged API over HTTP on a random port of 127.0.0.1 and creates its workspace.
    pub async fn start(self) -> TestApi {
        let backend = self.backend;
        let (source, key) = self.token_key.unwrap_or_else(|| {
            let key = TokenKey::generate();
            (TokenKeySource::Static(key.clone()), key)
        });
        let sessions = self.session_keys.unwrap_or_else(|| SessionKeySource::fixed(SessionKeySet::generate("test")));
        let (store_reads, store_writes) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let store_calls = Arc::new(Mutex::new(Vec::new()));
        let store_capacity = Arc::new(Mutex::new(Capacity::default()));
        let store_partitions = Arc::new(Mutex::new(PartitionUnits::new()));
        let counted = Arc::new(CountingStore {
            inner: backend.store.clone(),
            reads: store_reads.clone(),
            writes: store_writes.clone(),
            calls: store_calls.clone(),
            capacity: store_capacity.clone(),
            partitions: store_partitions.clone(),
            latency: self.store_latency,
        });
        let objects = self.objects.unwrap_or_else(|| temp_objects());
        let secrets = self.secrets.unwrap_or_else(|| temp_secrets());
        let queue = Arc::new(SqliteStore::in_memory().expect("open the delivery queue"));
        let state = AppState::builder(counted, source)
            .rate_limits(self.rate_limits)
            .session_keys(sessions)
            .login_limits(self.login_limits)
            .site_url(self.site_url)
            .cors_origins(self.cors_origins)
            .objects(objects.clone())
            .secrets(secrets.clone())
            .metadata_fetch_for_tests(self.metadata_fetch)
            .webhook_targets(self.webhook_targets)
            .events_settle_ms(self.events_settle_ms)
            // Redeliveries queue here; a test that dispatches reads it (`dispatch`).
            .queue(queue.clone())
            .build();
        let dispatch_state = state.clone();
        let router = local::app(state);
        let app = router.clone().layer(axum::middleware::from_fn(response_check::validate));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a test port");
        let addr = listener.local_addr().expect("local address");
        tokio::spawn(async move {
            axum::serve(listener, app.into_make_service_with_connect_info::<std::net::SocketAddr>()).await.ok();
        });
        let setup = self.setup_store.unwrap_or_else(|| backend.store.clone());
        let workspace = test_workspace(setup.as_ref()).await;
        if let Some(feed) = self.dispatch {
            let feed = Arc::new(WorkspaceFeed { inner: feed, prefix: format!("WS#{}#", workspace.id) });
            let dispatcher = dispatch::Dispatcher::new(dispatch_state, queue.clone()).expect("the dispatcher");
            tokio::spawn(Arc::new(dispatcher).run_local(feed, queue));
        }
        TestApi {
            backend: backend.name,
            store_reads,
            store_writes,
            store_calls,
            store_capacity,
            store_partitions,
            base: format!("http://{addr}"),
            http: reqwest::Client::new(),
            store: setup,
            key,
            workspace_id: workspace.id,
            objects,
            secrets,
            router,
            warm_roles: self.warm_roles,
        }
    }
}

/// What another task makes happen (the dispatcher's deliveries and notifications), waited for:
/// `probe` every 50 ms until it answers `Ok`, for at most `within`; otherwise a panic naming
/// `what` and the last `Err` (what was seen instead).
pub async fn eventually<T>(within: Duration, what: &str, mut probe: impl AsyncFnMut() -> Result<T, String>) -> T {
    let started = Instant::now();
    loop {
        match probe().await {
            Ok(found) => return found,
            Err(seen) if started.elapsed() >= within => panic!("{what} within {within:?}; saw {seen}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// The URL of a paged list's next page: the `Link` header's `rel="next"` target.
pub fn next_page(headers: &reqwest::header::HeaderMap) -> Option<String> {
    let link = headers.get(reqwest::header::LINK)?.to_str().ok()?;
    let (target, params) = link.split_once(';')?;
    (params.trim() == "rel=\"next\"").then(|| target.trim().trim_start_matches('<').trim_end_matches('>').to_owned())
}

/// Asserts the spec's error body: `{statusCode, message, errors?}` with the given status.
pub fn assert_error_body(backend: &str, status: u16, body: &Value, expected: u16) {
    assert_eq!(status, expected, "[{backend}] status, body {body}");
    assert_eq!(body["statusCode"], expected, "[{backend}] statusCode in {body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "[{backend}] message in {body}");
}

/// Counts the store calls the server makes, to prove which requests never read the store and to
/// count round trips per request (bench `roundtrips`); records when each ran, and may delay each
/// by a fixed latency so that calls made concurrently overlap measurably.
struct CountingStore {
    inner: Arc<dyn Store>,
    reads: Arc<AtomicUsize>,
    writes: Arc<AtomicUsize>,
    calls: Arc<Mutex<Vec<(Instant, Instant)>>>,
    capacity: Arc<Mutex<Capacity>>,
    partitions: Arc<Mutex<PartitionUnits>>,
    latency: Option<Duration>,
}

/// Capacity units by partition key (`GSI1 <pk>`, `GSI2 <pk>` for the indexes' partitions), summed over calls:
/// where a workspace's load lands (docs/performance.md, "Scale").
pub type PartitionUnits = std::collections::BTreeMap<String, Capacity>;

impl CountingStore {
    fn charge(&self, partition: &str, units: Capacity) {
        self.capacity.lock().unwrap_or_else(|p| p.into_inner()).add(units);
        self.partitions.lock().unwrap_or_else(|p| p.into_inner()).entry(partition.to_owned()).or_default().add(units);
    }

    /// A write's units land on its table partition and, for each index the item is in, on
    /// the index's partition too (DynamoDB propagates the write to the index).
    fn charge_write(&self, key: &Key, item: Option<&Item>, units: Capacity) {
        self.charge(&key.pk, units);
        for index in workapi_store::Index::SECONDARY {
            if let Some(index_pk) = item.and_then(|i| i.get(index.key_attrs().0)).and_then(|v| v.as_str()) {
                let name = index.name().unwrap_or_default();
                let mut partitions = self.partitions.lock().unwrap_or_else(|p| p.into_inner());
                partitions.entry(format!("{name} {index_pk}")).or_default().add(units);
            }
        }
    }

    async fn timed<T>(&self, counter: &AtomicUsize, call: impl Future<Output = T>) -> T {
        counter.fetch_add(1, Ordering::SeqCst);
        let start = Instant::now();
        if let Some(latency) = self.latency {
            tokio::time::sleep(latency).await;
        }
        let out = call.await;
        // Without a latency there is no depth to tell (calls do not overlap measurably), and an
        // unbounded record would grow through the handler bench's many calls.
        if self.latency.is_some() {
            self.calls.lock().unwrap_or_else(|p| p.into_inner()).push((start, Instant::now()));
        }
        out
    }
}

/// The store calls of one request ([`TestApi::round_trips`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundTrips {
    pub reads: usize,
    pub writes: usize,
    /// The longest chain of calls each started after the previous ended: the round trips the
    /// request waited for one after another. Recorded only under a store latency
    /// ([`TestApiBuilder::store_latency`]); 0 without.
    pub depth: usize,
    /// The DynamoDB capacity units the calls consume ([`capacity`]).
    pub capacity: Capacity,
}

impl RoundTrips {
    /// Reads and writes, as the per-area tests state them.
    pub fn counts(&self) -> (usize, usize) {
        (self.reads, self.writes)
    }
}

/// The longest chain of intervals in which each starts after the previous one ended.
pub fn sequential_depth(calls: &[(Instant, Instant)]) -> usize {
    let mut calls = calls.to_vec();
    calls.sort();
    let mut depth = vec![1; calls.len()];
    for i in 0..calls.len() {
        for j in 0..i {
            if calls[j].1 <= calls[i].0 {
                depth[i] = depth[i].max(depth[j] + 1);
            }
        }
    }
    depth.into_iter().max().unwrap_or(0)
}

#[async_trait::async_trait]
impl Store for CountingStore {
    async fn get(&self, key: &Key) -> StoreResult<Option<Item>> {
        let found = self.timed(&self.reads, self.inner.get(key)).await;
        self.charge(&key.pk, Capacity::get(found.as_ref().ok().and_then(Option::as_ref), true));
        found
    }
    async fn get_eventually(&self, key: &Key) -> StoreResult<Option<Item>> {
        let found = self.timed(&self.reads, self.inner.get_eventually(key)).await;
        self.charge(&key.pk, Capacity::get(found.as_ref().ok().and_then(Option::as_ref), false));
        found
    }
    async fn put(&self, item: Item, cond: Condition) -> StoreResult<()> {
        if let Some(key) = Key::of(&item) {
            self.charge_write(&key, Some(&item), Capacity::write(Some(&item)));
        }
        self.timed(&self.writes, self.inner.put(item, cond)).await
    }
    async fn update(&self, key: &Key, update: Update, cond: Condition) -> StoreResult<Item> {
        let after = self.timed(&self.writes, self.inner.update(key, update, cond)).await;
        self.charge_write(key, after.as_ref().ok(), Capacity::write(after.as_ref().ok()));
        after
    }
    async fn delete(&self, key: &Key, cond: Condition) -> StoreResult<Option<Item>> {
        let before = self.timed(&self.writes, self.inner.delete(key, cond)).await;
        let before_item = before.as_ref().ok().and_then(Option::as_ref);
        self.charge_write(key, before_item, Capacity::write(before_item));
        before
    }
    async fn query(&self, query: Query) -> StoreResult<Page> {
        let page = self.timed(&self.reads, self.inner.query(query.clone())).await;
        let partition = match query.index.name() {
            None => query.pk.clone(),
            Some(index) => format!("{index} {}", query.pk),
        };
        self.charge(&partition, Capacity::query(&query, page.as_ref().map_or(&[][..], |p| &p.items)));
        page
    }
    async fn transact(&self, ops: Vec<TxOp>) -> StoreResult<()> {
        for op in &ops {
            let units = Capacity::transact(std::slice::from_ref(op));
            match op {
                TxOp::Put { item, .. } => {
                    if let Some(key) = Key::of(item) {
                        self.charge_write(&key, Some(item), units);
                    }
                }
                TxOp::Update { key, .. } | TxOp::Delete { key, .. } | TxOp::Check { key, .. } => {
                    self.charge(&key.pk, units)
                }
            }
        }
        self.timed(&self.writes, self.inner.transact(ops)).await
    }
    async fn increment(&self, key: &Key, attr: &str, by: i64, init: Item, cond: Condition) -> StoreResult<i64> {
        self.charge(&key.pk, Capacity::write(None));
        self.timed(&self.writes, self.inner.increment(key, attr, by, init, cond)).await
    }
}
