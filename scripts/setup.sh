#!/usr/bin/env bash
# Shared set-up for the README commands: a fresh machine with only Node >= 20.19 and npm.
# Installs pnpm 12.4.2 if missing and the workspace dependencies (better-sqlite3 compiles here).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PNPM_VERSION=12.4.2
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm -v 2>/dev/null)" != "$PNPM_VERSION" ]; then
  echo "› installing pnpm@$PNPM_VERSION"
  if ! npm install -g "pnpm@$PNPM_VERSION" >/dev/null 2>&1; then
    # No write access to the global prefix: install under the user's home instead.
    npm install -g --prefix "$HOME/.local" "pnpm@$PNPM_VERSION" >/dev/null
    export PATH="$HOME/.local/bin:$PATH"
  fi
fi

# node-gyp cannot download headers here; Node's own headers live under /usr/include/node.
if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node_version.h ]; then
  export npm_config_nodedir=/usr
fi

echo "› pnpm install"
install_log="$(mktemp)"
if ! pnpm install --frozen-lockfile --reporter=append-only >"$install_log" 2>&1; then
  cat "$install_log" >&2
  echo "pnpm install failed" >&2
  exit 1
fi
grep -vE '^\.\.\./.*(install|postinstall): ' "$install_log" | tail -n 5 || true
rm -f "$install_log"

echo "› building packages"
pnpm -r --filter "./packages/**" run build
