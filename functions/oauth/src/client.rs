//! Registered OAuth clients (RFC 7591 dynamic registration, RFC 7592 management).
//!
//! A client is one item `OAUTH#CLIENT#<clientId>` / `CLIENT` (docs/data-model.md), with a
//! registration guard `OAUTH#REG#<identity hash>` / `GUARD` that makes identical registrations
//! idempotent. Its secret (confidential clients only) and its registration access token are
//! stored as SHA-256 hashes, never in clear, and are kept out of `Debug`.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use uuid::Uuid;
use workapi_kit::entity::{self, Attempt, Entity};
use workapi_kit::oauth::issuer::is_loopback_host;
use workapi_kit::{ApiError, ApiResult};
use workapi_store::{Condition, Key, Store, StoreError, StoreResult, TxOp};

/// Prefix of every client id (`dcr_<uuid>`).
pub const CLIENT_ID_PREFIX: &str = "dcr_";

/// How a client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuthMethod {
    /// A public client (no secret); PKCE protects its codes.
    None,
    /// `client_id` and `client_secret` in the form body of the token request.
    ClientSecretPost,
    /// HTTP Basic authentication with `client_id:client_secret`.
    ClientSecretBasic,
}

impl AuthMethod {
    pub const ALL: [AuthMethod; 3] = [AuthMethod::None, AuthMethod::ClientSecretPost, AuthMethod::ClientSecretBasic];

    pub fn as_str(&self) -> &'static str {
        match self {
            AuthMethod::None => "none",
            AuthMethod::ClientSecretPost => "client_secret_post",
            AuthMethod::ClientSecretBasic => "client_secret_basic",
        }
    }

    pub fn parse(value: &str) -> Option<AuthMethod> {
        AuthMethod::ALL.into_iter().find(|m| m.as_str() == value)
    }
}

/// A registered client.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Client {
    pub client_id: String,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub token_endpoint_auth_method: AuthMethod,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_uri: Option<String>,
    /// Unix seconds.
    pub client_id_issued_at: i64,
    /// SHA-256 (hex) of the client secret; only for confidential clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    secret_hash: Option<String>,
    /// SHA-256 (hex) of the RFC 7592 registration access token.
    registration_token_hash: String,
    /// SHA-256 (hex) of the registration identity (the complete metadata, see
    /// [`Metadata::registration_key`]): the key of the idempotency guard.
    registration_key: String,
    /// Set when an anonymous registration was answered with this existing client: several
    /// parties rely on it, so RFC 7592 can no longer change or delete it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    shared: bool,
    #[serde(default)]
    version: i64,
}

