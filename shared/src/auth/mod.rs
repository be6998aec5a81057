//! Bearer authentication: who is calling, in which workspace, with which scopes and permissions.
//!
//! Order of checks: header shape → the token's kind by its shape → that kind's checks that
//! need no store (format, checksum and keyed tag of a personal access or OAuth access token;
//! algorithm, key id, signature and claims of a session JWT) → for personal access tokens, the
//! credential record by hash (expiry, revocation), for OAuth access tokens that and their grant
//! → user (active, role). The scope a request needs
//! follows from its method: reads need `api:read`, everything else `api:write`.

mod imposter;

pub use imposter::{CUSTOM_NOW_HEADER, IMPOSTER_USER_HEADER};

use crate::app::AppState;
use crate::clock;
use crate::error::ApiError;
use crate::identity::{self, SCOPE_READ, SCOPE_WRITE, TokenRecord, User, UserKind};
use crate::oauth::access::{self, AccessRejection};
use crate::permissions::{PermissionSet, Requirement};
use crate::ratelimit::{self, Bucket, Reported};
use crate::request::Permit;
use crate::session;
use crate::store::keys::{self, WsKeys};
use crate::store::{Condition, Update, from_item};
use crate::token;
use axum::extract::FromRequestParts;
use axum::http::{Method, request::Parts};
use time::OffsetDateTime;
use uuid::Uuid;

/// Refresh `lastUsedAt` at most this often, so most requests stay read-only.
const LAST_USED_GRANULARITY_SECS: i64 = 3600;

/// The authenticated caller of a request.
#[derive(Debug, Clone)]
pub struct Caller {
    pub workspace_id: Uuid,
    /// The user the request acts as: the token's owner, or the imposter target.
    pub user: User,
    /// The token's owner when the request runs in imposter mode.
    pub impersonated_by: Option<Uuid>,
    pub token_id: Uuid,
    pub scopes: Vec<String>,
    /// Always the token owner's permissions, also in imposter mode (spec §5.5).
    pub permissions: PermissionSet,
    /// The business clock (billing periods, contingent activity): `LT_CUSTOM_NOW` in imposter
    /// mode, else the wall clock. Never used for expiry, codes or rate windows.
    pub business_now: OffsetDateTime,
}

impl Caller {
    /// Keys inside the caller's workspace: the only way a handler can address tenant data.
    pub fn keys(&self) -> WsKeys {
        WsKeys::new(self.workspace_id)
    }

    /// The one permission check: every protected handler calls it first, with the route's
    /// [`Requirement`], and needs the [`Permit`] it returns to read the request body.
    pub fn authorize(&self, requirement: Requirement) -> Result<Permit, ApiError> {
        let allowed = match requirement {
            Requirement::Member => true,
            Requirement::Employee => self.user.kind == UserKind::Employee && self.permissions.is_internal(),
            Requirement::Permission(key) => self.permissions.allows(key),
            Requirement::AnyOf(keys) => keys.iter().any(|k| self.permissions.allows(k)),
        };
        if allowed {
            return Ok(Permit::granted());
        }
        Err(ApiError::forbidden(match requirement {
            Requirement::Member => unreachable!("members are always allowed"),
            Requirement::Employee => "Only employees of the workspace may do this".to_owned(),
            Requirement::Permission(key) => format!("Missing permission {key}"),
            Requirement::AnyOf(keys) => format!("Missing permission: one of {}", keys.join(", ")),
        }))
    }
}

/// A presented credential that does not authenticate (RFC 6750 `invalid_token`); a request
/// without any credential gets the bare challenge instead.
fn invalid_token() -> ApiError {
    ApiError::invalid_token("Invalid or missing authentication token")
}

/// Extracts the raw bearer token from the Authorization header.
fn bearer(parts: &Parts) -> Result<&str, ApiError> {
    let header = parts
        .headers
        .get(axum::http::header::AUTHORIZATION)
        .ok_or_else(|| ApiError::unauthorized("Missing bearer token"))?;
    let value = header.to_str().map_err(|_| invalid_token())?;
    let (scheme, token) = value.split_once(' ').ok_or_else(invalid_token)?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(invalid_token());
    }
    Ok(token.trim())
}

pub fn required_scope(method: &Method) -> &'static str {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) { SCOPE_READ } else { SCOPE_WRITE }
}

/// What a verified bearer credential establishes, whatever its kind.
pub struct Verified {
    pub workspace_id: Uuid,
    pub user_id: Uuid,
    /// Identifies the token or session: its rate-limit bucket and `Caller::token_id`.
    pub token_id: Uuid,
    pub scopes: Vec<String>,
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        // Authenticated already by a layer in front of the handler (the idempotency layer): one
        // authentication, one charge to the token's rate limit per request.
        if let Some(caller) = parts.extensions.get::<Caller>() {
            return Ok(caller.clone());
        }
        let token = bearer(parts)?;
        // Security clock: nothing the request sends (LT_CUSTOM_NOW included) can move it.
        let now = clock::now_epoch();
        // The prefix names the kind of credential; each kind has one verifier.
        let verified = if token.starts_with(token::PREFIX) {
            verify_personal_token(state, token, now).await?
        } else if token.starts_with(token::OAUTH_ACCESS_PREFIX) {
            verify_oauth_access_token(state, token, &state.site_url().resource(&parts.headers), now).await?
        } else if session::looks_like(token) {
            verify_session(state, token, now).await?
        } else {
            return Err(invalid_token());
        };

