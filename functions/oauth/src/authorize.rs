//! The authorization endpoint (RFC 6749 §4.1, PKCE RFC 7636 S256 only): `GET
//! /api/oauth/authorize` shows the sign-in and consent page, `POST /api/oauth/authorize`
//! (the page's form) signs the user in with the login's rules and limits and, on approval,
//! redirects back with a single-use code (docs/oauth.md#authorization).
//!
//! Until the client and its redirect URI are verified, every problem is an error page: the
//! request is never redirected to a URI the client did not register. After that, problems are
//! reported to the client by a redirect with `error` and `state`. The POST carries the whole
//! authorization request in hidden fields and validates it again from scratch.

use crate::client::Client;
use crate::consent::{self, Consent};
use crate::discovery::Endpoints;
use crate::form::{self, ParamsError};
use crate::login::{self, Credentials, MAX_EMAIL_CHARS, MAX_PASSWORD_CHARS, Outcome};
use crate::metadata_document::{self, LookupError};
use crate::{code, install, pkce, scope};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use uuid::Uuid;
use workapi_domain::identity;
use workapi_kit::AppState;
use workapi_store::clock;
use workapi_store::keys::WsKeys;

pub const AUTHORIZE_PATH: &str = "/api/oauth/authorize";
/// At most this many characters of `state` (it travels back in a URL).
pub const MAX_STATE_CHARS: usize = 2048;

/// A validated authorization request.
pub struct AuthRequest {
    pub client: Client,
    pub redirect_uri: String,
    /// Whether the request named the redirect URI (it may be left out when the client has
    /// registered exactly one).
    pub redirect_uri_given: bool,
    pub state: Option<String>,
    pub scopes: Vec<String>,
    pub code_challenge: String,
    /// The `resource` the client named (RFC 8707): always this API; None when it named none.
    pub resource: Option<String>,
}

impl AuthRequest {
    /// The request as hidden form fields, for the POST to validate again.
    fn hidden_fields(&self) -> Vec<(&'static str, String)> {
        let mut fields = vec![("response_type", "code".to_owned()), ("client_id", self.client.client_id.clone())];
        if self.redirect_uri_given {
            fields.push(("redirect_uri", self.redirect_uri.clone()));
        }
        fields.push(("scope", scope::join(&self.scopes)));
        if let Some(state) = &self.state {
            fields.push(("state", state.clone()));
        }
        fields.push(("code_challenge", self.code_challenge.clone()));
        fields.push(("code_challenge_method", pkce::METHOD_S256.to_owned()));
        if let Some(resource) = &self.resource {
            fields.push(("resource", resource.clone()));
        }
        fields
    }
}

/// Why an authorization request is not shown or not granted.
pub enum Refusal {
    /// An error page, for problems before the redirect URI is verified.
    Page { status: StatusCode, heading: &'static str, message: String },
    /// A finished answer: a redirect to the verified redirect URI with `error`, or a failure page.
    Respond(Response),
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Page { status, heading, message } => consent::error_page(status, heading, &message),
            Refusal::Respond(response) => response,
        }
    }
}

fn bad_page(heading: &'static str, message: impl Into<String>) -> Refusal {
    Refusal::Page { status: StatusCode::BAD_REQUEST, heading, message: message.into() }
}

/// A server fault as a page; its cause is logged, never shown.
fn failure_page(cause: impl std::fmt::Display) -> Response {
    tracing::error!(cause = %cause, "OAuth authorization failed");
    consent::error_page(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Something went wrong",
        "The request could not be completed. Please try again later.",
    )
}

/// An authorization response: a 302 to `uri` with the parameters appended to its query, and
/// `iss`, the issuer (RFC 9207), so that a client talking to several authorization servers can
/// tell which one answered (mix-up defence).
pub fn redirect(uri: &str, pairs: &[(&str, &str)], issuer: &str) -> Response {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        query.append_pair(name, value);
    }
    query.append_pair("iss", issuer);
    let query = query.finish();
    let separator = match uri.find('?') {
        None => "?",
        Some(_) if uri.ends_with('?') || uri.ends_with('&') => "",
        Some(_) => "&",
    };
    let Ok(location) = HeaderValue::from_str(&format!("{uri}{separator}{query}")) else {
        return failure_page("redirect URI is not a valid header value");
    };
    let mut response = StatusCode::FOUND.into_response();
    let headers = response.headers_mut();
    headers.insert(header::LOCATION, location);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// An RFC 6749 §4.1.2.1 error response: a redirect with `error`, `error_description` and the
