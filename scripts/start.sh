#!/usr/bin/env bash
# The README main command: set up, build the workbench, and run the agent server serving it, on
# SQLite with the offline scripted model (OpenAI when OPENAI_API_KEY is set).
#   HOST (default 127.0.0.1), PORT (default 8787), INTERLUDE_DB (default .data/interlude.db)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh

echo "› building the workbench"
pnpm --filter @interlude/workbench run build >/dev/null

model=scripted
if [ -n "${OPENAI_API_KEY:-}" ]; then model=openai; fi
db="${INTERLUDE_DB:-.data/interlude.db}"
mkdir -p "$(dirname "$db")"

echo "› starting interlude-server (model: $model, db: $db)"
exec node packages/agent-server/bin/interlude-server.js \
  --host "${HOST:-127.0.0.1}" --port "${PORT:-8787}" \
  --db "$db" --model "$model" \
  --static apps/workbench/dist
