// A real headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core) reads the
// reference page of a running workapi server (docs/conventions.md#the-reference-page):
//
//   node tests/browser/reference.mjs <base-url> <token> [screenshot.png]
//
// It opens {base}/docs, searches for an operation by words of its summary, pastes the token
// into the bearer scheme of the Authorize dialog, sends the call with "Execute" and checks the
// request carried the token and the page shows the 200. Throughout, it counts the requests to
// any other origin and the console errors (both must be zero), checks that the vendored assets
// come gzip-compressed and immutable, prints the page's weight, and keeps a screenshot (default
// target/test-artifacts/reference.png). Then, with JavaScript off, the page lists every
// operation of the document. scripts/test.sh runs it against the local server it starts.
// Exits non-zero on failure.

import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require(resolve(dirname(new URL(import.meta.url).pathname), '../../tools/playwright/node_modules/playwright-core'));

const [base, token, screenshotArg] = process.argv.slice(2);
if (!base || !token) {
  console.error('usage: node tests/browser/reference.mjs <base-url> <token> [screenshot.png]');
  process.exit(2);
}
const screenshot = resolve(screenshotArg ?? 'target/test-artifacts/reference.png');
const origin = new URL(base).origin;

function check(condition, message) {
  if (!condition) throw new Error(`FAILED: ${message}`);
}

// The operation the reader looks for, and the words they type.
const wanted = { method: 'GET', path: '/account/notifications/unread-count', search: 'unread count' };

