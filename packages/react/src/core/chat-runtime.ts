import type { AgUiEvent, Message, ThreadSnapshot } from '@interlude/protocol'
import { eventProblems } from '@interlude/protocol'
import { BranchCommands } from './branch-commands.ts'
import { clientError } from './errors.ts'
import { deepFreeze, frozenJsonCopy, NONE } from './immutable.ts'
import { QueuedInput } from './queued-input.ts'
import { userMessage } from './user-message.ts'
import type { CoreState } from './reducer.ts'
import { initialState } from './reducer.ts'
import { ChatStore } from './chat-store.ts'
import {
  checkAlive,
  checkMessagesUnlocked,
  checkNoActiveRun,
  checkRestorable,
  checkResumable,
  checkSendableWhileBusy,
  checkStateUnlocked,
} from './guards.ts'
import type { ResolvedOptions } from './options.ts'
import { resolveOptions } from './options.ts'
import { requestConfig } from './interaction-plan.ts'
import { Interactions } from './interactions.ts'
import type { RecoveryKey } from './shared-recovery.ts'
import { SharedRecovery } from './shared-recovery.ts'
import { refCount } from './ref-count.ts'
import { applyEvents } from './apply-events.ts'
import type { InstallHost } from './thread-install.ts'
import { installThread, restoredAction } from './thread-install.ts'
import { optionsTransport } from './http-transport.ts'
import { noServerSnapshots, ServerFeatures } from './server-features.ts'
import type { Transport } from './transport.ts'
import type {
  ChatBranches,
  ChatRuntimeOptions,
  ChatSnapshot,
  ConversationSnapshot,
  FinishInfo,
  ReconcileEffectOptions,
  RecoverResult,
  RecoveryConfiguration,
  RestoreOptions,
  ResumeOptions,
  SendMessageInput,
  SendOptions,
  SettleToolCallsOptions,
} from './types.ts'

type Updater<T> = T | ((previous: T) => T)

let flushOf: <TState>(runtime: ChatRuntime<TState>) => void

/** Commits buffered stream deltas now, for tests (the runtime does it within `throttleMs`, before lifecycle commits). */
export function flushDeltas<TState>(runtime: ChatRuntime<TState>): void {
  flushOf(runtime)
}

/**
 * The framework-free chat runtime (docs/client-contract.md, docs/react-runtime.md): the public commands over a store,
 * a pure reducer and the interactions that drive the transport. Commands check their refusals (`guards.ts`) before
 * changing anything and commit synchronously; streamed content is committed by `Interactions`, coalesced
 * (docs/react-runtime.md#commits-and-coalescing). All methods are bound (stable identities): usable as React props.
 */
export class ChatRuntime<TState = unknown> {
  static {
    flushOf = (runtime) => runtime.#interactions.flush()
  }

  readonly #store: ChatStore<TState>
  readonly #serverSnapshot: ChatSnapshot<TState>
  readonly #interactions: Interactions<TState>
  readonly #queue: QueuedInput
  readonly #install: InstallHost
  readonly #branches: BranchCommands
  readonly #recovery = new SharedRecovery()
  readonly #features = new ServerFeatures(() => this.#resolved.mode)
  #options: ChatRuntimeOptions<TState>
  #resolved: ResolvedOptions<TState>
  #transport: Transport

