import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../test-utils/harness.ts'
import { firstRunRequest } from '../../store/conformance/kit.ts'
import { createSqliteStore } from '../../store/sqlite/sqlite-store.ts'
import type { Store } from '../../store/store.ts'
import { whereIs } from './run-events.ts'

const tmp = tempDir()
afterAll(() => tmp.cleanup())

/**
 * Where a run attached by its runId is (docs/protocol.md#multitask), on a real SQLite store. A queued input becomes its
 * run in one write; a reader whose first look saw neither the run nor (by then) the queue row must not call it gone.
 */
describe('whereIs', () => {
  it('a run that started between the first two reads is started, not gone', async () => {
    const store = createSqliteStore(path.join(tmp.dir, 'where.db'))
    const now = Date.now()
    expect((await store.startInputRun(firstRunRequest('t', 'r1', now))).ok).toBe(true)
    // The first read of the run happened just before the queue started it: it found nothing.
    let reads = 0
    const raced = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'getRun')
          return async (threadId: string, runId: string) => (++reads === 1 ? undefined : target.getRun(threadId, runId))
        const value: unknown = Reflect.get(target, key, receiver)
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
      },
    }) as Store
    expect(await whereIs(raced, 't', 'r1')).toBe('started')
    expect(await whereIs(store, 't', 'no-such-run')).toBe('gone')
    await store.close()
  })
})
