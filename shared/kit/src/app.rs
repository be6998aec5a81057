//! Per-container state shared by every handler: the store, the secrets and the limits, each set
//! up once.

use crate::cors::AllowedOrigins;
use crate::net::WebhookTargets;
use crate::oauth::MetadataFetchForTests;
use crate::oauth::issuer::SiteUrl;
use crate::ratelimit::{LoginLimits, RateLimits};
use crate::secrets::{SecretStore, open_secrets};
use crate::session::{SessionKeySet, SessionKeySource};
use std::sync::Arc;
use tokio::sync::OnceCell;
use workapi_domain::token::TokenKey;
use workapi_store::Store;
use workapi_store::changes::Queue;
use workapi_store::dynamo::DynamoStore;
use workapi_store::objects::{ObjectStore, open_objects};

/// Where the token key comes from.
pub enum TokenKeySource {
    /// Known at start-up (local server, tests, `LT_TOKEN_KEY`).
    Static(TokenKey),
    /// A Secrets Manager secret whose value is the key in hex, fetched on first use and kept
    /// for the container's life, so cold starts do not wait for it.
    SecretsManager { secret_id: String, cached: OnceCell<TokenKey> },
}

#[derive(Clone)]
pub struct AppState(Arc<Inner>);

struct Inner {
    store: Arc<dyn Store>,
    token_key: TokenKeySource,
    session_keys: SessionKeySource,
    limits: RateLimits,
    login_limits: LoginLimits,
    site_url: SiteUrl,
    cors_origins: AllowedOrigins,
    /// Where uploaded files' bytes live; None in functions that handle no files.
    objects: Option<Arc<dyn ObjectStore>>,
    /// Where workspaces' secret values live; None in functions that keep none.
    secrets: Option<Arc<dyn SecretStore>>,
    metadata_fetch: MetadataFetchForTests,
    webhook_targets: WebhookTargets,
    /// Where webhook deliveries' attempts wait until due; None in functions that queue none.
    queue: Option<Arc<dyn Queue>>,
    events_settle_ms: i64,
}

/// `LT_EVENTS_SETTLE_SECS` (0 or more) in milliseconds, else the domain's default.
fn events_settle_ms_from_env() -> i64 {
    std::env::var("LT_EVENTS_SETTLE_SECS")
        .ok()
        .and_then(|secs| secs.trim().parse::<i64>().ok())
        .filter(|secs| (0..=3600).contains(secs))
        .map_or(workapi_domain::event::SETTLE_MS, |secs| secs * 1000)
}

/// Builds an [`AppState`]; what is not given takes its default (see [`AppStateBuilder::build`]).
pub struct AppStateBuilder {
    store: Arc<dyn Store>,
    token_key: TokenKeySource,
    session_keys: Option<SessionKeySource>,
    limits: Option<RateLimits>,
    login_limits: Option<LoginLimits>,
    site_url: Option<SiteUrl>,
    cors_origins: Option<AllowedOrigins>,
    objects: Option<Arc<dyn ObjectStore>>,
    secrets: Option<Arc<dyn SecretStore>>,
    metadata_fetch: MetadataFetchForTests,
    webhook_targets: Option<WebhookTargets>,
    queue: Option<Arc<dyn Queue>>,
    events_settle_ms: Option<i64>,
}

impl AppStateBuilder {
    /// How long the event feed waits before it lists an event (default: `LT_EVENTS_SETTLE_SECS`,
    /// else `event::SETTLE_MS`; docs/events.md, "A gapless feed").
    pub fn events_settle_ms(mut self, settle_ms: i64) -> Self {
        self.events_settle_ms = Some(settle_ms);
        self
    }

    /// Where webhook endpoints may point (default: `LT_WEBHOOKS_ALLOW_PRIVATE`, else public
    /// https URLs only).
    pub fn webhook_targets(mut self, targets: WebhookTargets) -> Self {
        self.webhook_targets = Some(targets);
        self
    }

    /// Where webhook deliveries' attempts wait until due (docs/events.md#delivery); without
    /// it, a redelivery answers 500.
    pub fn queue(mut self, queue: Arc<dyn Queue>) -> Self {
        self.queue = Some(queue);
        self
    }

    /// Where secret values live (workapi_kit::secrets); without it, operations that keep secrets
    /// answer 500.
    pub fn secrets(mut self, secrets: Arc<dyn SecretStore>) -> Self {
        self.secrets = Some(secrets);
        self
    }

    /// Where uploaded files' bytes live (docs/files.md); without it, file operations answer 500.
    pub fn objects(mut self, objects: Arc<dyn ObjectStore>) -> Self {
        self.objects = Some(objects);
        self
    }

    /// The public site URL (default: `LT_SITE_URL`, else each request's `Host`).
    pub fn site_url(mut self, site_url: SiteUrl) -> Self {
        self.site_url = Some(site_url);
        self
    }

