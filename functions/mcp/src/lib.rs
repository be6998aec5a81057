//! The `mcp` function: the Model Context Protocol at `/mcp` (docs/mcp.md). Every documented
//! operation of the registry that takes a bearer token is a tool; `tools/call` runs it in
//! process through the registry's routes as the caller authenticated here.
//!
//! This function is not in the registry (`registry::FUNCTIONS`): it depends on the registry, for
//! the routes it calls (`registry::BEARER_FUNCTIONS`), so the registry cannot depend on it. The
//! local server mounts it beside the registry's functions (`local::functions()`), and `/mcp` is
//! JSON-RPC, not a REST operation, so it is not in the OpenAPI document.

mod call;
pub mod protocol;
pub mod reach;
pub mod surface;
pub mod tools;

use axum::extract::{FromRequestParts, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use workapi_domain::identity::{SCOPE_READ, SCOPE_WRITE};
use workapi_kit::AppState;
use workapi_kit::auth::{Audience, Caller};
use workapi_kit::error::ApiError;
use workapi_kit::function::{Function, Memory, Needs, Route};

/// The endpoint, and the path of its resource identifier `{site_url}/mcp`. Its other URLs
/// (`/mcp/readonly`, `/mcp/x/{toolset}`, `/mcp/x/{toolset}/readonly`) are surfaces of the same
/// resource (`surface::Surface`): the same metadata, challenge and tokens.
pub const PATH: &str = "/mcp";

pub const FUNCTION: Function = Function {
    name: "mcp",
    prefixes: &[PATH],
    tags: &[],
    api,
    entities: &[],
    emits: &[],
    needs: Needs {
        summary: "the Model Context Protocol at /mcp; every bearer operation as a tool",
        note: "The MCP endpoint (docs/mcp.md): every documented bearer operation as a tool, run in process\n\
               through the routes of the functions that have them. It links those functions, so it holds the\n\
               union of what they need (its descriptor's `runs`): the table, the uploaded files, the agents'\n\
               credential secrets.",
        routes: &[Route::new("Mcp", PATH), Route::new("McpProxy", "/mcp/{proxy+}")],
        memory: Some(Memory {
            megabytes: 1024,
            why: "Links every function with bearer operations, parses its tools as it starts and builds their \
                  routes on the first call: the most CPU at cold start.",
        }),
        runs: registry::BEARER_FUNCTIONS,
        ..Needs::DATA
    },
};

fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .route(PATH, axum::routing::any(endpoint))
        .route(&format!("{PATH}/{{*surface}}"), axum::routing::any(endpoint))
}

/// The MCP resource's protected-resource metadata (RFC 9728 §3.1: the well-known path, then
/// the resource's path).
pub fn resource_metadata_url(state: &AppState, headers: &HeaderMap) -> String {
    format!("{}{PATH}", state.site_url().resource_metadata_url(headers))
}

/// Origin (403) → method (405) → the surface the URL and headers choose (404, 400) → bearer
/// authentication for the MCP resource (401, 429) → the JSON-RPC message (`protocol::handle`).
async fn endpoint(State(state): State<AppState>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    if let Some(origin) = parts.headers.get(header::ORIGIN)
        && !origin_allowed(&state, &parts.headers, origin)
    {
        return ApiError::forbidden("This Origin may not use the MCP endpoint").into_response();
    }
    if parts.method != Method::POST {
        // No server-sent event stream (it runs on Lambda), and no session to end.
        let error = ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "The MCP endpoint takes POST only")
            .with_header(header::ALLOW, HeaderValue::from_static("POST"));
        return error.into_response();
    }
    let surface = match surface::Surface::of(parts.uri.path().strip_prefix(PATH).unwrap_or_default(), &parts.headers) {
        Ok(surface) => surface,
        Err(error) => return error.into_response(),
    };
    // Any API scope opens the endpoint; each tool then needs its operation's scope.
    parts.extensions.insert(Audience { resource_path: PATH, scope: None });
    let caller = match Caller::from_request_parts(&mut parts, &state).await {
        Ok(caller) => caller,
        Err(error) if error.status == StatusCode::UNAUTHORIZED => return challenge(&state, &parts.headers, error),
        Err(error) => return error.into_response(),
    };
    let bytes = match axum::body::to_bytes(body, workapi_kit::http::MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => return ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large").into_response(),
    };
    protocol::handle(&state, &caller, &parts.headers, &surface, &bytes).await
}

/// A browser's `Origin` must be the site's own or one of `LT_CORS_ALLOWED_ORIGINS` (DNS
/// rebinding and cross-site use, as the transport spec asks); clients outside browsers send none.
fn origin_allowed(state: &AppState, headers: &HeaderMap, origin: &HeaderValue) -> bool {
    let Ok(origin) = origin.to_str() else { return false };
    origin.eq_ignore_ascii_case(&state.site_url().of(headers)) || state.cors_origins().allows(origin)
}

/// The 401 of `/mcp`: the challenge names the MCP resource's metadata and the scopes to ask for
/// (`invalid_token` kept when a credential was presented).
fn challenge(state: &AppState, headers: &HeaderMap, error: ApiError) -> Response {
    let invalid = error.headers.iter().any(|(name, value)| {
        name == header::WWW_AUTHENTICATE && value.to_str().is_ok_and(|v| v.contains("invalid_token"))
    });
    let url = resource_metadata_url(state, headers);
    let error_part = if invalid { "error=\"invalid_token\", " } else { "" };
    let text = format!("Bearer {error_part}resource_metadata=\"{url}\", scope=\"{SCOPE_READ} {SCOPE_WRITE}\"");
    let mut error = error;
    error.headers.retain(|(name, _)| name != header::WWW_AUTHENTICATE);
    let mut response = error.into_response();
    if let Ok(value) = HeaderValue::from_str(&text) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// 403 `insufficient_scope` for a tool the token's scopes do not allow: the challenge asks for
/// the scopes the token has plus the one needed (step-up keeps what the client had).
pub(crate) fn insufficient_scope(state: &AppState, headers: &HeaderMap, needed: &str, caller: &Caller) -> Response {
    let mut scopes: Vec<&str> = caller.scopes.iter().map(String::as_str).collect();
    scopes.push(needed);
    scopes.sort_unstable();
    scopes.dedup();
    let url = resource_metadata_url(state, headers);
    let text = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{url}\", error_description=\"The tool needs {needed}\"",
        scopes.join(" ")
    );
    let mut response = ApiError::forbidden(format!("Token lacks scope {needed}")).into_response();
    if let Ok(value) = HeaderValue::from_str(&text) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}
