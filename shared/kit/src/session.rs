//! Session JWTs: the spec's "bearer JWT", issued by `POST /api/auth/login` (docs/auth.md).
//!
//! A session token is a compact JWS signed with HS256, the one algorithm allow-listed:
//! header `{"alg":"HS256","typ":"JWT","kid":"<key id>"}`, claims `iss`, `aud`, `sub` (user id),
//! `ws` (workspace id), `sid` (session id: the rate-limit bucket), `scope` (space-separated),
//! `iat`, `nbf` and `exp`. The header's `kid` selects the key in the deployment's key set, so
//! keys can rotate while older sessions stay valid.
//!
//! Verification uses no store: header shape, algorithm and key id first, then the signature
//! (jsonwebtoken), then the claims against the security clock with a small leeway. Only a token
//! that passes all of that leads to a store read (the user).

use crate::error::ApiError;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, RwLock};
use std::time::{Duration, Instant};
use uuid::Uuid;
use workapi_domain::identity::{SCOPE_READ, SCOPE_WRITE};

/// Who issues session tokens, and for whom: both must match exactly.
pub const ISSUER: &str = "workapi-login";
pub const AUDIENCE: &str = "workapi-api";
/// The only algorithm accepted or produced.
pub const ALGORITHM: Algorithm = Algorithm::HS256;
const ALGORITHM_NAME: &str = "HS256";
/// Clock skew tolerated on `exp` and `nbf`, in seconds.
pub const LEEWAY_SECS: i64 = 30;
/// Lifetime of a session token, in seconds.
pub const SESSION_TTL_SECS: i64 = 3600;
/// Longer tokens are not ours: rejected before any parsing.
pub const MAX_TOKEN_BYTES: usize = 4096;
/// Signing secrets are at least this long (HS256 wants a key as long as its hash).
pub const MIN_SECRET_BYTES: usize = 32;
const MAX_SECRET_BYTES: usize = 512;
/// The member of the key-set JSON that names the signing key; every other member is a key.
pub const ACTIVE_MEMBER: &str = "active";

/// A session token is a JWT: its base64url header starts with `{"` (`eyJ`), and it has three
/// dot-separated parts. The prefix of a personal access token (`lt_pat_`) can never match.
pub fn looks_like(token: &str) -> bool {
    token.starts_with("eyJ") && token.bytes().filter(|b| *b == b'.').count() == 2
}

/// Why a presented token was refused. Internal (logged at debug level); the client always gets
/// the same 401, except for [`Rejection::Expired`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// Not a compact JWS, or a header or payload that is not the expected JSON.
    Malformed,
    /// `alg` other than HS256 (including `none`).
    Algorithm,
    /// No `kid`, or one the key set does not hold.
    UnknownKey,
    /// The signature does not match the key.
    Signature,
    /// A required claim missing, or `iss`, `aud`, `sub`, `ws`, `sid` or `scope` wrong.
    Claims,
    /// `exp` passed (beyond the leeway).
    Expired,
    /// `nbf` still ahead (beyond the leeway).
    NotYetValid,
}

/// One signing secret. Its bytes never leave this module, and Debug hides them.
#[derive(Clone)]
struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The deployment's session keys: key id → secret, and which key signs new sessions.
///
/// Stored as one JSON object (Secrets Manager secret, or `.workapi/session-keys.json` locally):
/// `{"active": "<kid>", "<kid>": "<hex secret>", …}`. Every member other than `active` is a
/// key: its name is the key id (1–64 characters of `A–Z a–z 0–9 - _ .`), its value the secret
/// in hex, at least 32 bytes (64 hex characters). Flat, so CloudFormation can generate the
/// first key (`GenerateSecretString` adds one top-level member).
#[derive(Clone)]
pub struct SessionKeySet {
    active: String,
    keys: BTreeMap<String, Secret>,
}

impl std::fmt::Debug for SessionKeySet {
    /// Key ids only: they are not secret, the secrets are.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionKeySet").field("active", &self.active).field("kids", &self.keys.keys()).finish()
    }
}