/// client's `state`.
pub fn error_redirect(uri: &str, state: Option<&str>, error: &str, description: &str, issuer: &str) -> Response {
    let mut pairs = vec![("error", error), ("error_description", description)];
    if let Some(state) = state {
        pairs.push(("state", state));
    }
    redirect(uri, &pairs, issuer)
}

/// Validates an authorization request (query of the GET, hidden fields of the POST), read
/// with the first occurrence of each parameter; `repeated` names those given more than once.
/// The endpoints give the issuer, which goes with every error redirect (RFC 9207), and the one
/// `resource` a client may name (RFC 8707).
pub async fn validate(
    state: &AppState,
    params: &AuthorizeQuery,
    repeated: &[String],
    endpoints: &Endpoints,
) -> Result<AuthRequest, Refusal> {
    let issuer = endpoints.issuer.as_str();
    // A repeated client_id or redirect_uri leaves no verified place to answer: an error page.
    if let Some(name) = repeated.iter().find(|name| matches!(name.as_str(), "client_id" | "redirect_uri")) {
        return Err(bad_page("Invalid request", format!("The parameter {name} appears more than once.")));
    }
    let client_id = params
        .client_id
        .as_deref()
        .ok_or_else(|| bad_page("Unknown application", "The request does not name an application (client_id)."))?;
    let client = match metadata_document::lookup(state, client_id).await {
        Ok(Some(client)) => client,
        Ok(None) => {
            return Err(bad_page("Unknown application", "No application is registered with this client_id."));
        }
        Err(LookupError::Document(why)) => return Err(bad_page("Application metadata refused", why)),
        Err(LookupError::Store(e)) => return Err(Refusal::Respond(failure_page(e))),
    };
    let (redirect_uri, redirect_uri_given) = match params.redirect_uri.as_deref() {
        Some(uri) if client.redirect_uri_allowed(uri) => (uri.to_owned(), true),
        Some(_) => {
            return Err(bad_page(
                "Redirect URI not registered",
                "The redirect_uri is not registered for this application, so the request cannot be answered.",
            ));
        }
        None if client.redirect_uris.len() == 1 => (client.redirect_uris[0].clone(), false),
        None => {
            return Err(bad_page(
                "Redirect URI missing",
                "This application has several redirect URIs: the request must name one (redirect_uri).",
            ));
        }
    };
    // From here on, problems go back to the verified redirect URI. A repeated parameter comes
    // first (RFC 6749 §3.1, §4.1.2.1): `invalid_request`, and `state` only when it was not the
    // one repeated (which of two values would the client expect back?).
    let state = params.state.clone();
    if let Some(name) = repeated.first() {
        let state =
            state.as_deref().filter(|s| s.chars().count() <= MAX_STATE_CHARS && !repeated.iter().any(|r| r == "state"));
        let description = format!("The parameter {name} appears more than once");
        return Err(Refusal::Respond(error_redirect(&redirect_uri, state, "invalid_request", &description, issuer)));
    }
    let problem = check_parameters(params, state.as_deref());
    if let Some((error, description)) = problem {
        let state = state.as_deref().filter(|s| s.chars().count() <= MAX_STATE_CHARS);
        return Err(Refusal::Respond(error_redirect(&redirect_uri, state, error, description, issuer)));
    }
    let scopes = match scope::parse(params.scope.as_deref()) {
        Ok(scopes) => scopes,
        Err(_) => {
            return Err(Refusal::Respond(error_redirect(
                &redirect_uri,
                state.as_deref(),
                "invalid_scope",
                "The scope may hold only api:read and api:write",
                issuer,
            )));
        }
    };
    // One spelling per resource in codes and grants, whichever equivalent form was sent.
    let resource = match params.resource.as_deref() {
        None => None,
        Some(resource) => match crate::discovery::canonical_resource(resource, &endpoints.resource) {
            Some(canonical) => Some(canonical),
            None => {
                return Err(Refusal::Respond(error_redirect(
                    &redirect_uri,
                    state.as_deref(),
                    "invalid_target",
                    &format!("The resource must be this API, {0}, or its MCP endpoint, {0}/mcp", endpoints.resource),
                    issuer,
                )));
            }
        },
    };
    let code_challenge = params.code_challenge.clone().unwrap_or_default();
    Ok(AuthRequest { client, redirect_uri, redirect_uri_given, state, scopes, code_challenge, resource })
}

