import { expect, it } from 'vitest'
import type { Message } from '@interlude/protocol'
import type { ConformanceKit } from './kit.ts'

const bytesOf = (m: Message) => Buffer.byteLength(JSON.stringify(m), 'utf8')

/**
 * Bounded reads of a history (docs/decisions.md#bounded-histories, docs/protocol.md#limits): the running totals of the
 * thread cap, message pages by count and bytes, the first user message, tool call ids, the stored title, and the event
 * log in pages.
 */
export function historyCases(kit: ConformanceKit): void {
  const { withDb, ids, start, finish } = kit

  const filled = async (store: Parameters<Parameters<ConformanceKit['withDb']>[0]>[0], count: number) => {
    const { threadId, runId } = ids()
    await start(store, threadId, runId, null, { messages: [{ id: 'a0', role: 'assistant', content: 'hello' }] })
    const messages: Message[] = []
    for (let i = 1; i < count; i++) {
      messages.push(
        i === 2
          ? { id: `m${i}`, role: 'user', content: `first question ${'é'.repeat(i)}` }
          : { id: `m${i}`, role: 'assistant', content: `answer ${i} ${'ü'.repeat(i)}` },
      )
    }
    // Several appends, as runs make them.
    for (let i = 0; i < messages.length; i += 7) await store.appendMessages(threadId, runId, messages.slice(i, i + 7))
    return { threadId, runId, all: [{ id: 'a0', role: 'assistant', content: 'hello' } as Message, ...messages] }
  }

  it('keeps running message totals on the thread row, in bytes of the stored JSON', () =>
    withDb(async (store) => {
      const { threadId, runId, all } = await filled(store, 30)
      const thread = (await store.getThread(threadId))!
      expect(thread.messageCount).toBe(30)
      expect(thread.messageBytes).toBe(all.reduce((sum, m) => sum + bytesOf(m), 0))
      // A settled call's tool message counts too.
      await store.insertToolCalls([kit.call(threadId, runId, 'c9')])
      const tool: Message = { id: 't9', role: 'tool', toolCallId: 'c9', content: 'done' }
      await store.settleToolCall({
        threadId,
        runId,
        toolCallId: 'c9',
        status: 'succeeded',
        result: 'done',
        message: tool,
        now: kit.now,
      })
      const after = (await store.getThread(threadId))!
      expect(after.messageCount).toBe(31)
      expect(after.messageBytes).toBe(thread.messageBytes + bytesOf(tool))
    }))

  it('pages messages newest first by count and bytes, answered in order, with positions as cursors', () =>
    withDb(async (store) => {
      const { threadId, all } = await filled(store, 25)
      const last = await store.listMessagePage(threadId, { limit: 10 })
      expect(last.map((m) => m.message.id)).toEqual(all.slice(15).map((m) => m.id))
      expect(last.map((m) => m.position)).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23, 24])
      expect(last.map((m) => m.bytes)).toEqual(all.slice(15).map(bytesOf))
      const older = await store.listMessagePage(threadId, { beforePosition: 15, limit: 10 })
      expect(older.map((m) => m.position)).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13, 14])
      const oldest = await store.listMessagePage(threadId, { beforePosition: 5, limit: 10 })
      expect(oldest.map((m) => m.message)).toEqual(all.slice(0, 5))
      expect(await store.listMessagePage(threadId, { beforePosition: 0, limit: 10 })).toEqual([])
      // Bytes: the newest messages whose JSON fits, counted backwards; the newest one always.
      const budget = bytesOf(all[24]!) + bytesOf(all[23]!) + bytesOf(all[22]!)
      const byBytes = await store.listMessagePage(threadId, { limit: 10, maxBytes: budget })
      expect(byBytes.map((m) => m.position)).toEqual([22, 23, 24])
      const tight = await store.listMessagePage(threadId, { limit: 10, maxBytes: budget - 1 })
      expect(tight.map((m) => m.position)).toEqual([23, 24])
      const one = await store.listMessagePage(threadId, { limit: 10, maxBytes: 1 })
      expect(one.map((m) => m.position)).toEqual([24])
      expect(await store.listMessagePage('no-such-thread', { limit: 10 })).toEqual([])
    }))

  it('answers the first user message and every tool call id without reading the history', () =>
    withDb(async (store) => {
      const { threadId, runId, all } = await filled(store, 12)
      const first = (await store.getFirstUserMessage(threadId))!
      expect(first.position).toBe(2)
      expect(first.message).toEqual(all[2])
      expect(first.bytes).toBe(bytesOf(all[2]!))
      expect(await store.getFirstUserMessage('no-such-thread')).toBeUndefined()
      await store.insertToolCalls([kit.call(threadId, runId, 'c1'), kit.call(threadId, runId, 'c2')])
      expect((await store.listToolCallIds(threadId)).sort()).toEqual(['c1', 'c2'])
    }))

  it('stores the title from the first user message, also when the thread began without one', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId, null, { messages: [] })
      expect((await store.getThread(threadId))!.title).toBeUndefined()
      await finish(store, threadId, runId)
      const revision = (await store.getThread(threadId))!.revision
      const next = await start(store, threadId, 'r-next', revision, {
        messages: [{ id: 'u2', role: 'user', content: 'deploy v2' }],
        title: 'deploy v2',
      })
      expect(next.ok).toBe(true)
      expect((await store.getThread(threadId))!.title).toBe('deploy v2')
      await finish(store, threadId, 'r-next')
      const again = (await store.getThread(threadId))!.revision
      await start(store, threadId, 'r-third', again, { title: 'something else' })
      expect((await store.getThread(threadId))!.title).toBe('deploy v2')
    }))

  it('reads the event log in pages that cover it exactly once', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId)
      const events = Array.from({ length: 23 }, (_, i) => ({ type: 'CUSTOM', json: `{"type":"CUSTOM","n":${i}}` }))
      await store.appendEvents(threadId, runId, events)
      const seen: number[] = []
      let after = 0
      for (;;) {
        const page = await store.readEvents(threadId, { afterSeq: after, limit: 5 })
        expect(page.length).toBeLessThanOrEqual(5)
        seen.push(...page.map((e) => e.seq))
        if (page.length < 5) break
        after = page[page.length - 1]!.seq
      }
      expect(seen).toEqual(Array.from({ length: 23 }, (_, i) => i + 1))
    }))
}
