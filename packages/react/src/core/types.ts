import type {
  AwaitingExternalCall,
  AgUiEvent,
  ForkPoint,
  ThreadParent,
  Context,
  DecisionRecord,
  InterludeError,
  Interrupt,
  Message,
  ResumeEntry,
  ThreadSnapshot,
  Tool,
  WithheldMessage,
} from '@interlude/protocol'
import type { Endpoint, Endpoints } from './endpoints.ts'
import type { ServerMode } from './server-features.ts'
import type { SubagentActivities } from './subagent-activity.ts'
import type { Transport } from './transport.ts'

/**
 * A batch of interrupts published by one paused run. `id` is a fresh local ownership token made
 * when the batch is published (also when the server reuses interrupt ids); it is never sent over
 * the wire and is never authority. `interrupts` is frozen and keeps every server field.
 */
export interface PendingInterruptBatch {
  readonly id: string
  readonly interrupts: readonly Interrupt[]
  /**
   * The batch's deadline (`expiresAt`) passed while it is still open: a `keep` batch
   * (`metadata.onExpiry`) waits for the all-cancelled close; any other is about to be decided by
   * the server (the system decision arrives like any other).
   */
  readonly expired?: boolean
}

/** A browser-tool call waiting for its result on the server, offered for settlement (`settleToolCalls`). */
export interface PendingToolCall {
  readonly toolCallId: string
  readonly toolName: string
  /** The raw argument text. */
  readonly args: string
}

/** What `settleToolCalls` does with the offered calls: run their handlers, or report them unavailable. */
export interface SettleToolCallsOptions {
  readonly run: boolean
}

/** `reconcileEffect`: what a person found out about an effect whose outcome was unknown. */
export interface ReconcileEffectOptions {
  readonly toolCallId: string
  readonly outcome: 'succeeded' | 'failed'
  /** What the model reads as the call's result (JSON). */
  readonly result?: unknown
}

/** The argument of `resume`: one entry per interrupt of the batch named by `batchId`. */
export interface ResumeOptions {
  readonly batchId: string
  readonly entries: readonly ResumeEntry[]
}

/**
 * Local compare-and-swap guard for restoration. `revision` changes on every committed change of
 * conversation ownership (thread, interaction start/end, batch, messages, state, restore);
 * `required` is set after an unhealable failure of an acknowledged resumed interaction.
 */
export interface RecoveryState {
  readonly revision: number
  readonly required: boolean
}

/**
 * What the runtime is doing, on one axis (connection details are on `connection`).
 * - `idle`: nothing running (possibly awaiting answers: see `pendingInterrupts`).
 * - `submitted`: a request is sent, not yet acknowledged by its `RUN_STARTED`.
 * - `streaming`: the run is acknowledged and events are arriving.
 * - `running-tools`: browser tools of a finished run are executing before a follow-up run.
 */
export type ChatStatus = 'idle' | 'submitted' | 'streaming' | 'running-tools'

/** Connection axis: `reconnecting` while healing a dropped stream after acknowledgement. */
export type ConnectionStatus = 'idle' | 'connecting' | 'open' | 'reconnecting'

/** The immutable, identity-stable view of a runtime. Unchanged parts keep their identity. */
export interface ChatSnapshot<TState = unknown> {
  readonly threadId: string
  readonly messages: readonly Message[]
  readonly state: TState
  readonly status: ChatStatus
  readonly connection: ConnectionStatus
  /** True while an interaction (send, resume and its follow-ups, attach) is active. */
  readonly isLoading: boolean
  /** True from the synchronous claim in `resume` until the whole resumed interaction settles. */
  readonly isResuming: boolean
  readonly error: InterludeError | undefined
  readonly pendingInterrupts: PendingInterruptBatch | undefined
  /**
   * Answers a failed output guardrail holds back until the open batch is decided (docs/guardrails.md#withheld-answers):
   * each is in `messages` too (by `messageId`), to be rendered as withheld; blocked, it leaves `messages`.
   */
  readonly withheld: readonly WithheldMessage[]
  readonly recovery: RecoveryState
  /** runId of the run in flight, if any. */
  readonly runId: string | undefined
  /** Effects the server could not settle (from the last restored `ThreadSnapshot`): shown as unknown, reconciled by hand. */
  readonly unsettledEffects: ThreadSnapshot['unsettledEffects']
  /** Who decided each batch of the thread, via what, when (snapshot + `CUSTOM interlude.decision`), oldest first. */
  readonly decisions: readonly DecisionRecord[]
  /** The newest decision record (e.g. to say who decided a batch that left `pendingInterrupts`). */
  readonly lastDecision: DecisionRecord | undefined
  /** Browser calls pending on the server that this client may settle once (`settleToolCalls`). */
  readonly pendingToolCalls: readonly PendingToolCall[]
  /**
   * Calls waiting for a result from another system (external tools): who may post it (`resultFrom`, when the server
   * said). While any waits, the runtime follows the thread and shows the run the result starts.
   */
  readonly awaitingExternal: readonly AwaitingExternalCall[]
  /**
   * What subagents did in this thread's stream, by `subagentRunId` (agent, status, text, tool calls), each naming
   * the parent tool call that runs it; never part of `messages` (docs/client-contract.md#subagents).
   */
  readonly subagents: SubagentActivities
  /**
   * Messages sent while the thread was busy (`sendMessage(…, { whileBusy })`) whose runs wait on the server, in the
   * order they start; each joins `messages` when its run starts (docs/react-runtime.md#many-messages-one-thread).
   */
  readonly queued: readonly QueuedMessage[]
  /**
   * The thread tree around this thread (its parent, its siblings, its forks) once known: after `editMessage`,
   * `regenerate`, `switchBranch` or `loadBranches` (docs/react-runtime.md#branches); `undefined` on another thread.
   */
  readonly branches: ChatBranches | undefined
}