/// The checks of the request's own parameters, in RFC order: the first problem found.
fn check_parameters(params: &AuthorizeQuery, state: Option<&str>) -> Option<(&'static str, &'static str)> {
    match params.response_type.as_deref() {
        None => return Some(("invalid_request", "The response_type parameter is required")),
        Some("code") => {}
        Some(_) => return Some(("unsupported_response_type", "Only response_type=code is supported")),
    }
    if state.is_some_and(|s| s.chars().count() > MAX_STATE_CHARS) {
        return Some(("invalid_request", "The state parameter is too long"));
    }
    match params.code_challenge_method.as_deref() {
        Some(pkce::METHOD_S256) => {}
        None => return Some(("invalid_request", "PKCE is required: code_challenge_method must be S256")),
        Some(_) => return Some(("invalid_request", "Only code_challenge_method=S256 is supported")),
    }
    match params.code_challenge.as_deref() {
        None => Some(("invalid_request", "PKCE is required: the code_challenge parameter is missing")),
        Some(challenge) if !pkce::is_valid_challenge(challenge) => {
            Some(("invalid_request", "The code_challenge must be the 43-character base64url SHA-256 of the verifier"))
        }
        Some(_) => None,
    }
}

fn params_problem(e: ParamsError) -> Refusal {
    match e {
        ParamsError::Repeated(name) => {
            bad_page("Invalid request", format!("The parameter {name} appears more than once."))
        }
        ParamsError::TooMany => bad_page("Invalid request", "The request has too many parameters."),
        ParamsError::Invalid(_) => bad_page("Invalid request", "The request could not be read."),
    }
}

/// The authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3): the GET's query, and the
/// consent form's hidden fields. Raw text, checked by [`validate`] in the RFC's order.
#[derive(Deserialize, Default, utoipa::IntoParams, utoipa::ToSchema)]
#[into_params(parameter_in = Query)]
pub struct AuthorizeQuery {
    /// Must be `code`
    #[param(required = true, example = "code")]
    #[schema(required = true, example = "code")]
    response_type: Option<String>,
    /// The client's id from registration (`dcr_<uuid>`)
    #[param(required = true, example = "dcr_0b7e9d4c-8d1f-4b43-9a8e-3f0f5f6f0a11")]
    #[schema(required = true, example = "dcr_0b7e9d4c-8d1f-4b43-9a8e-3f0f5f6f0a11")]
    client_id: Option<String>,
    /// One of the client's registered redirect URIs, character for character (loopback URIs:
    /// any port). May be left out when the client registered exactly one.
    #[param(example = "https://app.example/callback")]
    #[schema(example = "https://app.example/callback")]
    redirect_uri: Option<String>,
    /// Space-separated subset of `api:read api:write` (default: both)
    #[param(example = "api:read api:write")]
    #[schema(example = "api:read api:write")]
    scope: Option<String>,
    /// Opaque value returned unchanged with the code or the error
    #[param(example = "af0ifjsldkj")]
    #[schema(example = "af0ifjsldkj")]
    state: Option<String>,
    /// BASE64URL(SHA-256(code_verifier)), 43 characters
    #[param(
        required = true,
        min_length = 43,
        max_length = 43,
        pattern = "^[A-Za-z0-9_-]{43}$",
        example = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )]
    #[schema(
        required = true,
        min_length = 43,
        max_length = 43,
        pattern = "^[A-Za-z0-9_-]{43}$",
        example = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )]
    code_challenge: Option<String>,
    /// Must be `S256`
    #[param(required = true, example = "S256")]
    #[schema(required = true, example = "S256")]
    code_challenge_method: Option<String>,
    /// RFC 8707: the API the token is for; if sent, exactly this API's resource identifier (the
    /// `resource` of its protected-resource metadata, no trailing slash), else `invalid_target`.
    /// The tokens are then bound to it.
    #[param(example = "https://work.example.com")]
    #[schema(example = "https://work.example.com")]
    resource: Option<String>,
}

/// The consent form: the authorization request in hidden fields, and the user's answer.
#[derive(Deserialize, Default, utoipa::ToSchema)]
#[schema(example = json!({
    "response_type": "code", "client_id": "dcr_0b7e9d4c-8d1f-4b43-9a8e-3f0f5f6f0a11",
    "redirect_uri": "https://app.example/callback", "scope": "api:read api:write", "state": "af0ifjsldkj",
    "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge_method": "S256",
    "decision": "approve", "email": "admin@demo.example", "password": "correct horse battery staple"
}))]
pub struct AuthorizeForm {
    #[serde(flatten)]
    request: AuthorizeQuery,
    /// `approve` or `deny`
    #[schema(required = true, example = "approve")]
    decision: Option<String>,
    /// Needed to approve
    email: Option<String>,
    /// Needed to approve
    password: Option<String>,
    /// The workspace to sign in to, when the e-mail and password fit several
    #[schema(format = Uuid)]
    workspace_id: Option<String>,
}

