//! The token endpoint (RFC 6749 §3.2, §4.1.3, §6) and token revocation (RFC 7009), both
//! `application/x-www-form-urlencoded` with client authentication `none`,
//! `client_secret_post` or `client_secret_basic` (each client exactly the method it
//! registered). Answers are JSON with `Cache-Control: no-store`; errors have the RFC 6749 §5.2
//! body `{"error", "error_description"}`, not the API's error body (docs/oauth.md#tokens).

use crate::client::{AuthMethod, Client};
use crate::form::{self, ParamsError};
use crate::grant::{self, CodeExchange, GrantError, Issued, Refresh};
use crate::metadata_document::{self, LookupError};
use crate::{pkce, scope};
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use workapi_kit::AppState;
use workapi_store::clock;

/// The realm of the Basic challenge of a failed client authentication.
pub const BASIC_CHALLENGE: &str = "Basic realm=\"workapi\", charset=\"UTF-8\"";

/// An RFC 6749 §5.2 error.
#[derive(Debug)]
pub struct OAuthError {
    status: StatusCode,
    error: &'static str,
    description: String,
    /// Why a server error happened: logged when the response is produced, never sent.
    cause: Option<String>,
}

impl OAuthError {
    fn new(status: StatusCode, error: &'static str, description: impl Into<String>) -> Self {
        OAuthError { status, error, description: description.into(), cause: None }
    }

    fn invalid_request(description: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", description)
    }

    /// 401 with a Basic challenge: the client could not be authenticated.
    fn invalid_client(description: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "invalid_client", description)
    }

    fn invalid_grant(description: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_grant", description)
    }

    /// A server fault; its cause is logged with the response, never sent.
    fn server_error(cause: impl std::fmt::Display) -> Self {
        let error = Self::new(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "The request could not be completed");
        OAuthError { cause: Some(cause.to_string()), ..error }
    }
}

/// The RFC 6749 §5.2 error body.
#[derive(Serialize, utoipa::ToSchema)]
pub struct TokenErrorBody {
    /// `invalid_request`, `invalid_client`, `invalid_grant`, `unauthorized_client`,
    /// `unsupported_grant_type`, `invalid_scope` or `server_error`
    #[schema(example = "invalid_grant")]
    pub error: String,
    /// What was wrong, for the developer
    pub error_description: String,
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        if let Some(cause) = &self.cause {
            tracing::error!(status = self.status.as_u16(), cause = %cause, "request failed");
        }
        let body = TokenErrorBody { error: self.error.to_owned(), error_description: self.description };
        let mut response = (self.status, no_store(), Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(BASIC_CHALLENGE));
        }
        response
    }
}

fn no_store() -> [(header::HeaderName, HeaderValue); 2] {
    [
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        (header::PRAGMA, HeaderValue::from_static("no-cache")),
    ]
}

fn form_params<T: serde::de::DeserializeOwned>(headers: &HeaderMap, body: &[u8]) -> Result<T, OAuthError> {
    if !form::is_form(headers) {
        return Err(OAuthError::invalid_request("The body must be application/x-www-form-urlencoded"));
    }
    form::parse(body).map_err(|e| match e {
        ParamsError::Repeated(name) => {
            OAuthError::invalid_request(format!("The parameter {name} appears more than once"))
        }
        ParamsError::TooMany => OAuthError::invalid_request("Too many parameters"),
        ParamsError::Invalid(_) => OAuthError::invalid_request("The form could not be read"),
    })
}

/// Client credentials in the body (public clients and `client_secret_post`), shared by the
/// token and revocation forms.
#[derive(Deserialize, Default, utoipa::ToSchema)]
struct ClientAuth {
    /// The client's id (public clients and client_secret_post)
    #[schema(example = "dcr_0b7e9d4c-8d1f-4b43-9a8e-3f0f5f6f0a11")]
    client_id: Option<String>,
    /// client_secret_post only
    client_secret: Option<String>,
}