  constructor(options: ChatRuntimeOptions<TState> = {}) {
    // No side effects here (React may construct and discard instances in StrictMode).
    this.#options = options
    this.#resolved = resolveOptions(options)
    this.#transport = options.transport ?? this.#http()
    const threadId = options.threadId ?? this.#resolved.generateId()
    const messages = Object.freeze((options.initialMessages ?? []).map((m) => deepFreeze({ ...m }))) as Message[]
    this.#store = new ChatStore<TState>(initialState(threadId, messages, options.initialState))
    this.#serverSnapshot = this.#store.getSnapshot()
    const env = { store: this.#store, options: () => this.#resolved, transport: () => this.#transport }
    this.#interactions = new Interactions({ ...env, features: this.#features })
    this.#queue = new QueuedInput({ ...env, features: this.#features }, this.#interactions)
    const [interactions, restore] = [this.#interactions as Interactions<unknown>, this.restoreConversation]
    this.#install = { store: this.#store as ChatStore<unknown>, interactions, queue: this.#queue, restore }
    const assertAlive = () => this.#assertAlive()
    this.#branches = new BranchCommands({ ...env, ...this.#install, features: this.#features, assertAlive })
  }

  // ---------------------------------------------------------------- store

  readonly subscribe = (listener: () => void): (() => void) => this.#store.subscribe(listener)

  readonly getSnapshot = (): ChatSnapshot<TState> => this.#store.getSnapshot()

  /** Called after every interaction settles (after the settling commit), like `onFinish`. */
  readonly subscribeFinish = (listener: (info: FinishInfo) => void): (() => void) =>
    this.#interactions.finished.add(listener)

  /** The snapshot used for server rendering and hydration: the initial one, never network state. */
  readonly getServerSnapshot = (): ChatSnapshot<TState> => this.#serverSnapshot

  /** Merges options. A different `threadId` retires the local batch and late callbacks. */
  readonly updateOptions = (options: Partial<ChatRuntimeOptions<TState>>): void => {
    const { threadId, ...rest } = options
    const transportChanged = 'transport' in options && options.transport !== this.#options.transport
    // Another server may answer now: detect its features again.
    const serverChanged = (['api', 'runUrl', 'endpoints', 'mode'] as const).some(
      (key) => key in options && options[key] !== this.#options[key],
    )
    if (transportChanged || serverChanged) this.#features.reset()
    this.#options = { ...this.#options, ...rest }
    this.#resolved = resolveOptions(this.#options)
    if (transportChanged) this.#transport = this.#options.transport ?? this.#http()
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
    if (threadId !== this.#state.threadId) this.#interactions.changeThread(threadId)
  }

  /**
   * Starts a fresh thread with empty history and state (the "New conversation" action). A new id
   * (the default) retires the local batch, claim and recovery requirement. Passing the *current*
   * id resets nothing that is locked: it clears history and state only when message replacement
   * is allowed, and otherwise throws like `setMessages` (`RECOVERY_REQUIRED`, `INVALID_STATE`).
   */
  readonly newThread = (threadId: string = this.#resolved.generateId()): string => {
    if (threadId === this.#state.threadId)
      this.#assertMessagesUnlocked('start a new conversation on the same thread id')
    this.setThreadId(threadId)
    this.#store.transaction(() => {
      this.#store.dispatch({ type: 'messages/replaced', messages: NONE })
      this.#store.dispatch({ type: 'state/replaced', state: this.#resolved.initialState })
    })
    return threadId
  }

  // ---------------------------------------------------------------- commands

  /**
   * Sends a user message and runs the agent. Throws synchronously (`RECOVERY_REQUIRED`, `INVALID_STATE` while a batch
   * is pending or claimed or a run is active, `INVALID_INPUT`); otherwise returns a promise that resolves (never
   * rejects) when the interaction settles. With `whileBusy` (or the runtime's option) while a run is active or messages
   * are queued, the message is sent with that strategy instead: the promise resolves once the server took it (`queued`)
   * and rejects with its refusal (docs/react-runtime.md#many-messages-one-thread).
   */
  readonly sendMessage = (input: string | SendMessageInput, options: SendOptions = {}): Promise<void> => {
    this.#assertAlive()
    const s = this.#state
    const whileBusy = options?.whileBusy ?? this.#resolved.whileBusy
    const busy = whileBusy !== undefined && (s.run !== undefined || s.queued.length > 0)
    if (busy) checkSendableWhileBusy(s, whileBusy)
    else checkMessagesUnlocked(s, 'send a message')
    const message = userMessage(input, this.#resolved.generateId)
    if (busy) return this.#queue.send(message, whileBusy)
    return this.#interactions.start({ kind: 'send', messages: Object.freeze([...s.messages, message]) })
  }

  /**
   * Takes a queued message back (`POST …/runs/:runId/cancel`): it leaves `queued` once the server removed its run.
   * Throws `RUN_NOT_FOUND` for a runId that is not queued; rejects with the server's refusal.
   */
  readonly cancelQueued = (runId: string): Promise<void> => {
    this.#assertAlive()
    return this.#queue.cancel(runId)
  }

  /** Re-runs the last user turn (history after it is dropped). Same locks as `sendMessage`. */
  readonly reload = (): Promise<void> => {
    this.#assertMessagesUnlocked('reload')
    const messages = this.#state.messages
    let last = messages.length - 1
    while (last >= 0 && messages[last]!.role !== 'user') last--
    if (last < 0) throw clientError('INVALID_STATE', 'There is no user message to reload.')
    return this.#interactions.start({ kind: 'send', messages: Object.freeze(messages.slice(0, last + 1)) })
  }

  /** Replaces the history. Throws while a batch is pending or claimed, a run is active, or recovery is required. */
  readonly setMessages = (next: Updater<readonly Message[]>): void => {
    this.#assertMessagesUnlocked('replace messages')
    const value = typeof next === 'function' ? next(this.#state.messages) : next
    const replaced = { type: 'MESSAGES_SNAPSHOT', messages: value } as AgUiEvent
    // The check of a streamed MESSAGES_SNAPSHOT: an array of objects with a string id and role.
    if (eventProblems(replaced).length > 0)
      throw clientError('INVALID_INPUT', 'Messages must be objects with string id and role.')
    const result = applyEvents(this.#state.messages, this.#state.state, [replaced])
    this.#store.commit({ type: 'messages/replaced', messages: result.messages })
  }

  /**
   * Replaces the shared state. Allowed while idle and while awaiting answers; throws
   * `INVALID_STATE` once a batch is claimed or while any run is active. State never resumes a run.
   */
  readonly setState = (next: Updater<TState>): void => {
    this.#assertAlive()
    checkStateUnlocked(this.#state)
    const value = typeof next === 'function' ? (next as (p: TState) => TState)(this.#state.state as TState) : next
    this.#store.commit({ type: 'state/replaced', state: value })
  }

  /**
   * Answers the pending batch. Validates synchronously and throws (`RECOVERY_REQUIRED`,
   * `BATCH_CLAIMED`, `STALE_BATCH`, `INTERRUPT_EXPIRED`, `INVALID_INPUT`, `RESUME_INCOMPLETE`,
   * `RESUME_UNKNOWN_INTERRUPT`, `RESUME_DUPLICATE_ENTRY`); on success claims the batch in the
   * same tick, captures messages and state, and only then schedules the request.
   */
  readonly resume = (options: ResumeOptions): Promise<void> => {
    this.#assertAlive()
    const admission = checkResumable(this.#state, options, this.#resolved.now)
    // A frozen deep copy: later changes by the caller do not leak into the request or retries.
    const entries = frozenJsonCopy(admission.entries)
    return this.#interactions.start({ kind: 'resume', batch: admission.batch, entries })
  }

  /**
   * Stops the active interaction. Before acknowledgement the request is aborted and a claimed
   * batch is released (still answerable). After acknowledgement the run is cancelled on the
   * server too; in a resumed interaction that requires recovery.
   */
  readonly stop = (): void => this.#interactions.stop()

  // ---------------------------------------------------------------- branches (docs/react-runtime.md#branches)

  /**
   * Forks this thread at the user message with `text` as its new content, makes the fork the active thread and runs
   * the turn there; the parent is never written. Throws like `sendMessage` (`INVALID_STATE` with `reason: 'branching'`
   * while another branch command is in flight), `INVALID_INPUT` for a message that is not a user message of this
   * thread; rejects with the server's refusal (then nothing changed); else resolves when the run settles.
   */
  readonly editMessage = (messageId: string, text: string): Promise<void> => this.#branches.edit(messageId, text)

  /** Forks at the user message an assistant answer (default: the last) replies to and runs the turn again there. */
  readonly regenerate = (messageId?: string): Promise<void> => this.#branches.regenerate(messageId)

  /** Makes another thread of `branches` active (its snapshot through the restore path). Refused while a run is active. */
  readonly switchBranch = (threadId: string): Promise<void> => this.#branches.switchTo(threadId)

  /** Reads the thread tree around the active thread into `branches` (after a reload, before `switchBranch`). */
  readonly loadBranches = (): Promise<ChatBranches> => this.#branches.load()

  // ---------------------------------------------------------------- recovery

  /** What this client would send (tools, context, forwarded props), without scheduling a run. */
  readonly getRecoveryConfiguration = (): RecoveryConfiguration => ({
    threadId: this.#state.threadId,
    revision: this.#state.recovery.revision,
    ...requestConfig(this.#resolved),
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
    checkRestorable(this.#state, snapshot, options)
    this.#store.commit(restoredAction(this.#state, snapshot, this.#resolved as ResolvedOptions<unknown>))
  }

  /**
   * Settles the offered browser calls (`pendingToolCalls`: a cold reload, a run decided elsewhere):
   * runs their handlers once (`run: true`) or reports them unavailable, then continues the turn
   * with the results. The server admits the first result set of the thread's clients; another
   * client's is refused with `TOOL_RESULTS_ALREADY_SUBMITTED` (then `recover()` shows the winner's).
   */
  readonly settleToolCalls = (options: SettleToolCallsOptions = { run: true }): Promise<void> => {
    this.#assertMessagesUnlocked('settle tool calls')
    const calls = this.#state.toolCalls
    if (calls.length === 0) throw clientError('INVALID_STATE', 'No browser tool calls wait for a result.')
    return this.#interactions.start({ kind: 'settle', calls, run: options.run !== false })
  }

  /**
   * Records what a person found out about an effect whose outcome is unknown (`unsettledEffects`):
   * `POST …/effects/:toolCallId/reconcile`. Never re-runs the tool. Rejects with the server's typed
   * error; on success the effect leaves `unsettledEffects`.
   */
  readonly reconcileEffect = async (options: ReconcileEffectOptions): Promise<void> => {
    this.#assertAlive()
    const { threadId } = this.#state
    const transport = this.#transport
    if (!transport.reconcile || !this.#features.available) throw noServerSnapshots()
    await transport.reconcile(threadId, options)
    if (this.#state.threadId === threadId)
      this.#store.commit({ type: 'effect/reconciled', toolCallId: options.toolCallId })
  }

  /**
   * Fetches the server `ThreadSnapshot` of the current thread and restores it: pending interrupts
   * reappear as a fresh local batch; a running thread is re-attached to its live events. Rejects
   * (and changes nothing) when busy, when the lookup fails, or when the runtime changed meanwhile.
   * Concurrent calls for the same thread and revision share one lookup (`shared-recovery.ts`).
   */
  readonly recover = async (options: { readonly signal?: AbortSignal } = {}): Promise<RecoverResult> => {
    this.#assertAlive()
    const s = this.#state
    checkNoActiveRun(s, 'recover')
    if (!this.#features.available) throw noServerSnapshots()
    const key: RecoveryKey = { threadId: s.threadId, revision: s.recovery.revision }
    return this.#recovery.join(key, (signal) => this.#recoverOnce(key, signal), options.signal)
  }

  async #recoverOnce({ threadId, revision }: RecoveryKey, signal: AbortSignal): Promise<RecoverResult> {
    const snapshot = await this.#transport.getThread(threadId, { signal }).catch((error: unknown) => {
      throw this.#features.observe(error) ? noServerSnapshots() : error
    })
    if (this.#state.threadId !== threadId)
      throw clientError('STALE_BATCH', 'The thread changed during recovery.', { reason: 'thread_changed' })
    return installThread(this.#install, snapshot, revision)
  }

  /**
   * The server's page of the current thread's messages before `cursor` (a snapshot's `messagesCursor`), as a
   * `ThreadSnapshot`, through this runtime's transport; nothing is installed (`EarlierMessages` shows such pages).
   */
  readonly getEarlierPage = async (
    cursor: string,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<ThreadSnapshot> => {
    this.#assertAlive()
    // An empty cursor would read the newest page instead of an older one.
    if (typeof cursor !== 'string' || cursor === '') throw clientError('INVALID_INPUT', 'A messagesCursor is needed.')
    if (!this.#features.available) throw noServerSnapshots()
    return this.#transport.getThread(this.#state.threadId, { ...options, before: cursor })
  }

  /**
   * Takes the local history (messages, state, any pending batch) as the conversation: the way out
   * of `recovery.required` when the server cannot be asked (a plain AG-UI server). A person's
   * choice: the server may have gone on after the cut. Same rules as `restoreConversation`.
   */
  readonly acceptLocalHistory = (): void => {
    const s = this.#state
    const snapshot: ConversationSnapshot = { threadId: s.threadId, messages: s.messages, state: s.state }
    const interrupts = s.pending?.interrupts
    this.restoreConversation(interrupts ? { ...snapshot, interrupts } : snapshot, {
      expectedRevision: s.recovery.revision,
    })
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Reference counting for UI bindings: `release()` of the last holder disposes the runtime on
   * the next macrotask unless it is retained again first (`ref-count.ts`).
   */
  readonly retain = refCount(() => this.dispose())

  /** Aborts everything local (server work is not cancelled) and drops listeners. */
  readonly dispose = (): void => {
    if (this.#interactions.disposed) return
    this.#interactions.dispose()
    this.#store.clear()
  }

  // ---------------------------------------------------------------- internals

  get #state(): CoreState {
    return this.#store.state
  }

  #http(): Transport {
    return optionsTransport(() => this.#resolved as ResolvedOptions<unknown>)
  }

  #assertAlive(): void {
    checkAlive(this.#interactions.disposed)
  }

  #assertMessagesUnlocked(what: string): void {
    this.#assertAlive()
    checkMessagesUnlocked(this.#state, what)
  }
}
