// A real headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core) opens an
// issued invoice as a person reads it (docs/billing.md, "The invoice as a page"):
//
//   node tests/browser/invoice.mjs <base-url> <token> <invoice id> <recipient> <total> [screenshot.png]
//
// It opens {base}/billing/invoices/{id} with the token (sent as a header on every request,
// as an API client's browser would) and checks that the page is HTML under its
// Content-Security-Policy and `Cache-Control: private`, that the recipient's name and the
// total (as printed, e.g. "586.67 EUR") are visible, that the net, tax and total rows are
// there, that nothing was requested from any other origin and that the console shows no error
// (a blocked style, a refused request). Keeps a screenshot (default
// target/test-artifacts/invoice.png). scripts/test.sh issues the demo seed's November time
// invoice and runs it against the local server it starts. Exits non-zero on failure.

import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require(resolve(dirname(new URL(import.meta.url).pathname), '../../tools/playwright/node_modules/playwright-core'));

const [base, token, invoiceId, recipient, total, screenshotArg] = process.argv.slice(2);
if (!base || !token || !invoiceId || !recipient || !total) {
  console.error('usage: node tests/browser/invoice.mjs <base-url> <token> <invoice id> <recipient> <total> [screenshot.png]');
  process.exit(2);
}
const screenshot = resolve(screenshotArg ?? 'target/test-artifacts/invoice.png');
const origin = new URL(base).origin;

function check(condition, message) {
  if (!condition) throw new Error(`FAILED: ${message}`);
}

// DESIGN §8: no background network of the browser's own, so every request counted is the page's.
const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const userDataDir = mkdtempSync(join(tmpdir(), 'workapi-chromium-'));
let context;
try {
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1000, height: 800 },
    args: chromiumArgs,
    extraHTTPHeaders: { Authorization: `Bearer ${token}` },
  });
  const requests = [];
  const foreign = [];
  const consoleErrors = [];
  context.on('request', (request) => {
    requests.push(request.url());
    const url = new URL(request.url());
    if (url.protocol !== 'data:' && url.origin !== origin) foreign.push(request.url());
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => consoleErrors.push(String(error)));

  const url = `${base}/billing/invoices/${invoiceId}`;
  const response = await page.goto(url, { waitUntil: 'load' });
  check(response.status() === 200, `GET ${url}: ${response.status()} ${await response.text()}`);
  const headers = response.headers();
  check(headers['content-type'] === 'text/html; charset=utf-8', `the invoice in a browser is HTML: ${headers['content-type']}`);
  check(headers['content-security-policy']?.startsWith("default-src 'none'; style-src 'sha256-"), `the page's policy: ${headers['content-security-policy']}`);
  check(headers['cache-control']?.startsWith('private'), `kept by the reader's browser only: ${headers['cache-control']}`);

  // What a person looks for: who it is addressed to and what it costs.
  const heading = (await page.locator('h1').innerText()).trim();
  check(/^Invoice \S+$/.test(heading), `the heading names the invoice: ${heading}`);
  const address = page.locator('#recipient address');
  check(await address.isVisible(), 'the recipient is visible');
  check((await address.innerText()).includes(recipient), `the recipient reads ${recipient}: ${await address.innerText()}`);
  const totals = page.locator('#totals');
  check(await totals.isVisible(), 'the totals are visible');
  const rows = (await totals.locator('tr').allInnerTexts()).map((row) => row.replace(/\s+/g, ' ').trim());
  check(rows.length === 3 && rows[0].startsWith('Net ') && rows[1].startsWith('Tax ') && rows[2].startsWith('Total '), `net, tax and total: ${rows}`);
  check(rows[2] === `Total ${total}`, `the total reads ${total}: ${rows[2]}`);
  check(await page.locator('#lines tbody tr').count() > 0, 'the lines are listed');
  // The inline style sheet applied (its hash is in the policy): the totals' last row is bold.
  const weight = await totals.locator('tr.total td').evaluate((cell) => getComputedStyle(cell).fontWeight);
  check(Number(weight) >= 700, `the page's style applies under its policy: the total's weight is ${weight}`);

  mkdirSync(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });

  check(foreign.length === 0, `requests to other origins: ${foreign.join(', ')}`);
  check(requests.filter((r) => !r.startsWith('data:')).length === 1, `one request, the page's own: ${requests.join(', ')}`);
  check(consoleErrors.length === 0, `console errors: ${consoleErrors.join(' | ')}`);
  console.log(`ok: Chromium shows invoice ${heading.replace('Invoice ', '')} to ${recipient}, ${rows[2]}; `
    + `1 request, 0 to other origins, 0 console errors; screenshot ${screenshot}`);
} finally {
  await context?.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
