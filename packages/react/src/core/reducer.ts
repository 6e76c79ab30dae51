import type { AgUiEvent, AwaitingExternalCall, DecisionRecord, InterludeError, Message } from '@interlude/protocol'
import { NO_AWAITING_EXTERNAL } from './external-calls.ts'
import { appended, startQueued, withoutQueued, withoutWritten, withQueued } from './queue-state.ts'
import { applyEvents } from './apply-events.ts'
import { shownMessages, withheldOf } from './withheld.ts'
import { NONE } from './immutable.ts'
import type { BranchAction } from './branch-state.ts'
import { reduceBranch } from './branch-state.ts'
import type { SubagentActivities } from './subagent-activity.ts'
import { NO_SUBAGENTS, withSubagentEvents } from './subagent-activity.ts'
import type {
  ChatBranches,
  ChatSnapshot,
  ChatStatus,
  ConnectionStatus,
  ConversationSnapshot,
  PendingInterruptBatch,
  PendingToolCall,
  QueuedMessage,
  RecoveryState,
} from './types.ts'

/**
 * The runtime's whole state and its one pure reducer. Every transition that belongs to a run
 * carries that run's generation (`gen`); an action whose generation is not the live one is a
 * no-op, so late callbacks of retired runs can never change state (the runtime also drops them
 * earlier through per-run AbortControllers).
 */

export type InteractionKind = 'send' | 'resume' | 'attach' | 'settle'

/**
 * One logical interaction: a send, a resume (and its follow-up runs), an attach to a live run, or a settlement of
 * offered browser calls. A `resume` interaction holds the claim of its batch until it settles (`isResuming`).
 */
export interface Interaction {
  readonly gen: number
  readonly kind: InteractionKind
  readonly runId: string
  /** The current run has its matching `RUN_STARTED`. */
  readonly acknowledged: boolean
  /** For `resume`: the resume run itself was acknowledged, so the batch is gone and failures need recovery. */
  readonly resumeAcknowledged: boolean
  readonly phase: Exclude<ChatStatus, 'idle'>
  readonly connection: ConnectionStatus
  /** Set when a streamed event could not be applied; the runtime fails the run. */
  readonly fault: string | undefined
}

export interface CoreState {
  readonly threadId: string
  readonly messages: readonly Message[]
  readonly state: unknown
  readonly error: InterludeError | undefined
  readonly pending: PendingInterruptBatch | undefined
  readonly run: Interaction | undefined
  readonly recovery: RecoveryState
  /** Last SSE id seen on this thread (the resume point for reconnects and joins). */
  readonly lastEventId: string | undefined
  readonly unsettledEffects: ConversationSnapshot['unsettledEffects']
  /** The thread's decision records (restored, and from `CUSTOM interlude.decision` events), oldest first. */
  readonly decisions: readonly DecisionRecord[]
  /** Browser calls waiting for a result here: from a restore or a run this client did not start. */
  readonly toolCalls: readonly PendingToolCall[]
  /** Subagent runs seen in this thread's stream (`CUSTOM interlude.subagent`), by subagentRunId. */
  readonly subagents: SubagentActivities
  /** Calls waiting for a result from another system (restored, or left pending by a finished run). */
  readonly awaitingExternal: readonly AwaitingExternalCall[]
  /** Messages sent while busy whose runs have not started (queue-state.ts). */
  readonly queued: readonly QueuedMessage[]
  /** Steers the server took (`steered`) whose message no turn has written yet: queued input if the run ends first. */
  readonly steered: readonly QueuedMessage[]
  /** The branch command in flight (branch-state.ts), which locks the history. */
  readonly branching: number | undefined
  /** The thread tree read for this thread. */
  readonly branches: ChatBranches | undefined
}

/** How an interaction ended, as committed: a published batch, a failure with its error, or neither. */
export type Settled =
  | {
      readonly outcome: 'success'
      readonly offered?: readonly PendingToolCall[]
      readonly awaiting?: readonly AwaitingExternalCall[]
    }
  | { readonly outcome: 'cancelled' | 'stopped' }
  | { readonly outcome: 'failed'; readonly error: InterludeError }
  | { readonly outcome: 'interrupt'; readonly batch: PendingInterruptBatch }

