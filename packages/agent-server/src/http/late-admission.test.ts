import { afterEach, describe, expect, it } from 'vitest'
import { threadKey } from '../store/thread-key.ts'
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts'
import { interruptsOf, newThreadId, runInput, tempDir, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import type { StoreOverrides } from '../test-utils/intercept-store.ts'
import { interceptStore } from '../test-utils/intercept-store.ts'
import { startInProcess } from '../test-utils/in-process.ts'

/**
 * A run admitted while its process stops (core/runs/run-manager.ts `start`): its claim commits after `close()` or
 * `shutdown()` stopped the runs. It must not execute in the stopping process (its store is about to close, and another
 * replica may take it over at once); its lease ends, and the restart continues it (docs/architecture.md, "Shutdown").
 */

const tmps: ReturnType<typeof tempDir>[] = []
afterEach(() => {
  for (const tmp of tmps.splice(0)) tmp.cleanup()
})

/**
 * A server whose admission of `threadId` waits at its first store read until `at` (a store call made while the server
 * stops) lets it go; that call then waits until the admission has answered, so its claim commits in between.
 */
async function lateAdmission(at: 'close' | 'heartbeatRuns') {
  const tmp = tempDir()
  tmps.push(tmp)
  const threadId = newThreadId()
  let letGo!: () => void
  const gate = new Promise<void>((resolve) => (letGo = resolve))
  const answered: { response?: Promise<unknown> } = {}
  const sqlite = createSqliteStore(tmp.dbPath)
  // `close` (the last step of close()/shutdown()) or the lease release of a graceful shutdown lets the admission go.
  const stopping: StoreOverrides =
    at === 'close'
      ? {
          close: async () => {
            letGo()
            await answered.response
            return sqlite.close()
          },
        }
      : {
          heartbeatRuns: async (executorId, leaseUntil) => {
            if (leaseUntil === 0) {
              letGo()
              await answered.response
            }
            return sqlite.heartbeatRuns(executorId, leaseUntil)
          },
        }
  const store = interceptStore(sqlite, {
    ...stopping,
    getAdmissionView: async (...args) => {
      if (args[0] === threadKey('alice', threadId)) await gate
      return sqlite.getAdmissionView(...args)
    },
  })
  const server = await startInProcess({ store, dbPath: tmp.dbPath })
  const response = server.request('/runs', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(runInput(threadId, [userMessage('deploy v9 to staging')])),
  })
  answered.response = response
  return { server, threadId, response, dbPath: tmp.dbPath }
}

async function expectContinuedByTheRestart(dbPath: string, threadId: string, runId: string): Promise<void> {
  const restart: InProcessServer = await startInProcess({ dbPath })
  try {
    // Exclusive SQLite continues abandoned runs at startup: the run pauses for its two approvals.
    const replay = await restart.threadEvents(threadId)
    expect(replay.events.filter((e) => e.type === 'RUN_STARTED' && e.runId === runId).length).toBeGreaterThan(0)
    expect(interruptsOf(replay.events)).toHaveLength(2)
    expect((await restart.store.getRun(threadKey('alice', threadId), runId))?.status).toBe('interrupted')
  } finally {
    await restart.close()
  }
}

/** The thread's active run as the store has it after the process stopped (read from the file again). */
async function activeRun(dbPath: string, threadId: string) {
  const reopened = createSqliteStore(dbPath)
  try {
    const thread = await reopened.getThread(threadKey('alice', threadId))
    return thread?.activeRunId === undefined ? undefined : await reopened.getRun(thread.threadId, thread.activeRunId)
  } finally {
    await reopened.close()
  }
}

describe('a run admitted while the process stops', () => {
  it.each(['close', 'shutdown'] as const)(
    '%s(): the late run is not executed here; its lease ends and the restart continues it',
    async (how) => {
      const { server, threadId, response, dbPath } = await lateAdmission(how === 'close' ? 'close' : 'heartbeatRuns')
      if (how === 'close') await server.app.close()
      else expect(await server.app.shutdown(50)).toBe(0)
      expect((await response).status).toBe(200)
      // Nothing of the run executed in the stopping process: no run is active, and no write failed on a closed store.
      expect(server.app.runs.activeCount).toBe(0)
      expect(server.logged).toEqual([])
      const run = await activeRun(dbPath, threadId)
      expect(run).toMatchObject({ status: 'running', leaseUntil: 0 })
      expect(run?.executorId).toMatch(/:let-go$/)
      await expectContinuedByTheRestart(dbPath, threadId, run!.runId)
    },
  )
})