/// Authenticates the client with the method it registered (RFC 6749 §2.3): a public client
/// names itself with `client_id` and sends no secret; a confidential one sends its secret in
/// the body (`client_secret_post`) or in a Basic header (`client_secret_basic`), never both.
async fn authenticate_client(state: &AppState, headers: &HeaderMap, params: &ClientAuth) -> Result<Client, OAuthError> {
    let body_id = params.client_id.as_deref();
    let body_secret = params.client_secret.as_deref();
    let (client_id, presented, used) = match form::basic_credentials(headers) {
        Some(Err(_)) => return Err(OAuthError::invalid_client("Malformed Basic client credentials")),
        Some(Ok(basic)) => {
            if body_secret.is_some() {
                return Err(OAuthError::invalid_request("Use one client authentication method, not several"));
            }
            if body_id.is_some_and(|id| id != basic.client_id) {
                return Err(OAuthError::invalid_request("The client_id differs from the Basic credentials"));
            }
            (basic.client_id, Some(basic.client_secret), AuthMethod::ClientSecretBasic)
        }
        None => {
            let id = body_id.ok_or_else(|| OAuthError::invalid_client("Client authentication is required"))?;
            let method = if body_secret.is_some() { AuthMethod::ClientSecretPost } else { AuthMethod::None };
            (id.to_owned(), body_secret.map(str::to_owned), method)
        }
    };
    let client = match metadata_document::lookup(state, &client_id).await {
        Ok(Some(client)) => client,
        Ok(None) => return Err(OAuthError::invalid_client("Client authentication failed")),
        Err(LookupError::Document(why)) => return Err(OAuthError::invalid_client(why)),
        Err(LookupError::Store(e)) => return Err(OAuthError::server_error(e)),
    };
    let registered = client.token_endpoint_auth_method;
    if registered != used {
        return Err(OAuthError::invalid_client(format!(
            "This client authenticates with {} at the token endpoint",
            registered.as_str()
        )));
    }
    match presented {
        None => Ok(client),
        Some(secret) if client.secret_matches(&secret) => Ok(client),
        Some(_) => Err(OAuthError::invalid_client("Client authentication failed")),
    }
}

/// A token request (RFC 6749 §4.1.3 and §6), form-encoded. Raw text, checked in the RFC's
/// order by the endpoint.
#[derive(Deserialize, Default, utoipa::ToSchema)]
#[schema(example = json!({
    "grant_type": "authorization_code", "code": "lt_oac_7Yc0kq3V7h8kQyJbW2vU1x9sZr4tPl6mNa0cDe5fGh",
    "redirect_uri": "https://app.example/callback",
    "code_verifier": "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    "client_id": "dcr_0b7e9d4c-8d1f-4b43-9a8e-3f0f5f6f0a11"
}))]
struct TokenForm {
    /// `authorization_code` or `refresh_token`
    #[schema(required = true, example = "authorization_code")]
    grant_type: Option<String>,
    /// authorization_code: the code from the redirect
    code: Option<String>,
    /// authorization_code: the redirect URI of the authorization request, exactly (required
    /// when that request named one)
    redirect_uri: Option<String>,
    /// authorization_code: the PKCE verifier, 43–128 characters of `A-Z a-z 0-9 - . _ ~`
    #[schema(min_length = 43, max_length = 128, pattern = "^[A-Za-z0-9._~-]{43,128}$")]
    code_verifier: Option<String>,
    /// refresh_token: the current refresh token (it is replaced by the one in the response)
    refresh_token: Option<String>,
    /// refresh_token: a subset of the grant's scopes (default: all of them)
    scope: Option<String>,
    /// RFC 8707: if sent, exactly this API's resource identifier, else `invalid_target`
    #[schema(example = "https://work.example.com")]
    resource: Option<String>,
    #[serde(flatten)]
    client: ClientAuth,
}

