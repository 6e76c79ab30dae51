import type { AgUiEvent, Interrupt, InterludeError, Message, ThreadSnapshot } from '@interlude/protocol'
import { checkResume, interruptProblems, isExpiredAt, resumeCheckError } from '@interlude/protocol'
import { applyEvents } from './assemble.ts'
import type { DriverHost, InteractionConfig, InteractionPlan } from './driver.ts'
import { buildInput, driveInteraction } from './driver.ts'
import { clientError, protocolViolation } from './errors.ts'
import { createHttpTransport } from './http-transport.ts'
import { snapshotProblem } from './snapshot-problems.ts'
import { deepFreeze, frozenJsonCopy, randomId } from './immutable.ts'
import type { Action, CoreState, Interaction, InteractionKind } from './reducer.ts'
import { initialState, reduce, toSnapshot } from './reducer.ts'
import type { Transport } from './transport.ts'
import type {
  BrowserTool,
  ChatRuntimeOptions,
  ChatSnapshot,
  ConnectionStatus,
  ConversationSnapshot,
  FinishInfo,
  InteractionOutcome,
  PendingInterruptBatch,
  RecoverResult,
  RecoveryConfiguration,
  RestoreOptions,
  ResumeOptions,
  SendMessageInput,
} from './types.ts'

type Updater<T> = T | ((previous: T) => T)

const defaultDelay = (attempt: number) => Math.min(4000, 250 * 2 ** (attempt - 1))

interface Inbox {
  readonly gen: number
  readonly events: AgUiEvent[]
  lastEventId: string | undefined
}

/**
 * The framework-free chat runtime: one pure reducer over a discriminated union of actions,
 * immutable identity-stable snapshots, effects scheduled after commit, and per-interaction
 * AbortControllers. Implements the whole interrupt/resume/recovery contract (docs/client-contract.md).
 *
 * Commit policy: every public call and every lifecycle event (RUN_STARTED, RUN_FINISHED,
 * RUN_ERROR) commits synchronously and notifies once. Streamed content events are buffered and
 * committed together at most every `throttleMs` (default 16 ms), and always before a lifecycle
 * commit, so subscribers see one change per committed step and one per coalesced delta burst.
 *
 * All methods are bound (stable identities), so they can be passed around and used as React props.
 */
export class ChatRuntime<TState = unknown> {
  #state: CoreState
  #snapshot: ChatSnapshot<TState>
  readonly #serverSnapshot: ChatSnapshot<TState>
  readonly #listeners = new Set<() => void>()
  #options: ChatRuntimeOptions<TState>
  #transport: Transport
  #depth = 0
  #dirty = false
  #gen = 0
  readonly #controllers = new Map<number, AbortController>()
  readonly #waiters = new Map<number, () => void>()
  #inbox: Inbox | undefined
  #flushTimer: ReturnType<typeof setTimeout> | undefined
  #disposed = false

  constructor(options: ChatRuntimeOptions<TState> = {}) {
    // No side effects here (React may construct and discard instances in StrictMode).
    this.#options = options
    this.#transport = options.transport ?? this.#defaultTransport()
    const threadId = options.threadId ?? this.#id()
    const messages = Object.freeze(
      (options.initialMessages ?? []).map((m) => deepFreeze({ ...m })),
    ) as readonly Message[]
    this.#state = initialState(threadId, messages, options.initialState)
    this.#snapshot = toSnapshot<TState>(this.#state)
    this.#serverSnapshot = this.#snapshot
  }

  // ---------------------------------------------------------------- store

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  readonly getSnapshot = (): ChatSnapshot<TState> => this.#snapshot

  readonly #finishListeners = new Set<(info: FinishInfo) => void>()

  /** Called after every interaction settles (after the settling commit), like `onFinish`. */
  readonly subscribeFinish = (listener: (info: FinishInfo) => void): (() => void) => {
    this.#finishListeners.add(listener)
    return () => {
      this.#finishListeners.delete(listener)
    }
  }

  /** The snapshot used for server rendering and hydration: the initial one, never network state. */
  readonly getServerSnapshot = (): ChatSnapshot<TState> => this.#serverSnapshot

