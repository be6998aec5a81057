//! Dynamic client registration (RFC 7591) and its management protocol (RFC 7592), under
//! `{site_url}/api/oauth/register` (docs/oauth.md#dynamic-client-registration).
//!
//! Errors here use the RFC bodies `{"error", "error_description"}`, not the API's
//! `{statusCode, message}` body: OAuth client libraries parse these.

use crate::client::{self, AuthMethod, Client, Metadata, Registered, Replaced};
use crate::discovery::Endpoints;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use workapi_domain::identity::{SCOPE_READ, SCOPE_WRITE};
use workapi_kit::entity::{self, Attempt};
use workapi_kit::oauth::issuer::is_loopback_host;
use workapi_kit::request::{Body, Path, Permit};
use workapi_kit::{ApiError, AppState};
use workapi_store::clock;

/// At most this many redirect URIs per client.
pub const MAX_REDIRECT_URIS: usize = 10;
pub use crate::redirect_uri::MAX_URI_CHARS;
/// The most a client's stored metadata (name and URIs) may take, in bytes of UTF-8: ten
/// ordinary redirect URIs fit easily; a registration cannot store tens of kilobytes.
pub const MAX_METADATA_BYTES: usize = 4096;
/// At most this many characters in a client name.
pub const MAX_CLIENT_NAME_CHARS: usize = 200;
/// The name of a client that registers without one.
pub const DEFAULT_CLIENT_NAME: &str = "Dynamically registered client";
/// The grant types every client gets.
pub const GRANT_TYPES: &[&str] = &["authorization_code", "refresh_token"];
/// The response types every client gets.
pub const RESPONSE_TYPES: &[&str] = &["code"];
/// The scopes a client may request.
pub const SCOPES: &[&str] = &[SCOPE_READ, SCOPE_WRITE];

/// An error of the registration endpoints, in the RFC 7591 §3.2.2 / RFC 6750 §3 shape.
#[derive(Debug)]
pub enum RegistrationError {
    /// 400 `invalid_redirect_uri`.
    RedirectUri(String),
    /// 400 `invalid_client_metadata`.
    Metadata(String),
    /// 401 `invalid_token` with `WWW-Authenticate: Bearer error="invalid_token"`: a missing or
    /// wrong registration access token, or an unknown client (indistinguishable).
    InvalidToken,
    /// 403 `access_denied`: the client is shared (an identical anonymous registration was
    /// answered with it), so RFC 7592 can no longer change its metadata.
    Shared,
    /// Anything else (in the API's error body).
    Api(ApiError),
}

/// The RFC 7591 error body.
#[derive(Serialize, utoipa::ToSchema)]
pub struct OAuthErrorBody {
    /// `invalid_redirect_uri`, `invalid_client_metadata`, (401) `invalid_token` or (403)
    /// `access_denied`
    #[schema(example = "invalid_redirect_uri")]
    pub error: String,
    /// What was wrong, for the developer
    pub error_description: String,
}

impl From<ApiError> for RegistrationError {
    fn from(e: ApiError) -> Self {
        RegistrationError::Api(e)
    }
}

impl From<workapi_store::StoreError> for RegistrationError {
    fn from(e: workapi_store::StoreError) -> Self {
        RegistrationError::Api(e.into())
    }
}

impl IntoResponse for RegistrationError {
    fn into_response(self) -> Response {
        let (status, error, description) = match self {
            RegistrationError::RedirectUri(d) => (StatusCode::BAD_REQUEST, "invalid_redirect_uri", d),
            RegistrationError::Metadata(d) => (StatusCode::BAD_REQUEST, "invalid_client_metadata", d),
            RegistrationError::InvalidToken => (
                StatusCode::UNAUTHORIZED,
                "invalid_token",
                "The registration access token is missing or invalid for this client".to_owned(),
            ),
            RegistrationError::Shared => (
                StatusCode::FORBIDDEN,
                "access_denied",
                "This client was registered by several parties (an identical registration was answered with it), \
                 so its metadata can no longer change. Rotating the secret (rotate_client_secret with unchanged \
                 metadata) and DELETE remain possible; register a client with other metadata instead"
                    .to_owned(),
            ),
            RegistrationError::Api(e) => return e.into_response(),
        };
        let mut response =
            (status, no_store(), Json(OAuthErrorBody { error: error.into(), error_description: description }))
                .into_response();
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer error=\"invalid_token\""));
        }
        response
    }
}