    pub fn session_keys(mut self, source: SessionKeySource) -> Self {
        self.session_keys = Some(source);
        self
    }

    pub fn rate_limits(mut self, limits: RateLimits) -> Self {
        self.limits = Some(limits);
        self
    }

    pub fn login_limits(mut self, limits: LoginLimits) -> Self {
        self.login_limits = Some(limits);
        self
    }

    /// The origins the API routes allow (CORS; default: `LT_CORS_ALLOWED_ORIGINS`).
    pub fn cors_origins(mut self, origins: AllowedOrigins) -> Self {
        self.cors_origins = Some(origins);
        self
    }

    /// Test-only: relaxes the fetch of client metadata documents (loopback addresses, extra
    /// roots). Never called by a function binary; the default admits public addresses only.
    pub fn metadata_fetch_for_tests(mut self, relaxed: MetadataFetchForTests) -> Self {
        self.metadata_fetch = relaxed;
        self
    }

    /// Defaults: rate limits and CORS origins from the environment (the spec's values unless overridden), and,
    /// without a session key set, a random one made for this process alone (its sessions are
    /// valid only here: fine for tests, wrong for anything shared, which must configure one).
    pub fn build(self) -> AppState {
        AppState(Arc::new(Inner {
            store: Arc::new(crate::traced_store::TracedStore(self.store)),
            token_key: self.token_key,
            session_keys: self
                .session_keys
                .unwrap_or_else(|| SessionKeySource::fixed(SessionKeySet::generate("process"))),
            limits: self.limits.unwrap_or_else(RateLimits::from_env),
            login_limits: self.login_limits.unwrap_or_else(LoginLimits::from_env),
            site_url: self.site_url.unwrap_or_else(SiteUrl::from_env),
            cors_origins: self.cors_origins.unwrap_or_else(AllowedOrigins::from_env),
            objects: self.objects,
            secrets: self.secrets,
            metadata_fetch: self.metadata_fetch,
            webhook_targets: self.webhook_targets.unwrap_or_else(WebhookTargets::from_env),
            queue: self.queue,
            events_settle_ms: self.events_settle_ms.unwrap_or_else(events_settle_ms_from_env),
        }))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("environment variable {0} is not set")]
    Missing(&'static str),
    #[error("{0}")]
    Invalid(String),
}

impl AppState {
    /// Rate limits come from the environment (the spec's values unless overridden).
    pub fn new(store: Arc<dyn Store>, token_key: TokenKeySource) -> Self {
        Self::builder(store, token_key).build()
    }

    pub fn with_rate_limits(store: Arc<dyn Store>, token_key: TokenKeySource, limits: RateLimits) -> Self {
        Self::builder(store, token_key).rate_limits(limits).build()
    }

    pub fn builder(store: Arc<dyn Store>, token_key: TokenKeySource) -> AppStateBuilder {
        AppStateBuilder {
            store,
            token_key,
            session_keys: None,
            limits: None,
            login_limits: None,
            site_url: None,
            cors_origins: None,
            objects: None,
            secrets: None,
            metadata_fetch: MetadataFetchForTests::default(),
            webhook_targets: None,
            queue: None,
            events_settle_ms: None,
        }
    }

    pub fn rate_limits(&self) -> &RateLimits {
        &self.0.limits
    }

    /// How long the event feed waits before it lists an event, in milliseconds.
    pub fn events_settle_ms(&self) -> i64 {
        self.0.events_settle_ms
    }

    pub fn login_limits(&self) -> &LoginLimits {
        &self.0.login_limits
    }

    /// The public site URL, from which the issuer and the resource metadata URL derive.
    pub fn site_url(&self) -> &SiteUrl {
        &self.0.site_url
    }

    /// The origins the API routes allow (docs/conventions.md#cors).
    pub fn cors_origins(&self) -> &AllowedOrigins {
        &self.0.cors_origins
    }

    /// Where webhook endpoints may point (docs/events.md#webhook-endpoints).
    pub fn webhook_targets(&self) -> WebhookTargets {
        self.0.webhook_targets
    }

    /// How client metadata documents may be fetched: the strict default except in tests.
    pub fn metadata_fetch(&self) -> &MetadataFetchForTests {
        &self.0.metadata_fetch
    }

    /// Where session keys come from; `keys(kid)` may fetch or refresh them.
    pub fn session_keys(&self) -> &SessionKeySource {
        &self.0.session_keys
    }

