//! Grants and their tokens (docs/oauth.md): issuing, refresh and revocation. Verifying an access
//! token on an API request is `workapi_kit::oauth::access`, which every function needs.
//!
//! A grant (`OAUTH#GRANT#<grantId>` / `GRANT`) is what one approval gave one client: user,
//! workspace, scopes, and the generation (`version`) of its current refresh token. Redeeming a
//! code creates it with one access token (`lt_oat_…`, 1 hour) and one refresh token
//! (`lt_ort_…`, 30 days); both are stored only as `CRED#<sha256>` items naming the grant.
//!
//! - Every use of an access token reads its credential and its grant: revoking the grant
//!   revokes every token issued under it at once.
//! - A refresh rotates: the grant's `version` moves from `g` to `g + 1` by a conditional write
//!   (`VersionEquals(g)`) in the transaction that stores the new tokens, so of two concurrent
//!   refreshes of one token exactly one succeeds. The loser is refused without consequences
//!   (also when it reads the grant just after the winner wrote it: see
//!   [`CONCURRENT_REFRESH_GRACE_SECS`]); any later use of a refresh token of an older
//!   generation revokes the grant (RFC 9700 §4.14).
//! - A replayed authorization code revokes the grant its first redemption created.

use crate::code::{self, CodeRecord};
use crate::pkce;
use crate::scope;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;
use workapi_domain::identity;
use workapi_domain::token::{self, Kind, TokenKey, token_hash};
use workapi_kit::entity::{self, Attempt, Entity, IndexKey};
use workapi_kit::oauth::access::{AccessRecord, ENTITY_ACCESS_TOKEN};
use workapi_store::clock;
use workapi_store::keys::{self, OAUTH_GRANT_PREFIX};
use workapi_store::{
    Condition, ENTITY, Item, Key, Query, Store, StoreError, StoreResult, TTL, TxOp, Update, VERSION, from_item,
    query_all,
};

pub const ENTITY_REFRESH_TOKEN: &str = "OAuthRefreshToken";
/// Lifetime of an access token.
pub const ACCESS_TTL_SECS: i64 = 3600;
/// Lifetime of a refresh token; a grant lives as long as its newest refresh token.
pub const REFRESH_TTL_SECS: i64 = 30 * 86_400;
/// A refresh token superseded by the very next generation less than this long ago is taken for
/// the loser of a concurrent refresh (it read the grant just after the winner wrote it):
/// refused, but the grant is kept. Any other use of a superseded refresh token revokes it.
pub const CONCURRENT_REFRESH_GRACE_SECS: i64 = 3;

/// The stored grant.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    pub id: Uuid,
    pub client_id: String,
    pub workspace_id: Uuid,
    pub user_id: Uuid,
    /// The scopes approved; no refresh may widen them.
    pub scopes: Vec<String>,
    /// The API its tokens are bound to (RFC 8707), when the client named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    pub created_at: String,
    /// The generation of the current refresh token.
    pub version: i64,
    /// Epoch seconds of the last refresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotated_at: Option<i64>,
    /// Epoch seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<i64>,
}

impl Entity for Grant {
    const TYPE: &'static str = "OAuthGrant";
    const PREFIX: &'static str = OAUTH_GRANT_PREFIX;
    type Scope = ();

    /// The key stays in the kit: every use of an access token reads its grant.
    fn key(&self, _: ()) -> Key {
        keys::oauth_grant(self.id)
    }

    /// GSI1 lists the grants of one client (revoked together when the client is deleted).
    fn gsi1(&self, _: ()) -> Option<IndexKey> {
        Some(IndexKey { pk: client_grants_gsi1pk(&self.client_id), sk: format!("GRANT#{}", self.id) })
    }
}

/// GSI1 partition listing the grants of one client.
fn client_grants_gsi1pk(client_id: &str) -> String {
    let part = crate::client::key_part(client_id).unwrap_or_else(|| crate::client::sha256_hex(client_id));
    format!("OAUTH#CLIENTGRANTS#{part}")
}

