#!/usr/bin/env bash
# The packages as an outsider gets them: build, `pnpm pack` each one, lint the packages (publint,
# @arethetypeswrong/cli), then `npm install` the tarballs into a fresh app with --engine-strict and
# check that it typechecks (node16 and bundler, skipLibCheck: false), builds with Vite, imports every
# entry in Node and starts the CLI. Needs the npm registry and (for the CLI) PostgreSQL.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
step() { printf '\n› consumer: %s\n' "$*"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/interlude-consumer.XXXXXX")
cli_pid=""
cleanup() {
  if [ -n "$cli_pid" ]; then kill -- "-$cli_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

step "build the packages from a clean dist (a stale file would be packed)"
rm -rf packages/protocol/dist packages/react/dist packages/agent-server/dist packages/client/dist
pnpm -r --filter "./packages/**" run build >/dev/null

step "pack each package (pnpm pack turns workspace:* into versions)"
mkdir -p "$work/packs"
for pkg in protocol react agent-server client; do
  (cd "packages/$pkg" && pnpm pack --pack-destination "$work/packs" >/dev/null)
done
ls -1 "$work/packs"

step "publint --strict on every package"
for pkg in protocol react agent-server client; do
  (cd "packages/$pkg" && "$root/node_modules/.bin/publint" --strict --pack pnpm)
done

step "@arethetypeswrong/cli on every tarball (ESM only: the CommonJS rows are informational)"
for tarball in "$work"/packs/*.tgz; do
  "$root/node_modules/.bin/attw" "$tarball" --profile esm-only --format table-flipped
done

step "npm install the tarballs into a fresh app (--engine-strict; better-sqlite3 deliberately absent)"
app="$work/app"
mkdir -p "$app/src"
cp scripts/consumer/package.json scripts/consumer/tsconfig.*.json scripts/consumer/index.html scripts/consumer/smoke.mjs "$app/"
cp scripts/consumer/src/* "$app/src/"
(
  cd "$app"
  npm install --engine-strict --no-audit --no-fund --loglevel=error \
    "$work"/packs/interlude-protocol-*.tgz "$work"/packs/interlude-react-*.tgz "$work"/packs/interlude-agent-server-*.tgz \
    "$work"/packs/interlude-client-*.tgz
)

step "tsc, moduleResolution node16, skipLibCheck: false"
(cd "$app" && npx tsc -p tsconfig.node16.json)
step "tsc, moduleResolution bundler, skipLibCheck: false"
(cd "$app" && npx tsc -p tsconfig.bundler.json)

step "vite build of a page using useChat"
(cd "$app" && npx vite build --logLevel warn)
grep -l "useChat\|interlude" "$app"/dist/assets/*.js >/dev/null

step "Node ESM import of every entry (no optional peer loaded at import)"
(cd "$app" && node smoke.mjs)

step "the CLI without better-sqlite3 names the package to install"
set +e
missing=$(cd "$app" && npx --no-install interlude-server --port 0 --db "$work/cli.db" 2>&1)
status=$?
set -e
if [ "$status" -eq 0 ] || ! grep -q 'optional peer dependency "better-sqlite3"' <<<"$missing"; then
  echo "expected a named better-sqlite3 error, got (exit $status):"
  echo "$missing"
  exit 1
fi
echo "ok: $(grep -m1 'better-sqlite3' <<<"$missing")"

step "a blocked build script and better-sqlite3 13 on Node 20 get a sentence, not a crash"
# --ignore-scripts installs better-sqlite3 without its native build, as pnpm does until the build is approved.
(cd "$app" && npm install --no-save --ignore-scripts --no-audit --no-fund --loglevel=error better-sqlite3@^12.11.1)
expect_sentence() {
  local pattern=$1 out status
  set +e
  out=$(cd "$app" && npx --no-install interlude-server --port 0 --db "$work/cli.db" 2>&1)
  status=$?
  set -e
  if [ "$status" -ne 1 ] || ! grep -q "$pattern" <<<"$out" || grep -q 'Segmentation\|^\s*at ' <<<"$out"; then
    echo "expected exit 1 and \"$pattern\", got (exit $status):"
    echo "$out"
    exit 1
  fi
  echo "ok: $(grep -m1 "$pattern" <<<"$out")"
}
expect_sentence 'pnpm approve-builds'
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 22 ]; then
  (cd "$app" && npm install --no-save --ignore-scripts --no-audit --no-fund --loglevel=error better-sqlite3@13)
  expect_sentence 'needs Node.js 22 or newer'
fi
rm -rf "$app/node_modules/better-sqlite3"

step "Node 24 with the newest peer majors (scripts/consumer-node24.sh)"
bash scripts/consumer-node24.sh "$work/packs"

pg_url=${INTERLUDE_TEST_PG_URL:-postgres://127.0.0.1:5432/postgres}
if ! (cd "$app" && node smoke.mjs --pg "$pg_url" >/dev/null 2>&1); then
  if [ "${CI:-}" = "true" ] || [ "${CI:-}" = "1" ]; then
    echo "PostgreSQL at $pg_url is unreachable (CI=true)"
    exit 1
  fi
  echo "!!! SKIPPED: starting the CLI — PostgreSQL is unreachable at $pg_url"
  exit 0
fi

step "Next.js 16: next build, next start, the approval flow in Chromium (scripts/consumer-nextjs.sh)"
bash scripts/consumer-nextjs.sh "$work/packs"

step "npx interlude-server --port 0 on PostgreSQL (pg installed as the optional peer)"
schema="consumer_$$"
# Its own session, so that killing the group also ends the node process npx starts.
# Cookie mode on PostgreSQL needs the shared session secret (README "Sessions and secrets").
INTERLUDE_SESSION_SECRET="consumer-test-secret-$$" setsid bash -c 'cd "$1" && exec npx --no-install interlude-server --port 0 --host 127.0.0.1 --db "$2" --db-schema "$3"' \
  _ "$app" "$pg_url" "$schema" >"$work/cli.log" 2>&1 &
cli_pid=$!
for _ in $(seq 1 300); do
  if grep -q 'listening on' "$work/cli.log"; then break; fi
  if ! kill -0 "$cli_pid" 2>/dev/null; then break; fi
  sleep 0.1
done
cat "$work/cli.log"
grep -q 'listening on' "$work/cli.log"
kill -- "-$cli_pid"
wait "$cli_pid" 2>/dev/null || true
cli_pid=""
(cd "$app" && node smoke.mjs --pg "$pg_url" --drop "$schema")
echo "› consumer: all good"
