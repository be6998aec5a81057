//! Discovery: authorization-server metadata (RFC 8414) at the spec's path and at the RFC 8414
//! location, and protected-resource metadata (RFC 9728). docs/oauth.md#discovery.

use crate::client::AuthMethod;
use crate::register::{GRANT_TYPES, RESPONSE_TYPES, SCOPES};
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::IntoResponse;
use serde::Serialize;
use workapi_kit::AppState;

/// The PKCE methods accepted: S256 only (DESIGN §3).
pub const CODE_CHALLENGE_METHODS: &[&str] = &["S256"];
/// Metadata documents may be cached briefly by clients.
/// Cacheable, but per `Host`: without `LT_SITE_URL` the documents name the requested host, so
/// a shared cache must not hand one host's answer to another.
const CACHE: &str = "public, max-age=300";

/// The endpoints of the authorization server, all under the issuer (`workapi_kit::oauth::issuer`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    pub issuer: String,
    /// This API's resource identifier (RFC 8707, RFC 9728). Tokens can be requested for it or
    /// for the MCP endpoint's, `{resource}/mcp` ([`canonical_resource`]).
    pub resource: String,
    pub authorization: String,
    pub token: String,
    pub registration: String,
    pub revocation: String,
}

impl Endpoints {
    pub fn of(state: &AppState, headers: &HeaderMap) -> Endpoints {
        let issuer = state.site_url().issuer(headers);
        Endpoints {
            resource: state.site_url().resource(headers),
            authorization: format!("{issuer}/oauth/authorize"),
            token: format!("{issuer}/oauth/token"),
            registration: format!("{issuer}/oauth/register"),
            revocation: format!("{issuer}/oauth/revoke"),
            issuer,
        }
    }

    /// RFC 7592 `registration_client_uri` of one client.
    pub fn registration_client_uri(&self, client_id: &str) -> String {
        format!("{}/{client_id}", self.registration)
    }
}

/// Authorization-server metadata (RFC 8414 §2).
#[derive(Serialize, utoipa::ToSchema)]
#[schema(example = json!({
    "issuer": "https://work.example.com/api",
    "authorization_endpoint": "https://work.example.com/api/oauth/authorize",
    "token_endpoint": "https://work.example.com/api/oauth/token",
    "registration_endpoint": "https://work.example.com/api/oauth/register",
    "revocation_endpoint": "https://work.example.com/api/oauth/revoke",
    "scopes_supported": ["api:read", "api:write"], "response_types_supported": ["code"],
    "grant_types_supported": ["authorization_code", "refresh_token"],
    "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
    "revocation_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
    "code_challenge_methods_supported": ["S256"],
    "authorization_response_iss_parameter_supported": true,
    "client_id_metadata_document_supported": true
}))]
pub struct AuthorizationServerMetadata {
    /// `{site_url}/api`
    #[schema(example = "https://work.example.com/api")]
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: String,
    pub revocation_endpoint: String,
    #[schema(example = json!(["api:read", "api:write"]))]
    pub scopes_supported: Vec<String>,
    #[schema(example = json!(["code"]))]
    pub response_types_supported: Vec<String>,
    #[schema(example = json!(["authorization_code", "refresh_token"]))]
    pub grant_types_supported: Vec<String>,
    #[schema(example = json!(["none", "client_secret_post", "client_secret_basic"]))]
    pub token_endpoint_auth_methods_supported: Vec<String>,
    #[schema(example = json!(["none", "client_secret_post", "client_secret_basic"]))]
    pub revocation_endpoint_auth_methods_supported: Vec<String>,
    #[schema(example = json!(["S256"]))]
    pub code_challenge_methods_supported: Vec<String>,
    /// Every authorization response carries `iss` (RFC 9207)
    pub authorization_response_iss_parameter_supported: bool,
    /// A `client_id` may be the https URL of a Client ID Metadata Document
    pub client_id_metadata_document_supported: bool,
}

/// Protected-resource metadata (RFC 9728 §2).
#[derive(Serialize, utoipa::ToSchema)]
#[schema(example = json!({
    "resource": "https://work.example.com", "authorization_servers": ["https://work.example.com/api"],
    "scopes_supported": ["api:read", "api:write"], "bearer_methods_supported": ["header"]
}))]
pub struct ProtectedResourceMetadata {
    /// The API's base URL (`{site_url}`)
    #[schema(example = "https://work.example.com")]
    pub resource: String,
    /// The issuer of the tokens the API accepts
    pub authorization_servers: Vec<String>,
    #[schema(example = json!(["api:read", "api:write"]))]
    pub scopes_supported: Vec<String>,
    #[schema(example = json!(["header"]))]
    pub bearer_methods_supported: Vec<String>,
}

