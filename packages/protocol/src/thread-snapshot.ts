import type { Interrupt, Message } from '@ag-ui/core'
import type { DecisionRecord } from './decisions.ts'
import type { ThreadParent } from './forks.ts'
import type { WithheldMessage } from './guardrails.ts'
import type { MultitaskStrategy, QueuedInputView } from './multitask.ts'

export type ThreadStatus = 'idle' | 'running' | 'interrupted'

/** An effect whose tool started but whose outcome was never recorded (the process died in between). */
export interface UnsettledEffect {
  readonly toolCallId: string
  readonly toolName: string
  readonly status: 'unknown'
}

/**
 * A call dispatched to an external system whose result has not arrived yet (docs/protocol.md#external-results): the
 * owner, or a principal named in `resultFrom`, posts it.
 */
export interface AwaitingExternalCall {
  readonly toolCallId: string
  readonly toolName: string
  /** Who may post the result besides the thread's owner (the tool's `resultFrom`); absent: the owner only. */
  readonly resultFrom?: readonly string[]
}

/** One call of a result post that arrived after the call was settled: what it holds (the first result wins). */
export interface SettledExternalResult {
  readonly toolCallId: string
  /** `succeeded` (the first result), or `unknown` when a new user message overtook the call. */
  readonly status: string
  /** The stored result: the first result's content as the model read it. */
  readonly content: string
}

/** `200` answer of `POST {base}/runs` to a result post whose calls are all settled already: nothing ran. */
export interface ExternalResultsSettled {
  readonly threadId: string
  readonly settled: readonly SettledExternalResult[]
}

/** `200` answer of the claim route: this claim holds the browser call (docs/protocol.md#browser-tool-claims). */
export interface ToolCallClaimed {
  readonly toolCallId: string
  readonly claimId: string
}

/**
 * What Interlude reads of a RunAgentInput's `forwardedProps`: the claim its browser results were produced under, and
 * what the input does while its thread is busy (docs/protocol.md#multitask).
 */
export interface InterludeForwardedProps {
  readonly interlude?: { readonly claimId?: string; readonly multitask?: MultitaskStrategy }
}

/**
 * The server's view of a thread for cold recovery (docs/protocol.md). Served only to the owner; it never
 * contains a client-side batch token.
 */
export interface ThreadSnapshot {
  readonly threadId: string
  /** +1 on every committed change. */
  readonly revision: number
  readonly status: ThreadStatus
  readonly messages: readonly Message[]
  readonly state: unknown
  /** The complete pending batch, only while open and unexpired. */
  readonly interrupts?: readonly Interrupt[]
  /** With `interrupts`: the batch's id, the id of the run that paused with it (a fork point, docs/time-travel.md). */
  readonly batchId?: string
  /** A fork's origin: the thread it was forked from and where (docs/time-travel.md). */
  readonly parent?: ThreadParent
  /** Assistant texts a failed output guardrail holds back until a person allows them (docs/guardrails.md). */
  readonly withheld?: readonly WithheldMessage[]
  readonly activeRunId?: string
  /** Sequence of the last event in the thread's log (0 when empty). */
  readonly lastEventId: number
  readonly unsettledEffects?: readonly UnsettledEffect[]
  /** Calls waiting for a result from an external system, oldest first (absent when none). */
  readonly awaitingExternal?: readonly AwaitingExternalCall[]
  /** The thread's decision records, oldest first (owner and deciders only). */
  readonly decisions?: readonly DecisionRecord[]
  /**
   * `messages` is one page: the newest messages (or those before `?before=`). `true` when older messages exist;
   * then `messagesCursor` fetches the page before this one (`GET …/threads/:id?before=<messagesCursor>`).
   */
  readonly hasMoreMessages?: boolean
  readonly messagesCursor?: string
  /** Messages the thread holds in all (the thread cap counts them). */
  readonly messageCount?: number
  /** Input waiting in the thread's queue, next first (docs/protocol.md#multitask; absent when none). */
  readonly queued?: readonly QueuedInputView[]
}

/** One row of `GET {base}/threads?status=interrupted` (the approval inbox). */
export interface ThreadSummary {
  readonly threadId: string
  readonly status: ThreadStatus
  readonly revision: number
  readonly updatedAt: string
  readonly interrupts?: readonly Interrupt[]
  readonly title?: string
}

export interface ThreadListPage {
  readonly threads: readonly ThreadSummary[]
  /** Opaque cursor for the next page, absent on the last page. */
  readonly nextCursor?: string
}
