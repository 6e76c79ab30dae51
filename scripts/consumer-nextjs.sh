#!/usr/bin/env bash
# The packed packages in a Next.js 16 app (docs/nextjs.md): `bash scripts/consumer-nextjs.sh PACKS_DIR` installs them
# into scripts/consumer/nextjs (app router, `useChat` in a client component, the agent server inside a route handler
# on PostgreSQL, created lazily), runs `next build` (which must not touch the database), `next start`, and the
# approval flow in Chromium (e2e/tests/nextjs.spec.ts, reload while paused included). Called by consumer-test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
packs=$1
step() { printf '\n› consumer (Next.js): %s\n' "$*"; }
pg_url=${INTERLUDE_TEST_PG_URL:-postgres://127.0.0.1:5432/postgres}
schema="nextjs_consumer_$$"
work=$(mktemp -d "${TMPDIR:-/tmp}/interlude-nextjs.XXXXXX")
next_pid=""
cleanup() {
  if [ -n "$next_pid" ]; then kill -- "-$next_pid" 2>/dev/null || true; fi
  if [ -f "$work/app/smoke.mjs" ]; then (cd "$work/app" && node smoke.mjs --pg "$pg_url" --drop "$schema" >/dev/null 2>&1) || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
export NEXT_TELEMETRY_DISABLED=1
# A URL without a user connects as the OS user, as the server does.
export PGUSER=${PGUSER:-$(id -un)}

step "npm install the tarballs into a Next.js 16 app"
app="$work/app"
cp -r scripts/consumer/nextjs "$app"
cp scripts/consumer/smoke.mjs "$app/"
(
  cd "$app"
  npm install --engine-strict --no-audit --no-fund --loglevel=error \
    "$packs"/interlude-protocol-*.tgz "$packs"/interlude-react-*.tgz "$packs"/interlude-agent-server-*.tgz
)

step "next build (prerenders the page; the route handler must not open the database)"
(cd "$app" && DATABASE_URL="$pg_url" INTERLUDE_DB_SCHEMA="$schema" npx next build)
schemas=$(cd "$app" && node -e "
  const pg = require('pg')
  const c = new pg.Client({ connectionString: process.argv[1] })
  c.connect()
    .then(() => c.query('select 1 from information_schema.schemata where schema_name = \$1', [process.argv[2]]))
    .then((r) => { console.log(r.rowCount); return c.end() })
" "$pg_url" "$schema")
if [ "$schemas" != "0" ]; then
  echo "next build created the schema $schema (found: '$schemas'): the store was not made lazily"
  exit 1
fi
echo "ok: next build left the database alone"

step "next start, then the approval flow in Chromium"
port=$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close() })")
DATABASE_URL="$pg_url" INTERLUDE_DB_SCHEMA="$schema" INTERLUDE_SESSION_SECRET="nextjs-consumer-secret-$$" \
  setsid bash -c 'cd "$1" && exec npx next start -H 127.0.0.1 -p "$2"' _ "$app" "$port" >"$work/next.log" 2>&1 &
next_pid=$!
for _ in $(seq 1 300); do
  if curl -sf "http://127.0.0.1:$port/" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$next_pid" 2>/dev/null; then break; fi
  sleep 0.2
done
if ! curl -sf "http://127.0.0.1:$port/" >/dev/null; then
  cat "$work/next.log"
  exit 1
fi
status=0
NEXT_APP_URL="http://127.0.0.1:$port" E2E_SKIP_BUILD=1 pnpm --filter @interlude/e2e exec playwright test --project nextjs \
  --reporter=list || status=$?
if [ "$status" -ne 0 ]; then
  cat "$work/next.log"
  exit "$status"
fi
echo "› consumer (Next.js): all good"