    /// The state of a function binary: the store named by `LT_STORE` (see [`open_store`];
    /// deployed functions leave it unset and use the DynamoDB table `TABLE_NAME`), the
    /// token key from `LT_TOKEN_KEY_SECRET_ID` (Secrets Manager) or `LT_TOKEN_KEY`, and the
    /// session keys from `LT_SESSION_KEYS_SECRET_ID` or `LT_SESSION_KEYS`, and the object store
    /// of uploaded files from `LT_OBJECTS` (see [`open_objects`]) or the bucket `FILES_BUCKET`
    /// (none when neither is set: the function handles no files), and the secret store from
    /// `LT_SECRETS` or `SECRETS_PREFIX` (likewise).
    pub async fn from_lambda_env() -> Result<Self, ConfigError> {
        Self::from_vars(&process_env).await
    }

    /// [`AppState::from_lambda_env`] with the variables looked up by `var`: a test builds the
    /// state a function binary would build from a given environment (scripts/watch.sh's).
    pub async fn from_vars(var: EnvVars<'_>) -> Result<Self, ConfigError> {
        let spec = match var("LT_STORE") {
            Some(spec) => spec,
            None => format!("dynamodb:{}", var("TABLE_NAME").ok_or(ConfigError::Missing("TABLE_NAME"))?),
        };
        let mut builder =
            AppState::builder(open_store(&spec).await?, token_key_source(var)?).session_keys(session_key_source(var)?);
        if let Some(objects) = objects_from(var)? {
            builder = builder.objects(objects);
        }
        if let Some(secrets) = secrets_from(var)? {
            builder = builder.secrets(secrets);
        }
        if let Some(queue) = queue_from(var)? {
            builder = builder.queue(queue);
        }
        Ok(builder.build())
    }

    pub fn store(&self) -> &dyn Store {
        self.0.store.as_ref()
    }

    /// The object store of uploaded files, when this function has one.
    pub fn objects(&self) -> Option<&dyn ObjectStore> {
        self.0.objects.as_deref()
    }

    /// The delivery queue, when this function queues deliveries.
    pub fn queue(&self) -> Option<&dyn Queue> {
        self.0.queue.as_deref()
    }

    /// The same, shared (the dispatcher keeps it).
    pub fn queue_arc(&self) -> Option<Arc<dyn Queue>> {
        self.0.queue.clone()
    }

    /// The secret store, when this function keeps secrets.
    pub fn secrets(&self) -> Option<&dyn SecretStore> {
        self.0.secrets.as_deref()
    }

    pub fn store_arc(&self) -> Arc<dyn Store> {
        self.0.store.clone()
    }

    /// The token key; the first call may fetch it from Secrets Manager.
    pub async fn token_key(&self) -> Result<&TokenKey, crate::error::ApiError> {
        match &self.0.token_key {
            TokenKeySource::Static(key) => Ok(key),
            TokenKeySource::SecretsManager { secret_id, cached } => {
                // A failed first fetch is a dependency outage (503); once fetched, the key is
                // cached for the container's life and Secrets Manager is never asked again.
                cached.get_or_try_init(|| fetch_token_key(secret_id)).await
            }
        }
    }
}

/// Opens a store from its spec: `sqlite:<file>` (embedded, created if missing) or
/// `dynamodb:<table>` (endpoint, region and credentials from the AWS SDK's usual settings).
pub async fn open_store(spec: &str) -> Result<Arc<dyn Store>, ConfigError> {
    match spec.split_once(':') {
        #[cfg(feature = "embedded")]
        Some(("sqlite", path)) if !path.is_empty() => {
            let store = workapi_store::sqlite::SqliteStore::open(std::path::Path::new(path))
                .map_err(|e| ConfigError::Invalid(e.to_string()))?;
            Ok(Arc::new(store))
        }
        #[cfg(not(feature = "embedded"))]
        Some(("sqlite", _)) => Err(ConfigError::Invalid(
            "this build has no embedded store (the local server and tests have it: feature `embedded` of shared)"
                .into(),
        )),
        Some(("dynamodb", table)) if !table.is_empty() => Ok(Arc::new(DynamoStore::from_env(table).await)),
        _ => Err(ConfigError::Invalid(format!("a store is sqlite:<file> or dynamodb:<table>, not {spec:?}"))),
    }
}

/// Looks up an environment variable: the process's ([`process_env`]) or a given set.
pub type EnvVars<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);

/// The process's environment, as [`EnvVars`].
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The object store named by `LT_OBJECTS` (`dir:<directory>` or `s3:<bucket>`), else the S3
/// bucket `FILES_BUCKET` (as template.yaml sets it), else none. Nothing is loaded yet: the S3
/// client is built on first use.
pub fn objects_from(var: EnvVars<'_>) -> Result<Option<Arc<dyn ObjectStore>>, ConfigError> {
    let spec = match (var("LT_OBJECTS"), var("FILES_BUCKET")) {
        (Some(spec), _) => spec,
        (None, Some(bucket)) => format!("s3:{bucket}"),
        _ => return Ok(None),
    };
    open_objects(&spec).map(Some).map_err(ConfigError::Invalid)
}

