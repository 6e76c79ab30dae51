import { EventType } from '@interlude/protocol'
import { encodeEvent, encodeEventFrame } from '@interlude/protocol/sse'
import type { RunErrorCode } from '@interlude/protocol'
import type { Store, StoredEvent } from '../../store/store.ts'
import type { EventHub } from './event-hub.ts'
import { isTerminal } from '../ev.ts'

export interface LogStreamOptions {
  readonly store: Store
  readonly hub: EventHub
  /** Only this run's events (a run's own stream); absent = every event of the thread (replay). */
  readonly runId?: string
  /**
   * The stream ends after this run's terminal event. Absent: it ends as soon as the log has been
   * read up to date (a replay of a thread with no active run).
   */
  readonly untilRunEnds?: string
  /** Only events with `seq > afterSeq`. @default 0 */
  readonly afterSeq?: number
  /**
   * Stay open across runs after the replay (docs/approvals.md, `?follow=1`): the stream ends only when `signal`
   * aborts (the client left, or the server closes). `untilRunEnds` is ignored.
   */
  readonly follow?: boolean
  /**
   * Asked before a live `RUN_STARTED` is sent on a followed stream: `false` ends the stream there (the reader's
   * right to the thread is judged again at each new run).
   */
  readonly mayContinue?: () => Promise<boolean>
  readonly signal: AbortSignal
  /**
   * Awaited before the stream subscribes and reads: a fresh run's stream starts with its run, after the admissions
   * in progress (core/runs/admission-turns.ts), so a burst's answers are not slowed by log reads with nothing to read yet.
   */
  readonly startAfter?: () => Promise<void>
}

/**
 * Events read from the log per round trip (docs/decisions.md#bounded-histories): a replay holds one page in memory, never the whole log, and
 * the SSE body pulls the next page only when the client has taken the previous one.
 */
export const REPLAY_PAGE_EVENTS = 128

