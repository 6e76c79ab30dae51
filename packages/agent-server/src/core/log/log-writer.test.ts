import { afterEach, describe, expect, it } from 'vitest'
import { SqliteStore } from '../../store/sqlite/sqlite-store.ts'
import { RunNotActiveError } from '../../store/store.ts'
import type { NewEvent, StoredEvent, Store } from '../../store/store.ts'
import { firstRunRequest } from '../../store/conformance/kit.ts'
import { tempDir } from '../../test-utils/harness.ts'
import { EventHub } from './event-hub.ts'
import { ev } from '../ev.ts'
import { LogWriter } from './log-writer.ts'

/** A real SQLite store whose appends take `delayMs` (a slow database), counting how many run at once. */
function slowStore(store: Store, delayMs: number) {
  const seen = { batches: [] as number[], concurrent: 0, maxConcurrent: 0, failNext: false }
  const appendEvents = async (threadId: string, runId: string, events: readonly NewEvent[]) => {
    seen.concurrent += 1
    seen.maxConcurrent = Math.max(seen.maxConcurrent, seen.concurrent)
    seen.batches.push(events.length)
    try {
      await new Promise((resolve) => setTimeout(resolve, delayMs))
      if (seen.failNext) throw new Error('disk full')
      return await store.appendEvents(threadId, runId, events)
    } finally {
      seen.concurrent -= 1
    }
  }
  return { store: new Proxy(store, { get: (t, k) => (k === 'appendEvents' ? appendEvents : Reflect.get(t, k)) }), seen }
}

const text = (i: number) => ev.textContent('m', `d${i}`)

describe('LogWriter', () => {
  const cleanups: (() => void)[] = []
  afterEach(() => cleanups.splice(0).forEach((c) => c()))

  async function open(delayMs: number) {
    const { dbPath, cleanup } = tempDir()
    const real = new SqliteStore(dbPath)
    cleanups.push(() => {
      void real.close()
      cleanup()
    })
    const now = Date.now()
    const started = await real.startInputRun(firstRunRequest('t', 'r', now))
    expect(started.ok).toBe(true)
    const hub = new EventHub()
    const published: StoredEvent[] = []
    hub.subscribe('t', (events) => published.push(...events))
    const slow = slowStore(real, delayMs)
    return { real, hub, published, ...slow, writer: new LogWriter(slow.store, hub, 't', 'r', 4) }
  }

  /** What the run manager does with each event of a hot run. */
  async function produce(writer: LogWriter, from: number, count: number) {
    for (let i = from; i < from + count; i++) {
      writer.push(text(i))
      writer.throwIfFailed()
      if (writer.full) await writer.relieve()
    }
  }

  it('overlaps producing and writing: one append at a time, batches grow to 8 × flushEvery, the log in order', async () => {
    const { real, published, seen, writer } = await open(15)
    await produce(writer, 0, 200)
    await writer.flush()
    expect(seen.maxConcurrent).toBe(1)
    // The first batch leaves when full; the run fills the next ones while each append runs, up to the cap.
    expect(seen.batches[0]).toBe(4)
    expect(Math.max(...seen.batches)).toBe(32)
    expect(seen.batches.reduce((a, b) => a + b, 0)).toBe(200)
    const stored = await real.readEvents('t', { afterSeq: 0 })
    const deltas = stored.map((e) => (JSON.parse(e.json) as { delta: string }).delta)
    expect(deltas).toEqual(Array.from({ length: 200 }, (_, i) => `d${i}`))
    // Published only after they were committed, in the same order.
    expect(published.map((e) => e.seq)).toEqual(stored.map((e) => e.seq))
  })

  it('a failed append stops the run at its next event, and flush rejects with that error', async () => {
    const { real, seen, writer } = await open(5)
    await produce(writer, 0, 8)
    seen.failNext = true
    await expect(produce(writer, 8, 500)).rejects.toThrow('disk full')
    await expect(writer.flush()).rejects.toThrow('disk full')
    // Nothing after the failed batch was written: the log is a prefix of what the run produced.
    const stored = await real.readEvents('t', { afterSeq: 0 })
    const deltas = stored.map((e) => (JSON.parse(e.json) as { delta: string }).delta)
    expect(deltas).toEqual(Array.from({ length: deltas.length }, (_, i) => `d${i}`))
    expect(deltas.length).toBeLessThan(508)
  })

  it('flush() between relieved batches (before a row the events produced) returns once every event before it committed', async () => {
    const { real, seen, writer } = await open(10)
    await produce(writer, 0, 37)
    await writer.flush()
    // What a row write does first (RunWrites.#afterEvents): everything pushed so far is in the log.
    expect((await real.readEvents('t', { afterSeq: 0 })).length).toBe(37)
    await produce(writer, 37, 40)
    await writer.flush()
    expect((await real.readEvents('t', { afterSeq: 0 })).length).toBe(77)
    expect(seen.maxConcurrent).toBe(1)
  })

  it('a run that lost its thread (fenced) stops at its next event with RunNotActiveError', async () => {
    const { real, writer } = await open(5)
    await produce(writer, 0, 8)
    await writer.flush()
    // Another process closed the run (recovery): its appends are refused from now on.
    await real.finishRun({
      threadId: 't',
      runId: 'r',
      status: 'failed',
      outcome: undefined,
      errorCode: 'INTERNAL',
      events: [],
      closeBatch: undefined,
      now: Date.now(),
    })
    await expect(produce(writer, 8, 500)).rejects.toBeInstanceOf(RunNotActiveError)
    expect((await real.readEvents('t', { afterSeq: 0 })).length).toBe(8)
  })
})
