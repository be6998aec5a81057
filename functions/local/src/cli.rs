//! The operator CLI: `serve`, `workspace`, `user` (including `set-password`), `token`, `seed`,
//! `table` and `template` (generated files, `local::template`) commands against either store backend. Commands that create something print its id (or the raw token) alone on
//! stdout so scripts can capture it; everything else goes to stderr.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use uuid::Uuid;
use workapi_domain::identity::{self, NewToken, NewUser, UserKind};
use workapi_domain::token::TokenKey;
use workapi_kit::app::{TokenKeySource, open_store, session_key_source_from_env, token_key_source_from_env};
use workapi_kit::secrets::{DirectorySecrets, SecretStore, open_secrets};
use workapi_kit::session::{SessionKeySet, SessionKeySource};
use workapi_store::Store;
use workapi_store::dynamo::DynamoStore;
use workapi_store::objects::{DirectoryObjects, ObjectStore, open_objects};

#[derive(Parser)]
#[command(name = "workapi", about = "workapi local server and operator CLI")]
pub struct Cli {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args)]
pub struct StoreArgs {
    /// Store backend: `sqlite:<file>` (embedded, the default) or `dynamodb:<table>` (endpoint,
    /// region and credentials from the AWS SDK's usual settings, e.g. AWS_ENDPOINT_URL).
    #[arg(long, global = true, env = "LT_STORE")]
    pub store: Option<String>,
    /// Directory of the default embedded store, its token key and uploaded files (`files/`).
    /// Default: `.workapi/` under the current directory (the repository root for `cargo run`).
    #[arg(long, global = true, env = "LT_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Where uploaded files' bytes go: `dir:<directory>` (default: the data directory, so
    /// they land in its `files/`) or `s3:<bucket>` (endpoint, region and credentials from the AWS SDK's usual
    /// settings, e.g. AWS_ENDPOINT_URL_S3; LT_S3_PATH_STYLE=true for moto). docs/files.md.
    #[arg(long, global = true, env = "LT_OBJECTS")]
    pub objects: Option<String>,
    /// Where secret values (agent provider keys, MCP credentials) go: `dir:<directory>`
    /// (default: the data directory's `secrets/`) or `secretsmanager:<name prefix>` (the AWS
    /// SDK's usual settings, e.g. AWS_ENDPOINT_URL_SECRETS_MANAGER). docs/agents.md.
    #[arg(long, global = true, env = "LT_SECRETS")]
    pub secrets: Option<String>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Serve the whole API; an empty store gets a demo workspace and an admin token.
    Serve {
        #[arg(long, default_value = "127.0.0.1:3000", env = "LT_ADDR")]
        addr: SocketAddr,
    },
    #[command(subcommand)]
    Workspace(WorkspaceCommand),
    #[command(subcommand)]
    User(UserCommand),
    #[command(subcommand)]
    Token(TokenCommand),
    #[command(subcommand)]
    Table(TableCommand),
    #[command(subcommand)]
    Seed(SeedCommand),
    /// Write template.yaml's function blocks, Cargo.toml's watch router and missing events/
    /// from the registry (each function's descriptor; docs/functions.md). Opens no store.
    Template {
        /// Write nothing; fail naming every file that differs.
        #[arg(long)]
        check: bool,
        /// The repository's root.
        #[arg(long, default_value = ".")]
        root: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum SeedCommand {
    /// Load a seed file (docs/seed.md) into a workspace: organizations, contacts, catalog
    /// categories, projects, tasks and catalog products, agents, saved provider keys (their key
    /// material into the secret store) and skills. Idempotent; validated as a whole first.
    Load {
        #[arg(long)]
        workspace: Uuid,
        /// The seed file (JSON)
        file: PathBuf,
    },
    /// Generate a large workspace's records (docs/seed.md#a-large-workspace): task tags,
    /// projects (the user a member), catalog products at the largest size an item holds, and
    /// the user's notifications. Not idempotent: every run adds as many again.
    Generate {
        #[arg(long)]
        workspace: Uuid,
        /// The projects' member, the notifications' owner and the tags' creator
        #[arg(long)]
        user: Uuid,
        #[arg(long, default_value_t = crate::generate::Sizes::LARGE.tags)]
        tags: usize,
        #[arg(long, default_value_t = crate::generate::Sizes::LARGE.projects)]
        projects: usize,
        #[arg(long, default_value_t = crate::generate::Sizes::LARGE.products)]
        products: usize,
        #[arg(long, default_value_t = crate::generate::Sizes::LARGE.notifications)]
        notifications: usize,
    },
}

#[derive(Subcommand)]
pub enum WorkspaceCommand {
    /// Create a workspace; prints its id.
    Create {
        #[arg(long)]
        name: String,
        #[arg(long, default_value = "en")]
        language: String,
    },
    /// List workspaces as JSON lines.
    List,
    /// Switch a workspace's API feature on or off. While it is off, OAuth authorization and
    /// refresh fail for the workspace (docs/oauth.md); new workspaces have it on.
    SetApi {
        #[arg(long)]
        workspace: Uuid,
        #[arg(value_enum)]
        state: Switch,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Switch {
    On,
    Off,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Kind {
    Employee,
    OrganizationMember,
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Create a user with a base role (_root, _ceo, _team_leader, _staff, _guest) or a custom role id; prints its id.
    Create {
        #[arg(long)]
        workspace: Uuid,
        #[arg(long)]
        email: String,
        #[arg(long)]
        name: String,
        #[arg(long, default_value = "_staff")]
        role: String,
        #[arg(long, value_enum, default_value = "employee")]
        kind: Kind,
        #[arg(long, default_value = "en")]
        language: String,
    },
    /// List a workspace's users as JSON lines.
    List {
        #[arg(long)]
        workspace: Uuid,
    },
    /// Set a user's login password (Argon2id), read from standard input: never from an
    /// argument, which would end up in shell history and process listings. On a terminal it
    /// prompts twice; otherwise it reads the first line (e.g. `printf '%s' "$PW" | workapi …`).
    SetPassword {
        #[arg(long)]
        workspace: Uuid,
        #[arg(long)]
        user: Uuid,
        /// Read the password from standard input without prompting, even on a terminal.
        #[arg(long)]
        password_stdin: bool,
    },
}

#[derive(Subcommand)]
pub enum TokenCommand {
    /// Create a personal access token; prints the raw token alone (shown once, stored hashed).
    Create {
        #[arg(long)]
        workspace: Uuid,
        #[arg(long)]
        user: Uuid,
        #[arg(long, default_value = "cli")]
        name: String,
        /// Comma-separated scopes.
        #[arg(long, default_value = "api:read,api:write", value_delimiter = ',')]
        scopes: Vec<String>,
        /// Lifetime in days; omit for a token that does not expire.
        #[arg(long)]
        expires_in_days: Option<u32>,
    },
    /// List a user's tokens (metadata only) as JSON lines.
    List {
        #[arg(long)]
        workspace: Uuid,
        #[arg(long)]
        user: Uuid,
    },
    /// Revoke a token by id.
    Revoke {
        #[arg(long)]
        workspace: Uuid,
        #[arg(long)]
        user: Uuid,
        #[arg(long)]
        token_id: Uuid,
    },
}

#[derive(Subcommand)]
pub enum TableCommand {
    /// Create the DynamoDB table (keys, GSI1, GSI2, TTL, its stream) when it does not exist; add the
    /// indexes an existing table lacks, then its stream (run again while an index is being added).
    Create,
    /// Write the list index keys of tags, projects and catalog products stored before the
    /// list index (GSI2) existed, in every workspace (docs/data-model.md#lists). Idempotent.
    Reindex,
}

/// The chosen store, opened, and where the embedded store's token key lives.
pub struct Backend {
    store: Arc<dyn Store>,
    /// The embedded store itself, when it is the store: its change feed and queue feed the
    /// local dispatcher.
    embedded: Option<workapi_store::sqlite::SqliteStore>,
    spec: String,
    data_dir: PathBuf,
    objects: Arc<dyn ObjectStore>,
    secrets: Arc<dyn SecretStore>,
}

/// `.workapi/` under the current directory: `cargo run` at the repository root keeps its data
/// there, and a binary copied or installed elsewhere writes where it is run, never into the
/// checkout it was built from.
pub fn default_data_dir() -> PathBuf {
    PathBuf::from(DEFAULT_DATA_DIR)
}

pub const DEFAULT_DATA_DIR: &str = ".workapi";

impl StoreArgs {
    pub async fn open(&self) -> CliResult<Backend> {
        let data_dir = self.data_dir.clone().unwrap_or_else(default_data_dir);
        let spec = match &self.store {
            Some(spec) => spec.clone(),
            None => format!("sqlite:{}", data_dir.join("local.db").display()),
        };
        let objects = match &self.objects {
            Some(spec) => open_objects(spec)?,
            None => Arc::new(DirectoryObjects::new(&data_dir)),
        };
        let secrets = match &self.secrets {
            Some(spec) => open_secrets(spec)?,
            None => Arc::new(DirectorySecrets::new(data_dir.join("secrets"))),
        };
        let (store, embedded): (Arc<dyn Store>, _) = match spec.strip_prefix("sqlite:") {
            Some(path) if !path.is_empty() => {
                let sqlite = workapi_store::sqlite::SqliteStore::open(std::path::Path::new(path))?;
                (Arc::new(sqlite.clone()), Some(sqlite))
            }
            _ => (open_store(&spec).await?, None),
        };
        Ok(Backend { store, embedded, spec, data_dir, objects, secrets })
    }
}

impl Backend {
    pub fn store(&self) -> Arc<dyn Store> {
        self.store.clone()
    }

    /// What the local dispatcher reads (docs/events.md#delivery): the embedded store's change
    /// feed and its queue. None on DynamoDB: deployed, Lambda reads the table's stream.
    pub fn dispatch_sources(
        &self,
    ) -> Option<(Arc<dyn workapi_store::changes::ChangeFeed>, Arc<dyn workapi_store::changes::PolledQueue>)> {
        let sqlite = self.embedded.as_ref()?;
        Some((Arc::new(sqlite.changes()), Arc::new(sqlite.clone())))
    }

    /// The object store of uploaded files.
    pub fn objects(&self) -> Arc<dyn ObjectStore> {
        self.objects.clone()
    }

    /// The secret store of agent credentials.
    pub fn secrets(&self) -> Arc<dyn SecretStore> {
        self.secrets.clone()
    }

    fn dynamo_table(&self) -> Option<&str> {
        self.spec.strip_prefix("dynamodb:")
    }

    /// The token key: from the environment when set (as on Lambda), else, for the embedded
    /// store, a key file in the data directory created on first use.
    pub async fn token_key(&self) -> CliResult<TokenKey> {
        if std::env::var_os("LT_TOKEN_KEY").is_some() || std::env::var_os("LT_TOKEN_KEY_SECRET_ID").is_some() {
            return match token_key_source_from_env()? {
                TokenKeySource::Static(key) => Ok(key),
                TokenKeySource::SecretsManager { secret_id, .. } => {
                    Ok(workapi_kit::app::fetch_token_key(&secret_id).await?)
                }
            };
        }
        match self.dynamo_table() {
            None => load_or_create_key(&self.data_dir.join("token.key")),
            Some(_) => Err("set LT_TOKEN_KEY_SECRET_ID (or LT_TOKEN_KEY) to the deployment's token key".into()),
        }
    }
}

impl Backend {
    /// The session key set: from the environment when set (`LT_SESSION_KEYS_SECRET_ID` or
    /// `LT_SESSION_KEYS`, as on Lambda), else, for the embedded store, `session-keys.json` in
    /// the data directory, created with one random key on first use.
    pub async fn session_keys(&self) -> CliResult<SessionKeySource> {
        if std::env::var_os("LT_SESSION_KEYS").is_some() || std::env::var_os("LT_SESSION_KEYS_SECRET_ID").is_some() {
            return Ok(session_key_source_from_env()?);
        }
        match self.dynamo_table() {
            None => Ok(SessionKeySource::fixed(load_or_create_session_keys(&self.data_dir.join("session-keys.json"))?)),
            Some(_) => {
                Err("set LT_SESSION_KEYS_SECRET_ID (or LT_SESSION_KEYS) to the deployment's session keys".into())
            }
        }
    }
}

fn load_or_create_session_keys(path: &std::path::Path) -> CliResult<SessionKeySet> {
    if let Ok(text) = std::fs::read_to_string(path) {
        return Ok(SessionKeySet::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?);
    }
    let keys = SessionKeySet::generate("local-1");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    write_private(path, &keys.to_json())?;
    Ok(keys)
}

/// The new password from standard input: prompted twice on a terminal (unless
/// `--password-stdin`), else the first line without its line ending.
fn read_new_password(no_prompt: bool) -> CliResult<String> {
    use std::io::{BufRead, IsTerminal, Write};
    let stdin = std::io::stdin();
    let prompt = !no_prompt && stdin.is_terminal();
    let read = |label: &str| -> CliResult<String> {
        if prompt {
            eprint!("{label} (input is shown; pipe it in to hide it): ");
            std::io::stderr().flush()?;
        }
        let mut line = String::new();
        stdin.lock().read_line(&mut line)?;
        Ok(line.strip_suffix('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).unwrap_or(&line).to_owned())
    };
    let password = read("New password")?;
    if prompt && read("Repeat it")? != password {
        return Err("the passwords differ".into());
    }
    if password.is_empty() {
        return Err("no password on standard input".into());
    }
    Ok(password)
}

fn load_or_create_key(path: &std::path::Path) -> CliResult<TokenKey> {
    if let Ok(text) = std::fs::read_to_string(path) {
        return TokenKey::from_hex(&text)
            .ok_or_else(|| format!("{} is not a 64-hex-character key", path.display()).into());
    }
    let key = TokenKey::generate();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    write_private(path, &key.to_hex())?;
    Ok(key)
}

#[cfg(unix)]
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(text.as_bytes())
}

#[cfg(not(unix))]
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)
}

/// Every CLI error ends as one message on stderr.
pub type CliResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn print_json_line(value: &impl serde::Serialize) {
    println!("{}", serde_json::to_string(value).unwrap_or_default());
}

/// Runs a non-serving command.
pub async fn run_operator(command: Command, backend: &Backend) -> CliResult<()> {
    let store = backend.store();
    let store = store.as_ref();
    match command {
        Command::Serve { .. } | Command::Template { .. } => unreachable!("handled by main"),
        Command::Workspace(WorkspaceCommand::Create { name, language }) => {
            println!("{}", identity::create_workspace(store, &name, &language).await?.id);
        }
        Command::Workspace(WorkspaceCommand::List) => {
            identity::list_workspaces(store).await?.iter().for_each(print_json_line);
        }
        Command::Workspace(WorkspaceCommand::SetApi { workspace, state }) => {
            let enabled = matches!(state, Switch::On);
            identity::set_api_enabled(store, workspace, enabled).await?;
            eprintln!("API feature of workspace {workspace} is {}", if enabled { "on" } else { "off" });
        }
        Command::User(UserCommand::Create { workspace, email, name, role, kind, language }) => {
            let kind = match kind {
                Kind::Employee => UserKind::Employee,
                Kind::OrganizationMember => UserKind::OrganizationMember,
            };
            let new = NewUser { email: &email, name: &name, role_id: &role, kind, language: &language };
            println!("{}", identity::create_user(store, workspace, new).await?.id);
        }
        Command::User(UserCommand::List { workspace }) => {
            identity::list_users(store, workspace).await?.iter().for_each(print_json_line);
        }
        Command::User(UserCommand::SetPassword { workspace, user, password_stdin }) => {
            let password = read_new_password(password_stdin)?;
            oauth::password::set_password(store, workspace, user, &password).await?;
            eprintln!("password set for user {user}");
        }
        Command::Token(TokenCommand::Create { workspace, user, name, scopes, expires_in_days }) => {
            let key = backend.token_key().await?;
            let expires_at = expires_in_days.map(|days| workapi_store::clock::now_epoch() + i64::from(days) * 86_400);
            let scopes = scopes.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect();
            let (raw, record) =
                identity::create_token(store, &key, workspace, user, NewToken { name: &name, scopes, expires_at })
                    .await?;
            eprintln!("token {} created for user {user}; it is shown only once", record.id);
            println!("{raw}");
        }
        Command::Token(TokenCommand::List { workspace, user }) => {
            identity::list_tokens(store, workspace, user).await?.iter().for_each(|(_, t)| print_json_line(t));
        }
        Command::Token(TokenCommand::Revoke { workspace, user, token_id }) => {
            identity::revoke_token(store, workspace, user, token_id).await?;
            eprintln!("token {token_id} revoked");
        }
        Command::Seed(SeedCommand::Load { workspace, file }) => {
            let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let seed = crate::seed::parse(&text)?;
            let secrets = backend.secrets();
            let report = crate::seed::load_with_secrets(store, secrets.as_ref(), workspace, &seed).await?;
            eprintln!("seed {} loaded into workspace {workspace}: {report}", file.display());
        }
        Command::Seed(SeedCommand::Generate { workspace, user, tags, projects, products, notifications }) => {
            let sizes = crate::generate::Sizes { tags, projects, products, notifications };
            crate::generate::generate(store, workspace, user, sizes).await.map_err(|e| e.to_string())?;
            eprintln!("generated into workspace {workspace}: {sizes:?}");
        }
        Command::Table(TableCommand::Reindex) => {
            let report = crate::reindex::reindex(store).await.map_err(|e| e.to_string())?;
            eprintln!("list index keys written: {report}");
        }
        Command::Table(TableCommand::Create) => match backend.dynamo_table() {
            Some(table) => {
                DynamoStore::from_env(table).await.create_table().await?;
                eprintln!("table {table} is ready");
            }
            None => eprintln!("the embedded store creates its schema by itself; nothing to do"),
        },
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};
    use workapi_store::keys::WsKeys;
    use workapi_store::{Condition, Update};

    #[test]
    fn the_data_directory_defaults_to_the_current_directory_and_help_says_so() {
        assert_eq!(default_data_dir(), PathBuf::from(".workapi"));
        assert!(default_data_dir().is_relative(), "never the checkout the binary was built from");
        let help = Cli::command().render_long_help().to_string();
        assert!(help.contains("`.workapi/` under the current directory"), "{help}");
    }

    /// `workapi token create` for an inactive user is refused with a message that says why
    /// (its token would get 401 on every request); for an active user it works.
    #[tokio::test]
    async fn token_create_refuses_an_inactive_user() {
        let dir = std::env::temp_dir().join(format!("workapi-cli-{}", Uuid::new_v4().simple()));
        let args = |command: &[&str]| {
            let base = ["workapi", "--data-dir", dir.to_str().unwrap()];
            Cli::try_parse_from(base.iter().chain(command)).expect("the arguments parse")
        };
        let backend = args(&["workspace", "list"]).store.open().await.unwrap();
        let store = backend.store();
        let workspace = identity::create_workspace(store.as_ref(), "CLI", "en").await.unwrap();
        let new =
            NewUser { email: "a@cli.example", name: "A", role_id: "_staff", kind: UserKind::Employee, language: "en" };
        let user = identity::create_user(store.as_ref(), workspace.id, new).await.unwrap();
        let (ws, id) = (workspace.id.to_string(), user.id.to_string());
        let create = ["token", "create", "--workspace", &ws, "--user", &id];

        run_operator(args(&create).command, &backend).await.expect("an active user gets a token");
        let key = WsKeys::new(workspace.id).user(user.id);
        store.update(&key, Update::default().set("isActive", false), Condition::Exists).await.unwrap();
        let refused = run_operator(args(&create).command, &backend).await.expect_err("refused");
        let message = refused.to_string();
        assert!(message.contains("inactive") && message.contains(&id), "{message}");
        let tokens = identity::list_tokens(store.as_ref(), workspace.id, user.id).await.unwrap();
        assert_eq!(tokens.len(), 1, "no second token was stored");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
