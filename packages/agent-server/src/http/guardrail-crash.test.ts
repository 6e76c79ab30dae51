import fs from 'node:fs'
import path from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { GUARDRAIL_INTERRUPT_REASON } from '@interlude/protocol'
import type { Interrupt, ThreadSnapshot } from '@interlude/protocol'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { CRASH_SERVER, killChildren, launchChild } from '../test-utils/child-server.ts'
import type { ChildServer } from '../test-utils/child-server.ts'
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
 * kill -9 while paused on a guardrail interrupt (docs/guardrails.md), then a restart on the same database: the batch
 * survives, the answer is admitted by the new process, and allowed and approved the deploy runs exactly once
 * (counted by the crash server's execution log, test/fixtures/crash-server.mjs).
 */
const tmp = tempDir()
afterAll(() => tmp.cleanup())
afterEach(() => killChildren())

const pg = await pgAvailable('guardrail crash recovery on PostgreSQL')
let counter = 0
const backends: [string, () => Promise<{ args: string[]; dispose(): Promise<void> }>][] = [
  ['SQLite', async () => ({ args: ['--db', path.join(tmp.dir, `g-${++counter}.db`)], dispose: async () => undefined })],
]
if (pg)
  backends.push([
    'PostgreSQL',
    async () => {
      const { schema, drop } = await createTestSchema()
      return {
        args: ['--db', PG_URL, ...TEST_POOL_ARGS, '--db-schema', schema, '--run-lease-ms', '800'],
        dispose: drop,
      }
    },
  ])

async function snapshot(server: ChildServer, threadId: string): Promise<ThreadSnapshot> {
  const res = await fetch(`${server.baseUrl}/threads/${threadId}`, { headers: authHeader('alice') })
  expect(res.status).toBe(200)
  return (await res.json()) as ThreadSnapshot
}

describe.each(backends)('kill -9 while paused on a guardrail interrupt (%s)', (_name, makeBackend) => {
  it('restart, allow, approve: exactly one deployment', async () => {
    const backend = await makeBackend()
    try {
      const dir = path.join(tmp.dir, `signals-${++counter}`)
      fs.mkdirSync(dir, { recursive: true })
      const launch = () => launchChild(CRASH_SERVER, [...backend.args, '--dir', dir])
      const first = await launch()
      const threadId = newThreadId()
      const paused = await postRun(first, runInput(threadId, [userMessage('deploy vNEXT to staging')]))
      const guards = interruptsOf(paused.events)
      expect(guards.map((i) => i.reason)).toEqual([GUARDRAIL_INTERRUPT_REASON, GUARDRAIL_INTERRUPT_REASON])
      await first.kill()

      const second = await launch()
      expect((await snapshot(second, threadId)).interrupts?.map((i) => i.id)).toEqual(guards.map((i) => i.id))
      const allowed = await postRun(
        second,
        resumeInput(
          threadId,
          guards.map((i) => resolved(i, { action: 'allow' })),
        ),
      )
      expect(allowed.status).toBe(200)
      const approvals = interruptsOf(allowed.events)
      expect(approvals.map((i: Interrupt) => i.reason)).toEqual(['tool_call', 'tool_call'])
      const done = await postRun(
        second,
        resumeInput(
          threadId,
          approvals.map((i) => resolved(i)),
        ),
      )
      expect(done.status).toBe(200)
      const deploy = guards[1]!
      expect(((await snapshot(second, threadId)).state as ReleaseState).deployments).toEqual([
        { operationId: deploy.toolCallId, version: 'vNEXT', environment: 'staging' },
      ])
      const log = fs.readFileSync(path.join(dir, 'deploy-executions.log'), 'utf8').trim().split('\n')
      expect(log).toEqual([deploy.toolCallId])
    } finally {
      killChildren()
      await backend.dispose()
    }
  })
})
