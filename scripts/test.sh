#!/usr/bin/env bash
# The README test command: set up everything, then typecheck, lint, unit/integration tests
# (real HTTP servers, SQLite files, PostgreSQL) and the Playwright e2e suite in real Chromium.
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
if [ "$vitest_status" -ne 0 ] || [ "$e2e_status" -ne 0 ] || [ "$consumer_status" -ne 0 ]; then exit 1; fi