/** Resolves when `start` does or `signal` aborts, whichever comes first; the abort listener is removed either way. */
async function startOrAbort(start: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return
  let onAbort: (() => void) | undefined
  const abort = new Promise<void>((resolve) => {
    onAbort = () => resolve()
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    await Promise.race([start, abort])
  } finally {
    // Once started, the stream's own abort listener is the only one it needs.
    if (onAbort) signal.removeEventListener('abort', onAbort)
  }
}

/** SSE frames (`id: <seq>\ndata: <json>\n\n`) for a batch of stored events. */
export function framesOf(events: readonly StoredEvent[]): string {
  let out = ''
  for (const e of events) out += encodeEventFrame(e.json, e.seq)
  return out
}

/** The frame that ends a stream whose run was lost: `RUN_ERROR` without an `id:` line (not part of the log). */
export function lostFrame(code: RunErrorCode): string {
  const message =
    code === 'STORE_UNAVAILABLE'
      ? 'The store is unavailable: the run could not be saved. Reconnect later to see how it ends.'
      : 'Internal error'
  return encodeEvent({ type: EventType.RUN_ERROR, code, message })
}

/**
 * Frames from the durable log, then the live tail. Used for a fresh run, for "same runId + same
 * decision" retries (so a duplicate receives exactly the first run's events) and for the thread
 * replay route. Subscribes before reading so nothing appended in between is missed; the seq
 * cursor removes what both paths deliver. No timer per reader: events of local runs arrive from
 * the hub, events of runs in other processes arrive as hub wake-ups (NOTIFY or the log poll).
 */
export async function* logFrames(threadId: string, options: LogStreamOptions): AsyncGenerator<string, void, undefined> {
  const { store, hub, signal, runId, follow = false, mayContinue } = options
  if (options.startAfter) {
    // A client gone (or the server closing) meanwhile: nothing to subscribe to or read.
    await startOrAbort(options.startAfter(), options.signal)
    if (options.signal.aborted) return
  }
  const untilRunEnds = follow ? undefined : options.untilRunEnds
  const queue: StoredEvent[] = []
  let mustRead = false
  let wake: (() => void) | undefined
  const notify = () => {
    const w = wake
    wake = undefined
    w?.()
  }
  const unsubscribe = hub.subscribe(threadId, (events) => {
    if (events.length === 0) mustRead = true
    for (const e of events) if (runId === undefined || e.runId === runId) queue.push(e)
    if (mustRead || queue.length > 0) notify()
  })
  signal.addEventListener('abort', notify)
  let last = options.afterSeq ?? 0
  // The run whose loss (hub.lose: its store failed) ends this stream; a followed stream tracks the latest run.
  let current = untilRunEnds ?? runId
  const lost = (): RunErrorCode | undefined => (current === undefined ? undefined : hub.lostCode(threadId, current))
  const take = (events: readonly StoredEvent[]): { frames: string; done: boolean } => {
    const fresh: StoredEvent[] = []
    let done = false
    for (const e of events) {
      if (e.seq <= last) continue
      fresh.push(e)
      last = e.seq
      if (follow && e.type === EventType.RUN_STARTED) current = e.runId
      if (untilRunEnds !== undefined && e.runId === untilRunEnds && isTerminal(e.type)) {
        done = true
        break
      }
    }
    return { frames: framesOf(fresh), done }
  }
  /** The log after the cursor, one page at a time (the cursor moves as `take` consumes each page). */
  async function* pages(): AsyncGenerator<StoredEvent[], void, undefined> {
    for (;;) {
      const query = { afterSeq: last, limit: REPLAY_PAGE_EVENTS, ...(runId !== undefined ? { runId } : {}) }
      const page = await store.readEvents(threadId, query)
      if (page.length > 0) yield page
      if (page.length < REPLAY_PAGE_EVENTS || signal.aborted) return
    }
  }
  /** Sends a batch; `stop`: the follower may no longer read (before a new run), `done`: the awaited run ended. */
  async function* deliver(batch: StoredEvent[]): AsyncGenerator<string, 'done' | 'stop' | 'more', undefined> {
    if (mayContinue !== undefined) {
      const start = batch.findIndex((e) => e.seq > last && e.type === EventType.RUN_STARTED)
      if (start >= 0 && !(await mayContinue())) {
        const before = take(batch.slice(0, start))
        if (before.frames.length > 0) yield before.frames
        return 'stop'
      }
    }
    const next = take(batch)
    if (next.frames.length > 0) yield next.frames
    return next.done ? 'done' : 'more'
  }
  /** Sends the log from the cursor on, page by page. */
  async function* replay(): AsyncGenerator<string, 'done' | 'stop' | 'more', undefined> {
    for await (const page of pages()) {
      const outcome = yield* deliver(page)
      if (outcome !== 'more') return outcome
    }
    return 'more'
  }
  try {
    if ((yield* replay()) !== 'more') return
    if (!follow) {
      if (untilRunEnds === undefined) return
      // The run may have ended before we subscribed and the cursor may already be past its end.
      const run = await store.getRun(threadId, untilRunEnds)
      if (!run || run.status !== 'running') {
        yield* replay()
        return
      }
    }
    while (!signal.aborted) {
      const code = queue.length === 0 && !mustRead ? lost() : undefined
      if (code !== undefined) {
        // No durable end will come from this process: a typed end outside the log (no `id:`), so the client
        // reconnects later with Last-Event-ID (docs/protocol.md#sse-framing).
        yield lostFrame(code)
        return
      }
      if (queue.length === 0 && !mustRead) {
        await new Promise<void>((resolve) => (wake = resolve))
        if (signal.aborted) return
      }
      let outcome: 'done' | 'stop' | 'more'
      if (mustRead) {
        mustRead = false
        queue.length = 0
        outcome = yield* replay()
      } else {
        const batch = queue.splice(0, queue.length)
        // A gap (events published before this reader caught up) is filled from the log.
        if (batch.length > 0 && batch[0]!.seq > last + 1 && runId === undefined) outcome = yield* replay()
        else outcome = yield* deliver(batch)
      }
      if (outcome !== 'more') return
    }
  } finally {
    signal.removeEventListener('abort', notify)
    unsubscribe()
  }
}
