//! Bearer authentication: who is calling, in which workspace, with which scopes and permissions.
//!
//! Order of checks: header shape → the token's kind by its shape → that kind's checks that
//! need no store (format, checksum and keyed tag of a personal access or OAuth access token;
//! algorithm, key id, signature and claims of a session JWT) → for personal access tokens, the
//! credential record by hash (expiry, revocation), for OAuth access tokens that and their grant
//! → user (active, role). The scope a request needs
//! follows from its method: reads need `api:read`, everything else `api:write`.

mod imposter;
pub mod roles_cache;

pub use imposter::{CUSTOM_NOW_HEADER, IMPOSTER_USER_HEADER};

use crate::app::AppState;
use crate::error::ApiError;
use crate::oauth::access::{self, AccessRecord, AccessRejection};
use crate::ratelimit::{self, Bucket, Reported};
use crate::request::Permit;
use crate::session;
use axum::extract::FromRequestParts;
use axum::http::{Method, request::Parts};
use time::OffsetDateTime;
use uuid::Uuid;
use workapi_domain::identity::{self, SCOPE_READ, SCOPE_WRITE, TokenRecord, User};
use workapi_domain::permissions::{PermissionSet, Requirement};
use workapi_domain::project::{AccessError, Viewer};
use workapi_domain::token::{self, Kind};
use workapi_store::clock;
use workapi_store::keys::{self, WsKeys};
use workapi_store::{Condition, Item, Key, Store, Update, from_item};

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

    /// The caller as the domain's access rules see it (`domain::project::accessible`).
    pub fn viewer(&self) -> Viewer {
        Viewer {
            keys: self.keys(),
            user_id: self.user.id,
            views_all: self.permissions.allows(workapi_domain::permissions::key::PROJECTS_VIEW_ALL),
        }
    }

    /// The one permission check: every protected handler calls it first, with the route's
    /// [`Requirement`], and needs the [`Permit`] it returns to read the request body.
    pub fn authorize(&self, requirement: Requirement) -> Result<Permit, ApiError> {
        if requirement.met_by(self.user.kind, &self.permissions) {
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

/// How an endpoint that authenticates for itself checks the credential, put in the request's
/// extensions before extracting the [`Caller`] (the MCP endpoint, docs/mcp.md): the resource an
/// OAuth token bound to a resource must name (`{site_url}` + `resource_path`), and the scope the
/// request needs (None: any; the endpoint checks each operation's scope itself).
#[derive(Debug, Clone, Copy)]
pub struct Audience {
    pub resource_path: &'static str,
    pub scope: Option<&'static str>,
}

/// What a verified bearer credential establishes, whatever its kind.
pub struct Verified {
    pub workspace_id: Uuid,
    pub user_id: Uuid,
    /// Identifies the token or session: its rate-limit bucket and `Caller::token_id`.
    pub token_id: Uuid,
    pub scopes: Vec<String>,
}

/// What is left to do for a credential once its own record is checked; done concurrently with
/// the reads every caller needs (see [`Caller::from_request_parts`]).
enum FollowUp {
    Nothing,
    /// An OAuth access token: its grant must still stand.
    ConfirmGrant(AccessRecord),
    /// A personal access token: refresh its coarse `lastUsedAt` (best effort).
    RecordUse(Key),
}

impl FollowUp {
    /// The grant's narrowing of the token's scopes, when there is a grant.
    async fn run(self, store: &dyn Store, now: i64) -> Result<Option<Vec<String>>, ApiError> {
        match self {
            FollowUp::Nothing => Ok(None),
            FollowUp::ConfirmGrant(record) => match access::confirm_grant(store, record).await {
                Ok(grant) => Ok(Some(grant.scopes)),
                Err(rejection) => Err(access_rejected(rejection)),
            },
            FollowUp::RecordUse(key) => {
                let touched = store.update(&key, Update::default().set("lastUsedAt", now), Condition::Exists).await;
                if let Err(e) = touched {
                    tracing::warn!(error = %e, "could not record token use");
                }
                Ok(None)
            }
        }
    }
}

/// The credential record of a request's bearer token, read by the IP-limit layer
/// (`http::limit_by_ip`) concurrently with the IP counter, so that authentication starts with it.
#[derive(Clone)]
pub struct PrefetchedCredential {
    hash: String,
    item: Option<Item>,
}

/// Reads the credential record of the request's bearer token when it is a personal access or
/// OAuth access token whose keyed tag holds (a forged token never reaches the store). None for
/// other credentials, and when the read failed: authentication then reads it itself.
pub async fn prefetch_credential(parts: &Parts, state: &AppState) -> Option<PrefetchedCredential> {
    let token = bearer(parts).ok()?;
    let kind = if token.starts_with(token::PREFIX) {
        Kind::Personal
    } else if token.starts_with(token::OAUTH_ACCESS_PREFIX) {
        Kind::OAuthAccess
    } else {
        return None;
    };
    token::verify_kind(state.token_key().await.ok()?, kind, token).ok()?;
    let hash = token::token_hash(token);
    match state.store().get(&keys::credential(&hash)).await {
        Ok(item) => Some(PrefetchedCredential { hash, item }),
        Err(e) => {
            tracing::debug!(error = %e, "credential prefetch failed; authentication reads it");
            None
        }
    }
}

/// The prefetched credential record of `token`, if the IP-limit layer read it.
fn prefetched(parts: &Parts, token: &str) -> Option<Option<Item>> {
    let prefetched = parts.extensions.get::<PrefetchedCredential>()?;
    (prefetched.hash == token::token_hash(token)).then(|| prefetched.item.clone())
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    /// At most two sequential store round trips (docs/performance.md): the credential record,
    /// read with the IP counter; then, all at once, the grant (OAuth), the user, the token's
    /// counter, the workspace's custom roles (loaded before the user's role is known: a base
    /// role ignores them), the imposter target and the last-use refresh.
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        // Authenticated already by a layer in front of the handler (the idempotency layer): one
        // authentication, one charge to the token's rate limit per request.
        if let Some(caller) = parts.extensions.get::<Caller>() {
            return Ok(caller.clone());
        }
        let token = bearer(parts)?;
        let audience = parts.extensions.get::<Audience>().copied();
        // Security clock: nothing the request sends (LT_CUSTOM_NOW included) can move it.
        let now = clock::now_epoch();
        // The prefix names the kind of credential; each kind has one verifier.
        let (verified, follow_up) = if token.starts_with(token::PREFIX) {
            verify_personal_token(state, token, prefetched(parts, token), now).await?
        } else if token.starts_with(token::OAUTH_ACCESS_PREFIX) {
            let resource = state.site_url().resource(&parts.headers) + audience.map_or("", |a| a.resource_path);
            verify_oauth_access_token(state, token, prefetched(parts, token), &resource, now).await?
        } else if session::looks_like(token) {
            (verify_session(state, token, now).await?, FollowUp::Nothing)
        } else {
            return Err(invalid_token());
        };
        // The scope the request needs: its method's, unless the endpoint checks per operation.
        let scope = audience.map_or(Some(required_scope(&parts.method)), |a| a.scope);
        let lacks = |scopes: &[String]| scope.filter(|needed| !scopes.iter().any(|s| s == needed));
        if let Some(scope) = lacks(&verified.scopes) {
            return Err(ApiError::insufficient_scope(scope));
        }

        let store = state.store();
        let workspace = WsKeys::new(verified.workspace_id);
        let token_bucket = verified.token_id.to_string();
        let imposter_target = imposter::named_target(parts);
        let (narrowed, user, quota, roles, target) = tokio::join!(
            follow_up.run(store, now),
            identity::get_user_eventually(store, verified.workspace_id, verified.user_id),
            // Charged to the token (an imposter's requests too), once its record is known to be
            // valid, so that forged or revoked tokens cannot exhaust a real token's quota.
            ratelimit::hit(store, state.rate_limits(), Bucket::Token(&token_bucket), now),
            roles_cache::load(store, workspace),
            async {
                match imposter_target {
                    Some(id) => Some((id, identity::get_user_eventually(store, verified.workspace_id, id).await)),
                    None => None,
                }
            },
        );
        let narrowed = narrowed?;
        // The eventually consistent reads may miss what the last second wrote: a user or a
        // role created just now is read again, consistently, before it counts as absent.
        let user = match user? {
            Some(user) => Some(user),
            None => identity::get_user(store, verified.workspace_id, verified.user_id).await?,
        };
        let user = user.filter(|u| u.is_active).ok_or_else(invalid_token)?;
        let roles = roles_cache::holding(store, workspace, roles, [user.role_id.as_str()]).await;
        let scopes = narrowed.unwrap_or(verified.scopes);
        if let Some(scope) = lacks(&scopes) {
            return Err(ApiError::insufficient_scope(scope));
        }
        let reported = parts.extensions.get::<Reported>().cloned().unwrap_or_default();
        match quota {
            Ok(quota) => reported.record(quota),
            Err(quota) => {
                reported.record(quota);
                return Err(ratelimit::too_many_requests(quota));
            }
        }

        let permissions = PermissionSet::of_role_loaded(roles, &user.role_id)?;
        let mut caller = Caller {
            workspace_id: verified.workspace_id,
            user,
            impersonated_by: None,
            token_id: verified.token_id,
            scopes,
            permissions,
            business_now: clock::now(),
        };
        imposter::apply(&mut caller, parts, store, target).await?;
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

fn access_rejected(rejection: AccessRejection) -> ApiError {
    match rejection {
        AccessRejection::Invalid => invalid_token(),
        AccessRejection::Expired => ApiError::invalid_token("Token has expired"),
        AccessRejection::Revoked => ApiError::invalid_token("Token has been revoked"),
        AccessRejection::Store(e) => e.into(),
    }
}

/// An OAuth access token: format and keyed tag first (no I/O), then its record by hash; its
/// grant is confirmed next (revoking the grant revokes the token). Its rate-limit bucket is the
/// grant, so refreshing does not reset the quota. A token bound to another resource (RFC 8707:
/// issued for another API, or under another site URL) is refused like an invalid one.
async fn verify_oauth_access_token(
    state: &AppState,
    token: &str,
    credential: Option<Option<Item>>,
    this_api: &str,
    now: i64,
) -> Result<(Verified, FollowUp), ApiError> {
    let record = access::verify_access_record(state.store(), state.token_key().await?, token, now, credential)
        .await
        .map_err(access_rejected)?;
    if record.resource.as_deref().is_some_and(|r| r != this_api) {
        return Err(ApiError::invalid_token("The token was issued for another resource"));
    }
    let verified = Verified {
        workspace_id: record.workspace_id,
        user_id: record.user_id,
        token_id: record.grant_id,
        scopes: record.scopes.clone(),
    };
    Ok((verified, FollowUp::ConfirmGrant(record)))
}

/// A personal access token: format and keyed tag first (no I/O), then its record by hash.
async fn verify_personal_token(
    state: &AppState,
    token: &str,
    credential: Option<Option<Item>>,
    now: i64,
) -> Result<(Verified, FollowUp), ApiError> {
    token::verify(state.token_key().await?, token).map_err(|_| invalid_token())?;
    let credential_key = keys::credential(&token::token_hash(token));
    let item = match credential {
        Some(item) => item,
        None => state.store().get(&credential_key).await?,
    };
    let record: TokenRecord = match item {
        Some(item) => from_item(item)?,
        None => return Err(invalid_token()),
    };
    if record.revoked_at.is_some() {
        return Err(ApiError::invalid_token("Token has been revoked"));
    }
    if record.expires_at.is_some_and(|at| at <= now) {
        return Err(ApiError::invalid_token("Token has expired"));
    }
    let follow_up = if record.last_used_at.is_none_or(|at| now - at >= LAST_USED_GRANULARITY_SECS) {
        FollowUp::RecordUse(credential_key)
    } else {
        FollowUp::Nothing
    };
    let verified = Verified {
        workspace_id: record.workspace_id,
        user_id: record.user_id,
        token_id: record.id,
        scopes: record.scopes,
    };
    Ok((verified, follow_up))
}

/// A project or task out of reach: 404 when it does not exist in the caller's workspace, 403
/// when it exists and the caller may not access its project.
impl From<AccessError> for ApiError {
    fn from(e: AccessError) -> Self {
        match e {
            AccessError::NotFound(_) => ApiError::not_found(e.to_string()),
            AccessError::Denied => ApiError::forbidden(e.to_string()),
            AccessError::Store(e) => e.into(),
        }
    }
}
