#!/usr/bin/env bash
# The vitest suite a second time on Node 24 (docs/decisions.md#platforms). The tree is copied (tracked and new files,
# no node_modules) to .cache/node24-tree and installed there with Node 24 first in PATH, so better-sqlite3 is built for
# Node 24's ABI without touching the Node 20 install. The JSON report lands in .vitest-results-node24.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
# A report of an earlier run must never count for this one.
rm -f "$root/.vitest-results-node24.json"
node24="$(bash scripts/node24.sh)"
tree="$root/.cache/node24-tree"
mkdir -p "$tree"
git ls-files -z --cached --others --exclude-standard | rsync -a --delete-missing-args --from0 --files-from=- ./ "$tree/"
cd "$tree"
export PATH="$node24/bin:$PATH"
export npm_config_nodedir="$node24"
echo "  $(node -v) in $tree"
install_log="$(mktemp)"
if ! pnpm install --frozen-lockfile --reporter=append-only >"$install_log" 2>&1; then
  cat "$install_log" >&2
  echo "pnpm install on Node 24 failed" >&2
  exit 1
fi
rm -f "$install_log"
pnpm -r --filter "./packages/**" run build >/dev/null
pnpm exec vitest run --reporter=default --reporter=json --outputFile.json="$root/.vitest-results-node24.json"