impl std::fmt::Debug for Client {
    /// Leaves out the hashes: they are not secrets, but nothing credential-shaped is logged.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("client_id", &self.client_id)
            .field("client_name", &self.client_name)
            .field("redirect_uris", &self.redirect_uris)
            .field("token_endpoint_auth_method", &self.token_endpoint_auth_method)
            .field("client_uri", &self.client_uri)
            .field("logo_uri", &self.logo_uri)
            .field("client_id_issued_at", &self.client_id_issued_at)
            .field("shared", &self.shared)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// SHA-256 of a value, lower-case hex.
pub fn sha256_hex(value: &str) -> String {
    let digest = Sha256::digest(value.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Constant-time comparison of the SHA-256 of `presented` with a stored hex hash.
fn hash_matches(stored_hex: &str, presented: &str) -> bool {
    let presented = sha256_hex(presented);
    stored_hex.len() == presented.len() && bool::from(stored_hex.as_bytes().ct_eq(presented.as_bytes()))
}

/// A new client id, `dcr_<uuid>`.
pub fn new_client_id() -> String {
    format!("{CLIENT_ID_PREFIX}{}", Uuid::new_v4())
}

/// True for a well-formed client id: `dcr_` and a UUID in its canonical (lower-case,
/// hyphenated) form, so one client has exactly one spelling and no key separator can appear.
pub fn is_client_id(value: &str) -> bool {
    value
        .strip_prefix(CLIENT_ID_PREFIX)
        .and_then(|rest| Uuid::parse_str(rest).ok().map(|uuid| uuid.to_string() == rest))
        .unwrap_or(false)
}

impl Entity for Client {
    const TYPE: &'static str = "OAuthClient";
    const PREFIX: &'static str = "OAUTH#CLIENT#";
    /// Not tenant-prefixed: clients exist before any workspace installs them.
    type Scope = ();

    fn key(&self, _: ()) -> Key {
        Key::new(format!("{}{}", Self::PREFIX, self.client_id), "CLIENT")
    }
}

/// The part of item keys that names a client: a registered client's id itself, a metadata
/// document client's `cimd_` and the SHA-256 (hex) of its URL (which may be long and hold any
/// character). None for anything else, so request input can never shape a key.
pub fn key_part(client_id: &str) -> Option<String> {
    if is_client_id(client_id) {
        Some(client_id.to_owned())
    } else if crate::metadata_document::document_url(client_id).is_ok() {
        Some(format!("cimd_{}", sha256_hex(client_id)))
    } else {
        None
    }
}

/// The key of a client. None unless `client_id` is a well-formed `dcr_<uuid>` (canonical form),
/// so request input can neither inject a key separator nor spell one client two ways.
pub fn client_key(client_id: &str) -> Option<Key> {
    is_client_id(client_id).then(|| Key::new(format!("{}{client_id}", Client::PREFIX), "CLIENT"))
}

/// The idempotency guard of dynamic registration: one per registration identity (see
/// [`Metadata::registration_key`]), naming the client registered with it.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationGuard {
    client_id: String,
    /// SHA-256 (hex) of the identity: the key. Guards written before this attribute existed
    /// lack it; they are only ever read.
    #[serde(default)]
    registration_key: String,
}

impl Entity for RegistrationGuard {
    const TYPE: &'static str = "OAuthRegistrationGuard";
    const PREFIX: &'static str = "OAUTH#REG#";
    type Scope = ();

    fn key(&self, _: ()) -> Key {
        guard_key(&self.registration_key)
    }
}

/// The key of the guard of one registration identity, by its SHA-256 (hex).
fn guard_key(registration_key: &str) -> Key {
    Key::new(format!("{}{registration_key}", RegistrationGuard::PREFIX), "GUARD")
}

/// Loads a client; None for an unknown or malformed client id (no store read for the latter).
pub async fn get(store: &dyn Store, client_id: &str) -> StoreResult<Option<Client>> {
    let Some(key) = client_key(client_id) else {
        return Ok(None);
    };
    entity::get(store, &key).await
}

impl Client {
    /// True for clients that authenticate with a secret at the token endpoint.
    pub fn is_confidential(&self) -> bool {
        self.token_endpoint_auth_method != AuthMethod::None
    }

    /// A client described by its Client ID Metadata Document (already validated): public, not
    /// stored, no registration to manage.
    pub fn from_metadata_document(url: &str, metadata: Metadata) -> Client {
        Client {
            client_id: url.to_owned(),
            client_name: metadata.client_name,
            redirect_uris: metadata.redirect_uris,
            token_endpoint_auth_method: AuthMethod::None,
            client_uri: metadata.client_uri,
            logo_uri: metadata.logo_uri,
            client_id_issued_at: 0,
            secret_hash: None,
            registration_token_hash: String::new(),
            registration_key: String::new(),
            shared: false,
            version: 0,
        }
    }

    /// The host of a metadata document client's URL (the consent page shows it); None for a
    /// registered client.
    pub fn document_host(&self) -> Option<String> {
        if !crate::metadata_document::is_document_client_id(&self.client_id) {
            return None;
        }
        url::Url::parse(&self.client_id).ok()?.host_str().map(str::to_owned)
    }

    /// True when `presented` is this client's secret (constant-time comparison of SHA-256
    /// hashes). Always false for a public client.
    pub fn secret_matches(&self, presented: &str) -> bool {
        match &self.secret_hash {
            Some(hash) if self.is_confidential() => hash_matches(hash, presented),
            _ => false,
        }
    }

    /// True when `presented` is this client's registration access token (RFC 7592). Always
    /// false once the registration was retired (see [`retire_registration`]).
    pub fn registration_token_matches(&self, presented: &str) -> bool {
        !self.registration_token_hash.is_empty() && hash_matches(&self.registration_token_hash, presented)
    }

    /// Exact redirect-URI matching (RFC 6749 §3.1.2.3, OAuth 2.1): the presented URI must equal
    /// a registered one character for character, except that for an `http` loopback URI
    /// (127.0.0.1, [::1], localhost) the port may differ (RFC 8252 §7.3: native apps take an
    /// ephemeral port at request time).
    pub fn redirect_uri_allowed(&self, presented: &str) -> bool {
        self.redirect_uris.iter().any(|registered| redirect_uri_matches(registered, presented))
    }

    /// True when an anonymous registration was answered with this existing client (several
    /// parties may rely on it): its metadata is frozen (docs/oauth.md, "Shared clients").
    pub fn is_shared(&self) -> bool {
        self.shared
    }

    /// The version this client was read at (RFC 7592 updates and deletes are conditioned on it).
    pub fn version(&self) -> i64 {
        self.version
    }

    /// The metadata a registration or an RFC 7592 update sets.
    pub fn metadata(&self) -> Metadata {
        Metadata {
            client_name: self.client_name.clone(),
            redirect_uris: self.redirect_uris.clone(),
            token_endpoint_auth_method: self.token_endpoint_auth_method,
            client_uri: self.client_uri.clone(),
            logo_uri: self.logo_uri.clone(),
        }
    }
}

/// Client metadata as registered (already validated by the caller; redirect URIs without
/// duplicates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub token_endpoint_auth_method: AuthMethod,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
}

impl Metadata {
    /// SHA-256 (hex) of the registration identity: the *complete* metadata — client name, the
    /// *set* of redirect URIs (sorted, so their order does not matter), auth method, client and
    /// logo URIs — encoded unambiguously as JSON. Only an identical registration is
    /// deduplicated; one that differs in anything is another client, so nobody can squat an
    /// identity with near-identical metadata.
    pub fn registration_key(&self) -> String {
        let mut uris: Vec<&str> = self.redirect_uris.iter().map(String::as_str).collect();
        uris.sort_unstable();
        uris.dedup();
        let identity = serde_json::json!([
            "v2",
            self.client_name,
            uris,
            self.token_endpoint_auth_method.as_str(),
            self.client_uri,
            self.logo_uri,
        ]);
        sha256_hex(&identity.to_string())
    }