type RegResult<T> = Result<T, RegistrationError>;

fn no_store() -> [(header::HeaderName, &'static str); 2] {
    [(header::CACHE_CONTROL, "no-store"), (header::PRAGMA, "no-cache")]
}

/// Client metadata of a registration or an RFC 7592 update. Each field is read as the JSON
/// value sent (null counts as absent) and checked by [`metadata`]: its errors are RFC 7591's
/// (`invalid_redirect_uri`, `invalid_client_metadata`, the first problem found), not the API's
/// field map. Unknown fields are ignored (RFC 7591 §2).
#[derive(Deserialize, Default, utoipa::ToSchema)]
#[schema(example = json!({
    "client_name": "Claude", "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"],
    "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"], "scope": "api:read api:write"
}))]
pub struct ClientMetadataBody {
    /// Where the authorization server may send the user back (described in the schema).
    #[schema(required = true, schema_with = redirect_uris_schema)]
    redirect_uris: Option<Value>,
    /// Shown on the consent page (described in the schema).
    #[schema(schema_with = client_name_schema)]
    client_name: Option<Value>,
    /// The client's home page (described in the schema).
    #[schema(schema_with = client_uri_schema)]
    client_uri: Option<Value>,
    /// The client's logo (described in the schema).
    #[schema(schema_with = logo_uri_schema)]
    logo_uri: Option<Value>,
    /// Client authentication at the token endpoint; a secret is issued for the two secret methods
    #[schema(value_type = Option<AuthMethod>)]
    token_endpoint_auth_method: Option<Value>,
    /// The grant types (described in the schema).
    #[schema(schema_with = grant_types_schema)]
    grant_types: Option<Value>,
    /// The response types (described in the schema).
    #[schema(schema_with = response_types_schema)]
    response_types: Option<Value>,
    /// If sent: space-separated subset of `api:read api:write`
    #[schema(value_type = Option<String>, pattern = "^(api:read|api:write)( (api:read|api:write))*$")]
    scope: Option<Value>,
    /// RFC 7592 update only: true issues a new client secret (confidential clients)
    #[schema(value_type = Option<bool>)]
    rotate_client_secret: Option<Value>,
    /// RFC 7592 update only: if sent, this client's id
    #[schema(value_type = Option<String>)]
    client_id: Option<Value>,
    /// RFC 7592 update only: if sent, the current secret
    #[schema(value_type = Option<String>)]
    client_secret: Option<Value>,
}

/// The document's schemas of the fields above, with their descriptions: what [`metadata`]
/// accepts, as far as JSON Schema can say it (issue 38: a body the document admits is one the API
/// takes). The rule across fields (the 4,096 stored bytes) is in the descriptions.
fn redirect_uris_schema() -> utoipa::openapi::schema::Array {
    let uri = utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .max_length(Some(MAX_URI_CHARS))
        .pattern(Some(crate::redirect_uri::redirect_uri_pattern()));
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(uri)
        .min_items(Some(1))
        .max_items(Some(MAX_REDIRECT_URIS))
        .description(Some(
            "Where the authorization server may send the user back: absolute `https` URIs, or `http` on a \
             loopback host (127.0.0.1, [::1], localhost; any port matches at authorization time), or a \
             native app's reverse-domain scheme (`com.example.app:/callback`) or a known client's \
             (`cursor`, `vscode`, `vscode-insiders`, `windsurf`; the operator may allow more). No \
             fragment, no user info. The name and all URIs together take at most 4,096 bytes; a \
             repeated URI is kept once",
        ))
        .examples([serde_json::json!(["https://app.example/callback"])])
        .build()
}

fn web_uri_schema(what: &str) -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(nullable(utoipa::openapi::Type::String))
        .max_length(Some(MAX_URI_CHARS))
        .pattern(Some(crate::redirect_uri::web_uri_pattern()))
        .description(Some(format!("{what} (`https`, or `http` on a loopback host; no user info)")))
        .build()
}

fn client_uri_schema() -> utoipa::openapi::Object {
    web_uri_schema("The client's home page")
}

fn logo_uri_schema() -> utoipa::openapi::Object {
    web_uri_schema("The client's logo")
}

