import { expect, it } from 'vitest'
import type { Message } from '@interlude/protocol'
import { RunNotActiveError } from '../store.ts'
import type { Store } from '../store.ts'
import type { ConformanceKit } from './kit.ts'

/** What the core renders for a taken message: one event per message here, its id in the JSON. */
const render = (message: Message) => [{ type: 'TEXT_MESSAGE_START', json: JSON.stringify({ id: message.id }) }]

/**
 * Steers (docs/protocol.md#multitask): queued rows the running run takes before its next model request, once, in
 * queue order, fenced; what is not taken stays queued input.
 */
export function steerCases(kit: ConformanceKit): void {
  const { withDb, ids, start, finish, now, growth } = kit

  const steer = (store: Store, threadId: string, runId: string, messages: Message[], steerRow = true) =>
    store.enqueueInput!({
      threadId,
      runId,
      ownerId: 'alice',
      input: JSON.stringify({ threadId, runId, messages }),
      front: false,
      steer: steerRow,
      now,
    })
  const user = (id: string, content = id): Message => ({ id, role: 'user', content })

  it('the running run takes the steers in queue order, once: messages and events in one write', () =>
    withDb(async (store, db) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId, null)
      expect(await store.hasSteers!(threadId)).toBe(false)
      expect(await steer(store, threadId, 's1', [user('m1')])).toEqual({ position: 1, created: true, steer: true })
      await steer(store, threadId, 'q1', [user('mq')], false)
      // The client re-sends history: only what the thread does not have is taken.
      expect(await steer(store, threadId, 's2', [user(`u-${runId}`), user('m2')])).toMatchObject({ position: 3 })
      expect(await steer(store, threadId, 's1', [user('m1')])).toEqual({ position: 1, created: false, steer: true })
      const other = await db.connect()
      expect(await other.hasSteers!(threadId)).toBe(true)
      const revision = await growth(store, threadId, async () => {
        const taken = await store.takeSteers!({ threadId, runId, now, render })
        expect(taken.messages.map((m) => m.id)).toEqual(['m1', 'm2'])
        expect(taken.events.map((e) => [e.runId, JSON.parse(e.json).id])).toEqual([
          [runId, 'm1'],
          [runId, 'm2'],
        ])
      })
      expect(revision).toBe(1)
      expect((await other.listMessages(threadId)).map((m) => m.id)).toEqual([`u-${runId}`, 'm1', 'm2'])
      expect((await other.readEvents(threadId, {})).map((e) => e.type)).toEqual([
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_START',
      ])
      expect(await other.messageRunId!(threadId, 'm2')).toBe(runId)
      expect(await other.messageRunId!(threadId, 'nope')).toBeUndefined()
      // Taken once; the queued input stays, in its place.
      expect(await other.hasSteers!(threadId)).toBe(false)
      expect(await growth(store, threadId, () => store.takeSteers!({ threadId, runId, now, render }))).toBe(0)
      const queue = await other.listQueuedInputs!(threadId)
      expect(queue.map((q) => [q.runId, q.position, q.steer])).toEqual([['q1', 1, false]])
    }))

  it('is fenced: a run that is not the active one takes nothing, and the steers stay queued input', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId, null)
      await steer(store, threadId, 's1', [user('m1')])
      const stale = store.takeSteers!({ threadId, runId: 'not-active', now, render })
      await expect(stale).rejects.toBeInstanceOf(RunNotActiveError)
      await finish(store, threadId, runId)
      await expect(store.takeSteers!({ threadId, runId, now, render })).rejects.toBeInstanceOf(RunNotActiveError)
      expect((await store.listQueuedInputs!(threadId)).map((q) => [q.runId, q.steer])).toEqual([['s1', true]])
      expect(await store.listStartableQueues!(10)).toContain(threadId)
    }))

  it('a steer row whose run exists (it started as a run) is not taken; a message the thread has is skipped', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId, null)
      await finish(store, threadId, runId)
      await steer(store, threadId, 's1', [user('m1')])
      await steer(store, threadId, 's2', [user('m2')])
      // s1 starts as a run of its own (the thread was idle); its row is removed only afterwards.
      const started = await start(store, threadId, 's1', (await store.getThread(threadId))!.revision, {
        messages: [user('m1')],
      })
      expect(started.ok).toBe(true)
      // A third steer repeats m2's id: the thread gets m2 once.
      await steer(store, threadId, 's3', [user('m2')])
      const taken = await store.takeSteers!({ threadId, runId: 's1', now, render })
      expect(taken.messages.map((m) => m.id)).toEqual(['m2'])
      expect((await store.listQueuedInputs!(threadId)).map((q) => q.runId)).toEqual(['s1'])
      expect(await store.hasSteers!(threadId)).toBe(false)
    }))

  it('two connections take concurrently: each message joins the thread once', () =>
    withDb(async (store, db) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId, null)
      for (let i = 0; i < 5; i++) await steer(store, threadId, `s${i}`, [user(`m${i}`)])
      const other = await db.connect()
      const [a, b] = await Promise.all([
        store.takeSteers!({ threadId, runId, now, render }),
        other.takeSteers!({ threadId, runId, now, render }),
      ])
      expect([...a.messages, ...b.messages].map((m) => m.id).sort()).toEqual(['m0', 'm1', 'm2', 'm3', 'm4'])
      expect((await store.listMessages(threadId)).map((m) => m.id)).toEqual([
        `u-${runId}`,
        'm0',
        'm1',
        'm2',
        'm3',
        'm4',
      ])
    }))

  it('a steer counts for the concurrent-runs quota only once no run is there to take it; queued input always', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId, null)
      await steer(store, threadId, 's1', [user('m1')])
      expect(await store.countRunningRuns!('alice')).toBe(1)
      await steer(store, threadId, 'q1', [user('mq')], false)
      expect(await store.countRunningRuns!('alice')).toBe(2)
      // The run ends without taking the steer: it waits as queued input now and counts like it.
      await finish(store, threadId, runId)
      expect(await store.countRunningRuns!('alice')).toBe(2)
    }))
}