fn valid_kid(kid: &str) -> bool {
    (1..=64).contains(&kid.len())
        && kid != ACTIVE_MEMBER
        && kid.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn from_hex(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A key-set that cannot be used. Messages name key ids at most, never a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("session key set: {0}")]
pub struct KeySetError(String);

impl SessionKeySet {
    /// A new set with one random 32-byte key, active.
    pub fn generate(kid: &str) -> Self {
        let mut bytes = vec![0u8; MIN_SECRET_BYTES];
        rand::rng().fill_bytes(&mut bytes);
        let kid = if valid_kid(kid) { kid.to_owned() } else { "k1".to_owned() };
        SessionKeySet { active: kid.clone(), keys: BTreeMap::from([(kid, Secret(bytes))]) }
    }

    /// Parses the stored JSON form. Errors never quote a value.
    pub fn parse(text: &str) -> Result<Self, KeySetError> {
        let bad = |m: &str| KeySetError(m.to_owned());
        // Parse to a Value first: serde's typed errors may quote the offending value.
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|_| bad("not a JSON object {\"active\": kid, kid: hex secret, …}"))?;
        let object = value.as_object().ok_or_else(|| bad("not a JSON object"))?;
        let active = object
            .get(ACTIVE_MEMBER)
            .and_then(|v| v.as_str())
            .ok_or_else(|| bad("the member \"active\" (the signing key's id) is missing or not a string"))?;
        let mut keys = BTreeMap::new();
        for (kid, secret) in object.iter().filter(|(name, _)| *name != ACTIVE_MEMBER) {
            if !valid_kid(kid) {
                return Err(bad("a key id is not 1-64 characters of A-Z, a-z, 0-9, '-', '_', '.'"));
            }
            let bytes = secret
                .as_str()
                .and_then(from_hex)
                .filter(|b| (MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&b.len()))
                .ok_or_else(|| {
                    KeySetError(format!(
                        "key {kid:?} is not a hex secret of {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes"
                    ))
                })?;
            keys.insert(kid.clone(), Secret(bytes));
        }
        if !keys.contains_key(active) {
            return Err(bad("\"active\" does not name one of the keys"));
        }
        Ok(SessionKeySet { active: active.to_owned(), keys })
    }

    /// The stored JSON form. It contains the secrets: write it only to a private file.
    pub fn to_json(&self) -> String {
        let mut object = serde_json::Map::new();
        object.insert(ACTIVE_MEMBER.into(), self.active.clone().into());
        for (kid, secret) in &self.keys {
            object.insert(kid.clone(), to_hex(&secret.0).into());
        }
        serde_json::Value::Object(object).to_string()
    }

    pub fn active_kid(&self) -> &str {
        &self.active
    }

    pub fn contains(&self, kid: &str) -> bool {
        self.keys.contains_key(kid)
    }

    pub fn kids(&self) -> impl Iterator<Item = &str> {
        self.keys.keys().map(String::as_str)
    }
}

/// What a valid session establishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub workspace_id: Uuid,
    pub user_id: Uuid,
    /// Random per login: the session's rate-limit bucket and `Caller::token_id`.
    pub session_id: Uuid,
    pub scopes: Vec<String>,
    /// Epoch seconds.
    pub expires_at: i64,
}

/// The claims, as signed.
#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    iss: String,
    aud: String,
    sub: String,
    ws: String,
    sid: String,
    scope: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    iat: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nbf: Option<i64>,
    exp: i64,
}

/// A freshly signed session.
pub struct Issued {
    pub token: String,
    pub session: Session,
}