/// A successful token response (RFC 6749 §5.1).
#[derive(Serialize, utoipa::ToSchema)]
#[schema(example = json!({
    "access_token": "lt_oat_Zm9yLWV4YW1wbGUtb25seS1ub3QtYS1yZWFsLWFjY2Vzcy10b2tlbg",
    "token_type": "Bearer", "expires_in": 3600,
    "refresh_token": "lt_ort_Zm9yLWV4YW1wbGUtb25seS1ub3QtYS1yZWFsLXJlZnJlc2gtdG9rZW4",
    "scope": "api:read api:write"
}))]
pub struct TokenResponse {
    /// `lt_oat_…`: send it as `Authorization: Bearer <access_token>`
    pub access_token: String,
    /// Always `Bearer`
    #[schema(example = "Bearer")]
    pub token_type: String,
    /// Seconds until the access token expires
    #[schema(example = 3600)]
    pub expires_in: i64,
    /// `lt_ort_…`: the refresh token; each refresh returns a new one and retires this one
    pub refresh_token: String,
    /// The access token's scopes, space-separated
    #[schema(example = "api:read api:write")]
    pub scope: String,
}

impl From<Issued> for TokenResponse {
    fn from(issued: Issued) -> Self {
        TokenResponse {
            access_token: issued.access_token,
            token_type: "Bearer".into(),
            expires_in: issued.expires_in,
            refresh_token: issued.refresh_token,
            scope: scope::join(&issued.scopes),
        }
    }
}

fn grant_failure(e: GrantError) -> OAuthError {
    match e {
        GrantError::InvalidGrant(description) => OAuthError::invalid_grant(description),
        GrantError::InvalidTarget => OAuthError::new(
            StatusCode::BAD_REQUEST,
            "invalid_target",
            "The resource differs from the one the grant was authorized for",
        ),
        GrantError::InvalidScope => OAuthError::new(
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            "The requested scope exceeds the scope of the grant",
        ),
        GrantError::Store(e) => OAuthError::server_error(e),
    }
}

/// Exchange a code or a refresh token for tokens
///
/// The token endpoint (RFC 6749 §4.1.3, §6): a code with its PKCE verifier, or a refresh token
/// (rotated: a reused one revokes the grant), for an access token (1 hour) and a new refresh
/// token. The client authenticates with the method it registered.
#[utoipa::path(post, path = "/api/oauth/token", operation_id = "oauthToken", tag = "oauth",
    request_body(content = TokenForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "New access and refresh tokens", body = TokenResponse),
        (status = 400, description = "RFC 6749 §5.2 error", body = TokenErrorBody),
        (status = 401, description = "`invalid_client`, with `WWW-Authenticate: Basic`", body = TokenErrorBody),
    ))]
