#!/usr/bin/env bash
# Runs the Lambda functions under `cargo lambda watch` (hot reload) on http://127.0.0.1:9000,
# with the real paths (router in the root Cargo.toml), on the local server's data directory:
# its embedded store, token key and session keys (so tokens printed by
# `cargo run -p local -- serve`, and sessions from its login, work here too), its uploaded
# files (`files/`) and its secrets (`secrets/`), as the local server defaults them.
# The functions are built with the feature `watch` of the kit (workapi-kit) (`-F workapi-kit/watch`): the embedded
# store, and the Function URL (API Gateway v2) events the emulator sends. Deployed builds
# (template.yaml, `cargo lambda build`) never enable it and parse REST API events only.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-lambda >/dev/null || { echo "install cargo-lambda: pip install cargo-lambda==1.9.2" >&2; exit 1; }
data_dir="${LT_DATA_DIR:-$PWD/.workapi}"
if [ ! -f "$data_dir/token.key" ]; then
  echo "no $data_dir/token.key yet: run 'cargo run -p local -- serve' once to create the store and a token" >&2
  exit 1
fi
export LT_STORE="sqlite:$data_dir/local.db"
LT_TOKEN_KEY="$(cat "$data_dir/token.key")"
export LT_TOKEN_KEY
if [ ! -f "$data_dir/session-keys.json" ]; then
  echo "no $data_dir/session-keys.json yet: run 'cargo run -p local -- serve' once to create it" >&2
  exit 1
fi
LT_SESSION_KEYS="$(cat "$data_dir/session-keys.json")"
export LT_SESSION_KEYS
export LT_OBJECTS="dir:$data_dir"
export LT_SECRETS="dir:$data_dir/secrets"
export AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH=true
exec cargo lambda watch -A 127.0.0.1 -P "${LT_WATCH_PORT:-9000}" -F workapi-kit/watch "$@"