/// The stored record of a refresh token (never the token).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RefreshRecord {
    grant_id: Uuid,
    client_id: String,
    /// The grant `version` this token was issued at; older than the grant's = superseded.
    generation: i64,
    expires_at: i64,
}

impl Entity for RefreshRecord {
    const TYPE: &'static str = ENTITY_REFRESH_TOKEN;
    const PREFIX: &'static str = "CRED#";
    /// The token's hash (`token_hash`), which the key holds and the record does not.
    type Scope = String;

    fn key(&self, token_hash: String) -> Key {
        keys::credential(&token_hash)
    }
}

/// Tokens for the client, shown once. Debug shows no token.
pub struct Issued {
    pub access_token: String,
    pub refresh_token: String,
    pub expires_in: i64,
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for Issued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issued").field("expires_in", &self.expires_in).field("scopes", &self.scopes).finish()
    }
}

/// Why a token request fails (RFC 6749 §5.2): `invalid_grant` with a description, or
/// `invalid_scope`; store failures are server errors.
#[derive(Debug)]
pub enum GrantError {
    InvalidGrant(&'static str),
    InvalidScope,
    /// The request names another resource than the one the code or grant is bound to.
    InvalidTarget,
    Store(StoreError),
}

impl From<StoreError> for GrantError {
    fn from(e: StoreError) -> Self {
        GrantError::Store(e)
    }
}

/// A bound code or grant asked for another resource (RFC 8707 §2.2: the server issues tokens
/// for the resources the grant covers, here the one it was bound to).
fn differs(bound: Option<&str>, asked: Option<&str>) -> bool {
    matches!((bound, asked), (Some(bound), Some(asked)) if bound != asked)
}

const UNKNOWN_CODE: &str = "The authorization code is invalid or has expired";
const REUSED_CODE: &str = "The authorization code has already been used; the tokens issued for it are revoked";
const OTHER_CLIENT_CODE: &str = "The authorization code was issued to another client";
const UNKNOWN_REFRESH: &str = "The refresh token is invalid, expired or revoked";
const CONCURRENT_REFRESH: &str = "The refresh token was used by a concurrent request";
const SUPERSEDED_REFRESH: &str = "The refresh token has already been used; the grant is revoked";

/// A token request of `grant_type=authorization_code`, the client already authenticated.
pub struct CodeExchange<'a> {
    pub client_id: &'a str,
    pub code: &'a str,
    pub redirect_uri: Option<&'a str>,
    pub code_verifier: &'a str,
    /// The token request's `resource`, already checked to name this API.
    pub resource: Option<&'a str>,
}

/// Redeems a code for a new grant and its first tokens.
pub async fn exchange_code(
    store: &dyn Store,
    key: &TokenKey,
    request: CodeExchange<'_>,
    now: i64,
) -> Result<Issued, GrantError> {
    if !code::is_code_shaped(request.code) {
        return Err(GrantError::InvalidGrant(UNKNOWN_CODE));
    }
    let code_key = code::key_of(request.code);
    let redeemed = entity::retry_on_conflict("busy", |_| async {
        // Every outcome but "lost a race" ends the cycle, errors included (they are answers).
        Ok(match redeem(store, key, &request, &code_key, now).await {
            Ok(Some(issued)) => Attempt::Done(Ok(issued)),
            Ok(None) => Attempt::Conflict,
            Err(e) => Attempt::Done(Err(e)),
        })
    })
    .await;
    // Only losing every race ends in an error here: the others are answers inside Done.
    redeemed.unwrap_or(Err(GrantError::InvalidGrant("The authorization code could not be redeemed")))
}