async fn token(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    match token_response(&state, &headers, &body).await {
        Ok(tokens) => (StatusCode::OK, no_store(), Json(tokens)).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn token_response(state: &AppState, headers: &HeaderMap, body: &[u8]) -> Result<TokenResponse, OAuthError> {
    let params: TokenForm = form_params(headers, body)?;
    let grant_type =
        params.grant_type.as_deref().ok_or_else(|| OAuthError::invalid_request("grant_type is required"))?;
    if !matches!(grant_type, "authorization_code" | "refresh_token") {
        return Err(OAuthError::new(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "Only authorization_code and refresh_token are supported",
        ));
    }
    let client = authenticate_client(state, headers, &params.client).await?;
    let this_api = state.site_url().resource(headers);
    // One spelling per resource in codes and grants, whichever equivalent form was sent.
    let resource = match params.resource.as_deref() {
        None => None,
        Some(resource) => Some(crate::discovery::canonical_resource(resource, &this_api).ok_or_else(|| {
            OAuthError::new(
                StatusCode::BAD_REQUEST,
                "invalid_target",
                format!("The resource must be this API, {this_api}, or its MCP endpoint, {this_api}/mcp"),
            )
        })?),
    };
    let resource = resource.as_deref();
    let key = state.token_key().await.map_err(OAuthError::server_error)?;
    // Security clock: token lifetimes never follow LT_CUSTOM_NOW.
    let now = clock::now_epoch();
    let issued = if grant_type == "authorization_code" {
        let code = params.code.as_deref().ok_or_else(|| OAuthError::invalid_request("code is required"))?;
        let verifier = params
            .code_verifier
            .as_deref()
            .ok_or_else(|| OAuthError::invalid_request("code_verifier is required (PKCE)"))?;
        if !pkce::is_valid_verifier(verifier) {
            return Err(OAuthError::invalid_request(
                "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~",
            ));
        }
        let exchange = CodeExchange {
            client_id: &client.client_id,
            code,
            redirect_uri: params.redirect_uri.as_deref(),
            code_verifier: verifier,
            resource,
        };
        grant::exchange_code(state.store(), key, exchange, now).await
    } else {
        let refresh_token =
            params.refresh_token.as_deref().ok_or_else(|| OAuthError::invalid_request("refresh_token is required"))?;
        let scopes = match params.scope.as_deref() {
            None => None,
            Some(requested) => Some(scope::parse(Some(requested)).map_err(|_| {
                OAuthError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_scope",
                    "The scope may hold only api:read and api:write",
                )
            })?),
        };
        let request = Refresh { client_id: &client.client_id, refresh_token, scopes, resource };
        grant::refresh(state.store(), key, request, now).await
    };
    let issued = issued.map_err(grant_failure)?;
    tracing::info!(client = %client.client_id, grant_type, "OAuth tokens issued");
    Ok(issued.into())
}

/// A revocation request (RFC 7009 §2.1), form-encoded.
#[derive(Deserialize, Default, utoipa::ToSchema)]
#[schema(example = json!({
    "token": "lt_ort_Qm9vZ2xlLWxpa2UtcmFuZG9tLXJlZnJlc2gtdG9rZW4tMTIzNDU",
    "token_type_hint": "refresh_token", "client_id": "dcr_0b7e9d4c-8d1f-4b43-9a8e-3f0f5f6f0a11"
}))]
struct RevokeForm {
    /// An access token (`lt_oat_…`, revoked alone) or a refresh token (`lt_ort_…`, revokes the
    /// whole grant with every token issued under it)
    #[schema(required = true)]
    token: Option<String>,
    /// `access_token` or `refresh_token` (optional; the token's prefix decides)
    // Read and documented, never needed: the prefix names the type, and RFC 7009 §2.1 lets
    // the server search every type whatever the hint says.
    #[allow(dead_code)]
    token_type_hint: Option<String>,
    #[serde(flatten)]
    client: ClientAuth,
}

/// Revoke a token
///
/// RFC 7009 revocation by the client the token was issued to: a refresh token revokes its whole
/// grant, an access token itself. Unknown tokens and tokens of other clients change nothing and
/// get the same 200.
#[utoipa::path(post, path = "/api/oauth/revoke", operation_id = "oauthRevoke", tag = "oauth",
    request_body(content = RevokeForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "Revoked, or nothing to revoke (unknown tokens and tokens of other clients alike)"),
        (status = 400, description = "RFC 6749 §5.2 error", body = TokenErrorBody),
        (status = 401, description = "`invalid_client`, with `WWW-Authenticate: Basic`", body = TokenErrorBody),
    ))]
async fn revoke(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    match revoke_response(&state, &headers, &body).await {
        Ok(()) => (StatusCode::OK, no_store()).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn revoke_response(state: &AppState, headers: &HeaderMap, body: &[u8]) -> Result<(), OAuthError> {
    let params: RevokeForm = form_params(headers, body)?;
    let client = authenticate_client(state, headers, &params.client).await?;
    let token = params.token.as_deref().ok_or_else(|| OAuthError::invalid_request("token is required"))?;
    let key = state.token_key().await.map_err(OAuthError::server_error)?;
    grant::revoke_token(state.store(), key, &client.client_id, token, clock::now_epoch())
        .await
        .map_err(OAuthError::server_error)?;
    tracing::info!(client = %client.client_id, "OAuth token revocation");
    Ok(())
}

/// The routes of the token and revocation endpoints.
pub fn api() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new().routes(utoipa_axum::routes!(token)).routes(utoipa_axum::routes!(revoke))
}