/// Show the sign-in and consent page
///
/// The authorization endpoint (RFC 6749 §4.1, PKCE S256 required): validates the request and
/// shows the HTML page where the user signs in and approves or denies. Problems before the
/// redirect URI is verified are an error page; later ones go back to the client.
#[utoipa::path(get, path = "/api/oauth/authorize", operation_id = "oauthAuthorize", tag = "oauth",
    params(AuthorizeQuery),
    responses(
        (status = 200, description = "The sign-in and consent page (HTML)", content_type = "text/html", body = String,
            example = json!("<!doctype html><html lang=\"en\"><head><title>Authorize Claude</title></head><body><main><h1>Claude wants to access your workspace</h1><form method=\"post\" action=\"https://work.example.com/api/oauth/authorize\">…</form></main></body></html>")),
        (status = 302, description = "Back to the redirect URI with `error`, `error_description`, `state` and `iss` (RFC 9207)",
            headers(("Location" = String, description = "The client's redirect URI with the error"))),
        (status = 400, description = "Error page (HTML): unknown client, or a redirect URI not registered for it", content_type = "text/html", body = String),
    ))]
async fn authorize_page(State(state): State<AppState>, headers: HeaderMap, uri: Uri) -> Response {
    let (params, repeated): (AuthorizeQuery, _) =
        match form::parse_reporting_repeats(uri.query().unwrap_or_default().as_bytes()) {
            Ok(read) => read,
            Err(e) => return params_problem(e).into_response(),
        };
    let endpoints = Endpoints::of(&state, &headers);
    let request = match validate(&state, &params, &repeated, &endpoints).await {
        Ok(request) => request,
        Err(refusal) => return refusal.into_response(),
    };
    let action = endpoints.authorization;
    render(StatusCode::OK, &request, &action, "", &[], None, Vec::new())
}

/// The consent page for a validated request.
fn render(
    status: StatusCode,
    request: &AuthRequest,
    action: &str,
    email: &str,
    workspaces: &[(Uuid, String)],
    error: Option<&str>,
    extra: Vec<(header::HeaderName, HeaderValue)>,
) -> Response {
    let hidden = request.hidden_fields();
    let page = Consent {
        action,
        client_name: &request.client.client_name,
        client_uri: request.client.client_uri.as_deref(),
        client_host: request.client.document_host(),
        redirect_uri: &request.redirect_uri,
        scopes: &request.scopes,
        hidden: &hidden,
        email,
        workspaces,
        error,
    };
    consent::consent_page(status, &page, extra)
}

/// Approve or deny an authorization request
///
/// The consent page's form: validates the authorization request again, signs the user in with
/// the login's rules and limits and, on approval, redirects to the client with a single-use
/// code (60 seconds); on denial with `error=access_denied`.
#[utoipa::path(post, path = "/api/oauth/authorize", operation_id = "oauthAuthorizeDecision", tag = "oauth",
    request_body(content = AuthorizeForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 302, description = "Approved: back to the redirect URI with `code`, `state` and `iss` (RFC 9207); denied: with `error=access_denied`",
            headers(("Location" = String, description = "The client's redirect URI with the code or the error"))),
        (status = 200, description = "The page again, asking for the workspace (HTML)", content_type = "text/html", body = String,
            example = json!("<!doctype html><html lang=\"en\"><head><title>Authorize Claude</title></head><body><main><p role=\"alert\">This e-mail address and password sign in to several workspaces: choose one and enter the password again.</p><form method=\"post\">…</form></main></body></html>")),
        (status = 400, description = "Error page, or the page again with what to correct (HTML)", content_type = "text/html", body = String),
        (status = 401, description = "The page again: invalid e-mail or password (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "Error page: the workspace's API feature is off (HTML)", content_type = "text/html", body = String),
        (status = 429, description = "The page again: too many sign-in attempts (HTML)", content_type = "text/html", body = String),
    ))]