fn client_name_schema() -> workapi_kit::input::SchemaRef {
    let mut schema = <workapi_kit::input::Text<1, MAX_CLIENT_NAME_CHARS> as workapi_kit::input::Field>::schema();
    if let utoipa::openapi::RefOr::T(utoipa::openapi::Schema::Object(object)) = &mut schema {
        object.schema_type = nullable(utoipa::openapi::Type::String);
        object.description = Some(format!(
            "Shown on the consent page; default \"{DEFAULT_CLIENT_NAME}\". No control, bidirectional or \
             invisible formatting characters"
        ));
    }
    schema
}

/// `kind` or null: every optional field reads null as absent.
fn nullable(kind: utoipa::openapi::Type) -> utoipa::openapi::schema::SchemaType {
    utoipa::openapi::schema::SchemaType::from_iter([kind, utoipa::openapi::Type::Null])
}

/// A non-empty array of `allowed` values, containing `required` when given.
fn subset_schema(allowed: &[&str], required: Option<&str>, description: &str) -> utoipa::openapi::schema::Array {
    let item = utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(allowed.iter().copied()));
    let mut array = utoipa::openapi::schema::ArrayBuilder::new()
        .schema_type(nullable(utoipa::openapi::Type::Array))
        .items(item)
        .min_items(Some(1))
        .description(Some(description))
        .build();
    if let Some(value) = required {
        // JSON Schema 2020-12's `contains`, which utoipa 5's Array has no field for: extensions
        // are written as they are named.
        let contains = serde_json::json!({ "type": "string", "const": value });
        array.extensions.get_or_insert_with(Default::default).insert("contains".into(), contains);
    }
    array
}

fn grant_types_schema() -> utoipa::openapi::schema::Array {
    subset_schema(
        GRANT_TYPES,
        Some("authorization_code"),
        "If sent: a subset of `authorization_code`, `refresh_token` that includes `authorization_code` \
         (RFC 7591 §2.1: the `code` response type needs it)",
    )
}

fn response_types_schema() -> utoipa::openapi::schema::Array {
    subset_schema(RESPONSE_TYPES, None, "If sent: `[\"code\"]`")
}

/// A registered client (RFC 7591 §3.2.1).
#[derive(Serialize, utoipa::ToSchema)]
#[schema(example = json!({
    "client_id": "dcr_0b7e9d4c-8d1f-4b43-9a8e-3f0f5f6f0a11", "client_name": "Claude",
    "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "token_endpoint_auth_method": "none",
    "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
    "scope": "api:read api:write", "client_id_issued_at": 1795000000, "client_secret_expires_at": 0,
    "registration_client_uri": "https://work.example.com/api/oauth/register/dcr_0b7e9d4c-8d1f-4b43-9a8e-3f0f5f6f0a11",
    "registration_access_token": "lt_rat_Zm9yLWV4YW1wbGUtb25seS1ub3QtYS1yZWFsLXRva2Vu"
}))]
pub struct ClientResponse {
    /// `dcr_<uuid>`
    #[schema(example = "dcr_0b7e9d4c-8d1f-4b43-9a8e-3f0f5f6f0a11")]
    pub client_id: String,
    /// Only for confidential clients, and only when issued (registration, or an update that
    /// made the client confidential or rotated it): shown once, stored hashed
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// Always 0 (the spec lists it for every client): a client secret never expires, and a
    /// public client has none to expire
    #[schema(example = 0)]
    pub client_secret_expires_at: i64,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub token_endpoint_auth_method: AuthMethod,
    #[schema(example = json!(["authorization_code", "refresh_token"]))]
    pub grant_types: Vec<String>,
    #[schema(example = json!(["code"]))]
    pub response_types: Vec<String>,
    /// The scopes the client may request
    #[schema(example = "api:read api:write")]
    pub scope: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logo_uri: Option<String>,
    /// Unix seconds
    pub client_id_issued_at: i64,
    /// RFC 7592: where to read, update or delete this client
    pub registration_client_uri: String,
    /// RFC 7592: the bearer token for `registration_client_uri`. In a new registration's
    /// response (shown once, stored hashed) and echoed to its holder by read and update; never
    /// in the answer to a repeated anonymous registration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_access_token: Option<String>,
}