export type Action =
  | { readonly type: 'thread/changed'; readonly threadId: string }
  | { readonly type: 'messages/replaced'; readonly messages: readonly Message[] }
  | { readonly type: 'state/replaced'; readonly state: unknown }
  /** `messages`: the history of a send (undefined: the committed history stays). */
  | {
      readonly type: 'interaction/started'
      readonly run: Interaction
      readonly messages: readonly Message[] | undefined
    }
  | { readonly type: 'run/connection'; readonly gen: number; readonly connection: ConnectionStatus }
  | { readonly type: 'run/acknowledged'; readonly gen: number; readonly runId: string }
  | {
      readonly type: 'run/events'
      readonly gen: number
      readonly events: readonly AgUiEvent[]
      readonly lastEventId: string | undefined
    }
  | { readonly type: 'run/tools'; readonly gen: number }
  | {
      readonly type: 'run/follow-up'
      readonly gen: number
      readonly runId: string
      readonly messages: readonly Message[]
    }
  | ({ readonly type: 'interaction/settled'; readonly gen: number } & Settled)
  | {
      readonly type: 'conversation/restored'
      readonly messages: readonly Message[]
      readonly state: unknown
      readonly batch: PendingInterruptBatch | undefined
      readonly lastEventId: string | undefined
      readonly unsettledEffects: ConversationSnapshot['unsettledEffects']
      readonly decisions: readonly DecisionRecord[] | undefined
      readonly toolCalls: readonly PendingToolCall[]
      readonly awaitingExternal: readonly AwaitingExternalCall[]
    }
  /** The open batch's deadline passed (a `keep` batch stays answerable by the all-cancelled close). */
  | { readonly type: 'batch/expired'; readonly id: string }
  | { readonly type: 'tool-calls/offered'; readonly toolCalls: readonly PendingToolCall[] }
  | { readonly type: 'effect/reconciled'; readonly toolCallId: string }
  /** Sent while busy: waits for its run (`front`: an `interrupt`, which starts next). */
  | { readonly type: 'queue/added'; readonly entry: QueuedMessage; readonly front: boolean }
  /** Cancelled or refused; with `message`: steered into the running turn, where it joins the history now. */
  | { readonly type: 'queue/removed'; readonly runId: string; readonly message?: Message }
  | { readonly type: 'queue/restored'; readonly queued: readonly QueuedMessage[] }
  /** The run ended before taking the steers: they wait as queued input now (docs/protocol.md#steer). */
  | { readonly type: 'queue/unclaimed' }
  | BranchAction

export function initialState(threadId: string, messages: readonly Message[], state: unknown): CoreState {
  return {
    threadId,
    messages,
    state,
    error: undefined,
    pending: undefined,
    run: undefined,
    recovery: { revision: 0, required: false },
    lastEventId: undefined,
    unsettledEffects: undefined,
    decisions: NONE,
    toolCalls: NONE,
    subagents: NO_SUBAGENTS,
    awaitingExternal: NO_AWAITING_EXTERNAL,
    queued: NONE,
    steered: NONE,
    branching: undefined,
    branches: undefined,
  }
}

/** Decision records carried by `CUSTOM interlude.decision` events, appended once per run. */
function withDecisions(decisions: readonly DecisionRecord[], events: readonly AgUiEvent[]): readonly DecisionRecord[] {
  let next = decisions
  for (const e of events) {
    const value = (e as { name?: unknown; value?: DecisionRecord }).value
    if (
      e.type !== 'CUSTOM' ||
      (e as { name?: unknown }).name !== 'interlude.decision' ||
      typeof value?.runId !== 'string'
    )
      continue
    if (!next.some((d) => d.runId === value.runId)) next = Object.freeze([...next, Object.freeze(value)])
  }
  return next
}

function bump(recovery: RecoveryState, required = recovery.required): RecoveryState {
  return { revision: recovery.revision + 1, required }
}

