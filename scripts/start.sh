#!/usr/bin/env bash
# The README main command: set up, build, and run the agent server with the workbench on SQLite
# with the offline scripted model (OpenAI when OPENAI_API_KEY is set).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh

if [ ! -f packages/agent-server/bin/interlude-server.js ]; then
  cat >&2 <<'MSG'
Interlude's agent server is not built yet (see README "Status").
The plan: this command will build the workbench and start
  interlude-server --db .data/interlude.db --static apps/workbench/dist
on http://127.0.0.1:8787 with the scripted release-assistant model.
MSG
  exit 2
fi
