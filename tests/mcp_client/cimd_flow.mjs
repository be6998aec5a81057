// The OAuth flow of an MCP client identified by a Client ID Metadata Document, driven by the MCP
// TypeScript SDK's own `auth()` orchestrator (@modelcontextprotocol/sdk, pinned in
// tools/mcp-client): its OAuthClientProvider names `clientMetadataUrl`, and the SDK uses that URL
// as client_id (instead of registering) when the server advertises
// client_id_metadata_document_supported.
//
// a 401 of the API names the protected-resource metadata -> auth(): discovery, the URL client_id,
// startAuthorization (PKCE S256, resource) -> the consent form is posted and the code read from
// the redirect (state, iss) -> auth() with the code: exchange -> an API call -> auth() again:
// refresh -> an API call; then a provider whose resource is another one (validateResourceURL)
// is refused with invalid_target at the authorization endpoint and at the token endpoint.
// No request ever goes to the registration endpoint.
//
// The server must fetch the document over https from 127.0.0.1, which only the test harness
// allows: run it against tests/examples/mcp_cimd_server.rs, whose ready line is the argument.
//
//   cargo run -p api-tests --example mcp_cimd_server > ready.json &
//   node tests/mcp_client/cimd_flow.mjs ready.json
//
// Exits non-zero on the first failure (scripts/test.sh runs it).

import { readFileSync } from "node:fs";
import { apiCall, check, consent, isInvalidTarget, sdkAuth } from "./common.mjs";

const { auth, extractWWWAuthenticateParams, discoverOAuthProtectedResourceMetadata, discoverAuthorizationServerMetadata } =
  sdkAuth;

if (!process.argv[2]) {
  console.error("usage: cimd_flow.mjs <ready line file of the mcp_cimd_server example>");
  process.exit(2);
}
const { base, clientMetadataUrl, redirectUri, email, password } = JSON.parse(readFileSync(process.argv[2], "utf8"));
check(base && clientMetadataUrl && redirectUri && email && password, `ready line: ${process.argv[2]}`);

/** Every URL the SDK requests (auth()'s fetchFn), to prove no registration happens. */
const requested = [];
const fetchFn = (url, init) => {
  requested.push(String(url));
  return fetch(url, init);
};

/** An in-memory OAuthClientProvider, as an MCP client keeps one per server. */
class Provider {
  constructor({ resource } = {}) {
    this.stored = {};
    this.stateValue = Math.random().toString(36).slice(2);
    if (resource) {
      // The SDK sends what this returns as the resource indicator (RFC 8707).
      this.validateResourceURL = async () => new URL(resource);
    }
  }
  get redirectUrl() {
    return redirectUri;
  }
  get clientMetadataUrl() {
    return clientMetadataUrl;
  }
  get clientMetadata() {
    // Only used for dynamic registration, which must not happen here.
    return { client_name: "must not register", redirect_uris: [redirectUri], token_endpoint_auth_method: "none" };
  }
  state() {
    return this.stateValue;
  }
  clientInformation() {
    return this.stored.client;
  }
  saveClientInformation(client) {
    this.stored.client = client;
  }
  tokens() {
    return this.stored.tokens;
  }
  saveTokens(tokens) {
    this.stored.tokens = tokens;
  }
  redirectToAuthorization(url) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier) {
    this.stored.verifier = verifier;
  }
  codeVerifier() {
    return this.stored.verifier;
  }
}

// Discovery from a 401 of the API.
const unauthorized = await fetch(`${base}/tags/task`);
check(unauthorized.status === 401, `GET /tags/task without a token: ${unauthorized.status}`);
const { resourceMetadataUrl } = extractWWWAuthenticateParams(unauthorized);
check(resourceMetadataUrl, `WWW-Authenticate names resource_metadata: ${unauthorized.headers.get("www-authenticate")}`);
const options = { serverUrl: base, resourceMetadataUrl, fetchFn };
// What auth() discovers, read here too for the checks.
const resourceMetadata = await discoverOAuthProtectedResourceMetadata(base, { resourceMetadataUrl });
const metadata = await discoverAuthorizationServerMetadata(resourceMetadata.authorization_servers[0]);
check(metadata?.client_id_metadata_document_supported === true, `client_id_metadata_document_supported: ${JSON.stringify(metadata)}`);

