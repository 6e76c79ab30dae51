#!/usr/bin/env node
// Node 20 cannot run TypeScript: the CLI runs from the build (`pnpm --filter @interlude/agent-server build`).
import '../dist/cli.js'
