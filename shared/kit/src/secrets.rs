//! Secret values kept for workspaces (an agent's raw provider key, an MCP server's bearer token,
//! OAuth credentials, saved provider keys; docs/agents.md): one trait, two backends, chosen
//! like the object store by a spec string.
//!
//! - [`SecretsManagerSecrets`] (`secretsmanager:<name prefix>`): AWS Secrets Manager, one secret
//!   per value, named `<prefix><name>`. Its client is built on first use with the timeouts and
//!   retries of [`workapi_store::aws::AwsSettings`], so a function that never saves a secret never loads it.
//! - [`DirectorySecrets`] (`dir:<directory>`): one file per value, readable by the owner only;
//!   the embedded default of the local server (`<data dir>/secrets`).
//!
//! The table keeps only a secret's [`SecretName`]. Values travel as [`SecretValue`], whose
//! `Debug` and `Display` print `<redacted>`, and no error of this module carries a value.

use crate::error::ApiError;
use async_trait::async_trait;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Longest secret name (Secrets Manager allows 512 characters with the prefix).
pub const MAX_NAME_CHARS: usize = 400;
/// Largest secret value in bytes (Secrets Manager allows 65 536).
pub const MAX_VALUE_BYTES: usize = 16 * 1024;

/// A secret's name below the store's prefix: `/`-separated segments of ASCII letters, digits,
/// `-`, `_` and `.` (never `.` or `..` alone), so it is a valid Secrets Manager name and a
/// relative path that cannot climb out of the directory store.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SecretName(String);

impl SecretName {
    pub fn new(name: impl Into<String>) -> Option<SecretName> {
        let name = name.into();
        let segment_ok = |s: &str| {
            !s.is_empty()
                && s != "."
                && s != ".."
                && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        };
        (name.len() <= MAX_NAME_CHARS && name.split('/').all(segment_ok)).then_some(SecretName(name))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for SecretName {
    type Error = String;
    fn try_from(value: String) -> Result<Self, String> {
        SecretName::new(value).ok_or_else(|| "not a secret name".to_owned())
    }
}

impl From<SecretName> for String {
    fn from(name: SecretName) -> String {
        name.0
    }
}

/// A secret value. It is shown only by [`SecretValue::expose`]; formatting prints `<redacted>`.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    pub fn new(value: impl Into<String>) -> SecretValue {
        SecretValue(value.into())
    }

    /// The value itself: for the store's backend, and for nothing that is logged or answered.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl std::fmt::Display for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// `create` found a secret of that name (names are fresh ids, so this is a bug or a replay).
    #[error("secret {0} exists already")]
    Exists(String),
    /// A value over [`MAX_VALUE_BYTES`].
    #[error("a secret value is at most {MAX_VALUE_BYTES} bytes")]
    TooLarge,
    /// The backend failed beyond its retries; the message names the secret, never its value.
    #[error("secret store: {0}")]
    Unavailable(String),
}

pub type SecretResult<T> = Result<T, SecretError>;

/// A failing secret store is a dependency outage: 503 with `Retry-After` and the error body
/// (DESIGN §6a); the cause is logged, never sent.
impl From<SecretError> for ApiError {
    fn from(e: SecretError) -> Self {
        match e {
            SecretError::Unavailable(_) => ApiError::unavailable(e),
            other => ApiError::internal(other),
        }
    }
}

/// Which backend holds the secrets (for the docs and the operator's messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretBackend {
    Directory,
    SecretsManager,
}

#[async_trait]
pub trait SecretStore: Send + Sync {
    fn backend(&self) -> SecretBackend;

    /// Stores a new secret; one of the same name is [`SecretError::Exists`] and is left as it
    /// was (callers use fresh names, so a value is never overwritten in place).
    async fn create(&self, name: &SecretName, value: &SecretValue) -> SecretResult<()>;

    /// The value, None when there is no such secret.
    async fn get(&self, name: &SecretName) -> SecretResult<Option<SecretValue>>;

    /// Deletes the secret at once (no recovery window); deleting an absent secret succeeds.
    async fn delete(&self, name: &SecretName) -> SecretResult<()>;
}

/// Deletes secrets nothing refers to any more (a change's superseded credentials, or those it
/// created before its write failed). A failure leaves an orphan, its name logged for clean-up,
/// but never fails the request: the change is settled already.
pub async fn forget(secrets: &dyn SecretStore, names: &[SecretName]) {
    for name in names {
        if let Err(e) = secrets.delete(name).await {
            tracing::warn!(secret = name.as_str(), error = %e, "could not delete an unreferenced secret; delete it by hand");
        }
    }
}

