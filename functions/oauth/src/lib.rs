//! The `oauth` function: everything under `{site_url}/api` (DESIGN §1, §3): the password
//! login, which issues session JWTs (the spec's "bearer JWT"), and the OAuth 2.0 authorization
//! server (docs/oauth.md). What only it uses lives here, beside the handlers: clients and
//! registration guards (`client.rs`), codes (`code.rs`), PKCE (`pkce.rs`), scopes (`scope.rs`),
//! form parsing (`form.rs`), installations (`install.rs`), grant issuing, refresh and revocation
//! (`grant.rs`), passwords (`password.rs`). `shared` keeps the issuer and the verification of
//! access tokens, which every function needs.
//!
//! Routes (docs/auth.md):
//! - `POST /api/auth/login`   e-mail and password → a session JWT (public; login rate limits)
//! - `POST /api/oauth/register`, `GET|PUT|DELETE /api/oauth/register/{client_id}`: dynamic
//!   client registration (RFC 7591) and its management (RFC 7592), `register.rs`
//! - `GET /api/.well-known/oauth-authorization-server`, `/.well-known/oauth-authorization-server/api`,
//!   `/.well-known/oauth-protected-resource`, `/api/.well-known/oauth-protected-resource`:
//!   discovery (RFC 8414, RFC 9728), `discovery.rs`
//! - `GET|POST /api/oauth/authorize`: the sign-in and consent page and its form, `authorize.rs`
//!   (HTML in `consent.rs`)
//! - `POST /api/oauth/token`, `POST /api/oauth/revoke`: tokens (RFC 6749) and revocation
//!   (RFC 7009), `token.rs`

pub mod authorize;
pub mod client;
pub mod code;
pub mod consent;
pub mod discovery;
pub mod form;
pub mod grant;
pub mod install;
pub mod login;
pub mod password;
pub mod pkce;
pub mod register;
pub mod scope;
pub mod token;

use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::http::request::Parts;
use axum::response::IntoResponse;
use login::{Credentials, MAX_EMAIL_CHARS, MAX_PASSWORD_CHARS, Outcome};
use serde_json::{Map, Value};
use shared::entity::Entity;
use shared::function::Function;
use shared::http::JsonObject;
use shared::identity::{SCOPE_READ, SCOPE_WRITE};
use shared::openapi::ApiTag;
use shared::ratelimit::{self, LoginBucket, Reported};
use shared::session;
use shared::validate::Fields;
use shared::{ApiError, ApiResult, AppState, clock};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

/// The login route, public (no bearer token).
pub const LOGIN_PATH: &str = "/api/auth/login";
/// The scopes every session gets; permissions still decide what the user may do.
pub const SESSION_SCOPES: &[&str] = &[SCOPE_READ, SCOPE_WRITE];

pub const FUNCTION: Function = Function {
    name: "oauth",
    prefixes: &["/api", "/.well-known"],
    tags: &[
        ApiTag { name: "auth", description: "Password login: a session JWT (the spec's bearer JWT) for a user" },
        ApiTag {
            name: "oauth",
            description: "The OAuth 2.0 authorization server: dynamic client registration (RFC 7591, RFC 7592), \
                          discovery (RFC 8414, RFC 9728), authorization with PKCE and consent, tokens and \
                          revocation. Errors here have the RFC body {error, error_description}.",
        },
    ],
    api,
    // The access and refresh tokens' credential items (`OAuthAccessToken`, `OAuthRefreshToken`,
    // written by `grant.rs`) have no prefix of their own: they live in shared's `CRED#` space
    // beside the personal access tokens, told apart by their `entity`.
    entities: &[
        password::PasswordRecord::KIND,
        client::Client::KIND,
        client::RegistrationGuard::KIND,
        code::CodeRecord::KIND,
        grant::Grant::KIND,
        install::Installation::KIND,
    ],
};

/// The routes with their OpenAPI declarations: one registration for both.
fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(login))
        .routes(routes!(register::register))
        .routes(routes!(register::read, register::update, register::delete))
        .routes(routes!(discovery::authorization_server))
        .routes(routes!(discovery::authorization_server_rfc8414))
        .routes(routes!(discovery::protected_resource))
        .routes(routes!(discovery::protected_resource_api))
        .merge(authorize::api())
        .merge(token::api())
}

/// Request body of the login (parsed by hand, documented here).
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct LoginBody {
    /// The user's e-mail address (case-insensitive; surrounding whitespace is ignored)
    #[schema(max_length = 254, pattern = r"^\S+@\S+$")]
    email: String,
    /// The password, exactly as set (not trimmed)
    #[schema(min_length = 1, max_length = 1024)]
    password: String,
    /// The workspace to sign in to: needed only when the e-mail and password are valid in
    /// several workspaces (the login then answers 400 naming this field)
    #[schema(
        value_type = Option<String>,
        format = Uuid,
        pattern = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
    )]
    workspace_id: Option<Uuid>,
}