  /** Merges options. A different `threadId` retires the local batch and late callbacks. */
  readonly updateOptions = (options: Partial<ChatRuntimeOptions<TState>>): void => {
    const { threadId, ...rest } = options
    const transportChanged = 'transport' in options && options.transport !== this.#options.transport
    this.#options = { ...this.#options, ...rest }
    if (transportChanged) this.#transport = this.#options.transport ?? this.#defaultTransport()
    if (threadId !== undefined) this.setThreadId(threadId)
  }

  /**
   * Changes the thread. A different id retires the local batch, any claim or run (aborted locally;
   * server work is not cancelled) and the recovery requirement; committed messages and state stay.
   * The same id resets nothing.
   */
  readonly setThreadId = (threadId: string): void => {
    if (typeof threadId !== 'string' || threadId === '')
      throw clientError('INVALID_INPUT', 'threadId must be a non-empty string.')
    const previous = this.#state.threadId
    if (threadId === previous) return
    const run = this.#state.run
    this.#transaction(() => {
      this.#dropInbox()
      this.#dispatch({ type: 'thread/changed', threadId })
    })
    // The retired interaction belonged to the previous thread: its callbacks report that one.
    if (run) this.#finishInteraction(run, 'retired', undefined, previous)
  }

  /**
   * Starts a fresh thread with empty history and state (the "New conversation" action). A new id
   * (the default) retires the local batch, claim and recovery requirement. Passing the *current*
   * id resets nothing that is locked: it clears history and state only when message replacement
   * is allowed, and otherwise throws like `setMessages` (`RECOVERY_REQUIRED`, `INVALID_STATE`).
   */
  readonly newThread = (threadId: string = this.#id()): string => {
    if (threadId === this.#state.threadId)
      this.#assertMessagesUnlocked('start a new conversation on the same thread id')
    this.setThreadId(threadId)
    this.#transaction(() => {
      this.#dispatch({ type: 'messages/replaced', messages: Object.freeze([]) })
      this.#dispatch({ type: 'state/replaced', state: this.#options.initialState })
    })
    return threadId
  }

  // ---------------------------------------------------------------- commands

  /**
   * Sends a user message and runs the agent. Throws synchronously (`RECOVERY_REQUIRED`,
   * `INVALID_STATE` while a batch is pending or claimed or a run is active, `INVALID_INPUT`);
   * otherwise returns a promise that resolves (never rejects) when the interaction settles.
   */
  readonly sendMessage = (input: string | SendMessageInput): Promise<void> => {
    this.#assertMessagesUnlocked('send a message')
    const content = typeof input === 'string' ? input : input?.content
    if (typeof content !== 'string' && !Array.isArray(content))
      throw clientError('INVALID_INPUT', 'A message needs string or array content.')
    const id = typeof input === 'object' && input.id !== undefined ? input.id : this.#id()
    const message = deepFreeze({
      id,
      role: 'user',
      content: Array.isArray(content) ? frozenJsonCopy(content) : content,
    }) as Message
    return this.#start('send', Object.freeze([...this.#state.messages, message]))
  }

  /** Re-runs the last user turn (history after it is dropped). Same locks as `sendMessage`. */
  readonly reload = (): Promise<void> => {
    this.#assertMessagesUnlocked('reload')
    const messages = this.#state.messages
    let last = -1
    for (let i = messages.length - 1; i >= 0; i--) {
      if (messages[i]!.role === 'user') {
        last = i
        break
      }
    }
    if (last < 0) throw clientError('INVALID_STATE', 'There is no user message to reload.')
    return this.#start('send', Object.freeze(messages.slice(0, last + 1)))
  }

  /** Replaces the history. Throws while a batch is pending or claimed, a run is active, or recovery is required. */
  readonly setMessages = (next: Updater<readonly Message[]>): void => {
    this.#assertMessagesUnlocked('replace messages')
    const value = typeof next === 'function' ? next(this.#state.messages) : next
    if (!Array.isArray(value) || !value.every((m) => isMessageLike(m)))
      throw clientError('INVALID_INPUT', 'Messages must be objects with string id and role.')
    const result = applyEvents(this.#state.messages, this.#state.state, [
      { type: 'MESSAGES_SNAPSHOT', messages: value } as AgUiEvent,
    ])
    this.#transaction(() => this.#dispatch({ type: 'messages/replaced', messages: result.messages }))
  }

  /**
   * Replaces the shared state. Allowed while idle and while awaiting answers; throws
   * `INVALID_STATE` once a batch is claimed or while any run is active. State never resumes a run.
   */
  readonly setState = (next: Updater<TState>): void => {
    this.#assertAlive()
    if (this.#state.run) {
      throw clientError(
        'INVALID_STATE',
        this.#state.run.claimId !== undefined || this.#state.run.resumed
          ? 'Cannot set shared state while an interrupt batch is claimed.'
          : 'Cannot set shared state while a run is in progress.',
      )
    }
    const value = typeof next === 'function' ? (next as (p: TState) => TState)(this.#state.state as TState) : next
    this.#transaction(() => this.#dispatch({ type: 'state/replaced', state: value }))
  }

  /**
   * Answers the pending batch. Validates synchronously and throws (`RECOVERY_REQUIRED`,
   * `BATCH_CLAIMED`, `STALE_BATCH`, `INTERRUPT_EXPIRED`, `INVALID_INPUT`, `RESUME_INCOMPLETE`,
   * `RESUME_UNKNOWN_INTERRUPT`, `RESUME_DUPLICATE_ENTRY`); on success claims the batch in the
   * same tick, captures messages and state, and only then schedules the request.
   */
  readonly resume = (options: ResumeOptions): Promise<void> => {
    this.#assertAlive()
    const s = this.#state
    if (s.recovery.required)
      throw clientError('RECOVERY_REQUIRED', 'Recovery requires a new thread or a restored conversation.')
    if (s.run && (s.run.claimId !== undefined || s.run.resumed))
      throw clientError('BATCH_CLAIMED', 'Interrupt batch already claimed.')
    const batch = s.pending
    if (!batch || typeof options !== 'object' || options === null || options.batchId !== batch.id) {
      throw clientError('STALE_BATCH', 'Stale interrupt batch.')
    }
    if (s.run) throw clientError('INVALID_STATE', 'A run is in progress.')
    const now = this.#now()
    const expired = batch.interrupts.filter((i) => isExpiredAt(i.expiresAt, now)).map((i) => i.id)
    if (expired.length > 0) {
      throw clientError('INTERRUPT_EXPIRED', 'The interrupt batch has expired; start a new thread to continue.', {
        interruptIds: expired,
      })
    }
    const check = checkResume(batch.interrupts, options.entries, { now, expiry: 'refuse-all' })
    if (!check.ok) throw resumeCheckError(check)
    // A frozen deep copy: later changes by the caller do not leak into the request or retries.
    const entries = frozenJsonCopy(check.entries)
    return this.#start('resume', undefined, { claimId: batch.id, entries, interrupts: batch.interrupts })
  }

  /**
   * Stops the active interaction. Before acknowledgement the request is aborted and a claimed
   * batch is released (still answerable). After acknowledgement the run is cancelled on the
   * server too; in a resumed interaction that requires recovery.
   */
  readonly stop = (): void => {
    const run = this.#state.run
    if (!run || this.#disposed) return
    this.#controllers.get(run.gen)?.abort()
    if (run.acknowledged && this.#transport.cancel) {
      this.#transport.cancel(this.#state.threadId, run.runId).catch(() => undefined)
    }
    this.#settle(run.gen, 'stopped')
  }

  /** Commits buffered stream deltas now (tests and benchmarks; the runtime does it on its own). */
  readonly flush = (): void => {
    if (this.#inbox) this.#transaction(() => this.#flushInbox())
  }

  // ---------------------------------------------------------------- recovery

  /** What this client would send (tools, context, forwarded props), without scheduling a run. */
  readonly getRecoveryConfiguration = (): RecoveryConfiguration => ({
    threadId: this.#state.threadId,
    revision: this.#state.recovery.revision,
    ...this.#config(),
  })

  /**
   * Installs a server-owned conversation. Only while idle (a pending batch or a recovery
   * requirement is fine); `expectedRevision` must equal `recovery.revision` captured before the
   * lookup. Invalid or stale input throws and changes nothing. Success clears errors and the
   * recovery requirement and publishes the snapshot's interrupts as a fresh local batch — without
   * network or tool execution.
   */
  readonly restoreConversation = (snapshot: ConversationSnapshot, options: RestoreOptions): void => {
    this.#assertAlive()
    const s = this.#state
    if (s.run) throw clientError('INVALID_STATE', 'Cannot restore while a run is active.', { reason: 'busy' })
    if (options?.expectedRevision !== s.recovery.revision) {
      throw clientError('INVALID_STATE', 'The conversation changed since its revision was captured.', {
        reason: 'stale_revision',
      })
    }
    const problem = snapshotProblem(snapshot, s.threadId)
    if (problem)
      throw clientError('INVALID_INPUT', `Invalid conversation snapshot: ${problem}.`, {
        reason: 'invalid_snapshot',
        problem,
      })
    const installed = applyEvents(s.messages, s.state, [
      { type: 'MESSAGES_SNAPSHOT', messages: snapshot.messages } as AgUiEvent,
      { type: 'STATE_SNAPSHOT', snapshot: snapshot.state === undefined ? s.state : snapshot.state } as AgUiEvent,
    ])
    const interrupts =
      snapshot.interrupts && snapshot.interrupts.length > 0 ? frozenJsonCopy(snapshot.interrupts) : undefined
    const batch: PendingInterruptBatch | undefined = interrupts
      ? Object.freeze({ id: this.#id(), interrupts: Object.freeze(interrupts) })
      : undefined
    this.#transaction(() =>
      this.#dispatch({
        type: 'conversation/restored',
        messages: installed.messages,
        state: installed.state,
        batch,
        lastEventId: snapshot.lastEventId === undefined ? s.lastEventId : String(snapshot.lastEventId),
        unsettledEffects:
          snapshot.unsettledEffects === undefined ? undefined : frozenJsonCopy(snapshot.unsettledEffects),
      }),
    )
  }

  /**
   * Fetches the server `ThreadSnapshot` of the current thread and restores it: pending interrupts
   * reappear as a fresh local batch; a running thread is re-attached to its live events. Rejects
   * (and changes nothing) when busy, when the lookup fails, or when the runtime changed meanwhile.
   */
  readonly recover = async (options: { readonly signal?: AbortSignal } = {}): Promise<RecoverResult> => {
    this.#assertAlive()
    const s = this.#state
    if (s.run) throw clientError('INVALID_STATE', 'Cannot recover while a run is active.', { reason: 'busy' })
    // Concurrent calls for the same thread and revision (React StrictMode runs a mount effect
    // twice) share one lookup and one restore, so none of them fails on a stale revision.
    let flight = this.#recovering
    if (!flight || flight.threadId !== s.threadId || flight.revision !== s.recovery.revision) {
      const entry: RecoveryFlight = {
        threadId: s.threadId,
        revision: s.recovery.revision,
        controller: new AbortController(),
        waiting: 0,
        promise: undefined!,
      }
      entry.promise = (async () => {
        try {
          return await this.#recoverOnce(entry.threadId, entry.revision, entry.controller.signal)
        } finally {
          if (this.#recovering === entry) this.#recovering = undefined
        }
      })()
      this.#recovering = flight = entry
    }
    return joinFlight(flight, options.signal)
  }

  #recovering: RecoveryFlight | undefined

  async #recoverOnce(threadId: string, revision: number, signal: AbortSignal): Promise<RecoverResult> {
    const snapshot: ThreadSnapshot = await this.#transport.getThread(threadId, { signal })
    if (this.#state.threadId !== threadId)
      throw clientError('STALE_BATCH', 'The thread changed during recovery.', { reason: 'thread_changed' })
    this.restoreConversation(snapshot, { expectedRevision: revision })
    if (snapshot.status === 'running' && typeof snapshot.activeRunId === 'string') {
      // Join the live run from the start of the thread log; earlier runs are skipped and the
      // run's own events are applied idempotently over the restored messages.
      void this.#start('attach', undefined, { attachRunId: snapshot.activeRunId })
      return { snapshot, attached: true }
    }
    return { snapshot, attached: false }
  }

  #holders = 0
  #disposeTimer: ReturnType<typeof setTimeout> | undefined

  /**
   * Reference counting for UI bindings: `release()` of the last holder disposes the runtime on
   * the next macrotask unless it is retained again first (React StrictMode unmounts and remounts
   * effects synchronously; that must not kill the runtime).
   */
  readonly retain = (): (() => void) => {
    this.#holders += 1
    if (this.#disposeTimer !== undefined) {
      clearTimeout(this.#disposeTimer)
      this.#disposeTimer = undefined
    }
    let released = false
    return () => {
      if (released) return
      released = true
      this.#holders -= 1
      if (this.#holders === 0) {
        this.#disposeTimer = setTimeout(() => {
          this.#disposeTimer = undefined
          if (this.#holders === 0) this.dispose()
        }, 0)
      }
    }
  }

  /** Aborts everything local (server work is not cancelled) and drops listeners. */
  readonly dispose = (): void => {
    if (this.#disposed) return
    this.#disposed = true
    for (const c of this.#controllers.values()) c.abort()
    this.#controllers.clear()
    if (this.#flushTimer !== undefined) clearTimeout(this.#flushTimer)
    this.#inbox = undefined
    for (const resolve of this.#waiters.values()) resolve()
    this.#waiters.clear()
    this.#listeners.clear()
    this.#finishListeners.clear()
  }

  // ---------------------------------------------------------------- internals

  #id(): string {
    return (this.#options.generateId ?? randomId)()
  }

  #now(): number {
    return (this.#options.now ?? Date.now)()
  }

  #defaultTransport(): Transport {
    // Read options at request time so header/credential changes apply to the next request.
    return createHttpTransport({
      baseUrl: () => this.#options.api ?? '/api/agent',
      headers: () => {
        const h = this.#options.headers
        return typeof h === 'function' ? h() : (h ?? {})
      },
      credentials: () => this.#options.credentials ?? 'same-origin',
      fetch: (...args) => (this.#options.fetch ?? globalThis.fetch)(...args),
    })
  }

  #config(): InteractionConfig {
    const tools = (this.#options.tools ?? []).map((t: BrowserTool) => {
      const decl = { name: t.name, description: t.description } as {
        name: string
        description: string
        parameters?: unknown
      }
      if (t.parameters !== undefined) decl.parameters = t.parameters
      return decl
    })
    return {
      tools: tools as InteractionConfig['tools'],
      context: [...(this.#options.context ?? [])],
      forwardedProps: { ...(this.#options.forwardedProps ?? {}) },
    }
  }

  #assertAlive(): void {
    if (this.#disposed) throw clientError('INVALID_STATE', 'The runtime is disposed.')
  }

  #assertMessagesUnlocked(what: string): void {
    this.#assertAlive()
    const s = this.#state
    if (s.recovery.required)
      throw clientError('RECOVERY_REQUIRED', 'Recovery requires a new thread or a restored conversation.')
    if (s.pending || (s.run && (s.run.claimId !== undefined || s.run.resumed))) {
      throw clientError('INVALID_STATE', `Cannot ${what} while an interrupt batch is pending or claimed.`, {
        reason: 'interrupts_pending',
      })
    }
    if (s.run) throw clientError('INVALID_STATE', `Cannot ${what} while a run is in progress.`, { reason: 'busy' })
  }

  #dispatch(action: Action): void {
    const next = reduce(this.#state, action)
    if (next !== this.#state) {
      this.#state = next
      this.#dirty = true
    }
  }

  /** Runs `fn` as one commit: listeners are notified once, after the outermost transaction. */
  #transaction(fn: () => void): void {
    this.#depth += 1
    try {
      fn()
    } finally {
      this.#depth -= 1
      if (this.#depth === 0 && this.#dirty) {
        this.#dirty = false
        this.#snapshot = toSnapshot<TState>(this.#state)
        for (const listener of [...this.#listeners]) {
          try {
            listener()
          } catch (error) {
            // A throwing subscriber must not break the runtime or starve the others: report it.
            queueMicrotask(() => {
              throw error
            })
          }
        }
      }
    }
  }

  #isCurrent(gen: number): boolean {
    return !this.#disposed && this.#state.run?.gen === gen
  }

  #start(
    kind: InteractionKind,
    messages: readonly Message[] | undefined,
    extra: {
      claimId?: string
      entries?: ResumeOptions['entries']
      interrupts?: readonly Interrupt[]
      attachRunId?: string
    } = {},
  ): Promise<void> {
    const gen = ++this.#gen
    const controller = new AbortController()
    this.#controllers.set(gen, controller)
    const s = this.#state
    const threadId = s.threadId
    const runId = extra.attachRunId ?? this.#id()
    const config = this.#config()
    const run: Interaction = {
      gen,
      kind,
      resumed: kind === 'resume',
      claimId: extra.claimId,
      runId,
      acknowledged: false,
      resumeAcknowledged: false,
      phase: 'submitted',
      connection: 'idle',
      fault: undefined,
    }
    let plan: InteractionPlan = { gen, kind, threadId, signal: controller.signal, config }
    if (kind === 'attach') {
      plan = { ...plan, attachRunId: runId, attachFrom: '0' }
    } else {
      // The checkpoint: history and the latest committed state, captured at the claim/send.
      const input = buildInput(threadId, runId, messages ?? s.messages, s.state, config, extra.entries as never)
      plan = extra.interrupts ? { ...plan, input, resumeInterrupts: extra.interrupts } : { ...plan, input }
    }
    const done = new Promise<void>((resolve) => this.#waiters.set(gen, resolve))
    this.#transaction(() =>
      this.#dispatch(messages ? { type: 'interaction/started', run, messages } : { type: 'interaction/started', run }),
    )
    // Effects after commit: the request is scheduled, so a same-tick stop() or thread change
    // cancels it before anything is sent.
    queueMicrotask(() => {
      if (this.#isCurrent(gen)) void driveInteraction(this.#host, plan)
    })
    return done
  }

  #settle(
    gen: number,
    outcome: Exclude<InteractionOutcome, 'retired'>,
    extra: { error?: InterludeError; interrupts?: readonly Interrupt[] } = {},
  ): void {
    const run = this.#state.run
    if (!run || run.gen !== gen) return
    let batch: PendingInterruptBatch | undefined
    let error = extra.error
    if (outcome === 'interrupt') {
      const problems = interruptProblems(extra.interrupts)
      if (problems.length > 0) {
        outcome = 'failed'
        error = protocolViolation(`Invalid interrupt outcome (${problems[0]!.path}: ${problems[0]!.problem}).`)
      } else {
        // A fresh local token per published batch, also when the server reuses interrupt ids.
        batch = Object.freeze({ id: this.#id(), interrupts: Object.freeze(frozenJsonCopy(extra.interrupts!)) })
      }
    }
    this.#controllers.get(gen)?.abort()
    this.#controllers.delete(gen)
    this.#transaction(() => {
      // The final deltas, the checkpoint and the batch/flags are one commit.
      this.#flushInbox()
      const action: Action =
        outcome === 'interrupt'
          ? { type: 'interaction/settled', gen, outcome, batch: batch! }
          : error
            ? { type: 'interaction/settled', gen, outcome, error }
            : { type: 'interaction/settled', gen, outcome }
      this.#dispatch(action)
    })
    this.#finishInteraction(run, outcome, error)
  }

  #finishInteraction(
    run: Interaction,
    outcome: InteractionOutcome,
    error?: InterludeError,
    threadId: string = this.#state.threadId,
  ): void {
    this.#controllers.get(run.gen)?.abort()
    this.#controllers.delete(run.gen)
    const resolve = this.#waiters.get(run.gen)
    this.#waiters.delete(run.gen)
    const info: FinishInfo = error
      ? { outcome, threadId, resumed: run.resumed, error }
      : { outcome, threadId, resumed: run.resumed }
    // Application callbacks run after the settling commit. A throwing `onError`/`onFinish` must not
    // escape into the command that settled the interaction (`stop()`, `setThreadId()`, a stream
    // callback): it is caught and reported with `console.error`, and the remaining callbacks run.
    if (error) report('onError', () => this.#options.onError?.(error))
    report('onFinish', () => this.#options.onFinish?.(info))
    for (const listener of [...this.#finishListeners]) {
      try {
        listener(info)
      } catch (e) {
        queueMicrotask(() => {
          throw e
        })
      }
    }
    resolve?.()
  }

  #enqueue(gen: number, event: AgUiEvent, id: string | undefined): void {
    if (this.#inbox && this.#inbox.gen !== gen) this.#inbox = undefined
    const inbox = (this.#inbox ??= { gen, events: [], lastEventId: undefined })
    inbox.events.push(event)
    if (id !== undefined) inbox.lastEventId = id
    if (this.#flushTimer === undefined) {
      this.#flushTimer = setTimeout(() => {
        this.#flushTimer = undefined
        if (this.#inbox) this.#transaction(() => this.#flushInbox())
      }, this.#options.throttleMs ?? 16)
    }
  }

  #dropInbox(): void {
    this.#inbox = undefined
    if (this.#flushTimer !== undefined) {
      clearTimeout(this.#flushTimer)
      this.#flushTimer = undefined
    }
  }

  /** Must run inside a transaction. */
  #flushInbox(): void {
    const inbox = this.#inbox
    this.#dropInbox()
    if (!inbox || !this.#isCurrent(inbox.gen)) return
    this.#dispatch({ type: 'run/events', gen: inbox.gen, events: inbox.events, lastEventId: inbox.lastEventId })
    const fault = this.#state.run?.fault
    if (fault !== undefined) {
      // Can't apply what the server sent: fail the run rather than show a wrong conversation.
      const gen = inbox.gen
      queueMicrotask(() => this.#settle(gen, 'failed', { error: protocolViolation(fault) }))
    }
  }

  readonly #host: DriverHost = {
    // Read live: updateOptions may swap the transport.
    transport: () => this.#transport,
    isCurrent: (gen) => this.#isCurrent(gen),
    state: () => {
      // Content the driver reads (tool arguments) must be committed first.
      if (this.#inbox) this.#transaction(() => this.#flushInbox())
      return this.#state
    },
    now: () => this.#now(),
    generateId: () => this.#id(),
    tools: () => this.#options.tools ?? [],
    retryAttempts: () => this.#options.retry?.attempts ?? 2,
    retryDelay: (n) => (this.#options.retry?.delayMs ?? defaultDelay)(n),
    reconnectAttempts: () => this.#options.reconnect?.attempts ?? 3,
    reconnectDelay: (n) => (this.#options.reconnect?.delayMs ?? defaultDelay)(n),
    idleTimeoutMs: () => this.#options.reconnect?.idleTimeoutMs ?? 45_000,
    maxToolRoundtrips: () => this.#options.maxToolRoundtrips ?? 8,
    observe: (_gen, event, id, runId) => {
      try {
        this.#options.onEvent?.(event, { id, runId, threadId: this.#state.threadId })
      } catch {
        // An observer must not break the stream.
      }
    },
    enqueue: (gen, event, id) => this.#enqueue(gen, event, id),
    connection: (gen, connection: ConnectionStatus) =>
      this.#transaction(() => this.#dispatch({ type: 'run/connection', gen, connection })),
    acknowledge: (gen, runId, id) =>
      this.#transaction(() => {
        this.#flushInbox()
        this.#dispatch({ type: 'run/acknowledged', gen, runId })
        if (id !== undefined) this.#dispatch({ type: 'run/events', gen, events: [], lastEventId: id })
      }),
    toolsStarted: (gen) =>
      this.#transaction(() => {
        this.#flushInbox()
        this.#dispatch({ type: 'run/tools', gen })
      }),
    followUp: (gen, runId, messages) =>
      this.#transaction(() =>
        this.#dispatch({
          type: 'run/follow-up',
          gen,
          runId,
          messages: Object.freeze(messages.map((m) => deepFreeze(m))),
        }),
      ),
    settle: (gen, outcome, extra) => this.#settle(gen, outcome, extra),
  }
}

interface RecoveryFlight {
  readonly threadId: string
  readonly revision: number
  /** Aborts the shared lookup once every caller that passed a signal has aborted. */
  readonly controller: AbortController
  waiting: number
  promise: Promise<RecoverResult>
}

/** One caller's view of a shared recovery: its own signal rejects only its own promise. */
function joinFlight(flight: RecoveryFlight, signal: AbortSignal | undefined): Promise<RecoverResult> {
  flight.waiting += 1
  if (!signal) return flight.promise
  const aborted = () => clientError('ABORTED', 'The recovery was aborted.')
  const leave = () => {
    flight.waiting -= 1
    if (flight.waiting === 0) flight.controller.abort()
  }
  if (signal.aborted) {
    leave()
    return Promise.reject(aborted())
  }
  return new Promise<RecoverResult>((resolve, reject) => {
    const onAbort = () => {
      leave()
      reject(aborted())
    }
    signal.addEventListener('abort', onAbort, { once: true })
    flight.promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}

function report(callback: string, fn: () => void): void {
  try {
    fn()
  } catch (error) {
    console.error(`@interlude/react: ${callback} threw`, error)
  }
}

function isMessageLike(value: unknown): value is Message {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Message).id === 'string' &&
    typeof (value as Message).role === 'string'
  )
}