/// Opens a secret store from its spec: `dir:<directory>` or `secretsmanager:<name prefix>`
/// (endpoint, region and credentials from the AWS SDK's usual settings, e.g.
/// `AWS_ENDPOINT_URL_SECRETS_MANAGER`; the client built on first use).
pub fn open_secrets(spec: &str) -> Result<Arc<dyn SecretStore>, String> {
    match spec.split_once(':') {
        Some(("dir", path)) if !path.is_empty() => Ok(Arc::new(DirectorySecrets::new(path))),
        Some(("secretsmanager", prefix)) if valid_prefix(prefix) => Ok(Arc::new(SecretsManagerSecrets::new(prefix))),
        _ => Err(format!(
            "a secret store is dir:<directory> or secretsmanager:<prefix> (letters, digits, / _ + = . @ -), not {spec:?}"
        )),
    }
}

/// A name prefix Secrets Manager accepts (its name alphabet), at most 100 characters.
fn valid_prefix(prefix: &str) -> bool {
    !prefix.is_empty()
        && prefix.len() <= 100
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'+' | b'=' | b'.' | b'@' | b'-'))
}

fn check_size(value: &SecretValue) -> SecretResult<()> {
    if value.expose().len() > MAX_VALUE_BYTES { Err(SecretError::TooLarge) } else { Ok(()) }
}

/// Secrets as files under a directory: one file per secret (its name is the relative path),
/// mode 0600 in directories of mode 0700 on Unix.
pub struct DirectorySecrets {
    root: PathBuf,
}

impl DirectorySecrets {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DirectorySecrets { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, name: &SecretName) -> PathBuf {
        // Segments are `[A-Za-z0-9._-]+` and never `.`/`..` (SecretName): never climbs out.
        name.as_str().split('/').fold(self.root.clone(), |path, segment| path.join(segment))
    }
}

fn io_error(what: &str, name: &SecretName, e: impl std::fmt::Display) -> SecretError {
    SecretError::Unavailable(format!("{what} secret {}: {e}", name.as_str()))
}

async fn blocking<T: Send + 'static>(
    name: &SecretName,
    work: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> SecretResult<std::io::Result<T>> {
    tokio::task::spawn_blocking(work).await.map_err(|e| io_error("accessing", name, e))
}

#[async_trait]
impl SecretStore for DirectorySecrets {
    fn backend(&self) -> SecretBackend {
        SecretBackend::Directory
    }

    async fn create(&self, name: &SecretName, value: &SecretValue) -> SecretResult<()> {
        check_size(value)?;
        let path = self.path(name);
        let bytes = value.expose().as_bytes().to_vec();
        match blocking(name, move || create_file(&path, &bytes)).await? {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(SecretError::Exists(name.as_str().into())),
            Err(e) => Err(io_error("writing", name, e)),
        }
    }

    async fn get(&self, name: &SecretName) -> SecretResult<Option<SecretValue>> {
        let path = self.path(name);
        match blocking(name, move || std::fs::read_to_string(path)).await? {
            Ok(text) => Ok(Some(SecretValue(text))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error("reading", name, e)),
        }
    }

    async fn delete(&self, name: &SecretName) -> SecretResult<()> {
        let path = self.path(name);
        match blocking(name, move || std::fs::remove_file(path)).await? {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_error("deleting", name, e)),
        }
    }
}

/// Writes a temporary file (owner-only) beside the target and links it to the target's name,
/// which fails if the target exists: readers see the whole value or no secret, and an existing
/// secret is never replaced.
fn create_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().ok_or_else(|| std::io::Error::other("a secret path has a parent"))?;
    create_private_dirs(dir)?;
    let temporary = dir.join(format!(".{}.tmp", uuid::Uuid::new_v4().simple()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&temporary)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    let linked = written.and_then(|()| std::fs::hard_link(&temporary, path));
    let _ = std::fs::remove_file(&temporary);
    linked
}