/// A new session.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoginResponse {
    /// The session JWT: send it as `Authorization: Bearer <accessToken>`
    pub access_token: String,
    /// Always `Bearer`
    #[schema(example = "Bearer")]
    pub token_type: String,
    /// Seconds until the session expires (then log in again)
    pub expires_in: i64,
    /// The session's scopes, space-separated
    #[schema(example = "api:read api:write")]
    pub scope: String,
    pub workspace_id: Uuid,
    pub user_id: Uuid,
}

fn credentials(body: &Map<String, Value>) -> ApiResult<Credentials> {
    let mut fields = Fields::new(body);
    let email = match body.get("email") {
        None | Some(Value::Null) => {
            fields.error("email", "email is required");
            None
        }
        Some(Value::String(s)) => {
            let s = s.trim();
            if s.chars().count() > MAX_EMAIL_CHARS {
                fields.error("email", format!("email must be at most {MAX_EMAIL_CHARS} characters"));
                None
            } else if !login::is_email_shaped(s) {
                fields.error("email", "email must be an e-mail address");
                None
            } else {
                Some(s.to_owned())
            }
        }
        Some(_) => {
            fields.error("email", "email must be a string");
            None
        }
    };
    let password = match body.get("password") {
        None | Some(Value::Null) => {
            fields.error("password", "password is required");
            None
        }
        Some(Value::String(s)) if s.is_empty() => {
            fields.error("password", "password must not be empty");
            None
        }
        Some(Value::String(s)) if s.chars().count() > MAX_PASSWORD_CHARS => {
            fields.error("password", format!("password must be at most {MAX_PASSWORD_CHARS} characters"));
            None
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            fields.error("password", "password must be a string");
            None
        }
    };
    let workspace_id = match body.get("workspaceId") {
        None | Some(Value::Null) => None,
        Some(value) => {
            let parsed = value.as_str().and_then(|s| Uuid::parse_str(s.trim()).ok());
            if parsed.is_none() {
                fields.error("workspaceId", "workspaceId must be a workspace id (UUID)");
            }
            parsed
        }
    };
    fields.finish()?;
    match (email, password) {
        (Some(email), Some(password)) => Ok(Credentials { email, password, workspace_id }),
        _ => Err(ApiError::internal("login validation passed without its fields")),
    }
}

/// Charges the attempt to the login limits of its IP and of its e-mail (after the API's IP
/// limit, which every request pays). The tightest quota goes to the response headers.
pub(crate) async fn charge(state: &AppState, parts: &Parts, email: &str) -> ApiResult<()> {
    let now = clock::now_epoch();
    let ip = ratelimit::client_ip(parts).unwrap_or_else(|| "unknown".into());
    let reported = parts.extensions.get::<Reported>().cloned().unwrap_or_default();
    for bucket in [LoginBucket::Ip(&ip), LoginBucket::Email(email)] {
        match ratelimit::hit_login(state.store(), state.login_limits(), bucket, now).await {
            Ok(quota) => reported.record(quota),
            Err(quota) => {
                reported.record(quota);
                return Err(ratelimit::too_many_requests(quota));
            }
        }
    }
    Ok(())
}

fn rejected() -> ApiError {
    ApiError::unauthorized("Invalid e-mail or password")
}

#[utoipa::path(post, path = "/api/auth/login", operation_id = "login", tag = "auth",
    request_body = LoginBody,
    responses((status = 200, description = "A session JWT for the user, valid for `expiresIn` seconds", body = LoginResponse)))]
async fn login(
    State(state): State<AppState>,
    parts: Parts,
    JsonObject(body): JsonObject,
) -> ApiResult<impl IntoResponse> {
    let credentials = credentials(&body)?;
    charge(&state, &parts, &credentials.email).await?;
    let user = match login::authenticate(state.store(), &credentials).await? {
        Outcome::Authenticated(user) => user,
        Outcome::Rejected => return Err(rejected()),
        Outcome::Ambiguous(_) => {
            return Err(ApiError::field(
                "workspaceId",
                "this e-mail and password sign in to several workspaces: give workspaceId",
            ));
        }
    };
    let keys = state.session_keys().keys(None).await.map_err(ApiError::internal)?;
    // Security clock: the session's times never follow LT_CUSTOM_NOW.
    let issued = session::issue(&keys, user.workspace_id, user.id, SESSION_SCOPES, clock::now_epoch())
        .map_err(ApiError::internal)?;
    tracing::info!(user = %user.id, workspace = %user.workspace_id, session = %issued.session.session_id, "login");
    let body = LoginResponse {
        access_token: issued.token,
        token_type: "Bearer".into(),
        expires_in: session::SESSION_TTL_SECS,
        scope: SESSION_SCOPES.join(" "),
        workspace_id: user.workspace_id,
        user_id: user.id,
    };
    // A token response must not be cached (RFC 6749 §5.1).
    Ok(([(header::CACHE_CONTROL, "no-store"), (header::PRAGMA, "no-cache")], Json(body)))
}
