#!/usr/bin/env bash
# The consumer test on Node 24 with the newest peer majors (docs/decisions.md#platforms): `bash
# scripts/consumer-node24.sh PACKS_DIR` installs the packed tarballs with `better-sqlite3@latest` and `openai@latest`
# into a fresh app on Node 24 (--engine-strict), typechecks it, opens the SQLite store, serves a run from the CLI on
# SQLite, and one through `--model openai` against a local OpenAI-compatible server. Called by consumer-test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
packs=$1
step() { printf '\n› consumer (Node 24): %s\n' "$*"; }

node24="$(bash scripts/node24.sh)"
export PATH="$node24/bin:$PATH"
# better-sqlite3 compiles when no prebuilt binary can be downloaded: against Node 24's own headers.
export npm_config_nodedir="$node24"
work=$(mktemp -d "${TMPDIR:-/tmp}/interlude-consumer24.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

step "npm install the tarballs with better-sqlite3@latest and openai@latest on $(node -v)"
app="$work/app"
mkdir -p "$app/src"
cp scripts/consumer/package.json scripts/consumer/tsconfig.*.json scripts/consumer/smoke.mjs scripts/consumer/run-once.mjs \
  scripts/consumer/fake-openai.mjs "$app/"
cp scripts/consumer/src/* "$app/src/"
(
  cd "$app"
  npm install --engine-strict --no-audit --no-fund --loglevel=error better-sqlite3@latest openai@latest \
    "$packs"/interlude-protocol-*.tgz "$packs"/interlude-react-*.tgz "$packs"/interlude-agent-server-*.tgz \
    "$packs"/interlude-client-*.tgz
  echo "installed better-sqlite3 $(node -p "JSON.parse(require('fs').readFileSync('node_modules/better-sqlite3/package.json', 'utf8')).version"), openai $(node -p "JSON.parse(require('fs').readFileSync('node_modules/openai/package.json', 'utf8')).version")"
)

step "tsc (node16, skipLibCheck: false)"
(cd "$app" && npx tsc -p tsconfig.node16.json)

step "every entry imports; the SQLite store opens with the newest better-sqlite3"
(cd "$app" && node smoke.mjs --with-sqlite)

# Starts `interlude-server ARGS…` in its own process group and sets `url` once it is listening. Not called in a
# command substitution: that subshell would lose the pid, and the cleanup would leave the server running.
serve() {
  local log="$work/cli-$RANDOM.log"
  setsid bash -c 'cd "$1" && shift && exec npx --no-install interlude-server --port 0 --host 127.0.0.1 "$@"' _ "$app" "$@" \
    >"$log" 2>&1 &
  pids+=("$!")
  for _ in $(seq 1 300); do
    if grep -q 'listening on' "$log"; then break; fi
    if ! kill -0 "${pids[-1]}" 2>/dev/null; then break; fi
    sleep 0.1
  done
  if ! grep -q 'listening on' "$log"; then
    cat "$log" >&2
    return 1
  fi
  url=$(grep -o 'http://[^ ]*' "$log" | head -n1)
}

step "the CLI on SQLite (better-sqlite3 $(cd "$app" && node -p "JSON.parse(require('fs').readFileSync('node_modules/better-sqlite3/package.json', 'utf8')).version")) serves a run"
serve --db "$work/agent.db" --pacing-ms 0
(cd "$app" && node run-once.mjs "$url" "hello" "")

step "the CLI with --model openai (openai $(cd "$app" && node -p "JSON.parse(require('fs').readFileSync('node_modules/openai/package.json', 'utf8')).version")) against a local OpenAI-compatible server"
setsid node "$app/fake-openai.mjs" >"$work/fake.log" 2>&1 &
pids+=("$!")
for _ in $(seq 1 100); do
  if grep -q 'http://' "$work/fake.log"; then break; fi
  sleep 0.1
done
base=$(head -n1 "$work/fake.log")
export OPENAI_API_KEY=test OPENAI_BASE_URL="$base"
serve --db "$work/openai.db" --model openai
(cd "$app" && node run-once.mjs "$url" "hello" "the fake model")
echo "› consumer (Node 24): all good"