function live(state: CoreState, gen: number): Interaction | undefined {
  return state.run !== undefined && state.run.gen === gen ? state.run : undefined
}

export function reduce(state: CoreState, action: Action): CoreState {
  switch (action.type) {
    case 'thread/changed':
      if (action.threadId === state.threadId) return state
      // Retire local ownership: the batch, any claim or run, the recovery requirement and the
      // replay cursor belong to the old thread. Committed messages and state stay.
      return {
        ...state,
        threadId: action.threadId,
        error: undefined,
        pending: undefined,
        run: undefined,
        recovery: bump(state.recovery, false),
        lastEventId: undefined,
        unsettledEffects: undefined,
        decisions: NONE,
        toolCalls: NONE,
        subagents: NO_SUBAGENTS,
        awaitingExternal: NO_AWAITING_EXTERNAL,
        queued: NONE,
        steered: NONE,
        // Another thread: a branch command in flight stops, the tree read for the old thread is gone.
        branching: undefined,
        branches: undefined,
      }
    case 'messages/replaced':
      return { ...state, messages: action.messages, recovery: bump(state.recovery) }
    case 'state/replaced':
      return { ...state, state: action.state, recovery: bump(state.recovery) }
    case 'interaction/started':
      return {
        ...state,
        messages: action.messages ?? state.messages,
        run: action.run,
        // Joining a run decided elsewhere keeps the refusal that revealed it (e.g. DECISION_CONFLICT).
        error: action.run.kind === 'attach' ? state.error : undefined,
        toolCalls: NONE,
        recovery: bump(state.recovery),
      }
    case 'run/connection': {
      const run = live(state, action.gen)
      if (!run || run.connection === action.connection) return state
      return { ...state, run: { ...run, connection: action.connection } }
    }
    case 'run/acknowledged': {
      const run = live(state, action.gen)
      if (!run || run.acknowledged) return state
      // The resume run's own RUN_STARTED (not a follow-up's) takes the claimed batch away.
      const claimed = run.kind === 'resume' && !run.resumeAcknowledged
      return {
        ...state,
        // A queued message joins the history when its run starts.
        ...startQueued(state.queued, state.messages, action.runId),
        // The batch stays visible until the matching RUN_STARTED; then it disappears. A joined run
        // (decided elsewhere: another tab, person, the API or a deadline) carries its batch away too.
        pending: claimed || run.kind === 'attach' ? undefined : state.pending,
        run: {
          ...run,
          runId: action.runId,
          acknowledged: true,
          resumeAcknowledged: run.resumeAcknowledged || claimed,
          phase: 'streaming',
          connection: 'open',
        },
      }
    }
    case 'run/events': {
      const run = live(state, action.gen)
      if (!run) return state
      const result = applyEvents(state.messages, state.state, action.events)
      const lastEventId = action.lastEventId ?? state.lastEventId
      const decisions = withDecisions(state.decisions, action.events)
      const subagents = withSubagentEvents(state.subagents, action.events)
      // A steer the turn wrote (or queued input a run took) is where the server put it now.
      const queued = withoutWritten(state.queued, action.events)
      const steered = withoutWritten(state.steered, action.events)
      if (
        queued === state.queued &&
        steered === state.steered &&
        result.messages === state.messages &&
        result.state === state.state &&
        lastEventId === state.lastEventId &&
        decisions === state.decisions &&
        subagents === state.subagents &&
        !result.fault
      )
        return state
      return {
        ...state,
        decisions,
        subagents,
        queued,
        steered,
        messages: result.messages,
        state: result.state,
        lastEventId,
        run: result.fault && !run.fault ? { ...run, fault: result.fault } : run,
      }
    }
    case 'run/tools': {
      const run = live(state, action.gen)
      if (!run) return state
      return { ...state, run: { ...run, phase: 'running-tools', connection: 'idle' } }
    }
    case 'run/follow-up': {
      const run = live(state, action.gen)
      if (!run) return state
      return {
        ...state,
        messages: action.messages,
        run: { ...run, runId: action.runId, acknowledged: false, phase: 'submitted', connection: 'connecting' },
      }
    }
    case 'interaction/settled': {
      const run = live(state, action.gen)
      if (!run) return state
      const failedish = action.outcome === 'failed' || action.outcome === 'stopped' || action.outcome === 'cancelled'
      // After the resume was acknowledged, a failure, stop or cancellation anywhere in the resumed
      // interaction cannot be replayed: only a new thread or a restore gets out of it.
      const required = state.recovery.required || (run.resumeAcknowledged && failedish)
      const pending = action.outcome === 'interrupt' ? action.batch : state.pending // a released claim keeps its batch
      return {
        ...state,
        run: undefined,
        pending,
        toolCalls: (action.outcome === 'success' && action.offered) || state.toolCalls,
        awaitingExternal: (action.outcome === 'success' && action.awaiting) || state.awaitingExternal,
        error: action.outcome === 'failed' ? action.error : undefined,
        recovery: bump(state.recovery, required),
      }
    }
    case 'conversation/restored':
      return {
        ...state,
        messages: action.messages,
        state: action.state,
        pending: action.batch,
        run: undefined,
        error: undefined,
        recovery: bump(state.recovery, false),
        lastEventId: action.lastEventId,
        unsettledEffects: action.unsettledEffects,
        decisions: action.decisions ?? state.decisions,
        toolCalls: action.toolCalls,
        awaitingExternal: action.awaitingExternal,
      }
    case 'batch/expired':
      if (state.pending?.id !== action.id || state.pending.expired) return state
      return { ...state, pending: Object.freeze({ ...state.pending, expired: true }) }
    case 'tool-calls/offered':
      return { ...state, toolCalls: action.toolCalls }
    case 'queue/added':
      return { ...state, queued: withQueued(state.queued, action.entry, action.front) }
    case 'queue/removed': {
      const queued = withoutQueued(state.queued, action.runId)
      const { message } = action
      if (!message) return { ...state, queued }
      const steer = state.queued.filter((q) => q.runId === action.runId)
      const steered = appended(state.steered, steer)
      if (state.messages.some((m) => m.id === message.id)) return { ...state, queued, steered }
      return { ...state, queued, steered, messages: Object.freeze([...state.messages, message]) }
    }
    case 'queue/unclaimed': {
      // Queued input again: it leaves the history until the run that takes it starts (as queued messages do).
      const ids = new Set(state.steered.map((q) => q.messageId))
      const messages = Object.freeze(state.messages.filter((m) => !ids.has(m.id)))
      return { ...state, queued: appended(state.queued, state.steered), steered: NONE, messages }
    }
    case 'queue/restored':
      return { ...state, queued: action.queued }
    case 'branch/started':
    case 'branch/ended':
    case 'branches/loaded':
      return reduceBranch(state, action)
    case 'effect/reconciled': {
      const rest = state.unsettledEffects?.filter((e) => e.toolCallId !== action.toolCallId)
      return { ...state, unsettledEffects: rest && rest.length > 0 ? rest : undefined }
    }
  }
}

/** Derives the public snapshot. Called once per committed change; parts keep their identity. */
export function toSnapshot<TState>(s: CoreState): ChatSnapshot<TState> {
  const run = s.run
  const withheld = withheldOf(s.pending)
  return Object.freeze({
    threadId: s.threadId,
    messages: shownMessages(s.messages, withheld),
    withheld,
    state: s.state as TState,
    status: run ? run.phase : 'idle',
    connection: run ? run.connection : 'idle',
    isLoading: run !== undefined,
    isResuming: run?.kind === 'resume',
    error: s.error,
    pendingInterrupts: s.pending,
    recovery: s.recovery,
    runId: run?.runId,
    unsettledEffects: s.unsettledEffects,
    decisions: s.decisions,
    lastDecision: s.decisions.at(-1),
    pendingToolCalls: s.toolCalls,
    awaitingExternal: s.awaitingExternal,
    subagents: s.subagents,
    queued: s.queued,
    branches: s.branches,
  })
}