/** The thread tree around the active thread (`ChatSnapshot.branches`): what a "< 2/3 >" switcher shows. */
export interface ChatBranches {
  /** The thread this tree was read for: the active one. */
  readonly threadId: string
  /** The thread it was forked from, and where; `undefined` for a thread that is no fork. */
  readonly parent: ThreadParent | undefined
  /** One switcher per fork point on the active thread's history, in the order the servers listed the forks. */
  readonly points: readonly BranchPoint[]
}

/** One fork point: the threads that share the history up to it, and which of them the active thread follows. */
export interface BranchPoint {
  /**
   * Where the alternatives part: `messageId` is the last message they share by id (an edit changed that message's
   * content, a regeneration answered it again); `batchId` a batch they were forked at.
   */
  readonly at: ForkPoint
  /** The origin first, then its forks at this point, oldest first. */
  readonly threadIds: readonly string[]
  /** The position of the active thread in `threadIds` (0 when it follows the origin past this point). */
  readonly index: number
}

/** What `sendMessage` does while a run is active: queue the message, steer the run with it, or replace the run. */
export type WhileBusy = 'enqueue' | 'steer' | 'interrupt'

/** One message waiting for its run (`ChatSnapshot.queued`). */
export interface QueuedMessage {
  /** The run that answers it (`cancelQueued(runId)`). */
  readonly runId: string
  readonly messageId: string
  /** The message's text (its text parts, joined). */
  readonly text: string
  /** 1 = starts next. */
  readonly position: number
  /** The message as it joins `messages` when its run starts. */
  readonly message: Message
}

/** The second argument of `sendMessage`. */
export interface SendOptions {
  /** While a run is active: send anyway with this strategy instead of refusing. @default the runtime's `whileBusy` */
  readonly whileBusy?: WhileBusy | undefined
}

/** Where the runtime keeps the queued messages of a thread across reloads (`recover()` reads them back). */
export type QueueStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>

/** Context handed to a browser tool handler. */
export interface BrowserToolContext {
  readonly toolCallId: string
  readonly threadId: string
  readonly runId: string
  /** Aborted by `stop()`, a thread change or disposal. */
  readonly signal: AbortSignal
}

/**
 * A tool executed in the browser. Its declaration (`name`, `description`, `parameters`) is sent in
 * `RunAgentInput.tools`; `handler` runs only for genuinely new calls of a successful run.
 */
export interface BrowserTool {
  readonly name: string
  readonly description: string
  /** JSON Schema of the arguments. */
  readonly parameters?: Record<string, unknown>
  /** Returns the result (strings are sent as-is, anything else as JSON). Throwing sends an error result. */
  readonly handler?: (args: unknown, context: BrowserToolContext) => unknown
}

/** A user message to send; `id` defaults to a fresh id. */
export interface SendMessageInput {
  readonly id?: string
  readonly role?: 'user'
  readonly content: string | Extract<Message, { role: 'user' }>['content']
}

/** Metadata handed to `onEvent` with every received event, before it is applied. */
export interface EventMeta {
  /** The SSE `id:` (the server's per-thread sequence), if any. */
  readonly id: string | undefined
  readonly runId: string
  readonly threadId: string
}

/** How a finished interaction ended (handed to `onFinish`). */
export type InteractionOutcome = 'success' | 'interrupt' | 'cancelled' | 'failed' | 'stopped' | 'retired'

export interface FinishInfo {
  readonly outcome: InteractionOutcome
  readonly threadId: string
  readonly resumed: boolean
  readonly error?: InterludeError
}

export interface RetryOptions {
  /** Extra attempts of a run before its acknowledgement. @default 2 */
  readonly attempts?: number
  /** Delay before retry n (1-based), in ms. @default 250 * 2^(n-1), capped at 4000 */
  readonly delayMs?: (attempt: number) => number
}

