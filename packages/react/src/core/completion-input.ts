import type { ChatRuntime } from './chat-runtime.ts'
import { Store } from './store.ts'

/** The part of a runtime completion input needs. */
export type CompletionRuntime = Pick<ChatRuntime<unknown>, 'getSnapshot' | 'subscribeFinish' | 'sendMessage'>

/** Input values of one thread: a thread change forgets them. */
interface CompletionState {
  readonly threadId: string
  readonly lastSent: string | undefined
  readonly deferred: string | undefined
}

const fresh = (threadId: string): CompletionState => ({ threadId, lastSent: undefined, deferred: undefined })

/**
 * Completion-style input for a runtime (docs/client-contract.md): every new input value becomes a user message,
 * except while the conversation is paused, resuming, running or in recovery. Then the latest value
 * is deferred: A→B→C during a pause still resumes A's turn, and only C is sent, once, after an
 * interaction **succeeds**. Another interrupt keeps C deferred; a failure or a stop does not send
 * it (the next input change, or the next success, does). A thread change forgets everything.
 */
export class CompletionInput {
  readonly #runtime: CompletionRuntime
  readonly #store: Store<CompletionState, CompletionState>
  #unsubscribe: (() => void) | undefined

  constructor(runtime: CompletionRuntime) {
    this.#runtime = runtime
    this.#store = new Store(fresh(runtime.getSnapshot().threadId), (s) => s)
  }

  readonly subscribe = (listener: () => void): (() => void) => this.#store.subscribe(listener)

  /** The input waiting for the next successful interaction, if any. */
  readonly getDeferred = (): string | undefined => this.#current().deferred

  /** Starts listening to settlements (idempotent); returns the disconnect function. */
  readonly connect = (): (() => void) => {
    this.#unsubscribe ??= this.#runtime.subscribeFinish((info) => {
      const s = this.#current()
      if (info.outcome === 'success' && s.deferred !== undefined) {
        const next = s.deferred
        this.#store.set({ ...s, deferred: undefined })
        // After the settling commit: the runtime is idle again unless a listener started something.
        queueMicrotask(() => this.setInput(next))
      }
    })
    return () => {
      this.#unsubscribe?.()
      this.#unsubscribe = undefined
    }
  }

  /** Offers a new input value. Empty strings and unchanged values send nothing. */
  readonly setInput = (value: string | undefined): void => {
    const s = this.#current()
    if (value === undefined || value.trim() === '' || value === s.lastSent) {
      if (s.deferred !== undefined) this.#store.set({ ...s, deferred: undefined })
      return
    }
    const chat = this.#runtime.getSnapshot()
    if (chat.pendingInterrupts || chat.isLoading || chat.recovery.required) {
      if (s.deferred !== value) this.#store.set({ ...s, deferred: value })
      return
    }
    this.#store.set({ ...s, lastSent: value, deferred: undefined })
    void this.#runtime.sendMessage(value)
  }

  /** The values of the runtime's current thread (fresh ones after a thread change). */
  #current(): CompletionState {
    const s = this.#store.state
    const threadId = this.#runtime.getSnapshot().threadId
    return s.threadId === threadId ? s : fresh(threadId)
  }
}
