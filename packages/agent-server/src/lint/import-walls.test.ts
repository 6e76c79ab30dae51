import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ESLint } from 'eslint'
import { describe, expect, it } from 'vitest'

// The import walls of eslint.walls.js (docs/architecture.md#layers), tried on probe files the repository does not
// have: an upward import is refused, a downward one is not.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..')
const eslint = new ESLint({ cwd: ROOT })

async function ruleIds(file: string, code: string): Promise<(string | null)[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) })
  return result!.messages.map((m) => m.ruleId)
}

describe('import walls', { timeout: 60_000 }, () => {
  it('refuses a core room importing a room above it (turn → runs)', async () => {
    const ids = await ruleIds(
      'packages/agent-server/src/core/turn/wall-probe.ts',
      "import { RunManager } from '../runs/run-manager.ts'\nexport const probe = RunManager\n",
    )
    expect(ids).toContain('import-x/no-restricted-paths')
  })

  it('refuses the store importing core, and core importing http', async () => {
    const store = await ruleIds(
      'packages/agent-server/src/store/wall-probe.ts',
      "import { ev } from '../core/ev.ts'\nexport const probe = ev\n",
    )
    const core = await ruleIds(
      'packages/agent-server/src/core/wall-probe.ts',
      "import { createAgentServer } from '../http/app.ts'\nexport const probe = createAgentServer\n",
    )
    expect(store).toContain('import-x/no-restricted-paths')
    expect(core).toContain('import-x/no-restricted-paths')
  })

  it('refuses agent and models importing core', async () => {
    const agent = await ruleIds(
      'packages/agent-server/src/agent/wall-probe.ts',
      "import { executeRun } from '../core/turn/execute-run.ts'\nexport const probe = executeRun\n",
    )
    const models = await ruleIds(
      'packages/agent-server/src/models/wall-probe.ts',
      "import { RunWrites } from '../core/run-writes.ts'\nexport const probe = RunWrites\n",
    )
    expect(agent).toContain('import-x/no-restricted-paths')
    expect(models).toContain('import-x/no-restricted-paths')
  })

  it('refuses the server config importing core, and the store importing the server config but not the defaults', async () => {
    const config = await ruleIds(
      'packages/agent-server/src/config/wall-probe.ts',
      "import { RunManager } from '../core/runs/run-manager.ts'\nexport const probe = RunManager\n",
    )
    const storeToConfig = await ruleIds(
      'packages/agent-server/src/store/wall-probe.ts',
      "import { resolveServerConfig } from '../config/server-config.ts'\nexport const probe = resolveServerConfig\n",
    )
    const storeToDefaults = await ruleIds(
      'packages/agent-server/src/store/wall-probe.ts',
      "import { SERVER_DEFAULTS } from '../config/defaults.ts'\nexport const probe = SERVER_DEFAULTS\n",
    )
    expect(config).toContain('import-x/no-restricted-paths')
    expect(storeToConfig).toContain('import-x/no-restricted-paths')
    expect(storeToDefaults).toEqual([])
  })

  it('refuses @interlude/protocol importing another Interlude package', async () => {
    const ids = await ruleIds(
      'packages/protocol/src/wall-probe.ts',
      "import { startServer } from '@interlude/agent-server'\nexport const probe = startServer\n",
    )
    expect(ids).toContain('no-restricted-imports')
  })

  it('accepts downward imports (runs → turn, http → core)', async () => {
    const runs = await ruleIds(
      'packages/agent-server/src/core/runs/wall-probe.ts',
      "import { executeRun } from '../turn/execute-run.ts'\nexport const probe = executeRun\n",
    )
    const http = await ruleIds(
      'packages/agent-server/src/http/wall-probe.ts',
      "import { RunManager } from '../core/runs/run-manager.ts'\nexport const probe = RunManager\n",
    )
    expect(runs).toEqual([])
    expect(http).toEqual([])
  })
})