export interface ReconnectOptions {
  /** Reconnection attempts after acknowledgement without progress. @default 3 */
  readonly attempts?: number
  /** @default 250 * 2^(n-1), capped at 4000 */
  readonly delayMs?: (attempt: number) => number
  /**
   * A stream that delivers no bytes (neither events nor SSE comments such as the server's
   * `: ping` every 15 s) for this long is treated as a dropped connection: after acknowledgement
   * it is healed by reconnecting from the last event id; before acknowledgement it counts as a
   * retryable network failure. `0` or `Infinity` disables it. @default 45_000
   */
  readonly idleTimeoutMs?: number
}

/** Options of a `ChatRuntime` (and of `useChat`). */
export interface ChatRuntimeOptions<TState = unknown> {
  /** The thread. @default a fresh random id */
  readonly threadId?: string
  /** Base path of the Interlude endpoint for the default HTTP transport. @default '/api/agent' */
  readonly api?: string
  /** Where the run is posted (shorthand for `endpoints.run`), e.g. `'/awp'`. @default `{api}/runs` */
  readonly runUrl?: Endpoint
  /** Every endpoint of the default HTTP transport (strings with `{threadId}`/`{runId}`, or functions). */
  readonly endpoints?: Endpoints
  /** Extra request headers (e.g. a bearer token); a function is read before every request. */
  readonly headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>)
  /** fetch credentials (the anonymous-session cookie needs `same-origin` or `include`). @default 'same-origin' */
  readonly credentials?: RequestCredentials
  /** Injectable fetch. @default globalThis.fetch (read at call time) */
  readonly fetch?: typeof fetch
  /**
   * Which server this is: `interlude` (reconnect, `recover()`, explicit cancel), `plain` (any AG-UI
   * server: only the run endpoint is called) or `auto` (Interlude until one of its routes is
   * missing, then plain; remembered per runtime). @default 'auto'
   */
  readonly mode?: ServerMode
  /** Replaces the HTTP transport entirely (tests, custom bindings). */
  readonly transport?: Transport
  readonly initialMessages?: readonly Message[]
  readonly initialState?: TState
  /** Browser tools (declarations + handlers). */
  readonly tools?: readonly BrowserTool[]
  readonly context?: readonly Context[]
  readonly forwardedProps?: Record<string, unknown>
  readonly retry?: RetryOptions
  readonly reconnect?: ReconnectOptions
  /** Longest delay before buffered stream deltas are committed, in ms. @default 16 */
  readonly throttleMs?: number
  /** Upper bound of follow-up runs after browser tools in one interaction. @default 8 */
  readonly maxToolRoundtrips?: number
  /** Clock for expiry checks. @default Date.now */
  readonly now?: () => number
  /** Id generator (runIds, batch tokens, message ids). @default crypto.randomUUID */
  readonly generateId?: () => string
  /**
   * While a batch is pending (and not claimed here), follow the thread's events (`?follow=1`) so a
   * decision made elsewhere arrives live. Interlude servers only. @default true
   */
  readonly follow?: boolean
  /**
   * What `sendMessage` does while a run is active (Interlude servers): `enqueue`, `steer` or `interrupt`
   * (docs/protocol.md#multitask). Unset, it refuses with `INVALID_STATE` as before. `sendMessage`'s option wins.
   */
  readonly whileBusy?: WhileBusy
  /** Keeps `queued` across reloads, per thread; `false` keeps it in memory only. @default sessionStorage, if any */
  readonly queueStorage?: QueueStorage | false
  /** Every received event, before it is applied (e.g. a recorder). */
  readonly onEvent?: (event: AgUiEvent, meta: EventMeta) => void
  readonly onFinish?: (info: FinishInfo) => void
  readonly onError?: (error: InterludeError) => void
}

/** Returned by `getRecoveryConfiguration()`: what this client would send, without sending anything. */
export interface RecoveryConfiguration {
  readonly threadId: string
  readonly revision: number
  readonly tools: readonly Tool[]
  readonly context: readonly Context[]
  readonly forwardedProps: Record<string, unknown>
}

/**
 * A server-owned conversation to install with `restoreConversation`. A `ThreadSnapshot` is one;
 * the extra server fields (`status`, `activeRunId`, `lastEventId`, `unsettledEffects`) are used
 * when present.
 */
export interface ConversationSnapshot {
  readonly threadId: string
  readonly messages: readonly Message[]
  readonly state?: unknown
  /** The complete pending batch (without any local token). */
  readonly interrupts?: readonly Interrupt[]
  readonly revision?: number
  readonly status?: ThreadSnapshot['status']
  readonly activeRunId?: string
  readonly lastEventId?: number
  readonly unsettledEffects?: ThreadSnapshot['unsettledEffects']
  /** Calls waiting for a result from another system (the server snapshot's `awaitingExternal`). */
  readonly awaitingExternal?: ThreadSnapshot['awaitingExternal']
  readonly decisions?: ThreadSnapshot['decisions']
}

export interface RestoreOptions {
  /** `recovery.revision` captured before the asynchronous lookup. */
  readonly expectedRevision: number
}

/** What `recover()` did. */
export interface RecoverResult {
  readonly snapshot: ThreadSnapshot
  /** True when the thread was running and the runtime re-attached to its live events. */
  readonly attached: boolean
}
