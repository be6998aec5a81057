// The MCP endpoint as an MCP client uses it, with the MCP TypeScript SDK's own client
// (@modelcontextprotocol/sdk, pinned in tools/mcp-client): its Streamable HTTP transport meets
// the 401 of /mcp, and its OAuth provider interface discovers the MCP resource's metadata,
// registers, authorizes with PKCE and the resource {base}/mcp (the consent form is posted as the
// demo admin), exchanges the code; then the client connects (2025-11-25 initialize, stateless:
// no session id), lists the default surface (at most 15 tools, the two reaching tools among
// them, each a documented bearer operation otherwise), searches for an operation, calls a read,
// a create through callOperation (then visible through the REST API with the personal access
// token) and a failing call (isError with the API's error body); then lists the tags toolset
// at /mcp/x/tags and sees a write refused at /mcp/readonly, with the same token. The token it
// got is bound to {base}/mcp: the REST API refuses it.
//
//   node tests/mcp_client/tools_flow.mjs http://127.0.0.1:3000 admin@demo.example <password> <PAT>
//
// Exits non-zero on the first failure. scripts/test.sh runs it against the local server.

import { check, consent, sdkModule } from "./common.mjs";

const { Client } = await sdkModule("client/index.js");
const { StreamableHTTPClientTransport } = await sdkModule("client/streamableHttp.js");
const { UnauthorizedError } = await sdkModule("client/auth.js");

const [base, email, password, pat] = process.argv.slice(2);
if (!base || !email || !password || !pat) {
  console.error("usage: tools_flow.mjs <base URL> <e-mail> <password> <personal access token>");
  process.exit(2);
}
const REDIRECT = "http://127.0.0.1:8978/callback";
const endpoint = new URL(`${base}/mcp`);

/** The SDK's OAuthClientProvider, in memory; the "browser" is the consent form, posted here. */
class Provider {
  constructor() {
    this.code = undefined;
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: `MCP SDK tools flow ${Math.random().toString(36).slice(2, 8)}`,
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: "api:read api:write",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  async redirectToAuthorization(url) {
    check(url.searchParams.get("resource") === endpoint.href, `the resource is the MCP endpoint: ${url}`);
    const answer = await consent(url.href, email, password);
    this.code = answer.get("code");
    check(this.code, `a code: ${answer}`);
  }
}

const provider = new Provider();
const first = new Client({ name: "workapi-tools-flow", version: "1.0.0" });
try {
  await first.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
  check(false, "connecting without a token must need authorization");
} catch (error) {
  check(error instanceof UnauthorizedError, `UnauthorizedError, not ${error}`);
}
const authorizing = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
await authorizing.finishAuth(provider.code);
check(provider.saved?.access_token, "tokens saved");

const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
const client = new Client({ name: "workapi-tools-flow", version: "1.0.0" });
await client.connect(transport);
check(transport.sessionId === undefined, `no session id: ${transport.sessionId}`);
check(client.getServerVersion()?.name === "workapi", `server info: ${JSON.stringify(client.getServerVersion())}`);

// The default surface: a few documented bearer operations and the two tools that reach the rest.
const document = await (await fetch(`${base}/docs/json`)).json();
const documented = new Set();
for (const item of Object.values(document.paths)) {
  for (const operation of Object.values(item)) {
    const bearer = (operation.security ?? []).some((requirement) => "bearer" in requirement);
    const body = operation.requestBody?.content;
    if (bearer && (!body || "application/json" in body)) documented.add(operation.operationId);
  }
}
const REACHING = ["searchOperations", "callOperation"];
const { tools } = await client.listTools();
const names = tools.map((tool) => tool.name);
check(tools.length <= 15, `at most 15 tools by default: ${names}`);
check(JSON.stringify(names.slice(0, 2)) === JSON.stringify(REACHING), `the reaching tools first: ${names}`);
check(names.slice(2).every((name) => documented.has(name)), `documented operations: ${names}`);
const size = JSON.stringify(tools).length;
check(size <= 16 * 1024, `the default tools are ${size} bytes`);
console.log(`MCP TypeScript SDK: default surface ${tools.length} tools, ${size} bytes`);

// Search finds an operation the default surface does not list, with its input schema.
const found = await client.callTool({ name: "searchOperations", arguments: { query: "create tag" } });
const createTag = found.structuredContent?.operations?.find((operation) => operation.operationId === "createTag");
check(!found.isError && createTag?.inputSchema?.properties?.name, `searchOperations: ${JSON.stringify(found)}`);
check(createTag.scope === "api:write" && createTag.access === "write", `the scope: ${JSON.stringify(createTag)}`);

// A read.
const listed = await client.callTool({ name: "listTags", arguments: { type: "task" } });
check(!listed.isError && Array.isArray(listed.structuredContent?.result), `listTags: ${JSON.stringify(listed)}`);

// A create through callOperation, visible through the REST API.
const call = (operationId, args) => ({ name: "callOperation", arguments: { operationId, arguments: args } });
const name = `Via the TS SDK ${Math.random().toString(36).slice(2, 8)}`;
const created = await client.callTool(call("createTag", { type: "task", name }));
check(!created.isError && created.structuredContent?.name === name, `createTag: ${JSON.stringify(created)}`);
check(JSON.parse(created.content[0].text).id === created.structuredContent.id, "the JSON as text");
const restTags = async () => (await fetch(`${base}/tags/task`, { headers: { authorization: `Bearer ${pat}` } })).json();
check((await restTags()).some((tag) => tag.id === created.structuredContent.id), "the created tag over REST");

// A failing call: isError with the API's error body.
const failed = await client.callTool(call("createTag", { type: "task", name: "" }));
check(failed.isError === true, `isError: ${JSON.stringify(failed)}`);
check(failed.structuredContent?.statusCode === 400 && failed.structuredContent.errors?.name, `the error body: ${JSON.stringify(failed)}`);
await client.close();

// A toolset lists its tools in full, with the same token (every URL is the resource {base}/mcp).
const tagsClient = new Client({ name: "workapi-tools-flow", version: "1.0.0" });
await tagsClient.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/x/tags`), { authProvider: provider }));
const tagTools = (await tagsClient.listTools()).tools.map((tool) => tool.name);
const expectedTags = [...REACHING, "listTags", "createTag", "deleteTag", "saveTagColor"];
check(JSON.stringify(tagTools) === JSON.stringify(expectedTags), `the tags toolset: ${tagTools}`);
await tagsClient.close();

// Read-only: a write is refused, through callOperation too, and nothing is written.
const reader = new Client({ name: "workapi-tools-flow", version: "1.0.0" });
await reader.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/readonly`), { authProvider: provider }));
const readTools = (await reader.listTools()).tools;
check(readTools.every((tool) => tool.annotations?.readOnlyHint === true), "read-only lists reads only");
const refusedName = `Refused ${Math.random().toString(36).slice(2, 8)}`;
const refused = await reader.callTool(call("createTag", { type: "task", name: refusedName }));
check(refused.isError === true && refused.structuredContent?.statusCode === 403, `read-only refuses: ${JSON.stringify(refused)}`);
check(!(await restTags()).some((tag) => tag.name === refusedName), "nothing written on the read-only URL");
await reader.close();

// The token is bound to the MCP resource: the REST API refuses it.
const bound = await fetch(`${base}/tags/task`, { headers: { authorization: `Bearer ${provider.saved.access_token}` } });
check(bound.status === 401, `an MCP token on the REST API: ${bound.status}`);

console.log("MCP TypeScript SDK: connect, default surface, search, read, callOperation create, failing call, toolset, read-only: ok");