/// Signs a new session with the active key, valid from `now` for [`SESSION_TTL_SECS`].
/// The error (a library failure) never contains the key.
pub fn issue(
    keys: &SessionKeySet,
    workspace_id: Uuid,
    user_id: Uuid,
    scopes: &[&str],
    now: i64,
) -> Result<Issued, String> {
    let session = Session {
        workspace_id,
        user_id,
        session_id: Uuid::new_v4(),
        scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
        expires_at: now + SESSION_TTL_SECS,
    };
    let claims = Claims {
        iss: ISSUER.into(),
        aud: AUDIENCE.into(),
        sub: user_id.to_string(),
        ws: workspace_id.to_string(),
        sid: session.session_id.to_string(),
        scope: scopes.join(" "),
        iat: Some(now),
        nbf: Some(now),
        exp: session.expires_at,
    };
    let mut header = Header::new(ALGORITHM);
    header.kid = Some(keys.active.clone());
    let secret = keys.keys.get(&keys.active).ok_or("the active session key is missing from its set")?;
    crate::jwt_crypto::install();
    let token = jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(&secret.0))
        .map_err(|e| format!("signing a session: {:?}", e.kind()))?;
    Ok(Issued { token, session })
}

/// The protected header, read before the signature only to choose the key.
#[derive(Deserialize)]
struct RawHeader {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
    #[serde(default)]
    typ: Option<String>,
    #[serde(default)]
    crit: Option<serde_json::Value>,
}

/// The key id a token names, after the checks that need no key: size, shape, `alg` = HS256,
/// `typ` absent or `JWT`, no `crit` extensions, a well-formed `kid`. Call it before looking the
/// key up, so that garbage never causes a key-set refresh.
pub fn key_id(token: &str) -> Result<String, Rejection> {
    if token.len() > MAX_TOKEN_BYTES || !looks_like(token) {
        return Err(Rejection::Malformed);
    }
    let encoded = token.split('.').next().unwrap_or_default();
    let bytes = URL_SAFE_NO_PAD.decode(encoded).map_err(|_| Rejection::Malformed)?;
    let header: RawHeader = serde_json::from_slice(&bytes).map_err(|_| Rejection::Malformed)?;
    if header.alg != ALGORITHM_NAME {
        return Err(Rejection::Algorithm);
    }
    if header.typ.as_deref().is_some_and(|t| !t.eq_ignore_ascii_case("JWT")) || header.crit.is_some() {
        return Err(Rejection::Malformed);
    }
    header.kid.filter(|kid| valid_kid(kid)).ok_or(Rejection::UnknownKey)
}

fn validation() -> &'static Validation {
    static VALIDATION: LazyLock<Validation> = LazyLock::new(|| {
        let mut validation = Validation::new(ALGORITHM);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.set_issuer(&[ISSUER]);
        validation.set_audience(&[AUDIENCE]);
        // Times are checked below against the caller's security clock, with our leeway.
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.leeway = 0;
        validation
    });
    &VALIDATION
}

/// Verifies a session token against a key set at `now` (epoch seconds, security clock).
/// No I/O.
pub fn verify(keys: &SessionKeySet, token: &str, now: i64) -> Result<Session, Rejection> {
    let kid = key_id(token)?;
    let secret = keys.keys.get(&kid).ok_or(Rejection::UnknownKey)?;
    crate::jwt_crypto::install();
    let data = jsonwebtoken::decode::<Claims>(token, &DecodingKey::from_secret(&secret.0), validation()).map_err(
        |e| match e.kind() {
            ErrorKind::InvalidSignature => Rejection::Signature,
            ErrorKind::InvalidAlgorithm | ErrorKind::MissingAlgorithm => Rejection::Algorithm,
            ErrorKind::MissingRequiredClaim(_)
            | ErrorKind::InvalidClaimFormat(_)
            | ErrorKind::InvalidIssuer
            | ErrorKind::InvalidAudience
            | ErrorKind::InvalidSubject => Rejection::Claims,
            _ => Rejection::Malformed,
        },
    )?;
    let claims = data.claims;
    // jsonwebtoken checked iss and aud already (exact membership); keep the check local too.
    if claims.iss != ISSUER || claims.aud != AUDIENCE {
        return Err(Rejection::Claims);
    }
    if now >= claims.exp.saturating_add(LEEWAY_SECS) {
        return Err(Rejection::Expired);
    }
    if claims.nbf.is_some_and(|nbf| nbf > now.saturating_add(LEEWAY_SECS)) {
        return Err(Rejection::NotYetValid);
    }
    let uuid = |text: &str| Uuid::parse_str(text).map_err(|_| Rejection::Claims);
    let scopes: Vec<String> = claims.scope.split(' ').filter(|s| !s.is_empty()).map(str::to_owned).collect();
    if scopes.is_empty() || scopes.iter().any(|s| s != SCOPE_READ && s != SCOPE_WRITE) {
        return Err(Rejection::Claims);
    }
    Ok(Session {
        workspace_id: uuid(&claims.ws)?,
        user_id: uuid(&claims.sub)?,
        session_id: uuid(&claims.sid)?,
        scopes,
        expires_at: claims.exp,
    })
}

