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
//!   `/.well-known/oauth-authorization-server` (older clients),
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
pub mod metadata_document;
pub mod password;
pub mod pkce;
pub mod redirect_uri;
pub mod register;
pub mod scope;
pub mod token;

use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::http::request::Parts;
use axum::response::IntoResponse;
use login::{Credentials, Email, Outcome, Password};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;
use workapi_domain::identity::{SCOPE_READ, SCOPE_WRITE};
use workapi_kit::entity::Entity;
use workapi_kit::function::{Function, Memory, Needs, Route};
use workapi_kit::input::{Input, Patch};
use workapi_kit::openapi::ApiTag;
use workapi_kit::ratelimit::{self, LoginBucket, Reported};
use workapi_kit::request::{Body, Permit};
use workapi_kit::session;
use workapi_kit::{ApiError, ApiResult, AppState};
use workapi_store::clock;

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
    emits: &[],
    needs: Needs {
        summary: "login, OAuth authorization server; public",
        note: "Everything under {site_url}/api and the RFC discovery documents at the site root: the\n\
               password login (session JWTs) and the OAuth authorization server (it mints tokens with the\n\
               token key).",
        routes: &[
            Route::new("Api", "/api/{proxy+}"),
            Route {
                event: "WellKnown",
                path: "/.well-known/{proxy+}",
                note: "RFC 8414 / RFC 9728 metadata at the site root (docs/oauth.md#discovery).",
            },
        ],
        memory: Some(Memory {
            megabytes: 1024,
            why: "Argon2id password hashing (login, consent): 27 ms at a full core, 19 MiB a hash.",
        }),
        ..Needs::DATA
    },
};

/// The routes with their OpenAPI declarations: one registration for both.
fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(login))
        .routes(routes!(register::register))
        .routes(routes!(register::read, register::update, register::delete))
        .routes(routes!(discovery::authorization_server))
        .routes(routes!(discovery::authorization_server_rfc8414))
        .routes(routes!(discovery::authorization_server_origin))
        .routes(routes!(discovery::protected_resource))
        .routes(routes!(discovery::protected_resource_api))
        .routes(routes!(discovery::protected_resource_mcp))
        .merge(discovery::mcp_surfaces())
        .merge(authorize::api())
        .merge(token::api())
}

/// Request body of the login.
#[derive(Input)]
#[input(example = serde_json::json!({"email": "ann.lee@acme.example", "password": "correct horse battery staple"}))]
struct LoginBody {
    /// The user's e-mail address (case-insensitive; surrounding whitespace is ignored)
    email: Email,
    /// The password, exactly as set (not trimmed)
    password: Password,
    /// The workspace to sign in to: needed only when the e-mail and password are valid in
    /// several workspaces (the login then answers 400 naming this field); null is the same as
    /// leaving it out
    workspace_id: Patch<Uuid>,
}

/// A new session.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({
    "accessToken": "eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIiwidHlwIjoiSldUIn0.eyJzdWIiOiI5NWRmMWI5MCJ9.c2lnbmF0dXJl",
    "tokenType": "Bearer", "expiresIn": 3600, "scope": "api:read api:write",
    "workspaceId": "0fb3f555-64a1-46ed-ae2b-6815ce6f1050", "userId": "95df1b90-ea25-44f5-b0e7-107ebdc7b8b0"
}))]
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

/// Charges a sign-in attempt to the login limits of its IP and of its e-mail (after the API's IP
/// limit, which every request pays). The tightest quota goes to the response headers.
pub(crate) async fn charge(state: &AppState, parts: &Parts, email: &str) -> ApiResult<()> {
    let ip = ratelimit::client_ip(parts).unwrap_or_else(|| "unknown".into());
    charge_buckets(state, parts, [LoginBucket::Ip(&ip), LoginBucket::Email(email)]).await
}

/// Charges a client registration to the registration limit of its IP.
pub(crate) async fn charge_registration(state: &AppState, parts: &Parts) -> ApiResult<()> {
    let ip = ratelimit::client_ip(parts).unwrap_or_else(|| "unknown".into());
    charge_buckets(state, parts, [LoginBucket::Registration(&ip)]).await
}

async fn charge_buckets<const N: usize>(
    state: &AppState,
    parts: &Parts,
    buckets: [LoginBucket<'_>; N],
) -> ApiResult<()> {
    let now = clock::now_epoch();
    let reported = parts.extensions.get::<Reported>().cloned().unwrap_or_default();
    for bucket in buckets {
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

/// Log in with e-mail and password
///
/// Public (no bearer token). Checks the e-mail and password and answers with a session JWT for
/// the user (the spec's bearer JWT), to send as `Authorization: Bearer <accessToken>`. An unknown
/// e-mail, a wrong password and an inactive user get the same 401 after the same work. Limited
/// per IP and per e-mail on top of the API's IP limit (429 with `Retry-After`).
#[utoipa::path(post, path = "/api/auth/login", operation_id = "login", tag = "auth",
    request_body = LoginBody,
    responses((status = 200, description = "A session JWT for the user, valid for `expiresIn` seconds", body = LoginResponse)))]
async fn login(State(state): State<AppState>, parts: Parts, body: Body<LoginBody>) -> ApiResult<impl IntoResponse> {
    let body = body.parse(&Permit::public())?;
    let credentials = Credentials {
        email: body.email.into_string(),
        password: body.password.into_string(),
        workspace_id: body.workspace_id.into_option(),
    };
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
    let keys = state.session_keys().keys(None).await?;
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