impl ClientResponse {
    fn of(client: &Client, endpoints: &Endpoints, secret: Option<String>, token: Option<String>) -> Self {
        ClientResponse {
            client_id: client.client_id.clone(),
            client_secret_expires_at: 0,
            client_secret: secret,
            client_name: client.client_name.clone(),
            redirect_uris: client.redirect_uris.clone(),
            token_endpoint_auth_method: client.token_endpoint_auth_method,
            grant_types: GRANT_TYPES.iter().map(|s| (*s).to_owned()).collect(),
            response_types: RESPONSE_TYPES.iter().map(|s| (*s).to_owned()).collect(),
            scope: SCOPES.join(" "),
            client_uri: client.client_uri.clone(),
            logo_uri: client.logo_uri.clone(),
            client_id_issued_at: client.client_id_issued_at,
            registration_client_uri: endpoints.registration_client_uri(&client.client_id),
            registration_access_token: token,
        }
    }
}

/// `client_uri` / `logo_uri`: an optional web URL.
fn web_uri(value: Option<&Value>, field: &str) -> RegResult<Option<String>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let ok = s.chars().count() <= MAX_URI_CHARS
                && url::Url::parse(s).is_ok_and(|u| {
                    (u.scheme() == "https" && u.host().is_some() || u.scheme() == "http" && is_loopback_host(&u))
                        && u.username().is_empty()
                        && u.password().is_none()
                });
            if ok {
                Ok(Some(s.clone()))
            } else {
                Err(RegistrationError::Metadata(format!(
                    "{field} must be an https URL (or http on a loopback host) of at most {MAX_URI_CHARS} characters"
                )))
            }
        }
        Some(_) => Err(RegistrationError::Metadata(format!("{field} must be a string"))),
    }
}

/// An optional array of strings, each in `allowed`, not empty.
fn subset(value: Option<&Value>, field: &str, allowed: &[&str]) -> RegResult<()> {
    let message = || RegistrationError::Metadata(format!("{field} must be a non-empty subset of {allowed:?}"));
    match value {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Array(items)) if !items.is_empty() => {
            if items.iter().all(|v| v.as_str().is_some_and(|s| allowed.contains(&s))) { Ok(()) } else { Err(message()) }
        }
        Some(_) => Err(message()),
    }
}

/// Parses and validates client metadata (registration and RFC 7592 update).
pub fn metadata(body: &ClientMetadataBody) -> RegResult<Metadata> {
    let uris = match body.redirect_uris.as_ref() {
        None | Some(Value::Null) => return Err(RegistrationError::RedirectUri("redirect_uris is required".into())),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(RegistrationError::RedirectUri("redirect_uris must be an array of URIs".into())),
    };
    if uris.is_empty() {
        return Err(RegistrationError::RedirectUri("redirect_uris must name at least one URI".into()));
    }
    if uris.len() > MAX_REDIRECT_URIS {
        return Err(RegistrationError::RedirectUri(format!("at most {MAX_REDIRECT_URIS} redirect URIs")));
    }
    let mut redirect_uris: Vec<String> = Vec::with_capacity(uris.len());
    for uri in uris {
        let Some(uri) = uri.as_str() else {
            return Err(RegistrationError::RedirectUri("every redirect URI must be a string".into()));
        };
        if let Some(problem) = crate::redirect_uri::problem(uri) {
            return Err(RegistrationError::RedirectUri(problem));
        }
        if !redirect_uris.iter().any(|u| u == uri) {
            redirect_uris.push(uri.to_owned());
        }
    }
    let client_name = match body.client_name.as_ref() {
        None | Some(Value::Null) => DEFAULT_CLIENT_NAME.to_owned(),
        // The one rule for display names (the consent page shows this one): no control,
        // bidirectional or invisible formatting characters, 1 to 200 characters.
        Some(Value::String(raw)) => workapi_kit::input::Text::<1, MAX_CLIENT_NAME_CHARS>::check(raw, "client_name")
            .map_err(RegistrationError::Metadata)?
            .into_string(),
        Some(_) => return Err(RegistrationError::Metadata("client_name must be a string".into())),
    };
    let token_endpoint_auth_method = match body.token_endpoint_auth_method.as_ref() {
        None | Some(Value::Null) => AuthMethod::None,
        Some(value) => value.as_str().and_then(AuthMethod::parse).ok_or_else(|| {
            RegistrationError::Metadata(
                "token_endpoint_auth_method must be none, client_secret_post or client_secret_basic".into(),
            )
        })?,
    };
    subset(body.grant_types.as_ref(), "grant_types", GRANT_TYPES)?;
    subset(body.response_types.as_ref(), "response_types", RESPONSE_TYPES)?;
    // RFC 7591 §2.1: the code response type needs the authorization_code grant.
    if let Some(Value::Array(grants)) = body.grant_types.as_ref()
        && !grants.iter().any(|g| g == "authorization_code")
    {
        return Err(RegistrationError::Metadata("grant_types must include authorization_code".into()));
    }
    match body.scope.as_ref() {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if !s.trim().is_empty() && s.split(' ').all(|scope| SCOPES.contains(&scope)) => {}
        Some(_) => {
            return Err(RegistrationError::Metadata(
                "scope must be a space-separated subset of \"api:read api:write\"".into(),
            ));
        }
    }
    // RFC 7592's own fields, checked on an update; a registration ignores them but, like every
    // field, they must be of their documented type.
    for (field, value) in [("client_id", &body.client_id), ("client_secret", &body.client_secret)] {
        if !matches!(value, None | Some(Value::Null) | Some(Value::String(_))) {
            return Err(RegistrationError::Metadata(format!("{field} must be a string")));
        }
    }
    match body.rotate_client_secret.as_ref() {
        None | Some(Value::Null) | Some(Value::Bool(_)) => {}
        Some(_) => return Err(RegistrationError::Metadata("rotate_client_secret must be a boolean".into())),
    }
    let metadata = Metadata {
        client_name,
        redirect_uris,
        token_endpoint_auth_method,
        client_uri: web_uri(body.client_uri.as_ref(), "client_uri")?,
        logo_uri: web_uri(body.logo_uri.as_ref(), "logo_uri")?,
    };
    let stored = metadata.client_name.len()
        + metadata.redirect_uris.iter().map(String::len).sum::<usize>()
        + metadata.client_uri.as_ref().map_or(0, String::len)
        + metadata.logo_uri.as_ref().map_or(0, String::len);
    if stored > MAX_METADATA_BYTES {
        return Err(RegistrationError::Metadata(format!(
            "the client's name and URIs take {stored} bytes; at most {MAX_METADATA_BYTES} are stored"
        )));
    }
    Ok(metadata)
}

