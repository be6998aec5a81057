// A real headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core) signs in and
// approves on the OAuth consent page of a running workapi server:
//
//   node tests/browser/consent.mjs <base-url> <email> <password> [screenshot.png]
//
// It registers a public client whose redirect URI is a loopback listener started here (any
// port is allowed for loopback), opens the authorization URL (PKCE S256), fills in e-mail and
// password by their labels, keeps a screenshot of the filled-in page (default
// target/test-artifacts/consent.png), clicks Approve, checks that the browser lands on the
// redirect URI with a code and the state, and redeems the code for tokens that work on the
// API. scripts/test.sh runs it against the local server it starts. Exits non-zero on failure.

import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require(resolve(dirname(new URL(import.meta.url).pathname), '../../tools/playwright/node_modules/playwright-core'));

const [base, email, password, screenshotArg] = process.argv.slice(2);
if (!base || !email || !password) {
  console.error('usage: node tests/browser/consent.mjs <base-url> <email> <password> [screenshot.png]');
  process.exit(2);
}
const screenshot = resolve(screenshotArg ?? 'target/test-artifacts/consent.png');

function check(condition, message) {
  if (!condition) throw new Error(`FAILED: ${message}`);
}

const b64url = (bytes) => Buffer.from(bytes).toString('base64url');

// The loopback redirect target: records the callback, answers with a small page.
const callbacks = [];
const listener = createServer((req, res) => {
  callbacks.push(req.url);
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end('<!doctype html><html lang="en"><title>Callback</title><h1>Back at the application</h1></html>');
});
await new Promise((ok) => listener.listen(0, '127.0.0.1', ok));
const redirectUri = `http://127.0.0.1:${listener.address().port}/callback`;

const userDataDir = mkdtempSync(join(tmpdir(), 'workapi-chromium-'));
let context;
try {
  const clientName = `Browser test client ${randomBytes(3).toString('hex')}`;
  const registered = await fetch(`${base}/api/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: clientName, redirect_uris: ['http://127.0.0.1/callback'] }),
  });
  check(registered.status === 201, `registration: ${registered.status}`);
  const client = await registered.json();

  const verifier = b64url(randomBytes(48));
  const challenge = b64url(createHash('sha256').update(verifier).digest());
  const state = b64url(randomBytes(12));
  const authorize = new URL(`${base}/api/oauth/authorize`);
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    scope: 'api:read api:write',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })) {
    authorize.searchParams.set(name, value);
  }

  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const response = await page.goto(authorize.toString());
  check(response.status() === 200, `consent page status ${response.status()}`);
  check((await page.locator('h1').innerText()).includes(clientName), 'the heading names the client');
  check((await page.getAttribute('html', 'lang')) === 'en', 'the page declares its language');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  mkdirSync(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });

  await Promise.all([
    page.waitForURL((url) => url.toString().startsWith(redirectUri), { timeout: 30000 }),
    page.getByRole('button', { name: 'Approve' }).click(),
  ]);
  const landed = new URL(page.url());
  const code = landed.searchParams.get('code');
  check(code, `a code in ${landed}`);
  check(landed.searchParams.get('state') === state, 'the state comes back');
  // (The browser may also ask the listener for /favicon.ico.)
  const calls = callbacks.filter((url) => url.startsWith('/callback?'));
  check(calls.length === 1 && calls[0].includes(`code=${encodeURIComponent(code)}`), `the redirect URI was called once: ${callbacks}`);

  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    code_verifier: verifier,
    client_id: client.client_id,
  });
  const token = await fetch(`${base}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  check(token.status === 200, `token: ${token.status}`);
  const tokens = await token.json();
  const api = await fetch(`${base}/tags/task`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  check(api.status === 200, `API call with the access token: ${api.status}`);
  console.log(`ok: Chromium signed in and approved; screenshot ${screenshot}`);
} finally {
  await context?.close();
  listener.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