/// How often a key set from Secrets Manager is fetched again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefreshPolicy {
    /// A token naming an unknown key triggers a fetch, at most once per this interval per
    /// container (so forged key ids cannot hammer Secrets Manager).
    pub min_interval: Duration,
    /// A cached set older than this is fetched again on next use, so a removed key stops
    /// working everywhere within this time even if no unknown key id ever shows up.
    pub max_age: Duration,
}

impl Default for RefreshPolicy {
    fn default() -> Self {
        RefreshPolicy { min_interval: Duration::from_secs(60), max_age: Duration::from_secs(300) }
    }
}

/// Where the session key set comes from.
pub enum SessionKeySource {
    /// Known at start-up (local server, tests, `LT_SESSION_KEYS`).
    Static(Arc<SessionKeySet>),
    /// A Secrets Manager secret holding the key-set JSON, fetched on first use and cached.
    SecretsManager(SecretKeys),
}

/// The cache of a key set kept in Secrets Manager.
pub struct SecretKeys {
    secret_id: String,
    policy: RefreshPolicy,
    current: RwLock<Option<(Arc<SessionKeySet>, Instant)>>,
    /// Serialises fetches; holds the time of the last attempt.
    refresh: tokio::sync::Mutex<Option<Instant>>,
    client: tokio::sync::OnceCell<aws_sdk_secretsmanager::Client>,
}

impl SessionKeySource {
    pub fn fixed(keys: SessionKeySet) -> Self {
        SessionKeySource::Static(Arc::new(keys))
    }

    pub fn secrets_manager(secret_id: impl Into<String>) -> Self {
        Self::secrets_manager_with(secret_id, RefreshPolicy::default())
    }

    pub fn secrets_manager_with(secret_id: impl Into<String>, policy: RefreshPolicy) -> Self {
        SessionKeySource::SecretsManager(SecretKeys {
            secret_id: secret_id.into(),
            policy,
            current: RwLock::new(None),
            refresh: tokio::sync::Mutex::new(None),
            client: tokio::sync::OnceCell::new(),
        })
    }

    /// The key set, holding `kid` if it exists at all. A cached set that lacks `kid`, or is
    /// older than the policy's `max_age`, is fetched again (at most once per `min_interval`).
    /// A failed refresh keeps the cached set (logged); only a failed first fetch is an error.
    /// Errors name the secret id, never its value.
    /// A failed first fetch is 503 when Secrets Manager cannot answer, 500 when the secret is
    /// missing or malformed.
    pub async fn keys(&self, kid: Option<&str>) -> Result<Arc<SessionKeySet>, ApiError> {
        let source = match self {
            SessionKeySource::Static(keys) => return Ok(keys.clone()),
            SessionKeySource::SecretsManager(source) => source,
        };
        if let Some(keys) = source.usable(kid) {
            return Ok(keys);
        }
        let mut last_attempt = source.refresh.lock().await;
        // Someone may have refreshed while this request waited.
        if let Some(keys) = source.usable(kid) {
            return Ok(keys);
        }
        let cached = source.cached().map(|(keys, _)| keys);
        if let (Some(keys), Some(at)) = (&cached, *last_attempt)
            && at.elapsed() < source.policy.min_interval
        {
            return Ok(keys.clone());
        }
        *last_attempt = Some(Instant::now());
        match source.fetch().await {
            Ok(keys) => {
                let keys = Arc::new(keys);
                *source.current.write().unwrap_or_else(|p| p.into_inner()) = Some((keys.clone(), Instant::now()));
                Ok(keys)
            }
            Err(e) => match cached {
                Some(keys) => {
                    tracing::warn!(
                        error = e.cause().unwrap_or_default(),
                        "could not refresh the session keys; keeping the cached set"
                    );
                    Ok(keys)
                }
                None => Err(e),
            },
        }
    }
}

