import { encodeEventFrame } from '@interlude/protocol'
import type { Store, StoredEvent } from '../store/store.ts'
import type { EventHub } from './event-hub.ts'
import { isTerminal } from './events.ts'

export interface RunStreamOptions {
  readonly store: Store
  readonly hub: EventHub
  /** Whether this process executes the run (otherwise the log is polled: another replica, or a dead run). */
  readonly isLocal: () => boolean
  /** Only events with `seq > afterSeq`. @default 0 */
  readonly afterSeq?: number
  readonly signal: AbortSignal
  /** Poll interval of the slow path. @default 500 */
  readonly pollMs?: number
}

/** SSE frames (`id: <seq>\ndata: <json>\n\n`) for a batch of stored events. */
export function framesOf(events: readonly StoredEvent[]): string {
  let out = ''
  for (const e of events) out += encodeEventFrame(e.json, e.seq)
  return out
}

/**
 * The frames of one run from the durable log, then its live tail until its terminal event. Used for
 * a fresh run and for "same runId + same decision" retries alike, so a duplicate receives exactly
 * the first run's events. Subscribes before reading so nothing appended in between is missed.
 */
export async function* runFrames(threadId: string, runId: string, options: RunStreamOptions): AsyncGenerator<string, void, undefined> {
  const { store, hub, signal } = options
  const pollMs = options.pollMs ?? 500
  const queue: StoredEvent[] = []
  let wake: (() => void) | undefined
  const notify = () => {
    const w = wake
    wake = undefined
    w?.()
  }
  const unsubscribe = hub.subscribe(threadId, (events) => {
    for (const e of events) if (e.runId === runId) queue.push(e)
    if (queue.length > 0) notify()
  })
  signal.addEventListener('abort', notify)
  let last = options.afterSeq ?? 0
  const take = (events: readonly StoredEvent[]): { frames: string; done: boolean } => {
    const fresh: StoredEvent[] = []
    let done = false
    for (const e of events) {
      if (e.seq <= last) continue
      fresh.push(e)
      last = e.seq
      if (isTerminal(e.type)) {
        done = true
        break
      }
    }
    return { frames: framesOf(fresh), done }
  }
  try {
    const first = take(await store.readEvents(threadId, { runId, afterSeq: last }))
    if (first.frames.length > 0) yield first.frames
    if (first.done) return
    while (!signal.aborted) {
      if (queue.length === 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollMs)
          wake = () => {
            clearTimeout(timer)
            resolve()
          }
        })
        wake = undefined
        if (signal.aborted) return
        if (queue.length === 0) {
          // Slow path: nothing announced. Read the log; if the run is not executing here and
          // nothing new is logged, stop once the run is no longer running anywhere.
          const more = await store.readEvents(threadId, { runId, afterSeq: last })
          if (more.length > 0) queue.push(...more)
          else if (!options.isLocal()) {
            const run = await store.getRun(threadId, runId)
            if (!run || run.status !== 'running') return
          }
          continue
        }
      }
      const next = take(queue.splice(0, queue.length))
      if (next.frames.length > 0) yield next.frames
      if (next.done) return
    }
  } finally {
    signal.removeEventListener('abort', notify)
    unsubscribe()
  }
}