/// One attempt at redeeming a code; None when its transaction lost a race with a concurrent one
/// (another redemption of the same code won, or is in flight: the next attempt sees the code
/// used and revokes, or, when both were cancelled, tries again).
async fn redeem(
    store: &dyn Store,
    key: &TokenKey,
    request: &CodeExchange<'_>,
    code_key: &Key,
    now: i64,
) -> Result<Option<Issued>, GrantError> {
    let record = code::get(store, code_key).await?.ok_or(GrantError::InvalidGrant(UNKNOWN_CODE))?;
    if record.client_id != request.client_id {
        return Err(GrantError::InvalidGrant(OTHER_CLIENT_CODE));
    }
    // The redirect URI and the PKCE verifier first: a replay only revokes when it proves it
    // holds what the first redemption held, so someone who merely saw a used code (in a
    // browser history or a log) cannot revoke the user's grant with it.
    check_redirect(&record, request.redirect_uri)?;
    if !pkce::verifier_matches(request.code_verifier, &record.code_challenge) {
        return Err(GrantError::InvalidGrant("The code_verifier does not match the code_challenge"));
    }
    if record.used_at.is_some() {
        tracing::warn!(grant = %record.grant_id, client = %record.client_id, "authorization code replayed: revoking its grant");
        revoke_grant(store, record.grant_id, now).await?;
        return Err(GrantError::InvalidGrant(REUSED_CODE));
    }
    if record.expires_at <= now {
        return Err(GrantError::InvalidGrant(UNKNOWN_CODE));
    }
    if differs(record.resource.as_deref(), request.resource) {
        return Err(GrantError::InvalidTarget);
    }
    let grant = Grant {
        id: record.grant_id,
        client_id: record.client_id.clone(),
        workspace_id: record.workspace_id,
        user_id: record.user_id,
        scopes: record.scopes.clone(),
        // Named at authorization or at the exchange (both can only name this API).
        resource: record.resource.clone().or_else(|| request.resource.map(str::to_owned)),
        created_at: clock::now_rfc3339(),
        version: 1,
        rotated_at: None,
        revoked_at: None,
    };
    let (mut ops, issued) = new_tokens(key, &grant, grant.scopes.clone(), now)?;
    ops.insert(0, code::redeem_op(code_key.clone(), now));
    let mut grant_item = entity::to_item(&grant, ())?;
    grant_item.insert(TTL.into(), (now + REFRESH_TTL_SECS).into());
    ops.push(TxOp::Put { item: grant_item, cond: Condition::NotExists });
    match store.transact(ops).await {
        Ok(()) => Ok(Some(issued)),
        Err(e) if entity::is_conflict(&e) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// RFC 6749 §4.1.3: when the authorization request named a redirect URI, the token request
/// repeats it character for character; when it did not, the token request may omit it.
fn check_redirect(record: &CodeRecord, presented: Option<&str>) -> Result<(), GrantError> {
    let ok = match presented {
        Some(uri) => uri == record.redirect_uri,
        None => !record.redirect_uri_given,
    };
    if ok { Ok(()) } else { Err(GrantError::InvalidGrant("The redirect_uri differs from the authorization request")) }
}

/// A token request of `grant_type=refresh_token`, the client already authenticated.
pub struct Refresh<'a> {
    pub client_id: &'a str,
    pub refresh_token: &'a str,
    /// The `scope` parameter, parsed; None keeps the grant's scopes.
    pub scopes: Option<Vec<String>>,
    /// The `resource` parameter, already checked to name this API.
    pub resource: Option<&'a str>,
}

/// Rotates a refresh token: new access and refresh tokens, the old refresh token superseded.
pub async fn refresh(store: &dyn Store, key: &TokenKey, request: Refresh<'_>, now: i64) -> Result<Issued, GrantError> {
    if token::verify_kind(key, Kind::OAuthRefresh, request.refresh_token).is_err() {
        return Err(GrantError::InvalidGrant(UNKNOWN_REFRESH));
    }
    let cred_key = keys::credential(&token_hash(request.refresh_token));
    let record: RefreshRecord = match store.get(&cred_key).await? {
        Some(item) if entity_is(&item, ENTITY_REFRESH_TOKEN) => from_item(item)?,
        _ => return Err(GrantError::InvalidGrant(UNKNOWN_REFRESH)),
    };
    if record.client_id != request.client_id {
        return Err(GrantError::InvalidGrant("The refresh token was issued to another client"));
    }
    if record.expires_at <= now {
        return Err(GrantError::InvalidGrant(UNKNOWN_REFRESH));
    }
    let grant = get_grant(store, record.grant_id).await?.ok_or(GrantError::InvalidGrant(UNKNOWN_REFRESH))?;
    if grant.revoked_at.is_some() {
        return Err(GrantError::InvalidGrant(UNKNOWN_REFRESH));
    }
    if record.generation != grant.version {
        let just_superseded = record.generation + 1 == grant.version
            && grant.rotated_at.is_some_and(|at| now < at + CONCURRENT_REFRESH_GRACE_SECS);
        if just_superseded {
            return Err(GrantError::InvalidGrant(CONCURRENT_REFRESH));
        }
        tracing::warn!(grant = %grant.id, client = %grant.client_id, "superseded refresh token used: revoking its grant");
        revoke_grant(store, grant.id, now).await?;
        return Err(GrantError::InvalidGrant(SUPERSEDED_REFRESH));
    }
    let scopes = match request.scopes {
        None => grant.scopes.clone(),
        Some(wanted) if scope::is_subset(&wanted, &grant.scopes) => wanted,
        Some(_) => return Err(GrantError::InvalidScope),
    };
    // The workspace's API feature and the user are checked on every refresh: switching the
    // feature off or deactivating the user ends the integration within an access token's life.
    let workspace = identity::get_workspace(store, grant.workspace_id).await?;
    if !workspace.is_some_and(|w| w.api_enabled) {
        return Err(GrantError::InvalidGrant("API access is turned off for the workspace"));
    }
    let user = identity::get_user(store, grant.workspace_id, grant.user_id).await?;
    if !user.is_some_and(|u| u.is_active) {
        return Err(GrantError::InvalidGrant(UNKNOWN_REFRESH));
    }

    if differs(grant.resource.as_deref(), request.resource) {
        return Err(GrantError::InvalidTarget);
    }
    let resource = grant.resource.clone().or_else(|| request.resource.map(str::to_owned));
    let next = Grant { version: grant.version + 1, resource, ..grant.clone() };
    let (mut ops, issued) = new_tokens(key, &next, scopes, now)?;
    let bump = Update::default().set(VERSION, next.version).set("rotatedAt", now).set(TTL, now + REFRESH_TTL_SECS);
    ops.insert(
        0,
        TxOp::Update { key: keys::oauth_grant(grant.id), update: bump, cond: Condition::VersionEquals(grant.version) },
    );
    match store.transact(ops).await {
        Ok(()) => Ok(issued),
        // A concurrent refresh of the same token won: refuse this one, revoke nothing.
        Err(StoreError::TransactionCancelled { .. }) => Err(GrantError::InvalidGrant(CONCURRENT_REFRESH)),
        Err(e) => Err(e.into()),
    }
}

/// An access token and a refresh token of the grant's current generation, and the writes that
/// store them.
fn new_tokens(key: &TokenKey, grant: &Grant, scopes: Vec<String>, now: i64) -> StoreResult<(Vec<TxOp>, Issued)> {
    let access_token = token::mint_kind(key, Kind::OAuthAccess);
    let refresh_token = token::mint_kind(key, Kind::OAuthRefresh);
    let access = AccessRecord {
        id: Uuid::new_v4(),
        grant_id: grant.id,
        client_id: grant.client_id.clone(),
        workspace_id: grant.workspace_id,
        user_id: grant.user_id,
        scopes: scopes.clone(),
        expires_at: now + ACCESS_TTL_SECS,
        revoked_at: None,
        resource: grant.resource.clone(),
    };
    let refresh = RefreshRecord {
        grant_id: grant.id,
        client_id: grant.client_id.clone(),
        generation: grant.version,
        expires_at: now + REFRESH_TTL_SECS,
    };
    let mut access_item = entity::to_item(&access, token_hash(&access_token))?;
    access_item.insert(TTL.into(), access.expires_at.into());
    let mut refresh_item = entity::to_item(&refresh, token_hash(&refresh_token))?;
    refresh_item.insert(TTL.into(), refresh.expires_at.into());
    let ops = vec![
        TxOp::Put { item: access_item, cond: Condition::NotExists },
        TxOp::Put { item: refresh_item, cond: Condition::NotExists },
    ];
    Ok((ops, Issued { access_token, refresh_token, expires_in: ACCESS_TTL_SECS, scopes }))
}

fn entity_is(item: &Item, entity: &str) -> bool {
    item.get(ENTITY).and_then(Value::as_str) == Some(entity)
}

pub async fn get_grant(store: &dyn Store, grant_id: Uuid) -> StoreResult<Option<Grant>> {
    entity::get(store, &keys::oauth_grant(grant_id)).await
}

/// Revokes a grant, and with it every access and refresh token issued under it. An unknown
/// or expired grant is nothing to revoke.
pub async fn revoke_grant(store: &dyn Store, grant_id: Uuid, now: i64) -> StoreResult<()> {
    let update = Update::default().set("revokedAt", now);
    match store.update(&keys::oauth_grant(grant_id), update, Condition::Exists).await {
        Ok(_) | Err(StoreError::ConditionFailed) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Revokes every grant of a client (RFC 7592 §2.3: a deleted client's tokens stop working at
/// once). Returns how many grants were revoked.
pub async fn revoke_client_grants(store: &dyn Store, client_id: &str, now: i64) -> StoreResult<usize> {
    let items = query_all(store, Query::gsi1(client_grants_gsi1pk(client_id))).await?;
    let mut revoked = 0;
    for item in items {
        let grant: Grant = from_item(item)?;
        if grant.revoked_at.is_none() {
            revoke_grant(store, grant.id, now).await?;
            revoked += 1;
        }
    }
    Ok(revoked)
}

/// RFC 7009 revocation by the client the token was issued to: a refresh token revokes its
/// grant, an access token itself. Unknown tokens, malformed ones and those of other clients
/// change nothing (the endpoint answers 200 either way, so it tells no one which tokens exist).
pub async fn revoke_token(
    store: &dyn Store,
    key: &TokenKey,
    client_id: &str,
    token: &str,
    now: i64,
) -> StoreResult<()> {
    let Some(kind) = Kind::of(token).filter(|k| *k != Kind::Personal) else {
        return Ok(());
    };
    if token::verify_kind(key, kind, token).is_err() {
        return Ok(());
    }
    let cred_key = keys::credential(&token_hash(token));
    let Some(item) = store.get(&cred_key).await? else {
        return Ok(());
    };
    match kind {
        Kind::OAuthRefresh if entity_is(&item, ENTITY_REFRESH_TOKEN) => {
            let record: RefreshRecord = from_item(item)?;
            if record.client_id == client_id {
                revoke_grant(store, record.grant_id, now).await?;
            }
        }
        Kind::OAuthAccess if entity_is(&item, ENTITY_ACCESS_TOKEN) => {
            let record: AccessRecord = from_item(item)?;
            if record.client_id == client_id {
                revoke_access(store, &cred_key, now).await?;
            }
        }
        _ => {}
    }
    Ok(())
}

async fn revoke_access(store: &dyn Store, cred_key: &Key, now: i64) -> StoreResult<()> {
    match store.update(cred_key, Update::default().set("revokedAt", now), Condition::Exists).await {
        Ok(_) | Err(StoreError::ConditionFailed) => Ok(()),
        Err(e) => Err(e),
    }
}
