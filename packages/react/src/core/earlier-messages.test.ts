import { InterludeError } from '@interlude/protocol'
import type { Message, ThreadSnapshot } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { setup } from '../test-utils/runtime-setup.ts'
import { EarlierMessages } from './earlier-messages.ts'

/** Messages m<from>…m<to-1>, alternating user and assistant. */
function messages(from: number, to: number): Message[] {
  return Array.from(
    { length: to - from },
    (_, i) =>
      (i % 2 === 0
        ? { id: `m${from + i}`, role: 'user', content: `q${from + i}` }
        : { id: `m${from + i}`, role: 'assistant', content: `a${from + i}` }) as Message,
  )
}

/** A snapshot page of thread t1: messages [from, to), older ones behind `cursor` when given. */
function page(from: number, to: number, cursor?: string): ThreadSnapshot {
  return {
    threadId: 't1',
    messages: messages(from, to),
    state: {},
    status: 'idle',
    revision: 1,
    lastEventId: 10,
    interrupts: [],
    ...(cursor ? { hasMoreMessages: true, messagesCursor: cursor } : { hasMoreMessages: false }),
  } as ThreadSnapshot
}

const ids = (list: readonly Message[]) => list.map((m) => m.id)

/** A runtime recovered onto the newest page (m6–m8) of a 9-message thread, two pages behind it. */
async function recovered() {
  const ctx = setup()
  ctx.transport.threads.set('t1', page(6, 9, 'c6'))
  ctx.transport.pages.set('c6', page(3, 6, 'c3'))
  ctx.transport.pages.set('c3', page(0, 3))
  const { snapshot } = await ctx.rt.recover()
  return { ...ctx, snapshot, earlier: new EarlierMessages(ctx.rt, snapshot) }
}

describe('EarlierMessages: the older pages of a long thread', () => {
  it('reads the page before the loaded ones until the start; the runtime keeps its restored page', async () => {
    const { rt, transport, earlier } = await recovered()
    expect(earlier.getSnapshot()).toMatchObject({ messages: [], hasMore: true, loading: false })
    // Nothing is read before it is asked for.
    expect(transport.lookups).toHaveLength(1)
    const first = earlier.loadMore()
    expect(earlier.getSnapshot().loading).toBe(true)
    await first
    expect(ids(earlier.getSnapshot().messages)).toEqual(['m3', 'm4', 'm5'])
    const shown = earlier.getSnapshot().messages[0]
    await earlier.loadMore()
    expect(ids(earlier.getSnapshot().messages)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5'])
    expect(earlier.getSnapshot().messages[3]).toBe(shown)
    expect(earlier.getSnapshot()).toMatchObject({ hasMore: false, loading: false, error: undefined })
    expect(Object.isFrozen(earlier.getSnapshot().messages[0])).toBe(true)
    await earlier.loadMore()
    expect(transport.lookups.map((l) => l.before)).toEqual([undefined, 'c6', 'c3'])
    expect(ids(rt.getSnapshot().messages)).toEqual(['m6', 'm7', 'm8'])
  })

  it('calls while a page is read share one request; subscribers hear each change once', async () => {
    const { transport, earlier } = await recovered()
    let notified = 0
    earlier.subscribe(() => notified++)
    await Promise.all([earlier.loadMore(), earlier.loadMore(), earlier.loadMore()])
    expect(transport.lookups.filter((l) => l.before === 'c6')).toHaveLength(1)
    expect(ids(earlier.getSnapshot().messages)).toEqual(['m3', 'm4', 'm5'])
    expect(notified).toBe(2) // loading, then loaded
  })

  it('skips messages already shown (a page overlapping the restored one)', async () => {
    const { transport, earlier } = await recovered()
    transport.pages.set('c6', page(3, 8, 'c3'))
    await earlier.loadMore()
    expect(ids(earlier.getSnapshot().messages)).toEqual(['m3', 'm4', 'm5'])
  })

  it('a failed or malformed read sets a typed error, keeps what was loaded, and the same page can be read again', async () => {
    const { transport, earlier } = await recovered()
    transport.pages.set('c6', new InterludeError('INVALID_INPUT', 'Unknown cursor.'))
    await earlier.loadMore()
    expect(earlier.getSnapshot()).toMatchObject({
      messages: [],
      hasMore: true,
      loading: false,
      error: { code: 'INVALID_INPUT' },
    })
    transport.pages.set('c6', {
      ...page(3, 6, 'c3'),
      messages: [{ id: '', role: 'user', content: 'x' }],
    } as ThreadSnapshot)
    await earlier.loadMore()
    expect(earlier.getSnapshot().error?.code).toBe('PROTOCOL_ERROR')
    transport.pages.set('c6', { ...page(3, 6, 'c3'), threadId: 'other' })
    await earlier.loadMore()
    expect(earlier.getSnapshot().error?.code).toBe('PROTOCOL_ERROR')
    transport.pages.set('c6', page(3, 6, 'c3'))
    await earlier.loadMore()
    expect(earlier.getSnapshot()).toMatchObject({ hasMore: true, error: undefined })
    expect(ids(earlier.getSnapshot().messages)).toEqual(['m3', 'm4', 'm5'])
  })

  it('reads nothing once the runtime is on another thread, or when the snapshot has nothing older', async () => {
    const { rt, transport, earlier } = await recovered()
    rt.setThreadId('t2')
    await earlier.loadMore()
    expect(transport.lookups).toHaveLength(1)
    const none = new EarlierMessages(rt, { threadId: 't2', hasMoreMessages: false, messagesCursor: 'c0' })
    expect(none.getSnapshot().hasMore).toBe(false)
    await none.loadMore()
    expect(transport.lookups).toHaveLength(1)
  })

  it('getEarlierPage refuses a missing or empty cursor (INVALID_INPUT) and sends nothing', async () => {
    const { rt, transport } = await recovered()
    for (const cursor of ['', undefined, 42] as unknown[])
      await expect(rt.getEarlierPage(cursor as string)).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    expect(transport.lookups).toHaveLength(1)
    expect((await rt.getEarlierPage('c6')).messages).toHaveLength(3)
  })

  it('abort() ends a read in flight as ABORTED; loadMore works again afterwards', async () => {
    const { rt, earlier } = await recovered()
    const reading = new EarlierMessages(
      {
        getSnapshot: rt.getSnapshot,
        getEarlierPage: (_cursor, options) =>
          new Promise((_, reject) =>
            options?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))),
          ),
      },
      { threadId: 't1', hasMoreMessages: true, messagesCursor: 'c6' },
    )
    const read = reading.loadMore()
    reading.abort()
    await read
    expect(reading.getSnapshot()).toMatchObject({ loading: false, error: { code: 'ABORTED' }, messages: [] })
    await earlier.loadMore()
    expect(earlier.getSnapshot().messages).toHaveLength(3)
  })
})