/// The secret store named by `LT_SECRETS` (`dir:<directory>` or `secretsmanager:<prefix>`),
/// else Secrets Manager under the prefix `SECRETS_PREFIX` (as template.yaml sets it for the
/// functions that keep secrets), else none. Nothing is loaded yet: the client is built on
/// first use.
pub fn secrets_from(var: EnvVars<'_>) -> Result<Option<Arc<dyn SecretStore>>, ConfigError> {
    let spec = match (var("LT_SECRETS"), var("SECRETS_PREFIX")) {
        (Some(spec), _) => spec,
        (None, Some(prefix)) => format!("secretsmanager:{prefix}"),
        _ => return Ok(None),
    };
    open_secrets(&spec).map(Some).map_err(ConfigError::Invalid)
}

/// The delivery queue: the SQS queue `DELIVERY_QUEUE_URL` (as template.yaml sets it for the
/// events functions), else none (the local server gives its embedded queue itself).
pub fn queue_from(var: EnvVars<'_>) -> Result<Option<Arc<dyn Queue>>, ConfigError> {
    let Some(url) = var("DELIVERY_QUEUE_URL") else { return Ok(None) };
    #[cfg(feature = "sqs")]
    return Ok(Some(Arc::new(workapi_store::sqs::SqsQueue::from_env(url))));
    #[cfg(not(feature = "sqs"))]
    Err(ConfigError::Invalid(format!(
        "DELIVERY_QUEUE_URL ({url}) is set, but this build has no SQS client (feature `sqs`)"
    )))
}

/// The token key of the process's environment (see [`token_key_source`]).
pub fn token_key_source_from_env() -> Result<TokenKeySource, ConfigError> {
    token_key_source(&process_env)
}

/// The token key: `LT_TOKEN_KEY_SECRET_ID` names a Secrets Manager secret (fetched on first
/// use), or `LT_TOKEN_KEY` holds the key itself (64 hex characters).
pub fn token_key_source(var: EnvVars<'_>) -> Result<TokenKeySource, ConfigError> {
    if let Some(secret_id) = var("LT_TOKEN_KEY_SECRET_ID") {
        return Ok(TokenKeySource::SecretsManager { secret_id, cached: OnceCell::new() });
    }
    let hex = var("LT_TOKEN_KEY").ok_or(ConfigError::Missing("LT_TOKEN_KEY_SECRET_ID"))?;
    let key = TokenKey::from_hex(&hex)
        .ok_or_else(|| ConfigError::Invalid("LT_TOKEN_KEY must be 64 hex characters".into()))?;
    Ok(TokenKeySource::Static(key))
}

/// The session key set of the process's environment (see [`session_key_source`]).
pub fn session_key_source_from_env() -> Result<SessionKeySource, ConfigError> {
    session_key_source(&process_env)
}

/// The session key set: `LT_SESSION_KEYS_SECRET_ID` names a Secrets Manager secret (fetched on
/// first use, refreshed as [`crate::session::RefreshPolicy`] says), or `LT_SESSION_KEYS`
/// holds the key-set JSON itself (docs/auth.md).
pub fn session_key_source(var: EnvVars<'_>) -> Result<SessionKeySource, ConfigError> {
    if let Some(secret_id) = var("LT_SESSION_KEYS_SECRET_ID") {
        return Ok(SessionKeySource::secrets_manager(secret_id));
    }
    let json = var("LT_SESSION_KEYS").ok_or(ConfigError::Missing("LT_SESSION_KEYS_SECRET_ID"))?;
    let keys = SessionKeySet::parse(&json).map_err(|e| ConfigError::Invalid(format!("LT_SESSION_KEYS: {e}")))?;
    Ok(SessionKeySource::fixed(keys))
}

/// Reads the token key from Secrets Manager: 503 when Secrets Manager cannot answer, 500 when
/// the secret is missing or malformed (a deployment fault). The error never contains the
/// secret value.
pub async fn fetch_token_key(secret_id: &str) -> Result<TokenKey, crate::error::ApiError> {
    use crate::error::ApiError;
    let client = aws_sdk_secretsmanager::Client::new(workapi_store::aws::sdk_config().await);
    let out = client.get_secret_value().secret_id(secret_id).send().await.map_err(|e| {
        let cause = format!("reading secret {secret_id}: {}", aws_sdk_secretsmanager::error::DisplayErrorContext(&e));
        if workapi_store::aws::is_transient(&e) { ApiError::unavailable(cause) } else { ApiError::internal(cause) }
    })?;
    let value =
        out.secret_string().ok_or_else(|| ApiError::internal(format!("secret {secret_id} has no string value")))?;
    TokenKey::from_hex(value).ok_or_else(|| ApiError::internal(format!("secret {secret_id} is not 64 hex characters")))
}
