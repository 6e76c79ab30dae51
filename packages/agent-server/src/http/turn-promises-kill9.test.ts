import fs from 'node:fs'
import path from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { ThreadSnapshot } from '@interlude/protocol'
import type { ReleaseState } from '../demo/release-assistant.ts'
import type { ChildServer } from '../test-utils/child-server.ts'
import { CRASH_SERVER, killChildren, launchChild, until } from '../test-utils/child-server.ts'
import {
  authHeader,
  interruptsOf,
  newThreadId,
  postRun,
  resumeInput,
  runInput,
  tempDir,
  userMessage,
} from '../test-utils/harness.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOL_ARGS } from '../test-utils/pg.ts'
import { resolved } from '../test-utils/resume-entries.ts'

/**
 * The turn's promises across kill -9 (docs/decisions.md#a-turn-keeps-its-promises), in a real process
 * (test/fixtures/crash-server.mjs, the demo agent; `tool-executions.log` has one line per `execute`) on SQLite
 * (restart) and PostgreSQL (another process): a held call stays held while the server is dead and runs once after
 * the decision.
 */
const tmp = tempDir()
afterEach(() => killChildren())
afterAll(() => tmp.cleanup())
const pg = await pgAvailable('turn promises across kill -9 on PostgreSQL')

let counter = 0
function signalDir(): { dir: string; lines(name: string): string[] } {
  const dir = path.join(tmp.dir, `promises-${++counter}`)
  fs.mkdirSync(dir, { recursive: true })
  const file = (name: string) => path.join(dir, name)
  const lines = (name: string) =>
    fs.existsSync(file(name)) ? fs.readFileSync(file(name), 'utf8').trim().split('\n').filter(Boolean) : []
  return { dir, lines }
}

async function idle(server: ChildServer, threadId: string): Promise<ThreadSnapshot> {
  return until(async () => {
    const res = await fetch(`${server.baseUrl}/threads/${threadId}`, { headers: authHeader('alice') })
    const snap = (await res.json()) as ThreadSnapshot
    return snap.status === 'idle' ? snap : undefined
  }, 'the turn to finish')
}

interface StoreCase {
  readonly name: string
  args(dir: string): Promise<{ args: string[]; dispose(): Promise<void> }>
}
const stores: StoreCase[] = [
  {
    name: 'SQLite, restart',
    args: async (dir) => ({ args: ['--db', path.join(dir, 'promises.db')], dispose: async () => undefined }),
  },
]
if (pg) {
  stores.push({
    name: 'PostgreSQL, another process',
    args: async () => {
      const { schema, drop } = await createTestSchema()
      return { args: ['--db', PG_URL, ...TEST_POOL_ARGS, '--db-schema', schema, '--poll-ms', '50'], dispose: drop }
    },
  })
}

async function scenario(
  store: StoreCase,
  body: (s: { signals: ReturnType<typeof signalDir>; launch: () => Promise<ChildServer> }) => Promise<void>,
): Promise<void> {
  const signals = signalDir()
  const db = await store.args(signals.dir)
  try {
    await body({ signals, launch: () => launchChild(CRASH_SERVER, [...db.args, '--dir', signals.dir]) })
  } finally {
    killChildren()
    await db.dispose()
  }
}

describe.each(stores)('turn promises across kill -9 ($name)', (store) => {
  it('"check the changelog and deploy": killed while paused, nothing ran; approved after the restart, each once, in order', async () => {
    await scenario(store, async ({ signals, launch }) => {
      let server = await launch()
      const threadId = newThreadId()
      const run = await postRun(
        server,
        runInput(threadId, [userMessage('check the changelog and deploy v2.1 to staging')]),
      )
      const [deploy] = interruptsOf(run.events)
      expect(deploy?.metadata?.toolName).toBe('deploy')
      expect(signals.lines('tool-executions.log')).toEqual([])
      await server.kill()
      server = await launch()
      expect((await postRun(server, resumeInput(threadId, [resolved(deploy!)]))).status).toBe(200)
      const snap = await idle(server, threadId)
      const state = snap.state as ReleaseState
      expect(state.changelogChecks).toHaveLength(1)
      expect(state.deployments).toEqual([{ operationId: deploy!.toolCallId, version: 'v2.1', environment: 'staging' }])
      expect(signals.lines('tool-executions.log')).toEqual([
        `check_changelog ${state.changelogChecks![0]!.toolCallId}`,
        `deploy ${deploy!.toolCallId}`,
      ])
      await server.kill()
    })
  })

  it('a rollback answered over two questions, killed between them: executed three times, one snapshot', async () => {
    await scenario(store, async ({ signals, launch }) => {
      let server = await launch()
      const threadId = newThreadId()
      const run = await postRun(server, runInput(threadId, [userMessage('rollback v3 carefully')]))
      const [first] = interruptsOf(run.events)
      expect(first?.message).toMatch(/^Roll back v3\?/)
      const next = await postRun(server, resumeInput(threadId, [resolved(first!, { confirm: true })]))
      const [second] = interruptsOf(next.events)
      expect(second?.message).toMatch(/^Really roll back v3\?/)
      await server.kill()
      server = await launch()
      expect((await postRun(server, resumeInput(threadId, [resolved(second!, { confirm: true })]))).status).toBe(200)
      const state = (await idle(server, threadId)).state as ReleaseState
      expect(state.snapshots).toHaveLength(1)
      expect(second?.metadata).toMatchObject({ snapshotId: state.snapshots![0]!.snapshotId })
      expect(state.rollbacks).toHaveLength(1)
      // From the top at the pause and on each answer; the snapshot step ran on the first only.
      expect(signals.lines('tool-executions.log')).toEqual(Array(3).fill(`rollback ${first!.toolCallId}`))
      await server.kill()
    })
  })
})
