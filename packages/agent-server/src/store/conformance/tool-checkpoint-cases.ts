import { expect, it } from 'vitest'
import { RunNotActiveError } from '../store.ts'
import type { ConformanceKit } from './kit.ts'

/** Per-call checkpoints of tools that ask from inside `execute` (docs/approvals.md#asking-from-inside-a-tool). */
export function toolCheckpointCases(kit: ConformanceKit): void {
  const { withDb, ids, start, finish, now } = kit

  it('stores and replaces a call’s checkpoint only while the run is the thread’s active run', () =>
    withDb(async (store, db) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId, null)
      expect(await store.getToolCheckpoint(threadId, 'c1')).toBeUndefined()
      const first = JSON.stringify({ answers: [{ interruptId: 'i1', status: 'resolved', payload: { ok: true } }] })
      await store.saveToolCheckpoint({ threadId, runId, toolCallId: 'c1', json: first, now })
      const second = JSON.stringify({ answers: [], subagent: { messages: [] } })
      await store.saveToolCheckpoint({ threadId, runId, toolCallId: 'c1', json: second, now: now + 1 })
      await store.saveToolCheckpoint({ threadId, runId, toolCallId: 'c2', json: first, now })
      const other = await db.connect()
      expect(await other.getToolCheckpoint(threadId, 'c1')).toBe(second)
      expect(await other.getToolCheckpoint(threadId, 'c2')).toBe(first)
      expect(await other.getToolCheckpoint('another-thread', 'c1')).toBeUndefined()

      // Fenced: a run that is not (or no longer) the active one writes nothing.
      const stale = store.saveToolCheckpoint({ threadId, runId: 'not-active', toolCallId: 'c1', json: first, now })
      await expect(stale).rejects.toBeInstanceOf(RunNotActiveError)
      await finish(store, threadId, runId)
      const after = store.saveToolCheckpoint({ threadId, runId, toolCallId: 'c1', json: first, now })
      await expect(after).rejects.toBeInstanceOf(RunNotActiveError)
      expect(await store.getToolCheckpoint(threadId, 'c1')).toBe(second)
    }))

  it('a step’s checkpoint carries the state: both in one write (revision +1), and neither for a run not active', () =>
    withDb(async (store, db) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId, null)
      const before = (await store.getThread(threadId))!
      const json = JSON.stringify({ answers: [], steps: { snapshot: [{ value: { id: 's1' } }] } })
      const stateJson = JSON.stringify({ snapshots: ['s1'] })
      await store.saveToolCheckpoint({ threadId, runId, toolCallId: 'c1', json, stateJson, now: now + 5 })
      const other = await db.connect()
      const after = (await other.getThread(threadId))!
      expect(after.state).toEqual({ snapshots: ['s1'] })
      expect(after.revision).toBe(before.revision + 1)
      expect(await other.getToolCheckpoint(threadId, 'c1')).toBe(json)

      const refused = store.saveToolCheckpoint({
        threadId,
        runId: 'not-active',
        toolCallId: 'c1',
        json: JSON.stringify({ answers: [] }),
        stateJson: JSON.stringify({ snapshots: [] }),
        now: now + 6,
      })
      await expect(refused).rejects.toBeInstanceOf(RunNotActiveError)
      expect((await store.getThread(threadId))!.state).toEqual({ snapshots: ['s1'] })
      expect(await store.getToolCheckpoint(threadId, 'c1')).toBe(json)
    }))
}
