import type { ChatRuntime } from './chat-runtime.ts'

/** The part of a runtime completion input needs. */
export type CompletionRuntime = Pick<ChatRuntime<unknown>, 'getSnapshot' | 'subscribeFinish' | 'sendMessage'>

/**
 * Completion-style input for a runtime (docs/client-contract.md): every new input value becomes a user message,
 * except while the conversation is paused, resuming, running or in recovery. Then the latest value
 * is deferred: A→B→C during a pause still resumes A's turn, and only C is sent, once, after an
 * interaction **succeeds**. Another interrupt keeps C deferred; a failure or a stop does not send
 * it (the next input change, or the next success, does). A thread change forgets everything.
 */
export class CompletionInput {
  readonly #runtime: CompletionRuntime
  #lastSent: string | undefined
  #deferred: string | undefined
  #threadId: string
  readonly #listeners = new Set<() => void>()
  #unsubscribe: (() => void) | undefined

  constructor(runtime: CompletionRuntime) {
    this.#runtime = runtime
    this.#threadId = runtime.getSnapshot().threadId
  }

  /** The input waiting for the next successful interaction, if any. */
  readonly getDeferred = (): string | undefined => {
    this.#syncThread()
    return this.#deferred
  }

  /** Starts listening to settlements (idempotent); returns the disconnect function. */
  readonly connect = (): (() => void) => {
    this.#unsubscribe ??= this.#runtime.subscribeFinish((info) => {
      this.#syncThread()
      if (info.outcome === 'success' && this.#deferred !== undefined) {
        const next = this.#deferred
        this.#deferred = undefined
        this.#notify()
        // After the settling commit: the runtime is idle again unless a listener started something.
        queueMicrotask(() => this.setInput(next))
      }
    })
    return () => {
      this.#unsubscribe?.()
      this.#unsubscribe = undefined
    }
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** Offers a new input value. Empty strings and unchanged values send nothing. */
  readonly setInput = (value: string | undefined): void => {
    this.#syncThread()
    if (value === undefined || value.trim() === '' || value === this.#lastSent) {
      if (this.#deferred !== undefined) {
        this.#deferred = undefined
        this.#notify()
      }
      return
    }
    const s = this.#runtime.getSnapshot()
    if (s.pendingInterrupts || s.isLoading || s.recovery.required) {
      if (this.#deferred !== value) {
        this.#deferred = value
        this.#notify()
      }
      return
    }
    this.#lastSent = value
    if (this.#deferred !== undefined) {
      this.#deferred = undefined
      this.#notify()
    }
    void this.#runtime.sendMessage(value)
  }

  #syncThread(): void {
    const threadId = this.#runtime.getSnapshot().threadId
    if (threadId === this.#threadId) return
    this.#threadId = threadId
    this.#lastSent = undefined
    this.#deferred = undefined
  }

  #notify(): void {
    for (const l of [...this.#listeners]) l()
  }
}
