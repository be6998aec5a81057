// What the MCP SDK flows (oauth_flow.mjs: dynamic registration; cimd_flow.mjs: a Client ID
// Metadata Document) share: the SDK's auth module from tools/mcp-client, the consent step a user
// does in a browser, and the checks.

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../../tools/mcp-client/package.json"));
export const sdkAuth = await import(require.resolve("@modelcontextprotocol/sdk/client/auth.js"));
/** Another module of the pinned SDK, e.g. `client/index.js`. */
export const sdkModule = (path) => import(require.resolve(`@modelcontextprotocol/sdk/${path}`));

/** Exits non-zero with the message unless `condition` holds. */
export function check(condition, message) {
  if (!condition) {
    console.error(`FAILED: ${message}`);
    process.exit(1);
  }
}

const unescape = (s) =>
  s.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");

/**
 * Opens the consent page, posts it approved as `email`, returns the redirect's query. Returns
 * the page's own answer when it redirects at once (an error such as invalid_target). `onPage`
 * sees the consent page's HTML.
 */
export async function consent(authorizationUrl, email, password, onPage = () => {}) {
  const page = await fetch(authorizationUrl, { redirect: "manual" });
  if (page.status === 302) {
    return new URL(page.headers.get("location")).searchParams;
  }
  const html = await page.text();
  check(page.status === 200, `consent page: ${page.status} ${html}`);
  onPage(html);
  const action = unescape(html.match(/<form method="post" action="([^"]*)"/)[1]);
  const form = new URLSearchParams();
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.append(name, unescape(value));
  }
  form.append("email", email);
  form.append("password", password);
  form.append("decision", "approve");
  const approved = await fetch(action, { method: "POST", body: form, redirect: "manual" });
  check(approved.status === 302, `approval: ${approved.status} ${await approved.text()}`);
  return new URL(approved.headers.get("location")).searchParams;
}

/** The status of an API call with `token`. */
export async function apiCall(base, token) {
  const response = await fetch(`${base}/tags/task`, { headers: { authorization: `Bearer ${token}` } });
  return response.status;
}

/** True when `error` (thrown by the SDK's token request) is the server's invalid_target. */
export function isInvalidTarget(error) {
  return Boolean(
    error &&
      (error.errorCode === "invalid_target" ||
        String(error).includes("invalid_target") ||
        String(error.message).includes("resource must be this API")),
  );
}
