import type { Message, ThreadSnapshot } from '@interlude/protocol'
import { errorFromFetch } from '@interlude/protocol'
import { clientError } from './errors.ts'
import { deepFreeze } from './immutable.ts'
import type { Interactions, InteractionsEnv } from './interactions.ts'
import { buildInput, requestConfig } from './interaction-plan.ts'
import { queuedEntry, stillQueued } from './queue-state.ts'
import type { CoreState } from './reducer.ts'
import type { FinishInfo, QueuedMessage, QueueStorage, WhileBusy } from './types.ts'

/** What the queue starts and watches: the runtime's interactions. */
export type QueueInteractions = Pick<Interactions<unknown>, 'start' | 'disposed' | 'finished' | 'flush'>

const KEY = 'interlude:queued:'

/**
 * Many messages, one thread (docs/react-runtime.md#many-messages-one-thread). A message sent while busy is posted with
 * its strategy (`forwardedProps.interlude.multitask`, docs/protocol.md#multitask) under a runId of its own; until its
 * run starts it is an entry of `queued`. Posts go out one after another, each once the running run is acknowledged
 * (so the server sees them in the order they were typed). Whenever the runtime is idle with entries left, it follows
 * the thread log for the next run to start (`attach` with `next`), whose `RUN_STARTED` moves its message into the
 * history (queue-state.ts). The entries are kept in `queueStorage` per thread, so `recover()` after a reload shows them
 * again (the server's `ThreadSnapshot.queued` is not read yet: docs/quality.md#what-is-not-built).
 */
export class QueuedInput {
  readonly #host: InteractionsEnv<unknown>
  readonly #interactions: QueueInteractions
  #chain: Promise<unknown> = Promise.resolve()
  #seen: Pick<CoreState, 'threadId' | 'queued'>

  constructor(host: InteractionsEnv<unknown>, interactions: QueueInteractions) {
    this.#host = host
    this.#interactions = interactions
    this.#seen = host.store.state
    // Internal: writes only when this thread's queue changes; a finished interaction lets the queue go on.
    host.store.subscribe(() => this.#save())
    interactions.finished.add((info) => this.#finished(info))
  }

  /** `sendMessage` while busy: resolves once the server took the message, rejects with its refusal. */
  send(message: Message, strategy: WhileBusy): Promise<void> {
    const { store, features } = this.#host
    const transport = this.#host.transport()
    if (!transport.submit || !features.available)
      throw clientError('INVALID_STATE', 'Sending while a run is in progress needs an Interlude server.', {
        reason: 'busy',
      })
    const s = store.state
    const { threadId } = s
    const runId = this.#host.options().generateId()
    const config = requestConfig(this.#host.options())
    const own = config.forwardedProps.interlude
    const interlude = { ...(typeof own === 'object' && own !== null ? own : {}), multitask: strategy }
    // Only the new message: the server owns the history (a streaming answer is not in it yet).
    const input = buildInput(threadId, runId, [message], s.state, {
      ...config,
      forwardedProps: { ...config.forwardedProps, interlude },
    })
    store.commit({ type: 'queue/added', entry: queuedEntry(runId, message), front: strategy === 'interrupt' })
    const sent = this.#chain.then(() => this.#acknowledged()).then(() => transport.submit!(input))
    this.#chain = sent.catch(() => undefined)
    return sent.then(
      (answer) => {
        if (store.state.threadId !== threadId) return
        if ('steered' in answer) {
          // After what the turn streamed so far: buffered deltas commit first.
          this.#interactions.flush()
          store.commit({ type: 'queue/removed', runId, message })
        }
        this.drain()
      },
      (error: unknown) => {
        if (store.state.threadId === threadId) store.commit({ type: 'queue/removed', runId })
        throw errorFromFetch(error)
      },
    )
  }

  /** `cancelQueued`: the server removes the queued run (or cancels it, had it just started); then it leaves `queued`. */
  cancel(runId: string): Promise<void> {
    const { store } = this.#host
    const { threadId, queued } = store.state
    if (!queued.some((q) => q.runId === runId))
      throw clientError('RUN_NOT_FOUND', 'No queued message has this runId.', { runId })
    return (this.#host.transport().cancel?.(threadId, runId) ?? Promise.resolve()).then(() => {
      if (store.state.threadId === threadId) store.commit({ type: 'queue/removed', runId })
    })
  }

  /** After an interaction: a run that ended by itself (or was cancelled) lets the queue go on. */
  #finished(info: FinishInfo): void {
    if (info.outcome !== 'success' && info.outcome !== 'cancelled') return
    if (this.#host.store.state.steered.length > 0) this.#host.store.commit({ type: 'queue/unclaimed' })
    this.drain()
  }

  /** While idle with entries left: follow the thread for the next run that starts. */
  drain(): void {
    const s = this.#host.store.state
    const head = s.queued[0]
    if (!head || s.run || s.pending || s.recovery.required || s.lastEventId === undefined) return
    if (this.#interactions.disposed || !this.#host.features.available) return
    void this.#interactions.start({ kind: 'attach', runId: head.runId, from: s.lastEventId, next: true })
  }

  /**
   * After a restore from the server: the stored entries whose message is not in its history yet. An idle thread has
   * no queue (the server starts queued input as soon as the thread is free), so its entries are gone.
   */
  restore(snapshot: ThreadSnapshot): void {
    const stored = snapshot.status === 'idle' ? [] : this.#load(snapshot.threadId)
    this.#host.store.commit({ type: 'queue/restored', queued: stillQueued(stored, snapshot.messages) })
  }

  /** Resolves once the running run is acknowledged (or nothing runs): input posted later is admitted after it. */
  #acknowledged(): Promise<void> {
    const { store } = this.#host
    const ready = () => !store.state.run || store.state.run.acknowledged || this.#interactions.disposed
    if (ready()) return Promise.resolve()
    return new Promise((resolve) => {
      const stop = store.subscribe(() => {
        if (!ready()) return
        stop()
        resolve()
      })
    })
  }

  #storage(): QueueStorage | undefined {
    const chosen = this.#host.options().queueStorage
    if (chosen === false) return undefined
    try {
      return chosen ?? globalThis.sessionStorage
    } catch {
      return undefined // storage access can be denied (sandboxed frames)
    }
  }

  #save(): void {
    const { threadId, queued } = this.#host.store.state
    const seen = this.#seen
    this.#seen = { threadId, queued }
    // A thread change clears the queue in memory; the thread's stored queue stays for its `recover()`.
    if (threadId !== seen.threadId || queued === seen.queued) return
    try {
      const storage = this.#storage()
      const saved = queued.map(({ runId, message }) => ({ runId, message }))
      if (saved.length === 0) storage?.removeItem(KEY + threadId)
      else storage?.setItem(KEY + threadId, JSON.stringify(saved))
    } catch {
      // A full or denied storage only loses the queue across reloads.
    }
  }

  #load(threadId: string): readonly QueuedMessage[] {
    try {
      const raw: unknown = JSON.parse(this.#storage()?.getItem(KEY + threadId) ?? '[]')
      if (!Array.isArray(raw)) return []
      return raw
        .filter(
          (e: { runId?: unknown; message?: { id?: unknown } }) =>
            typeof e?.runId === 'string' && typeof e.message?.id === 'string',
        )
        .map((e: { runId: string; message: Message }) => queuedEntry(e.runId, deepFreeze(e.message)))
    } catch {
      return []
    }
  }
}
