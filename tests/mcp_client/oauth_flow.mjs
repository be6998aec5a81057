// The OAuth flow as an MCP client does it, driven by the MCP TypeScript SDK's own OAuth helpers
// (@modelcontextprotocol/sdk, pinned in tools/mcp-client) against a running workapi server:
//
// a 401 of the API names the protected-resource metadata (WWW-Authenticate resource_metadata)
// -> discoverOAuthProtectedResourceMetadata -> discoverAuthorizationServerMetadata ->
// registerClient (dynamic registration) -> startAuthorization (PKCE S256, resource) -> the
// consent form is posted (the demo admin signs in) and the code read from the redirect, with
// its state and iss (RFC 9207) -> exchangeAuthorization -> an API call -> refreshAuthorization
// -> an API call; then a token for another resource is refused (invalid_target) at the
// authorization endpoint and at the token endpoint.
//
//   node tests/mcp_client/oauth_flow.mjs http://127.0.0.1:3000 admin@demo.example <password>
//
// Exits non-zero on the first failure. scripts/test.sh runs it against the local server it
// starts; the Client ID Metadata Document variant is cimd_flow.mjs.

import { apiCall as apiCallAt, check, consent as consentAs, isInvalidTarget, sdkAuth } from "./common.mjs";

const {
  extractWWWAuthenticateParams,
  discoverOAuthProtectedResourceMetadata,
  discoverAuthorizationServerMetadata,
  registerClient,
  startAuthorization,
  exchangeAuthorization,
  refreshAuthorization,
} = sdkAuth;

const [base, email, password] = [process.argv[2], process.argv[3], process.argv[4] ?? process.env.LT_OAUTH_TEST_PASSWORD];
if (!base || !email || !password) {
  console.error("usage: oauth_flow.mjs <base URL> <e-mail> <password>");
  process.exit(2);
}
const REDIRECT = "http://127.0.0.1:8977/callback";

const consent = (authorizationUrl) => consentAs(authorizationUrl, email, password);
const apiCall = (token) => apiCallAt(base, token);

// Discovery from a 401 of the API.
const unauthorized = await fetch(`${base}/tags/task`);
check(unauthorized.status === 401, `GET /tags/task without a token: ${unauthorized.status}`);
const { resourceMetadataUrl } = extractWWWAuthenticateParams(unauthorized);
check(resourceMetadataUrl, `WWW-Authenticate names resource_metadata: ${unauthorized.headers.get("www-authenticate")}`);
const resourceMetadata = await discoverOAuthProtectedResourceMetadata(base, { resourceMetadataUrl });
const resource = resourceMetadata.resource;
const issuer = resourceMetadata.authorization_servers[0];
const metadata = await discoverAuthorizationServerMetadata(issuer);
check(metadata?.issuer === issuer, `authorization-server metadata for ${issuer}: ${JSON.stringify(metadata)}`);
check(metadata.client_id_metadata_document_supported === true, "client_id_metadata_document_supported");
check(metadata.token_endpoint_auth_methods_supported.includes("none"), "none among the auth methods");

// Dynamic registration.
const clientInformation = await registerClient(issuer, {
  metadata,
  clientMetadata: {
    client_name: `MCP SDK flow ${Math.random().toString(36).slice(2, 8)}`,
    redirect_uris: [REDIRECT],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  },
});
check(clientInformation.client_id?.startsWith("dcr_"), `registered: ${JSON.stringify(clientInformation)}`);

// Authorization with PKCE and the resource, consent, code.
const state = Math.random().toString(36).slice(2);
const { authorizationUrl, codeVerifier } = await startAuthorization(issuer, {
  metadata,
  clientInformation,
  redirectUrl: REDIRECT,
  scope: "api:read api:write",
  state,
  resource: new URL(resource),
});
const answer = await consent(authorizationUrl);
check(answer.get("state") === state, `state returned: ${answer}`);
check(answer.get("iss") === metadata.issuer, `iss returned (RFC 9207): ${answer}`);
const code = answer.get("code");
check(code, `a code: ${answer}`);

// Exchange, call, refresh, call.
const tokens = await exchangeAuthorization(issuer, {
  metadata,
  clientInformation,
  authorizationCode: code,
  codeVerifier,
  redirectUri: REDIRECT,
  resource: new URL(resource),
});
check((await apiCall(tokens.access_token)) === 200, "API call with the access token");
const refreshed = await refreshAuthorization(issuer, {
  metadata,
  clientInformation,
  refreshToken: tokens.refresh_token,
  resource: new URL(resource),
});
check(refreshed.access_token !== tokens.access_token, "refresh returned a new access token");
check((await apiCall(refreshed.access_token)) === 200, "API call with the refreshed access token");

// Another resource is refused: at the authorization endpoint (a redirect with the error)...
const other = new URL("https://other.example/");
const { authorizationUrl: otherUrl } = await startAuthorization(issuer, {
  metadata,
  clientInformation,
  redirectUrl: REDIRECT,
  scope: "api:read",
  state,
  resource: other,
});
const refusedPage = await fetch(otherUrl, { redirect: "manual" });
check(refusedPage.status === 302, `authorization for another resource: ${refusedPage.status}`);
const refusedParams = new URL(refusedPage.headers.get("location")).searchParams;
check(refusedParams.get("error") === "invalid_target", `invalid_target at authorize: ${refusedParams}`);
// ...and at the token endpoint.
let refusedAtToken = null;
try {
  await refreshAuthorization(issuer, { metadata, clientInformation, refreshToken: refreshed.refresh_token, resource: other });
} catch (e) {
  refusedAtToken = e;
}
check(isInvalidTarget(refusedAtToken), `invalid_target at the token endpoint: ${refusedAtToken}`);

console.log("MCP SDK OAuth flow passed: discovery from a 401, registration, consent, exchange, refresh, API calls, invalid_target");
