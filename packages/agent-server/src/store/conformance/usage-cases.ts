import { expect, it } from 'vitest'
import type { ConformanceKit } from './kit.ts'

/**
 * Token usage per run (docs/protocol.md#token-usage): counters on the run, sums per thread and per owner (optional
 * methods).
 */
export function usageCases(kit: ConformanceKit): void {
  const { withDb, ids, start, finish } = kit

  it('adds each model call’s tokens to its run, also after the run ended; sums per thread and per owner', () =>
    withDb(async (store) => {
      // Optional for custom stores, but both or neither (token caps need the sums).
      const add = store.addRunUsage?.bind(store)
      const sum = store.sumUsage?.bind(store)
      expect(add === undefined).toBe(sum === undefined)
      if (add === undefined || sum === undefined) return
      const a = ids()
      const b = ids()
      const bobs = ids()
      await start(store, a.threadId, a.runId)
      expect((await store.getRun(a.threadId, a.runId))?.usage).toBeUndefined()
      await add(a.threadId, a.runId, { inputTokens: 100, outputTokens: 20 })
      await add(a.threadId, a.runId, { inputTokens: 130, outputTokens: 5 })
      await finish(store, a.threadId, a.runId)
      await add(a.threadId, a.runId, { inputTokens: 1, outputTokens: 1 })
      expect((await store.getRun(a.threadId, a.runId))?.usage).toEqual({
        inputTokens: 231,
        outputTokens: 26,
        totalTokens: 257,
      })
      await start(store, b.threadId, b.runId)
      await add(b.threadId, b.runId, { inputTokens: 10, outputTokens: 3 })
      await start(store, bobs.threadId, bobs.runId, null, { ownerId: 'bob' })
      await add(bobs.threadId, bobs.runId, { inputTokens: 7, outputTokens: 7 })

      expect(await sum({ threadId: a.threadId })).toEqual({
        inputTokens: 231,
        outputTokens: 26,
        totalTokens: 257,
      })
      expect(await sum({ ownerId: 'alice' })).toEqual({
        inputTokens: 241,
        outputTokens: 29,
        totalTokens: 270,
      })
      expect(await sum({ ownerId: 'bob' })).toEqual({ inputTokens: 7, outputTokens: 7, totalTokens: 14 })
      expect(await sum({ threadId: 'nope' })).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 })
      expect(await sum({ ownerId: 'nobody' })).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 })
      // An unknown run changes nothing.
      await add(a.threadId, 'nope', { inputTokens: 5, outputTokens: 5 })
      expect((await sum({ threadId: a.threadId })).totalTokens).toBe(257)
    }))
}