    /// True when both describe the same client: same identity and the same other metadata
    /// (redirect URIs compared as a set).
    pub fn same_as(&self, other: &Metadata) -> bool {
        let set = |m: &Metadata| {
            let mut uris = m.redirect_uris.clone();
            uris.sort_unstable();
            uris.dedup();
            uris
        };
        self.client_name == other.client_name
            && set(self) == set(other)
            && self.token_endpoint_auth_method == other.token_endpoint_auth_method
            && self.client_uri == other.client_uri
            && self.logo_uri == other.logo_uri
    }
}

/// A fresh random credential: `prefix` + 32 random bytes in base64url (43 characters).
fn random_credential(prefix: &str) -> String {
    use base64::Engine;
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Prefix of client secrets (recognisable by secret scanners).
pub const CLIENT_SECRET_PREFIX: &str = "lt_cs_";
/// Prefix of registration access tokens (RFC 7592).
pub const REGISTRATION_TOKEN_PREFIX: &str = "lt_rat_";

/// What a registration did.
pub enum Registered {
    /// A new client. The secret (confidential clients only) and the registration access token
    /// exist only here: the store keeps their hashes.
    Created { client: Client, client_secret: Option<String>, registration_access_token: String },
    /// A client with the same metadata existed: returned with no secret and no new
    /// registration access token, and marked shared (RFC 7592 can no longer change or delete
    /// it: others now rely on it).
    Existing(Client),
}

/// Registers a client, idempotently: the client item and its guard item are written in one
/// transaction, both `NotExists`, so concurrent identical registrations create one client. An
/// identical registration gets the existing client, which becomes shared. A write that loses a
/// race with a concurrent one (DynamoDB may cancel both before the winner's items are readable)
/// reads again.
pub async fn register(store: &dyn Store, metadata: Metadata, now: i64) -> ApiResult<Registered> {
    let registration_key = metadata.registration_key();
    let guard_key = guard_key(&registration_key);
    let busy = "Registration kept conflicting with concurrent registrations; try again";
    entity::retry_on_conflict(busy, |_| async {
        if let Some(existing) = guarded_client(store, &guard_key).await?
            && existing.metadata().same_as(&metadata)
        {
            if existing.shared {
                return Ok(Attempt::Done(Registered::Existing(existing)));
            }
            // Mark it shared, conditioned on the version read: a concurrent RFC 7592 change or
            // delete by its registrant either lands first (we read again) or fails.
            let shared = Client { shared: true, version: existing.version + 1, ..existing.clone() };
            let item = entity::to_item(&shared, ())?;
            return match store.put(item, Condition::VersionEquals(existing.version)).await {
                Ok(()) => Ok(Attempt::Done(Registered::Existing(shared))),
                Err(e) if entity::is_conflict(&e) => Ok(Attempt::Conflict),
                Err(e) => Err(e.into()),
            };
        }
        let client_secret =
            (metadata.token_endpoint_auth_method != AuthMethod::None).then(|| random_credential(CLIENT_SECRET_PREFIX));
        let registration_access_token = random_credential(REGISTRATION_TOKEN_PREFIX);
        let client = Client {
            client_id: new_client_id(),
            client_name: metadata.client_name.clone(),
            redirect_uris: metadata.redirect_uris.clone(),
            token_endpoint_auth_method: metadata.token_endpoint_auth_method,
            client_uri: metadata.client_uri.clone(),
            logo_uri: metadata.logo_uri.clone(),
            client_id_issued_at: now,
            secret_hash: client_secret.as_deref().map(sha256_hex),
            registration_token_hash: sha256_hex(&registration_access_token),
            registration_key: registration_key.clone(),
            shared: false,
            version: 1,
        };
        let guard =
            RegistrationGuard { client_id: client.client_id.clone(), registration_key: registration_key.clone() };
        let ops = vec![
            TxOp::Put { item: entity::to_item(&client, ())?, cond: Condition::NotExists },
            TxOp::Put { item: entity::to_item(&guard, ())?, cond: Condition::NotExists },
        ];
        match store.transact(ops).await {
            Ok(()) => Ok(Attempt::Done(Registered::Created { client, client_secret, registration_access_token })),
            // Someone else registered the same identity (or a concurrent transaction got in the
            // way): read again.
            Err(e) if entity::is_conflict(&e) => Ok(Attempt::Conflict),
            Err(e) => Err(ApiError::from(e)),
        }
    })
    .await
}

async fn guarded_client(store: &dyn Store, guard_key: &Key) -> StoreResult<Option<Client>> {
    let Some(guard) = entity::get::<RegistrationGuard>(store, guard_key).await? else {
        return Ok(None);
    };
    get(store, &guard.client_id).await
}

/// What an RFC 7592 update did.
pub enum Replaced {
    /// Updated; `client_secret` is set when a new secret was issued (shown once).
    Updated { client: Box<Client>, client_secret: Option<String> },
    /// Another client is already registered with exactly the new metadata.
    IdentityTaken,
    /// The client changed or disappeared meanwhile (its version moved): nothing was written.
    Stale,
}

/// Replaces a client's metadata (RFC 7592 §2.2), conditioned on the version that was read.
/// When the registration identity changes, the guard moves in the same transaction. A secret
/// is issued when the client becomes confidential or `rotate_secret` asks for it; it is
/// dropped when the client becomes public. The registration access token stays.
pub async fn replace(
    store: &dyn Store,
    current: &Client,
    metadata: Metadata,
    rotate_secret: bool,
) -> StoreResult<Replaced> {
    let confidential = metadata.token_endpoint_auth_method != AuthMethod::None;
    let client_secret = (confidential && (rotate_secret || current.secret_hash.is_none()))
        .then(|| random_credential(CLIENT_SECRET_PREFIX));
    let secret_hash = match (&client_secret, confidential) {
        (Some(secret), _) => Some(sha256_hex(secret)),
        (None, true) => current.secret_hash.clone(),
        (None, false) => None,
    };
    let registration_key = metadata.registration_key();
    let client = Client {
        client_name: metadata.client_name,
        redirect_uris: metadata.redirect_uris,
        token_endpoint_auth_method: metadata.token_endpoint_auth_method,
        client_uri: metadata.client_uri,
        logo_uri: metadata.logo_uri,
        secret_hash,
        registration_key: registration_key.clone(),
        version: current.version + 1,
        ..current.clone()
    };
    let mut ops =
        vec![TxOp::Put { item: entity::to_item(&client, ())?, cond: Condition::VersionEquals(current.version) }];
    let moves = registration_key != current.registration_key;
    if moves {
        let guard = RegistrationGuard { client_id: client.client_id.clone(), registration_key };
        ops.push(TxOp::Put { item: entity::to_item(&guard, ())?, cond: Condition::NotExists });
        ops.push(TxOp::Delete { key: guard_key(&current.registration_key), cond: Condition::None });
    }
    match store.transact(ops).await {
        Ok(()) => Ok(Replaced::Updated { client: Box::new(client), client_secret }),
        Err(StoreError::TransactionCancelled { failed }) if moves && failed.contains(&1) => Ok(Replaced::IdentityTaken),
        Err(StoreError::TransactionCancelled { .. }) | Err(StoreError::ConditionFailed) => Ok(Replaced::Stale),
        Err(e) => Err(e),
    }
}

/// Deletes a client and its registration guard in one transaction, conditioned on the version
/// that was read. False when the client changed or disappeared meanwhile.
pub async fn delete(store: &dyn Store, current: &Client) -> StoreResult<bool> {
    let ops = vec![
        TxOp::Delete { key: current.key(()), cond: Condition::VersionEquals(current.version) },
        TxOp::Delete { key: guard_key(&current.registration_key), cond: Condition::None },
    ];
    match store.transact(ops).await {
        Ok(()) => Ok(true),
        Err(StoreError::TransactionCancelled { .. }) | Err(StoreError::ConditionFailed) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Ends the RFC 7592 registration of a shared public client without deleting the client, which
/// others were given: its registration access token stops working (the hash is cleared), its
/// secret, if any, is dropped. Conditioned on the version that was read; false when the client
/// changed or disappeared meanwhile.
pub async fn retire_registration(store: &dyn Store, current: &Client) -> StoreResult<bool> {
    let retired = Client {
        registration_token_hash: String::new(),
        secret_hash: None,
        version: current.version + 1,
        ..current.clone()
    };
    let put = TxOp::Put { item: entity::to_item(&retired, ())?, cond: Condition::VersionEquals(current.version) };
    match store.transact(vec![put]).await {
        Ok(()) => Ok(true),
        Err(StoreError::TransactionCancelled { .. }) | Err(StoreError::ConditionFailed) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether a presented redirect URI matches one registered URI (see
/// [`Client::redirect_uri_allowed`]).
pub fn redirect_uri_matches(registered: &str, presented: &str) -> bool {
    if registered == presented {
        return true;
    }
    match (loopback_without_port(registered), loopback_without_port(presented)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// For an `http` loopback URI written exactly as its parsed form (so no case or escaping
/// variant slips through), the URI with its port removed; None for anything else.
fn loopback_without_port(uri: &str) -> Option<String> {
    let mut parsed = url::Url::parse(uri).ok()?;
    if parsed.scheme() != "http"
        || !is_loopback_host(&parsed)
        || parsed.fragment().is_some()
        || !parsed.username().is_empty()
        || parsed.password().is_some()
    {
        return None;
    }
    // Only URIs that are already in canonical form: `http://LOCALHOST:1/cb` or
    // `http://127.0.0.1:1/a/../cb` are not the registered `http://localhost/cb`.
    if parsed.as_str() != uri && parsed.as_str() != format!("{uri}/") {
        return None;
    }
    let text = parsed.as_str().to_owned();
    parsed.set_port(None).ok()?;
    let stripped = parsed.as_str().to_owned();
    // `Url` adds a `/` to an empty path; compare what was written.
    Some(if text.len() > uri.len() { stripped.trim_end_matches('/').to_owned() } else { stripped })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(uris: &[&str]) -> Client {
        Client {
            client_id: new_client_id(),
            client_name: "c".into(),
            redirect_uris: uris.iter().map(|s| (*s).to_owned()).collect(),
            token_endpoint_auth_method: AuthMethod::ClientSecretBasic,
            client_uri: None,
            logo_uri: None,
            client_id_issued_at: 0,
            secret_hash: Some(sha256_hex("s3cret")),
            registration_token_hash: sha256_hex("rat"),
            registration_key: String::new(),
            shared: false,
            version: 1,
        }
    }

    #[test]
    fn client_keys_refuse_malformed_ids() {
        let c = client(&[]);
        assert_eq!(client_key(&c.client_id), Some(c.key(())));
        assert!(client_key("dcr_x#CLIENT").is_none());
        assert!(client_key("").is_none());
    }

    #[test]
    fn client_ids_are_canonical() {
        let id = new_client_id();
        assert!(is_client_id(&id));
        assert!(!is_client_id(&id.to_uppercase()));
        assert!(!is_client_id(&id.replace("dcr_", "")));
        assert!(!is_client_id(&format!("{id}#CLIENT")));
        assert!(!is_client_id(&format!("dcr_{}", Uuid::new_v4().simple())));
        assert!(!is_client_id("dcr_"));
    }

    #[test]
    fn secrets_compare_by_hash() {
        let c = client(&["https://a.example/cb"]);
        assert!(c.secret_matches("s3cret"));
        assert!(!c.secret_matches("s3cret "));
        assert!(!c.secret_matches(""));
        let public = Client { token_endpoint_auth_method: AuthMethod::None, ..c.clone() };
        assert!(!public.secret_matches("s3cret"));
        assert!(c.registration_token_matches("rat"));
        assert!(!c.registration_token_matches("RAT"));
        assert!(!format!("{c:?}").contains(&sha256_hex("s3cret")));
    }

    #[test]
    fn redirect_uris_match_exactly() {
        let c = client(&["https://app.example/callback"]);
        assert!(c.redirect_uri_allowed("https://app.example/callback"));
        for bad in [
            "https://app.example/callback/",
            "https://app.example/callback/x",
            "https://app.example/call",
            "https://app.example/callbackx",
            "https://app.example/callback?x=1",
            "https://app.example/callback#frag",
            "https://APP.example/callback",
            "https://app.example/Callback",
            "http://app.example/callback",
            "https://app.example:443/callback",
            "https://app.example:8443/callback",
            "https://evil.example/callback",
            "https://app.example.evil.example/callback",
            "https://user@app.example/callback",
            "",
        ] {
            assert!(!c.redirect_uri_allowed(bad), "{bad}");
        }
    }

    #[test]
    fn loopback_matches_any_port() {
        let c = client(&["http://127.0.0.1/callback", "http://[::1]:8080/cb", "http://localhost:3000/cb"]);
        for good in [
            "http://127.0.0.1/callback",
            "http://127.0.0.1:1/callback",
            "http://127.0.0.1:65535/callback",
            "http://[::1]/cb",
            "http://[::1]:4711/cb",
            "http://localhost/cb",
            "http://localhost:9999/cb",
        ] {
            assert!(c.redirect_uri_allowed(good), "{good}");
        }
        for bad in [
            "https://127.0.0.1/callback",
            "http://127.0.0.1:5/callback/",
            "http://127.0.0.1:5/Callback",
            "http://127.0.0.1:5/callback#x",
            "http://127.0.0.1:5/callback?x",
            "http://127.0.0.2/callback",
            "http://LOCALHOST:5/cb",
            "http://localhost.evil.example:5/cb",
            "http://[::1]:5/cb/../cb",
            "http://u@127.0.0.1:5/callback",
            "http://127.0.0.1:5/x/../callback",
            "http://localhost:5/cb2",
        ] {
            assert!(!c.redirect_uri_allowed(bad), "{bad}");
        }
        // A loopback redirect URI registered without a path matches with or without one port.
        let bare = client(&["http://127.0.0.1"]);
        assert!(bare.redirect_uri_allowed("http://127.0.0.1"));
        assert!(bare.redirect_uri_allowed("http://127.0.0.1:8000"));
        assert!(!bare.redirect_uri_allowed("http://127.0.0.1:8000/x"));
    }
}
