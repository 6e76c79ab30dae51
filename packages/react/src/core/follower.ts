import { errorFromFetch, parseExpiresAt } from '@interlude/protocol'
import type { ChatStore } from './chat-store.ts'
import type { ResolvedOptions } from './options.ts'
import type { ServerFeatures } from './server-features.ts'
import { sleep } from './sleep.ts'
import type { Transport } from './transport.ts'

/** What the follower reads and does (the runtime's interactions). */
export interface FollowerHost {
  readonly store: ChatStore<unknown>
  readonly features: ServerFeatures
  options(): ResolvedOptions<unknown>
  transport(): Transport
  /** A run started on the thread while the batch waited here: join it, replaying after `from`. */
  join(runId: string, from: string): void
}

// setTimeout's longest delay.
const MAX_DELAY = 2 ** 31 - 1

/**
 * While a batch is pending and not claimed here, the runtime follows the thread
 * (docs/client-contract.md#decided-elsewhere): `GET …/events?follow=1` after the last seen event
 * id, reconnecting with `Last-Event-ID`. A `RUN_STARTED` means somebody decided the batch (another
 * tab, another person, the decisions API, a deadline): the follower hands the run to `join` and
 * stops. It also marks the batch `expired` when its deadline passes. `sync()` runs after every
 * commit: a claim, a thread change, a settled batch or disposal closes the stream.
 */
export class Follower {
  readonly #host: FollowerHost
  #key: string | undefined
  #stop: (() => void) | undefined

  constructor(host: FollowerHost) {
    this.#host = host
  }

  sync(disposed: boolean): void {
    const { store, features } = this.#host
    const s = store.state
    const batch = disposed || s.run ? undefined : s.pending
    // Calls waiting for another system are followed the same way: their result starts a run (external-calls.ts).
    const awaiting = disposed || s.run ? [] : s.awaitingExternal
    const waiting = batch !== undefined || awaiting.length > 0
    const options = this.#host.options()
    const follow = waiting && options.follow !== false && s.lastEventId !== undefined && features.available
    const what = batch ? batch.id : awaiting.map((c) => c.toolCallId).join(',')
    const key = waiting ? `${s.threadId}\u0000${what}\u0000${follow}` : undefined
    if (key === this.#key) return
    this.#stop?.()
    this.#stop = undefined
    this.#key = key
    if (!waiting) return
    const controller = new AbortController()
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadline = Math.min(...(batch?.interrupts ?? []).map((i) => parseExpiresAt(i.expiresAt) ?? Infinity))
    const check = () => {
      const now = options.now()
      if (now >= deadline) store.commit({ type: 'batch/expired', id: batch!.id })
      else timer = setTimeout(check, Math.min(MAX_DELAY, Math.max(0, deadline - now)))
    }
    if (batch && !batch.expired && deadline !== Infinity) timer = setTimeout(check, 0)
    this.#stop = () => {
      controller.abort()
      clearTimeout(timer)
    }
    if (follow) void this.#follow(s.threadId, s.lastEventId!, controller.signal)
  }

  async #follow(threadId: string, from: string, signal: AbortSignal): Promise<void> {
    const host = this.#host
    let failures = 0
    while (!signal.aborted) {
      try {
        const source = host.transport().connect(threadId, { lastEventId: from, signal, follow: true, stay: true })
        for await (const batch of source)
          for (const { id, event } of batch) {
            if (signal.aborted) return
            failures = 0
            if (event.type === 'RUN_STARTED') return host.join(event.runId, from)
            if (id !== undefined) from = id
          }
      } catch (error) {
        // A plain server, an auth failure or a thread that is gone: nothing to follow.
        if (signal.aborted || host.features.observe(error) || !errorFromFetch(error).retryable) return
      }
      failures += 1
      await sleep(host.options().reconnect.delayMs(Math.min(failures, 5)), signal)
    }
  }
}
