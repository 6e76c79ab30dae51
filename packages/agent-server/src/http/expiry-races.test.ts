import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ResumeEntry } from '@interlude/protocol'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { threadKey } from '../store/thread-key.ts'

/**
 * People racing the deadline (docs/approvals.md#deadlines): 20 concurrent resumes with assorted answers while the
 * sweep runs, on a clock that crosses the deadline during the race. Whoever wins, there is exactly one decision and
 * one continuation, and every loser gets a typed 4xx.
 */
const T0 = Date.parse('2032-06-01T12:00:00.000Z')
/** The clock: fixed, or stepping 1 ms per read while a race runs (so the race straddles the deadline). */
const clock = { now: T0, stepping: false }
const read = () => (clock.stepping ? clock.now++ : clock.now)
let s: InProcessServer

beforeAll(async () => {
  s = await startInProcess({ now: read, interruptTtlSeconds: 2, expirySweepMs: 0 })
})
afterAll(async () => {
  await s.dispose()
})

const LOSER_CODES = [
  'INTERRUPT_EXPIRED',
  'ALREADY_RESUMED',
  'DECISION_CONFLICT',
  'THREAD_BUSY',
  'RESUME_NOTHING_PENDING',
] as const

function resumeRuns(threadId: string): number {
  const db = new Database(s.dbPath, { readonly: true })
  try {
    const row = db
      .prepare(`SELECT count(*) AS n FROM runs WHERE thread_id = ? AND kind = 'resume'`)
      .get(threadKey('alice', threadId))
    return (row as { n: number }).n
  } finally {
    db.close()
  }
}

describe('20 people racing the deadline while the sweep runs', () => {
  // Where the race starts relative to the deadline — before (it crosses during the race), at, after it — and how many
  // event-loop turns the sweep lets the people go first.
  it.each([
    [-12, 0],
    [-3, 0],
    [0, 0],
    [0, 2],
    [40, 0],
    [40, 2],
  ])(
    'starting %i ms from the deadline, sweep after %i turns: one decision, one continuation',
    async (offset, turns) => {
      clock.stepping = false
      clock.now = T0
      const threadId = newThreadId()
      const [publish, deploy] = interruptsOf((await s.postRun(runInput(threadId, [userMessage('deploy v3')]))).events)
      const batch = (await s.store.getOpenBatch(threadKey('alice', threadId)))!
      const answers: ResumeEntry[][] = [
        [
          { interruptId: publish!.id, status: 'resolved', payload: { approved: true } },
          { interruptId: deploy!.id, status: 'resolved', payload: { approved: true } },
        ],
        [
          { interruptId: publish!.id, status: 'resolved', payload: { approved: false, reason: 'no' } },
          { interruptId: deploy!.id, status: 'cancelled' },
        ],
        [
          { interruptId: publish!.id, status: 'cancelled' },
          { interruptId: deploy!.id, status: 'cancelled' },
        ],
        [
          { interruptId: publish!.id, status: 'resolved', payload: { approved: false, reason: 'expired' } },
          { interruptId: deploy!.id, status: 'resolved', payload: { approved: false, reason: 'expired' } },
        ],
      ]

      clock.now = batch.expiresAt + offset
      clock.stepping = true
      let racing = true
      let swept = 0
      const sweeping = (async () => {
        for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve))
        while (racing) {
          swept += await s.app.expirySweeper.sweepOnce()
          await new Promise((resolve) => setImmediate(resolve))
        }
      })()
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => s.postRun(resumeInput(threadId, answers[i % answers.length]!))),
      )
      racing = false
      await sweeping
      // Nobody won before the deadline passed for good: the last sweep decides.
      swept += await s.app.expirySweeper.sweepOnce()
      clock.stepping = false
      await s.app.runs.idle()

      const admitted = results.filter((r) => r.status === 200)
      expect(admitted.length + swept).toBe(1)
      for (const loser of results.filter((r) => r.status !== 200)) {
        expect(loser.status).toBeGreaterThanOrEqual(400)
        expect(loser.status).toBeLessThan(500)
        expect(LOSER_CODES).toContain(loser.error?.code)
      }
      const decisions = await s.store.listDecisions(threadKey('alice', threadId))
      expect(decisions).toHaveLength(1)
      expect(decisions[0]!.via).toBe(swept === 1 ? 'expiry' : 'run')
      expect(resumeRuns(threadId)).toBe(1)
      expect((await s.store.getThread(threadKey('alice', threadId)))?.status).toBe('idle')
      expect((await s.postRun(runInput(threadId, [userMessage('hello')]))).status).toBe(200)
    },
  )
})
