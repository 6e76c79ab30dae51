import type { AgUiEvent, Message } from '@interlude/protocol'
import { eventProblems } from '@interlude/protocol'
import { applyEvents } from './apply-events.ts'
import { NONE } from './immutable.ts'

/**
 * What the subagents of the parent's tool calls are doing (docs/client-contract.md#subagents). Their events arrive in
 * the parent's stream as `CUSTOM { name: "interlude.subagent", value: { subagentRunId, agent, parentToolCallId,
 * event } }`, where `event` is the subagent's own AG-UI event. They are folded into one record per subagent run —
 * its text and tool-call events assembled into its own `messages` exactly as the parent's are — and never enter the
 * parent's message list. Anything malformed is ignored: a display aid must never fail a run.
 */

export const SUBAGENT_EVENT_NAME = 'interlude.subagent'

export type SubagentStatus = 'running' | 'interrupted' | 'finished' | 'failed'

/** The activity of one subagent run, keyed by `subagentRunId` in `ChatSnapshot.subagents`. */
export interface SubagentActivity {
  readonly subagentRunId: string
  /** The subagent's name (`agent` of its first event), e.g. `auditor`; `subagent` when that names none. */
  readonly agent: string
  /** The parent's tool call that runs the subagent. */
  readonly parentToolCallId: string | undefined
  readonly status: SubagentStatus
  /**
   * The subagent's own messages so far (assistant text, its tool calls, their results), at most
   * `SUBAGENT_MESSAGE_LIMIT` (the newest). `subagentText` / `subagentToolCalls` read them.
   */
  readonly messages: readonly Message[]
}

export type SubagentActivities = Readonly<Record<string, SubagentActivity>>

/** Bounds (docs/client-contract.md#subagents): a chatty subagent cannot grow the snapshot without end. */
export const SUBAGENT_MESSAGE_LIMIT = 200
/** Subagent runs kept per thread; a new one drops the oldest. */
export const SUBAGENT_RUN_LIMIT = 100

export const NO_SUBAGENTS: SubagentActivities = Object.freeze({})

/** What `withSubagentEvents` reads of an event; anything else about it is ignored. */
interface Envelope {
  readonly name?: unknown
  readonly value?: {
    readonly subagentRunId?: unknown
    readonly agent?: unknown
    readonly parentToolCallId?: unknown
    readonly event?: {
      readonly type?: unknown
      readonly outcome?: { readonly type?: unknown }
    }
  }
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined)

/**
 * Folds the `interlude.subagent` events of a chunk into the records. Pure; answers the same object when nothing
 * changed, and unchanged records keep their identity. The inner event passes the same shape checks as the parent's
 * events and is assembled the same way (one that still does not fit, such as args of an unknown call, is dropped).
 * The status follows the subagent's own `RUN_STARTED` / `RUN_FINISHED` / `RUN_ERROR`, never a step's or a message's
 * end. (Written for size: this is in every `useChat`.)
 */
export function withSubagentEvents(activities: SubagentActivities, events: readonly AgUiEvent[]): SubagentActivities {
  let next: Record<string, SubagentActivity> | undefined
  for (const event of events) {
    const { name, value } = event as Envelope
    const inner = value?.event
    const runId = str(value?.subagentRunId)
    const type = inner?.type
    if (name !== SUBAGENT_EVENT_NAME || !runId || typeof type !== 'string') continue
    const current = (next ?? activities)[runId]
    const base = current ?? {
      subagentRunId: runId,
      agent: str(value!.agent) ?? 'subagent',
      parentToolCallId: str(value!.parentToolCallId),
      status: 'running',
      messages: NONE,
    }
    let { status, messages } = base
    // Assembled like the parent's events after the same shape checks (lifecycle and unknown types change nothing).
    const result = eventProblems(inner).length ? undefined : applyEvents(messages, undefined, [inner as AgUiEvent])
    if (result && !result.fault && result.messages !== messages)
      messages = Object.freeze(result.messages.slice(-SUBAGENT_MESSAGE_LIMIT))
    // The subagent's own run lifecycle (docs/protocol.md#subagents); a run that ends on an interrupt is waiting.
    if (type === 'RUN_STARTED') status = 'running'
    if (type === 'RUN_ERROR') status = 'failed'
    if (type === 'RUN_FINISHED') status = inner!.outcome?.type === 'interrupt' ? 'interrupted' : 'finished'
    if (current && status === current.status && messages === current.messages) continue
    next ??= { ...activities }
    // Bounded: a new run beyond the limit drops the oldest one.
    const ids = Object.keys(next)
    if (!current && ids.length >= SUBAGENT_RUN_LIMIT) delete next[ids[0]!]
    next[runId] = Object.freeze({ ...base, status, messages })
  }
  return next ? Object.freeze(next) : activities
}