/// The body as a JSON object (read after the route's checks, like every body); a malformed body
/// is `invalid_client_metadata` (413 and 415 keep their statuses).
fn body_of(body: Result<Body<ClientMetadataBody>, ApiError>) -> RegResult<ClientMetadataBody> {
    match body.and_then(|body| body.json(&Permit::public())) {
        // Every field is a JSON value, so an object always reads.
        Ok(body @ Value::Object(_)) => serde_json::from_value(body)
            .map_err(|e| RegistrationError::Metadata(format!("The body could not be read: {e}"))),
        Ok(_) => Err(RegistrationError::Metadata("Request body must be a JSON object".into())),
        Err(e) if e.status == StatusCode::BAD_REQUEST => Err(RegistrationError::Metadata(e.message)),
        Err(e) => Err(e.into()),
    }
}

/// The path of one registered client (RFC 7592 `registration_client_uri`).
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ClientPath {
    /// The client id (`dcr_<uuid>`)
    client_id: String,
}

/// The client id of the path. A path that cannot be read names no client: the same 401 as an
/// unknown client, in the RFC body.
fn client_id_of(path: Result<Path<ClientPath>, ApiError>) -> RegResult<String> {
    path.map(|Path(path)| path.client_id).map_err(|_| RegistrationError::InvalidToken)
}

/// Register an OAuth client
///
/// Dynamic client registration (RFC 7591), public: no token. Identical metadata gives the
/// existing client (then shared); errors have the RFC body `{error, error_description}`.
#[utoipa::path(post, path = "/api/oauth/register", operation_id = "registerOAuthClient", tag = "oauth",
    request_body = ClientMetadataBody,
    responses(
        (status = 201, description = "The registered client. A repeated registration with identical metadata (client_name, the same set of redirect_uris, token_endpoint_auth_method, client_uri, logo_uri) answers 201 with the existing client, without client_secret and without registration_access_token, and the client becomes shared: RFC 7592 can no longer update or delete it. A registration that differs in anything creates another client", body = ClientResponse),
        (status = 400, description = "`invalid_redirect_uri` or `invalid_client_metadata` (RFC 7591 §3.2.2)", body = OAuthErrorBody)))]