/// Whether an RFC 8707 `resource` names this API (`this_api`, the protected-resource metadata's
/// `resource`, no trailing slash): exactly, or with the `/` that an empty path is equivalent to
/// (RFC 3986 §6.2.3) — the MCP TypeScript SDK sends `new URL(resource).href`, which adds it.
/// The caller then carries `this_api` itself, so one API has one spelling in codes and grants.
pub fn names_this_api(resource: &str, this_api: &str) -> bool {
    resource == this_api
        || (resource.strip_suffix('/') == Some(this_api) && url::Url::parse(resource).is_ok_and(|u| u.path() == "/"))
}

/// The path of the MCP endpoint, whose resource identifier is `{site_url}/mcp` (docs/mcp.md).
pub const MCP_PATH: &str = "/mcp";

/// The canonical spelling of a `resource` this server issues tokens for: the REST API
/// (`this_api`) or the MCP endpoint (`{this_api}/mcp`, exactly); None for any other.
pub fn canonical_resource(resource: &str, this_api: &str) -> Option<String> {
    if names_this_api(resource, this_api) {
        return Some(this_api.to_owned());
    }
    let mcp = format!("{this_api}{MCP_PATH}");
    (resource == mcp).then_some(mcp)
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| (*s).to_owned()).collect()
}

/// The authorization-server metadata for this request's site URL.
pub fn authorization_server_metadata(state: &AppState, headers: &HeaderMap) -> AuthorizationServerMetadata {
    let endpoints = Endpoints::of(state, headers);
    let methods: Vec<String> = AuthMethod::ALL.iter().map(|m| m.as_str().to_owned()).collect();
    AuthorizationServerMetadata {
        issuer: endpoints.issuer,
        authorization_endpoint: endpoints.authorization,
        token_endpoint: endpoints.token,
        registration_endpoint: endpoints.registration,
        revocation_endpoint: endpoints.revocation,
        scopes_supported: strings(SCOPES),
        response_types_supported: strings(RESPONSE_TYPES),
        grant_types_supported: strings(GRANT_TYPES),
        token_endpoint_auth_methods_supported: methods.clone(),
        revocation_endpoint_auth_methods_supported: methods,
        code_challenge_methods_supported: strings(CODE_CHALLENGE_METHODS),
        authorization_response_iss_parameter_supported: true,
        client_id_metadata_document_supported: true,
    }
}

fn serve_as_metadata(state: &AppState, headers: &HeaderMap) -> impl IntoResponse + use<> {
    ([(header::CACHE_CONTROL, CACHE), (header::VARY, "Host")], Json(authorization_server_metadata(state, headers)))
}

/// Authorization-server metadata
///
/// RFC 8414 metadata of the OAuth 2.0 authorization server at the spec's path: the issuer, its
/// endpoints and what it supports (PKCE S256 only). Public, cacheable per host.
#[utoipa::path(get, path = "/api/.well-known/oauth-authorization-server", operation_id = "oauthAuthorizationServerMetadata", tag = "oauth",
    responses((status = 200, description = "Authorization-server metadata (RFC 8414); the same document as at /.well-known/oauth-authorization-server/api", body = AuthorizationServerMetadata)))]
pub async fn authorization_server(State(state): State<AppState>, headers: HeaderMap) -> impl IntoResponse {
    serve_as_metadata(&state, &headers)
}

/// Authorization-server metadata (RFC 8414 location)
///
/// The same document at the location RFC 8414 §3.1 derives from the issuer `{site_url}/api`.
/// Public, cacheable per host.
#[utoipa::path(get, path = "/.well-known/oauth-authorization-server/api", operation_id = "oauthAuthorizationServerMetadataRfc8414", tag = "oauth",
    responses((status = 200, description = "Authorization-server metadata at the RFC 8414 §3.1 location for the issuer `{site_url}/api`", body = AuthorizationServerMetadata)))]
pub async fn authorization_server_rfc8414(State(state): State<AppState>, headers: HeaderMap) -> impl IntoResponse {
    serve_as_metadata(&state, &headers)
}

/// Authorization-server metadata (origin, for older clients)
///
/// The same document at the origin's well-known path, where clients of the MCP revision
/// 2025-03-26 look (they drop the path of the server URL). Its `issuer` stays `{site_url}/api`,
/// the one issuer of this server, and its endpoints are the real ones, so such a client never
/// falls back to `/authorize`, `/token` and `/register` at the origin, which do not exist.
/// Public, cacheable per host.
#[utoipa::path(get, path = "/.well-known/oauth-authorization-server", operation_id = "oauthAuthorizationServerMetadataOrigin", tag = "oauth",
    responses((status = 200, description = "Authorization-server metadata for clients that look at the origin (MCP 2025-03-26); the same document, issuer `{site_url}/api`", body = AuthorizationServerMetadata)))]
pub async fn authorization_server_origin(State(state): State<AppState>, headers: HeaderMap) -> impl IntoResponse {
    serve_as_metadata(&state, &headers)
}