async fn authorize_decision(State(state): State<AppState>, parts: Parts, body: Bytes) -> Response {
    if !form::is_form(&parts.headers) {
        return bad_page("Invalid request", "The form could not be read.").into_response();
    }
    let (params, repeated): (AuthorizeForm, _) = match form::parse_reporting_repeats(&body) {
        Ok(read) => read,
        Err(e) => return params_problem(e).into_response(),
    };
    let store = state.store();
    let endpoints = Endpoints::of(&state, &parts.headers);
    let request = match validate(&state, &params.request, &repeated, &endpoints).await {
        Ok(request) => request,
        Err(refusal) => return refusal.into_response(),
    };
    let Endpoints { issuer, authorization: action, .. } = endpoints;
    let email = params.email.as_deref().map(str::trim).unwrap_or_default();
    let again =
        |status: StatusCode, message: &str| render(status, &request, &action, email, &[], Some(message), Vec::new());
    match params.decision.as_deref() {
        Some("deny") => {
            tracing::info!(client = %request.client.client_id, "OAuth authorization denied");
            return error_redirect(
                &request.redirect_uri,
                request.state.as_deref(),
                "access_denied",
                "The user denied the request",
                &issuer,
            );
        }
        Some("approve") => {}
        _ => return again(StatusCode::BAD_REQUEST, "Choose Approve or Deny."),
    }
    let password = params.password.as_deref().unwrap_or_default();
    if email.is_empty()
        || email.chars().count() > MAX_EMAIL_CHARS
        || !login::is_email_shaped(email)
        || password.is_empty()
        || password.chars().count() > MAX_PASSWORD_CHARS
    {
        return again(StatusCode::BAD_REQUEST, "Enter your e-mail address and your password.");
    }
    let workspace_id = match params.workspace_id.as_deref().map(|v| Uuid::parse_str(v.trim())) {
        None => None,
        Some(Ok(id)) => Some(id),
        Some(Err(_)) => return again(StatusCode::BAD_REQUEST, "Choose a workspace."),
    };
    // The login's own limits (per IP and per e-mail), on top of the API's IP limit.
    if let Err(limited) = crate::charge(&state, &parts, email).await {
        let retry: Vec<_> = limited.headers.iter().filter(|(name, _)| name == header::RETRY_AFTER).cloned().collect();
        let message = "Too many sign-in attempts. Wait a minute, then try again.";
        return render(limited.status, &request, &action, email, &[], Some(message), retry);
    }
    let credentials = Credentials { email: email.to_owned(), password: password.to_owned(), workspace_id };
    let user = match login::authenticate(store, &credentials).await {
        Ok(Outcome::Authenticated(user)) => user,
        Ok(Outcome::Rejected) => return again(StatusCode::UNAUTHORIZED, "Invalid e-mail or password."),
        Ok(Outcome::Ambiguous(users)) => {
            let mut workspaces = Vec::new();
            for user in users {
                match identity::get_workspace(store, user.workspace_id).await {
                    Ok(Some(workspace)) => workspaces.push((workspace.id, workspace.name)),
                    Ok(None) => {}
                    Err(e) => return failure_page(e),
                }
            }
            let message = "This e-mail address and password sign in to several workspaces: choose one and enter the password again.";
            return render(StatusCode::OK, &request, &action, email, &workspaces, Some(message), Vec::new());
        }
        Err(e) => return failure_page(e),
    };
    let workspace = match identity::get_workspace(store, user.workspace_id).await {
        Ok(Some(workspace)) => workspace,
        Ok(None) => return failure_page("an authenticated user's workspace is missing"),
        Err(e) => return failure_page(e),
    };
    if !workspace.api_enabled {
        tracing::info!(client = %request.client.client_id, workspace = %workspace.id, "OAuth authorization refused: API feature off");
        return consent::error_page(
            StatusCode::FORBIDDEN,
            "API access is turned off",
            &format!(
                "API access is turned off for the workspace \u{201c}{}\u{201d}, so no application can be authorized for it. \
                 An administrator of the workspace can turn it on.",
                workspace.name
            ),
        );
    }
    let client_id = &request.client.client_id;
    if let Err(e) = install::ensure(store, WsKeys::new(workspace.id), client_id, user.id).await {
        return failure_page(e);
    }
    let new = code::NewCode {
        client_id,
        redirect_uri: &request.redirect_uri,
        redirect_uri_given: request.redirect_uri_given,
        scopes: &request.scopes,
        code_challenge: &request.code_challenge,
        workspace_id: workspace.id,
        user_id: user.id,
        resource: request.resource.as_deref(),
    };
    // Security clock: a code's lifetime never follows LT_CUSTOM_NOW.
    let code = match code::issue(store, new, clock::now_epoch()).await {
        Ok(code) => code,
        Err(e) => return failure_page(e),
    };
    tracing::info!(client = %client_id, user = %user.id, workspace = %workspace.id, "OAuth authorization approved");
    let mut pairs = vec![("code", code.as_str())];
    if let Some(state) = request.state.as_deref() {
        pairs.push(("state", state));
    }
    redirect(&request.redirect_uri, &pairs, &issuer)
}

/// The routes of the authorization endpoint.
pub fn api() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new().routes(utoipa_axum::routes!(authorize_page, authorize_decision))
}