pub async fn register(
    State(state): State<AppState>,
    parts: axum::http::request::Parts,
    body: Result<Body<ClientMetadataBody>, ApiError>,
) -> RegResult<Response> {
    crate::charge_registration(&state, &parts).await?;
    let headers = parts.headers;
    let body = body_of(body)?;
    let metadata = metadata(&body)?;
    let endpoints = Endpoints::of(&state, &headers);
    // Security clock: issue times never follow LT_CUSTOM_NOW.
    let response = match client::register(state.store(), metadata, clock::now_epoch()).await? {
        Registered::Created { client, client_secret, registration_access_token } => {
            tracing::info!(client = %client.client_id, method = client.token_endpoint_auth_method.as_str(), "oauth client registered");
            ClientResponse::of(&client, &endpoints, client_secret, Some(registration_access_token))
        }
        Registered::Existing(client) => ClientResponse::of(&client, &endpoints, None, None),
    };
    Ok((StatusCode::CREATED, no_store(), Json(response)).into_response())
}

/// The RFC 7592 caller: the client named by the path whose registration access token the
/// request carries. Unknown clients, malformed ids and wrong or missing tokens are the same 401.
async fn authenticated(state: &AppState, headers: &HeaderMap, client_id: &str) -> RegResult<(Client, String)> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .filter(|token| !token.is_empty() && token.len() <= 512)
        .ok_or(RegistrationError::InvalidToken)?;
    let client = client::get(state.store(), client_id).await?.ok_or(RegistrationError::InvalidToken)?;
    if !client.registration_token_matches(token) {
        return Err(RegistrationError::InvalidToken);
    }
    Ok((client, token.to_owned()))
}

/// The client as first read, or, after a lost race, read again (and the token checked again:
/// it still must match).
async fn reread_if_stale(
    current: Option<Client>,
    state: &AppState,
    headers: &HeaderMap,
    client_id: &str,
) -> RegResult<Client> {
    match current {
        Some(client) => Ok(client),
        None => Ok(authenticated(state, headers, client_id).await?.0),
    }
}

/// A shared client's metadata is frozen: others were given it, and its name and redirect URIs
/// are what their users see and where their codes go. An update that keeps the metadata (to
/// rotate the secret) passes.
fn may_change(client: &Client, metadata: &Metadata) -> RegResult<()> {
    if client.is_shared() && !client.metadata().same_as(metadata) {
        return Err(RegistrationError::Shared);
    }
    Ok(())
}