        let store = state.store();
        let user = identity::get_user(store, verified.workspace_id, verified.user_id)
            .await?
            .filter(|u| u.is_active)
            .ok_or_else(invalid_token)?;

        let scope = required_scope(&parts.method);
        if !verified.scopes.iter().any(|s| s == scope) {
            return Err(ApiError::insufficient_scope(scope));
        }

        // Charged to the token (an imposter's requests too), after authentication so that
        // unauthenticated noise cannot exhaust a real token's quota.
        let token_bucket = verified.token_id.to_string();
        let quota = ratelimit::hit(store, state.rate_limits(), Bucket::Token(&token_bucket), now).await;
        let reported = parts.extensions.get::<Reported>().cloned().unwrap_or_default();
        match quota {
            Ok(quota) => reported.record(quota),
            Err(quota) => {
                reported.record(quota);
                return Err(ratelimit::too_many_requests(quota));
            }
        }

        let permissions = PermissionSet::of_role(store, WsKeys::new(verified.workspace_id), &user.role_id).await?;
        let mut caller = Caller {
            workspace_id: verified.workspace_id,
            user,
            impersonated_by: None,
            token_id: verified.token_id,
            scopes: verified.scopes,
            permissions,
            business_now: clock::now(),
        };
        imposter::apply(&mut caller, parts, store).await?;
        Ok(caller)
    }
}

/// A session JWT: header, key id, signature and claims, all without the store. Its session id
/// is the rate-limit bucket. Sessions are not stored, so they end by expiry (or when the user
/// is deactivated, checked by the caller, or when their signing key is removed).
async fn verify_session(state: &AppState, token: &str, now: i64) -> Result<Verified, ApiError> {
    let rejected = |reason: session::Rejection| {
        tracing::debug!(?reason, "session token rejected");
        match reason {
            session::Rejection::Expired => ApiError::invalid_token("Session has expired; log in again"),
            _ => invalid_token(),
        }
    };
    // Header checks first, so that garbage never makes the key set refresh.
    let kid = session::key_id(token).map_err(rejected)?;
    // Once fetched, the cached set serves while a refresh fails (Secrets Manager down).
    let keys = state.session_keys().keys(Some(&kid)).await?;
    let session = session::verify(&keys, token, now).map_err(rejected)?;
    Ok(Verified {
        workspace_id: session.workspace_id,
        user_id: session.user_id,
        token_id: session.session_id,
        scopes: session.scopes,
    })
}

/// An OAuth access token: format and keyed tag first (no I/O), then its record by hash and its
/// grant (revoking the grant revokes the token). Its rate-limit bucket is the grant, so
/// refreshing does not reset the quota. A token bound to another resource (RFC 8707: issued
/// for another API, or under another site URL) is refused like an invalid one.
async fn verify_oauth_access_token(
    state: &AppState,
    token: &str,
    this_api: &str,
    now: i64,
) -> Result<Verified, ApiError> {
    match access::verify_access(state.store(), state.token_key().await?, token, now).await {
        Ok(access) if access.resource.as_deref().is_some_and(|r| r != this_api) => {
            Err(ApiError::invalid_token("The token was issued for another resource"))
        }
        Ok(access) => Ok(Verified {
            workspace_id: access.workspace_id,
            user_id: access.user_id,
            token_id: access.grant_id,
            scopes: access.scopes,
        }),
        Err(AccessRejection::Invalid) => Err(invalid_token()),
        Err(AccessRejection::Expired) => Err(ApiError::invalid_token("Token has expired")),
        Err(AccessRejection::Revoked) => Err(ApiError::invalid_token("Token has been revoked")),
        Err(AccessRejection::Store(e)) => Err(e.into()),
    }
}

/// A personal access token: format and keyed tag first (no I/O), then its record by hash.
async fn verify_personal_token(state: &AppState, token: &str, now: i64) -> Result<Verified, ApiError> {
    token::verify(state.token_key().await?, token).map_err(|_| invalid_token())?;
    let store = state.store();
    let credential_key = keys::credential(&token::token_hash(token));
    let record: TokenRecord = match store.get(&credential_key).await? {
        Some(item) => from_item(item)?,
        None => return Err(invalid_token()),
    };
    if record.revoked_at.is_some() {
        return Err(ApiError::invalid_token("Token has been revoked"));
    }
    if record.expires_at.is_some_and(|at| at <= now) {
        return Err(ApiError::invalid_token("Token has expired"));
    }
    if record.last_used_at.is_none_or(|at| now - at >= LAST_USED_GRANULARITY_SECS) {
        // Best effort: a failure here must not fail the request.
        let touched = store.update(&credential_key, Update::default().set("lastUsedAt", now), Condition::Exists).await;
        if let Err(e) = touched {
            tracing::warn!(error = %e, "could not record token use");
        }
    }
    Ok(Verified {
        workspace_id: record.workspace_id,
        user_id: record.user_id,
        token_id: record.id,
        scopes: record.scopes,
    })
}
