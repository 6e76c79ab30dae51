import { describe, expect, it } from 'vitest'
import { ContinuationQueue } from './expiry-continuations.ts'
import type { RunPlan } from '../run-plan.ts'

/** Continuations of a sweep round start at most `limit` at a time; first touch and shutdown do not wait. */
function fakeRuns() {
  const started: string[] = []
  const held: string[] = []
  const finish = new Map<string, () => void>()
  const done = new Map<string, Promise<void>>()
  return {
    started,
    held,
    finish: async (runId: string) => {
      finish.get(runId)!()
      // Let the queue's completion handler run.
      await new Promise((resolve) => setImmediate(resolve))
    },
    runs: {
      start: (plan: RunPlan) => {
        started.push(plan.runId)
        done.set(plan.runId, new Promise<void>((resolve) => finish.set(plan.runId, resolve)))
      },
      whenDone: (_threadId: string, runId: string) => done.get(runId) ?? Promise.resolve(),
      hold: (_threadId: string, runId: string) => held.push(runId),
    },
  }
}

const plan = (runId: string) => ({ threadId: `t-${runId}`, runId }) as RunPlan

describe('ContinuationQueue', () => {
  it('runs at most `limit` at once and starts the next as one ends', async () => {
    const f = fakeRuns()
    const queue = new ContinuationQueue(f.runs, 2)
    for (const id of ['a', 'b', 'c', 'd']) queue.push(plan(id))
    expect(f.started).toEqual(['a', 'b'])
    // Every queued run is held (never taken for a stray by the lease renewal) until it starts.
    expect(f.held).toEqual(['a', 'b', 'c', 'd'])
    expect(queue.waiting).toBe(2)
    await f.finish('b')
    expect(f.started).toEqual(['a', 'b', 'c'])
    queue.startNow(plan('urgent'))
    expect(f.started).toEqual(['a', 'b', 'c', 'urgent'])
    await f.finish('a')
    // Three still running (c, urgent and the one a freed would make four): d waits for a second slot.
    expect(f.started).toEqual(['a', 'b', 'c', 'urgent'])
    await f.finish('c')
    await f.finish('urgent')
    expect(f.started).toEqual(['a', 'b', 'c', 'urgent', 'd'])
    expect(queue.waiting).toBe(0)
  })

  it('flush() starts everything queued; a bad limit is refused', () => {
    const f = fakeRuns()
    const queue = new ContinuationQueue(f.runs, 1)
    for (const id of ['a', 'b', 'c']) queue.push(plan(id))
    queue.flush()
    expect(f.started).toEqual(['a', 'b', 'c'])
    expect(() => new ContinuationQueue(f.runs, 0)).toThrow(/maxContinuations/)
  })
})