fn serve_resource_metadata(state: &AppState, headers: &HeaderMap, path: &str) -> impl IntoResponse + use<> {
    let site = state.site_url();
    let metadata = ProtectedResourceMetadata {
        resource: site.resource(headers) + path,
        authorization_servers: vec![site.issuer(headers)],
        scopes_supported: strings(SCOPES),
        bearer_methods_supported: strings(&["header"]),
    };
    ([(header::CACHE_CONTROL, CACHE), (header::VARY, "Host")], Json(metadata))
}

/// Protected-resource metadata
///
/// RFC 9728 metadata of the API: its resource identifier, the authorization server that issues
/// its tokens, and its scopes. Every 401 names this URL. Public, cacheable per host.
#[utoipa::path(get, path = "/.well-known/oauth-protected-resource", operation_id = "oauthProtectedResourceMetadata", tag = "oauth",
    responses((status = 200, description = "Protected-resource metadata of the API (RFC 9728); named by `WWW-Authenticate` on every 401", body = ProtectedResourceMetadata)))]
pub async fn protected_resource(State(state): State<AppState>, headers: HeaderMap) -> impl IntoResponse {
    serve_resource_metadata(&state, &headers, "")
}

/// Protected-resource metadata of the MCP endpoint
///
/// RFC 9728 metadata of the MCP endpoint `{site_url}/mcp`, at the location §3.1 derives from
/// that resource identifier: the same authorization server and scopes. The 401s of `/mcp`
/// name this URL; tokens bound to this resource are accepted at `/mcp` only (docs/mcp.md).
/// Public, cacheable per host.
#[utoipa::path(get, path = "/.well-known/oauth-protected-resource/mcp", operation_id = "oauthProtectedResourceMetadataMcp", tag = "oauth",
    responses((status = 200, description = "Protected-resource metadata of the MCP endpoint (RFC 9728); named by `WWW-Authenticate` on the 401s of `/mcp`", body = ProtectedResourceMetadata)))]
pub async fn protected_resource_mcp(State(state): State<AppState>, headers: HeaderMap) -> impl IntoResponse {
    serve_resource_metadata(&state, &headers, MCP_PATH)
}

/// The path under which the MCP endpoint's other URLs (`/mcp/readonly`, `/mcp/x/{toolset}`,
/// `/mcp/x/{toolset}/readonly`: docs/mcp.md, "Surfaces") find their metadata.
pub const MCP_SURFACES_METADATA: &str = "/.well-known/oauth-protected-resource/mcp/{*surface}";

/// The MCP resource's metadata for its other URLs. They are views of the one resource
/// `{site_url}/mcp`, not resources of their own; a client that derives the metadata URL from
/// one of them (RFC 9728 §3.1, when the 401's hint is not at hand) gets the MCP resource's
/// document, whose `resource` is a prefix of its URL, as the MCP SDKs check. Without it such a
/// client fell back to the API's metadata and asked for a token for the wrong resource. Not in
/// the OpenAPI document, like `/mcp` itself: the paths have any number of segments.
pub fn mcp_surfaces() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new().route(MCP_SURFACES_METADATA, axum::routing::get(protected_resource_mcp))
}

/// Protected-resource metadata (under the issuer)
///
/// The same RFC 9728 document under the issuer's path, for clients that look there. Public,
/// cacheable per host.
#[utoipa::path(get, path = "/api/.well-known/oauth-protected-resource", operation_id = "oauthProtectedResourceMetadataApi", tag = "oauth",
    responses((status = 200, description = "The same protected-resource metadata under the issuer's path", body = ProtectedResourceMetadata)))]
pub async fn protected_resource_api(State(state): State<AppState>, headers: HeaderMap) -> impl IntoResponse {
    serve_resource_metadata(&state, &headers, "")
}

#[cfg(test)]
mod resource_tests {
    use super::{canonical_resource, names_this_api};

    #[test]
    fn the_resource_names_this_api_with_or_without_the_root_slash() {
        let api = "https://work.example.com";
        assert!(names_this_api("https://work.example.com", api));
        assert!(names_this_api("https://work.example.com/", api));
        for other in [
            "https://work.example.com//",
            "https://work.example.com/x",
            "https://other.example/",
            "http://work.example.com/",
            "",
        ] {
            assert!(!names_this_api(other, api), "{other}");
        }
        assert!(!names_this_api("https://work.example.com/app/", "https://work.example.com/app"));
    }

    #[test]
    fn the_mcp_endpoint_is_the_second_resource() {
        let api = "https://work.example.com";
        assert_eq!(canonical_resource("https://work.example.com/", api).as_deref(), Some(api));
        assert_eq!(
            canonical_resource("https://work.example.com/mcp", api).as_deref(),
            Some("https://work.example.com/mcp")
        );
        for other in ["https://work.example.com/mcp/", "https://work.example.com/MCP", "https://other.example/mcp"] {
            assert_eq!(canonical_resource(other, api), None, "{other}");
        }
    }
}