const document = await (await fetch(`${base}/docs/json`)).json();
// The operations, not the webhooks: Swagger UI lists the document's `webhooks` (the event types,
// docs/events.md) in a section of their own, which the search leaves as it is.
const operations = '.swagger-ui .opblock:not(.webhooks .opblock)';
const operationCount = Object.values(document.paths)
  .flatMap((item) => Object.keys(item).filter((key) => ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'].includes(key)))
  .length;

// DESIGN §8: no background network of the browser's own, so every request counted is the page's.
const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const userDataDir = mkdtempSync(join(tmpdir(), 'workapi-chromium-'));
let context;
try {
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: chromiumArgs,
  });
  const foreign = [];
  const consoleErrors = [];
  const responses = [];
  context.on('request', (request) => {
    const url = new URL(request.url());
    // data: URLs (Swagger UI's icons) are no request to anyone.
    if (url.protocol !== 'data:' && url.origin !== origin) foreign.push(request.url());
  });
  context.on('response', (response) => responses.push(response));
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => consoleErrors.push(String(error)));

  const response = await page.goto(`${base}/docs`, { waitUntil: 'load' });
  check(response.status() === 200, `GET /docs: ${response.status()}`);
  check(response.headers()['content-type'].startsWith('text/html'), `GET /docs in a browser is HTML: ${response.headers()['content-type']}`);
  check(response.headers()['content-security-policy']?.includes("default-src 'none'"), 'the page has its Content-Security-Policy');
  await page.locator(operations).first().waitFor({ timeout: 30000 });
  check(await page.locator(operations).count() === operationCount, 'the page shows every operation before the search');
  check(await page.locator('#reference-fallback').count() === 0, 'the plain list of operations gives way to Swagger UI once it has loaded');

  // Search: the operation by two words of its summary, and nothing else.
  await page.getByRole('textbox', { name: 'Search operations' }).fill(wanted.search);
  await page.waitForFunction((selector) => document.querySelectorAll(selector).length === 1, operations, { timeout: 10000 });
  const shown = page.locator(operations);
  check((await shown.locator('.opblock-summary-method').innerText()) === wanted.method, 'the search finds the GET');
  check((await shown.locator('.opblock-summary-path').innerText()).replaceAll('\u200b', '') === wanted.path, `the search finds ${wanted.path}`);

  // Authorize with the reader's own token (the bearer scheme; the OAuth and registration
  // schemes stay empty).
  await page.locator('.swagger-ui .auth-wrapper button.authorize').click();
  const bearer = page.locator('.auth-container').filter({ has: page.locator('h4', { hasText: /^bearer\b/ }) });
  await bearer.locator('input').fill(token);
  await bearer.locator('button.authorize').click();
  check(await bearer.getByText('Authorized').count() > 0, 'the dialog says the bearer scheme is authorized');
  await page.locator('.dialog-ux button.close-modal').click();

  // Try it: expand the operation and execute the call.
  await shown.locator('.opblock-summary').first().click();
  const [call] = await Promise.all([
    page.waitForRequest((request) => request.url() === `${base}${wanted.path}` && request.method() === wanted.method, { timeout: 15000 }),
    shown.locator('button.execute').click(),
  ]);
  check((await call.allHeaders()).authorization === `Bearer ${token}`, 'the call carries the pasted token');
  const answer = await call.response();
  check(answer && answer.status() === 200, `the call answers 200: ${answer?.status()}`);
  const status = shown.locator('.live-responses-table tr.response .response-col_status').first();
  await status.waitFor({ timeout: 10000 });
  check((await status.innerText()).trim() === '200', `the page shows the 200: ${await status.innerText()}`);

  // The whole page: the search, the one operation found and the answer to the call. The token
  // shows in Swagger UI's curl box: masked, so the artifact holds no credential.
  mkdirSync(dirname(screenshot), { recursive: true });
  const answered = await shown.locator('.live-responses-table').boundingBox();
  const scrolled = await page.evaluate(() => window.scrollY);
  await page.screenshot({
    path: screenshot,
    fullPage: true,
    clip: { x: 0, y: 0, width: 1280, height: scrolled + answered.y + answered.height + 16 },
    mask: [page.locator('.curl-command')],
  });

  // The vendored assets: gzip-compressed, immutable under versioned URLs; and the weight.
  let transferred = 0;
  let decoded = 0;
  for (const asset of responses.filter((r) => r.url().startsWith(`${origin}/docs`) && r.request().resourceType() !== 'fetch' && r.request().resourceType() !== 'xhr' || r.url() === `${base}/docs/json`)) {
    const sizes = await asset.request().sizes();
    transferred += sizes.responseBodySize + sizes.responseHeadersSize;
    decoded += (await asset.body()).length;
    if (asset.url().includes('/docs/assets/swagger-ui')) {
      const headers = asset.headers();
      check(headers['content-encoding'] === 'gzip', `${asset.url()} is sent gzip-compressed`);
      check(headers['cache-control'] === 'public, max-age=31536000, immutable', `${asset.url()} is immutable: ${headers['cache-control']}`);
    }
  }
  check(foreign.length === 0, `requests to other origins: ${foreign.join(', ')}`);
  check(consoleErrors.length === 0, `console errors: ${consoleErrors.join(' | ')}`);
  console.log(`ok: Chromium found ${wanted.method} ${wanted.path} by "${wanted.search}" and called it with the token; `
    + `0 requests to other origins, 0 console errors; page weight (HTML, assets, document) `
    + `${transferred} bytes transferred, ${decoded} bytes decoded; screenshot ${screenshot}`);

  // Without JavaScript: every operation is listed.
  const fallback = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: chromiumArgs });
  try {
    const noJs = await fallback.newContext({ javaScriptEnabled: false });
    const listing = await noJs.newPage();
    await listing.goto(`${base}/docs`);
    const items = await listing.locator('main li').count();
    check(items === operationCount, `without JavaScript the page lists every operation: ${items} of ${operationCount}`);
    const listed = await listing.locator('main li code').allInnerTexts();
    check(listed.filter((text) => text === `${wanted.method} ${wanted.path}`).length === 1, `the list names method and path: ${listed.slice(0, 3)}`);
  } finally {
    await fallback.close();
  }
  console.log(`ok: without JavaScript the page lists all ${operationCount} operations`);
} finally {
  await context?.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