fn create_private_dirs(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Secrets in AWS Secrets Manager, named `<prefix><name>`.
pub struct SecretsManagerSecrets {
    prefix: String,
    client: tokio::sync::OnceCell<aws_sdk_secretsmanager::Client>,
}

impl SecretsManagerSecrets {
    pub fn new(prefix: impl Into<String>) -> Self {
        SecretsManagerSecrets { prefix: prefix.into(), client: tokio::sync::OnceCell::new() }
    }

    /// A store on a client built by the caller (tests).
    pub fn with_client(prefix: impl Into<String>, client: aws_sdk_secretsmanager::Client) -> Self {
        SecretsManagerSecrets { prefix: prefix.into(), client: tokio::sync::OnceCell::new_with(Some(client)) }
    }

    /// The full Secrets Manager name of a secret.
    pub fn secret_id(&self, name: &SecretName) -> String {
        format!("{}{}", self.prefix, name.as_str())
    }

    async fn client(&self) -> &aws_sdk_secretsmanager::Client {
        self.client
            .get_or_init(|| async { aws_sdk_secretsmanager::Client::new(workapi_store::aws::sdk_config().await) })
            .await
    }
}

fn sdk_error<E: std::error::Error + 'static>(
    what: &str,
    id: &str,
    e: &aws_sdk_secretsmanager::error::SdkError<E>,
) -> SecretError {
    SecretError::Unavailable(format!("{what} secret {id}: {}", aws_sdk_secretsmanager::error::DisplayErrorContext(e)))
}

#[async_trait]
impl SecretStore for SecretsManagerSecrets {
    fn backend(&self) -> SecretBackend {
        SecretBackend::SecretsManager
    }

    async fn create(&self, name: &SecretName, value: &SecretValue) -> SecretResult<()> {
        check_size(value)?;
        let id = self.secret_id(name);
        let sent = self.client().await.create_secret().name(&id).secret_string(value.expose()).send().await;
        match sent {
            Ok(_) => Ok(()),
            // Names are fresh ids: an existing secret holding our value is this very create,
            // applied once already, its answer lost and the call retried by the SDK.
            Err(e) if e.as_service_error().is_some_and(|s| s.is_resource_exists_exception()) => {
                match self.get(name).await {
                    Ok(Some(existing)) if existing.expose() == value.expose() => Ok(()),
                    _ => Err(SecretError::Exists(id)),
                }
            }
            Err(e) => Err(sdk_error("creating", &id, &e)),
        }
    }

    async fn get(&self, name: &SecretName) -> SecretResult<Option<SecretValue>> {
        let id = self.secret_id(name);
        match self.client().await.get_secret_value().secret_id(&id).send().await {
            Ok(out) => Ok(out.secret_string().map(SecretValue::new)),
            Err(e) if e.as_service_error().is_some_and(|s| s.is_resource_not_found_exception()) => Ok(None),
            Err(e) => Err(sdk_error("reading", &id, &e)),
        }
    }

    async fn delete(&self, name: &SecretName) -> SecretResult<()> {
        let id = self.secret_id(name);
        let sent = self.client().await.delete_secret().secret_id(&id).force_delete_without_recovery(true).send().await;
        match sent {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().is_some_and(|s| s.is_resource_not_found_exception()) => Ok(()),
            Err(e) => Err(sdk_error("deleting", &id, &e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_paths_and_secrets_manager_names() {
        for good in ["a", "ws/2f1c/agents/x_y-z.1", "A.b"] {
            assert!(SecretName::new(good).is_some(), "{good}");
        }
        for bad in ["", "/a", "a/", "a//b", "../a", "a/./b", "a/../b", "a b", "a#b", "ä", &"a".repeat(401)] {
            assert!(SecretName::new(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn values_never_format() {
        let value = SecretValue::new("sk-live-1234567890");
        assert_eq!(format!("{value:?} {value}"), "<redacted> <redacted>");
        assert_eq!(value.expose(), "sk-live-1234567890");
    }

    #[test]
    fn specs() {
        assert!(open_secrets("dir:/tmp/x").is_ok());
        assert!(open_secrets("secretsmanager:workapi/prod/").is_ok());
        for bad in ["", "dir:", "secretsmanager:", "secretsmanager:a b", "s3:bucket"] {
            assert!(open_secrets(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn the_directory_store_creates_once_reads_and_deletes() {
        let root = std::env::temp_dir().join(format!("workapi-secrets-{}", uuid::Uuid::new_v4().simple()));
        let store = DirectorySecrets::new(&root);
        let name = SecretName::new("ws/1/agents/2/key").unwrap();
        assert!(store.get(&name).await.unwrap().is_none());
        store.create(&name, &SecretValue::new("first")).await.unwrap();
        assert!(matches!(store.create(&name, &SecretValue::new("second")).await, Err(SecretError::Exists(_))));
        assert_eq!(store.get(&name).await.unwrap().unwrap().expose(), "first", "never overwritten");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(root.join("ws/1/agents/2/key")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        store.delete(&name).await.unwrap();
        store.delete(&name).await.unwrap();
        assert!(store.get(&name).await.unwrap().is_none());
        let big = SecretValue::new("x".repeat(MAX_VALUE_BYTES + 1));
        assert!(matches!(store.create(&name, &big).await, Err(SecretError::TooLarge)));
        let _ = std::fs::remove_dir_all(root);
    }
}