impl SecretKeys {
    fn cached(&self) -> Option<(Arc<SessionKeySet>, Instant)> {
        self.current.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The cached set when it is fresh and holds `kid`.
    fn usable(&self, kid: Option<&str>) -> Option<Arc<SessionKeySet>> {
        let (keys, fetched) = self.cached()?;
        let fresh = fetched.elapsed() < self.policy.max_age;
        (fresh && kid.is_none_or(|kid| keys.contains(kid))).then_some(keys)
    }

    async fn fetch(&self) -> Result<SessionKeySet, ApiError> {
        let client = self
            .client
            .get_or_init(|| async { aws_sdk_secretsmanager::Client::new(workapi_store::aws::sdk_config().await) })
            .await;
        fetch_session_keys_with(client, &self.secret_id).await
    }
}

/// Reads a key set from Secrets Manager. Errors name the secret, never its value.
async fn fetch_session_keys_with(
    client: &aws_sdk_secretsmanager::Client,
    secret_id: &str,
) -> Result<SessionKeySet, ApiError> {
    let out = client.get_secret_value().secret_id(secret_id).send().await.map_err(|e| {
        let cause = format!("reading secret {secret_id}: {}", aws_sdk_secretsmanager::error::DisplayErrorContext(&e));
        if workapi_store::aws::is_transient(&e) { ApiError::unavailable(cause) } else { ApiError::internal(cause) }
    })?;
    let value =
        out.secret_string().ok_or_else(|| ApiError::internal(format!("secret {secret_id} has no string value")))?;
    SessionKeySet::parse(value).map_err(|e| ApiError::internal(format!("secret {secret_id}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hmac::{Hmac, Mac};
    use serde_json::json;
    use sha2::Sha256;

    const NOW: i64 = 1_800_000_000;
    const HEX_A: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    const HEX_B: &str = "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    fn keys() -> SessionKeySet {
        SessionKeySet::parse(&json!({"active": "k1", "k1": HEX_A, "k0": HEX_B}).to_string()).unwrap()
    }

    fn b64(value: &serde_json::Value) -> String {
        URL_SAFE_NO_PAD.encode(value.to_string())
    }

    /// A token assembled by hand: header and claims as given, HMAC-SHA256 with `secret_hex`.
    fn hand_made(header: serde_json::Value, claims: serde_json::Value, secret_hex: &str) -> String {
        let head = format!("{}.{}", b64(&header), b64(&claims));
        let mut mac = Hmac::<Sha256>::new_from_slice(&from_hex(secret_hex).unwrap()).unwrap();
        mac.update(head.as_bytes());
        format!("{head}.{}", URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()))
    }

    fn good_claims() -> serde_json::Value {
        json!({
            "iss": ISSUER, "aud": AUDIENCE, "sub": Uuid::new_v4(), "ws": Uuid::new_v4(),
            "sid": Uuid::new_v4(), "scope": "api:read api:write", "iat": NOW, "exp": NOW + 60
        })
    }

    fn header() -> serde_json::Value {
        json!({"alg": "HS256", "typ": "JWT", "kid": "k1"})
    }

    #[test]
    fn issued_sessions_verify_and_carry_their_claims() {
        let keys = keys();
        let (ws, user) = (Uuid::new_v4(), Uuid::new_v4());
        let issued = issue(&keys, ws, user, &[SCOPE_READ, SCOPE_WRITE], NOW).unwrap();
        assert!(looks_like(&issued.token) && issued.token.starts_with("eyJ"));
        assert_eq!(key_id(&issued.token), Ok("k1".to_owned()));
        let session = verify(&keys, &issued.token, NOW + 10).unwrap();
        assert_eq!(session, issued.session);
        assert_eq!((session.workspace_id, session.user_id), (ws, user));
        assert_eq!(session.expires_at, NOW + SESSION_TTL_SECS);
        assert_ne!(issue(&keys, ws, user, &[SCOPE_READ], NOW).unwrap().session.session_id, session.session_id);
    }

    #[test]
    fn a_hand_made_token_with_good_claims_verifies() {
        // Guards the tests below: each changes one thing in a token that would pass.
        assert!(verify(&keys(), &hand_made(header(), good_claims(), HEX_A), NOW).is_ok());
    }

    #[test]
    fn expiry_and_not_before_use_the_leeway() {
        let keys = keys();
        let token = hand_made(header(), good_claims(), HEX_A);
        assert!(verify(&keys, &token, NOW + 60 + LEEWAY_SECS - 1).is_ok(), "inside the leeway");
        assert_eq!(verify(&keys, &token, NOW + 60 + LEEWAY_SECS), Err(Rejection::Expired));
        let mut claims = good_claims();
        claims["nbf"] = json!(NOW + 100);
        let early = hand_made(header(), claims, HEX_A);
        assert_eq!(verify(&keys, &early, NOW), Err(Rejection::NotYetValid));
        assert!(verify(&keys, &early, NOW + 100 - LEEWAY_SECS).is_ok(), "nbf inside the leeway");
    }

    #[test]
    fn required_claims_and_their_values() {
        let keys = keys();
        for (name, value) in [
            ("iss", Some(json!("someone-else"))),
            ("aud", Some(json!("another-api"))),
            ("aud", Some(json!([AUDIENCE, "x"]))),
            ("sub", Some(json!("not-a-uuid"))),
            ("ws", Some(json!(42))),
            ("scope", Some(json!("admin"))),
            ("scope", Some(json!(""))),
            ("exp", Some(json!("tomorrow"))),
            ("exp", None),
            ("iss", None),
            ("aud", None),
            ("sub", None),
            ("ws", None),
            ("sid", None),
            ("scope", None),
        ] {
            let mut claims = good_claims();
            match value.clone() {
                Some(v) => claims[name] = v,
                None => {
                    claims.as_object_mut().unwrap().remove(name);
                }
            }
            let token = hand_made(header(), claims.clone(), HEX_A);
            let rejected = verify(&keys, &token, NOW);
            assert!(
                matches!(rejected, Err(Rejection::Claims | Rejection::Malformed)),
                "{name} = {value:?} gave {rejected:?}"
            );
        }
    }

    #[test]
    fn header_checks_come_before_the_key() {
        let keys = keys();
        let claims = good_claims();
        let none = format!("{}.{}.", b64(&json!({"alg": "none", "kid": "k1"})), b64(&claims));
        assert_eq!(verify(&keys, &none, NOW), Err(Rejection::Algorithm), "unsigned");
        let none_sig = format!("{}.{}.x", b64(&json!({"alg": "none", "kid": "k1"})), b64(&claims));
        assert_eq!(verify(&keys, &none_sig, NOW), Err(Rejection::Algorithm));
        for alg in ["HS384", "HS512", "RS256", "ES256", "EdDSA", "hs256"] {
            let token = hand_made(json!({"alg": alg, "kid": "k1"}), claims.clone(), HEX_A);
            assert_eq!(verify(&keys, &token, NOW), Err(Rejection::Algorithm), "{alg}");
        }
        let no_kid = hand_made(json!({"alg": "HS256"}), claims.clone(), HEX_A);
        assert_eq!(verify(&keys, &no_kid, NOW), Err(Rejection::UnknownKey));
        let unknown = hand_made(json!({"alg": "HS256", "kid": "k9"}), claims.clone(), HEX_A);
        assert_eq!(verify(&keys, &unknown, NOW), Err(Rejection::UnknownKey));
        let crit = hand_made(json!({"alg": "HS256", "kid": "k1", "crit": ["exp"]}), claims.clone(), HEX_A);
        assert_eq!(verify(&keys, &crit, NOW), Err(Rejection::Malformed));
        let typ = hand_made(json!({"alg": "HS256", "kid": "k1", "typ": "at+jwt"}), claims.clone(), HEX_A);
        assert_eq!(verify(&keys, &typ, NOW), Err(Rejection::Malformed));
    }

    #[test]
    fn signatures_bind_the_key_and_the_content() {
        let keys = keys();
        // Signed by k0's secret but naming k1.
        assert_eq!(verify(&keys, &hand_made(header(), good_claims(), HEX_B), NOW), Err(Rejection::Signature));
        // Payload swapped, signature kept.
        let token = hand_made(header(), good_claims(), HEX_A);
        let parts: Vec<&str> = token.split('.').collect();
        let mut claims = good_claims();
        claims["scope"] = json!("api:read api:write");
        claims["exp"] = json!(NOW + 999_999);
        let tampered = format!("{}.{}.{}", parts[0], b64(&claims), parts[2]);
        assert_eq!(verify(&keys, &tampered, NOW), Err(Rejection::Signature));
        // Every single-character change of the signature fails.
        let sig_start = token.rfind('.').unwrap() + 1;
        for i in sig_start..token.len() - 1 {
            let mut bytes = token.clone().into_bytes();
            bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
            assert!(verify(&keys, &String::from_utf8(bytes).unwrap(), NOW).is_err(), "position {i}");
        }
    }

    #[test]
    fn malformed_tokens() {
        let keys = keys();
        let long = format!("eyJ{}.a.b", "a".repeat(MAX_TOKEN_BYTES));
        for bad in ["", "eyJ", "eyJ.a", "eyJ.a.b.c", "lt_pat_x.y.z", "eyJhbGciOiJIUzI1NiJ9.%%%.abc", &long] {
            assert!(verify(&keys, bad, NOW).is_err(), "{bad:?}");
        }
        assert!(!looks_like("lt_pat_abc"));
    }

    #[test]
    fn key_sets_parse_strictly_and_never_show_secrets() {
        let set = keys();
        assert_eq!(set.active_kid(), "k1");
        assert_eq!(set.kids().collect::<Vec<_>>(), ["k0", "k1"]);
        assert_eq!(SessionKeySet::parse(&set.to_json()).unwrap().to_json(), set.to_json());
        let debug = format!("{set:?}");
        assert!(!debug.contains(HEX_A) && !debug.contains(&HEX_A[..16]), "{debug}");
        let generated = SessionKeySet::generate("local-1");
        assert_eq!(generated.active_kid(), "local-1");
        assert_eq!(SessionKeySet::parse(&generated.to_json()).unwrap().to_json(), generated.to_json());

        let short = &HEX_A[..62];
        for bad in [
            json!([]),
            json!({"k1": HEX_A}),
            json!({"active": "k2", "k1": HEX_A}),
            json!({"active": "k1", "k1": short}),
            json!({"active": "k1", "k1": "zz".repeat(32)}),
            json!({"active": "k1", "k1": 5}),
            json!({"active": "k 1", "k 1": HEX_A}),
        ] {
            let err = SessionKeySet::parse(&bad.to_string()).unwrap_err().to_string();
            assert!(!err.contains(short), "{err}");
        }
        let err = SessionKeySet::parse(&format!("{{\"active\": \"k1\", \"k1\": \"{HEX_A}\"")).unwrap_err();
        assert!(!err.to_string().contains(HEX_A), "{err}");
    }

    #[tokio::test]
    async fn a_static_source_always_answers_with_its_set() {
        let source = SessionKeySource::fixed(keys());
        let set = source.keys(Some("nope")).await.unwrap();
        assert_eq!(set.active_kid(), "k1");
    }
}