/// Read an OAuth client's registration
///
/// RFC 7592 §2.1, with the client's registration access token as bearer token. The client
/// secret is never shown again.
#[utoipa::path(get, path = "/api/oauth/register/{client_id}", operation_id = "readOAuthClient", tag = "oauth",
    params(ClientPath),
    security(("registrationAccessToken" = [])),
    responses(
        (status = 200, description = "The client's registration (RFC 7592 §2.1); no client_secret", body = ClientResponse),
        (status = 401, description = "Missing or wrong registration access token, or no such client", body = OAuthErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<Path<ClientPath>, ApiError>,
) -> RegResult<Response> {
    let client_id = client_id_of(path)?;
    let (client, token) = authenticated(&state, &headers, &client_id).await?;
    let response = ClientResponse::of(&client, &Endpoints::of(&state, &headers), None, Some(token));
    Ok((no_store(), Json(response)).into_response())
}

/// Update an OAuth client's registration
///
/// RFC 7592 §2.2, with the client's registration access token as bearer token: the metadata is
/// replaced as a whole. A shared client's metadata cannot change (403), but its secret can
/// always be rotated (`rotate_client_secret: true` with the metadata unchanged).
#[utoipa::path(put, path = "/api/oauth/register/{client_id}", operation_id = "updateOAuthClient", tag = "oauth",
    params(ClientPath),
    security(("registrationAccessToken" = [])),
    request_body = ClientMetadataBody,
    responses(
        (status = 200, description = "The updated client (RFC 7592 §2.2): the metadata is replaced (omitted optional fields are cleared). A client_secret is in the response when one was issued: when the client became confidential, or on `rotate_client_secret: true`", body = ClientResponse),
        (status = 400, description = "`invalid_redirect_uri` or `invalid_client_metadata` (also when another client is registered with exactly the new metadata)", body = OAuthErrorBody),
        (status = 401, description = "Missing or wrong registration access token, or no such client", body = OAuthErrorBody),
        (status = 403, description = "`access_denied`: the client is shared (an identical registration was answered with it), so its metadata can no longer change; rotating its secret with unchanged metadata remains possible", body = OAuthErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<Path<ClientPath>, ApiError>,
    body: Result<Body<ClientMetadataBody>, ApiError>,
) -> RegResult<Response> {
    let client_id = client_id_of(path)?;
    let (client, token) = authenticated(&state, &headers, &client_id).await?;
    let body = body_of(body)?;
    let metadata = metadata(&body)?;
    may_change(&client, &metadata)?;
    match body.client_id.as_ref() {
        None | Some(Value::Null) => {}
        Some(Value::String(id)) if *id == client.client_id => {}
        Some(_) => return Err(RegistrationError::Metadata("client_id must be this client's id".into())),
    }
    // RFC 7592 §2.2: a client_secret in the body must be the current one.
    match body.client_secret.as_ref() {
        None | Some(Value::Null) => {}
        Some(Value::String(secret)) if client.secret_matches(secret) => {}
        Some(_) => return Err(RegistrationError::Metadata("client_secret does not match this client's secret".into())),
    }
    let rotate = body.rotate_client_secret.as_ref().and_then(Value::as_bool).unwrap_or(false);
    let endpoints = Endpoints::of(&state, &headers);
    let (state, headers, client_id, metadata) = (&state, &headers, &client_id, &metadata);
    let mut read = Some(client);
    let updated = entity::retry_on_conflict("The client kept changing during the update; try again", |_| {
        let current = read.take();
        async move {
            let client = match reread_if_stale(current, state, headers, client_id)
                .await
                .and_then(|client| may_change(&client, metadata).map(|()| client))
            {
                Ok(client) => client,
                Err(refused) => return Ok(Attempt::Done(Err(refused))),
            };
            Ok(match client::replace(state.store(), &client, metadata.clone(), rotate).await? {
                Replaced::Updated { client, client_secret } => Attempt::Done(Ok((client, client_secret))),
                Replaced::IdentityTaken => Attempt::Done(Err(RegistrationError::Metadata(
                    "another client is registered with exactly this metadata".into(),
                ))),
                Replaced::Stale => Attempt::Conflict,
            })
        }
    })
    .await?;
    let (client, client_secret) = updated?;
    tracing::info!(client = %client.client_id, secret_issued = client_secret.is_some(), "oauth client updated");
    let response = ClientResponse::of(&client, &endpoints, client_secret, Some(token));
    Ok((no_store(), Json(response)).into_response())
}

/// Delete an OAuth client
///
/// RFC 7592 §2.3, with the client's registration access token as bearer token: every grant of
/// the client ends, and the client with it. A shared public client (others were given its id)
/// stays for them: its grants end and this registration ends (the token stops working).
#[utoipa::path(delete, path = "/api/oauth/register/{client_id}", operation_id = "deleteOAuthClient", tag = "oauth",
    params(ClientPath),
    security(("registrationAccessToken" = [])),
    responses(
        (status = 204, description = "Deleted (RFC 7592 §2.3): the client's grants and tokens end, and the registration with its access token. The client itself ends too, except a shared public client, which the other registrants keep using"),
        (status = 401, description = "Missing or wrong registration access token, or no such client", body = OAuthErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<Path<ClientPath>, ApiError>,
) -> RegResult<Response> {
    let client_id = client_id_of(path)?;
    let (client, _) = authenticated(&state, &headers, &client_id).await?;
    let (state, headers, client_id) = (&state, &headers, &client_id);
    let mut read = Some(client);
    let deleted = entity::retry_on_conflict("The client kept changing during the delete; try again", |_| {
        let current = read.take();
        async move {
            let client = match reread_if_stale(current, state, headers, client_id).await {
                Ok(client) => client,
                Err(refused) => return Ok(Attempt::Done(Err(refused))),
            };
            // Nobody else can use a confidential client (only this registrant has its secret),
            // so even a shared one ends; a shared public client stays for the others.
            let done = if client.is_shared() && !client.is_confidential() {
                client::retire_registration(state.store(), &client).await?
            } else {
                client::delete(state.store(), &client).await?
            };
            Ok(if done { Attempt::Done(Ok(client)) } else { Attempt::Conflict })
        }
    })
    .await?;
    let client = deleted?;
    // Revoking its grants ends its refresh and access tokens (a deleted client's codes already
    // fail: the token endpoint authenticates the client).
    let revoked = crate::grant::revoke_client_grants(state.store(), &client.client_id, clock::now_epoch()).await?;
    tracing::info!(client = %client.client_id, revoked, "oauth client deleted");
    Ok(StatusCode::NO_CONTENT.into_response())
}