// Authorization: the SDK takes the document URL as client_id (no registration).
const provider = new Provider();
check((await auth(provider, options)) === "REDIRECT", "auth() starts an authorization");
check(provider.stored.client?.client_id === clientMetadataUrl, `the URL client_id: ${JSON.stringify(provider.stored.client)}`);
const authorizationUrl = provider.authorizationUrl;
check(authorizationUrl.searchParams.get("client_id") === clientMetadataUrl, `client_id sent: ${authorizationUrl}`);
check(authorizationUrl.searchParams.get("code_challenge_method") === "S256", `PKCE: ${authorizationUrl}`);
check(authorizationUrl.searchParams.get("resource") === resourceMetadata.resource, `resource sent: ${authorizationUrl}`);

// Consent: the page names the document's host; the answer carries state and iss.
const documentHost = new URL(clientMetadataUrl).hostname;
const answer = await consent(authorizationUrl, email, password, (html) =>
  check(html.includes(`<strong class="host">${documentHost}</strong>`), `the consent page shows ${documentHost}`),
);
check(answer.get("state") === provider.stateValue, `state returned: ${answer}`);
check(answer.get("iss") === metadata.issuer, `iss returned (RFC 9207): ${answer}`);
const code = answer.get("code");
check(code, `a code: ${answer}`);

// Exchange, call, refresh, call.
check((await auth(provider, { ...options, authorizationCode: code })) === "AUTHORIZED", "auth() exchanges the code");
const tokens = provider.stored.tokens;
check(tokens?.access_token && tokens.refresh_token, `tokens: ${JSON.stringify(tokens)}`);
check((await apiCall(base, tokens.access_token)) === 200, "API call with the access token");
check((await auth(provider, options)) === "AUTHORIZED", "auth() refreshes");
const refreshed = provider.stored.tokens;
check(refreshed.access_token !== tokens.access_token, "refresh returned a new access token");
check(refreshed.refresh_token !== tokens.refresh_token, "refresh rotated the refresh token");
check((await apiCall(base, refreshed.access_token)) === 200, "API call with the refreshed access token");

// Another resource is refused: at the authorization endpoint (a redirect with the error)...
const other = "https://other.example/";
const elsewhere = new Provider({ resource: other });
check((await auth(elsewhere, options)) === "REDIRECT", "auth() for another resource starts an authorization");
check(elsewhere.authorizationUrl.searchParams.get("resource") === other, `other resource sent: ${elsewhere.authorizationUrl}`);
const refused = await consent(elsewhere.authorizationUrl, email, password);
check(refused.get("error") === "invalid_target", `invalid_target at authorize: ${refused}`);
check(refused.get("iss") === metadata.issuer, `iss with the error: ${refused}`);
// ...and at the token endpoint, refreshing this client's grant for it.
elsewhere.stored.client = provider.stored.client;
elsewhere.stored.tokens = provider.stored.tokens;
let refusedAtToken = null;
try {
  await auth(elsewhere, options);
} catch (e) {
  refusedAtToken = e;
}
check(isInvalidTarget(refusedAtToken), `invalid_target at the token endpoint: ${refusedAtToken}`);
check((await apiCall(base, refreshed.access_token)) === 200, "the client's own token still works");

const registration = metadata.registration_endpoint;
check(!requested.some((url) => registration && url.startsWith(registration)), `no registration request: ${requested}`);

console.log(
  "MCP SDK OAuth flow with a Client ID Metadata Document passed: discovery from a 401, URL client_id, consent, exchange, refresh, API calls, invalid_target",
);
