import { GUARDRAIL_INTERRUPT_REASON, InterludeError } from '@interlude/protocol'
import type {
  AwaitingExternalCall,
  GuardrailMetadata,
  Message,
  QueuedInputView,
  ThreadSnapshot,
  ThreadSummary,
  UnsettledEffect,
  WithheldMessage,
} from '@interlude/protocol'
import type { BatchRecord, QueuedInput, Store, ThreadRecord } from '../../store/store.ts'
import { isShown } from '../expiry-policy.ts'
import { clientThreadId, withClientThreadId } from '../../store/thread-key.ts'
import { defined } from '../../defined.ts'

/** Messages in a snapshot page unless `?limit=` says otherwise (docs/protocol.md#threadsnapshot). */
export const DEFAULT_SNAPSHOT_MESSAGES = 200
export const MAX_SNAPSHOT_MESSAGES = 1000

/** Which messages a snapshot carries: the newest `limit` before `beforePosition`, at most `maxBytes` of them. */
export interface SnapshotPage {
  readonly beforePosition?: number
  readonly limit: number
  readonly maxBytes: number
}

/** Who may post an external tool's result besides the owner (its `resultFrom`), by tool name. */
export type ResultFromOf = (toolName: string) => readonly string[] | undefined

/** The opaque `messagesCursor`: the position of the oldest message of a page. */
export function encodeMessagesCursor(position: number): string {
  return Buffer.from(`m${position}`, 'utf8').toString('base64url')
}

export function decodeMessagesCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  const match = /^m(\d{1,15})$/.exec(text)
  if (!match || encodeMessagesCursor(Number(match[1])) !== cursor)
    throw new InterludeError('INVALID_INPUT', 'Invalid messages cursor.')
  return Number(match[1])
}

/** `?limit=` of a snapshot: 1 to 1000, default 200. */
export function parseSnapshotLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_SNAPSHOT_MESSAGES
  const limit = Number(value)
  if (value === '' || !Number.isInteger(limit) || limit < 1 || limit > MAX_SNAPSHOT_MESSAGES)
    throw new InterludeError('INVALID_INPUT', `limit must be an integer from 1 to ${MAX_SNAPSHOT_MESSAGES}.`)
  return limit
}

/**
 * The owner's view of a thread for cold recovery (docs/protocol.md, ThreadSnapshot): the complete pending
 * batch while open and unexpired (or kept past its deadline, docs/approvals.md#deadlines), and unknown effects —
 * calls whose run died after they started and that `reconcile` could not settle (never re-executed blindly).
 * Its messages are one page (docs/decisions.md#bounded-histories): a snapshot costs the same however long the thread
 * is. External calls still waiting for their result are listed with who may post it (docs/protocol.md#external-results).
 */
export async function threadSnapshot(
  store: Store,
  thread: ThreadRecord,
  now: number,
  page: SnapshotPage = { limit: DEFAULT_SNAPSHOT_MESSAGES, maxBytes: 1024 * 1024 },
  resultFrom: ResultFromOf = () => undefined,
): Promise<ThreadSnapshot> {
  const [stored, open, calls, decisions, origin, queue] = await Promise.all([
    store.listMessagePage(thread.threadId, page),
    store.getOpenBatch(thread.threadId),
    store.listToolCalls(thread.threadId, { status: ['unknown', 'started', 'awaiting_result'] }),
    store.listDecisions(thread.threadId),
    store.forks?.getForkOrigin(thread.threadId),
    store.listQueuedInputs?.(thread.threadId),
  ])
  const queued = (queue ?? []).flatMap(queuedView)
  const started = calls.filter((c) => c.status !== 'awaiting_result')
  const awaiting: AwaitingExternalCall[] = calls
    .filter((c) => c.status === 'awaiting_result' && c.kind === 'external')
    .map((c) => {
      const from = resultFrom(c.toolName)
      return { toolCallId: c.toolCallId, toolName: c.toolName, ...(from ? { resultFrom: [...from] } : {}) }
    })
  // `started` by the active run means it is executing right now; otherwise its run is gone.
  const unsettled: UnsettledEffect[] = started
    .filter((c) => c.status === 'unknown' || (c.attemptRunId !== undefined && c.attemptRunId !== thread.activeRunId))
    .map((c) => ({ toolCallId: c.toolCallId, toolName: c.toolName, status: 'unknown' }))
  const oldest = stored[0]?.position
  const more = oldest !== undefined && oldest > 0
  return {
    threadId: clientThreadId(thread.threadId),
    revision: thread.revision,
    status: thread.status,
    messages: stored.map((m) => m.message),
    state: thread.state,
    // The batch is named by the run that paused with it (docs/time-travel.md).
    ...(open && isShown(open, now) ? { interrupts: open.interrupts.map((i) => i.interrupt), batchId: open.runId } : {}),
    ...(origin ? { parent: { threadId: clientThreadId(origin.parentThreadId), at: origin.at } } : {}),
    ...withheldOf(open && isShown(open, now) ? open : undefined),
    ...defined({ activeRunId: thread.activeRunId }),
    lastEventId: thread.lastSeq,
    ...(unsettled.length > 0 ? { unsettledEffects: unsettled } : {}),
    ...(awaiting.length > 0 ? { awaitingExternal: awaiting } : {}),
    // Who decided each batch (docs/approvals.md#decision-records).
    ...(decisions.length > 0 ? { decisions: decisions.map(withClientThreadId) } : {}),
    hasMoreMessages: more,
    ...(more ? { messagesCursor: encodeMessagesCursor(oldest) } : {}),
    messageCount: thread.messageCount,
    ...(queued.length > 0 ? { queued } : {}),
  }
}

/** A queued input as the snapshot lists it: its last user message (an input may carry history before it). */
function queuedView(entry: QueuedInput): QueuedInputView[] {
  const { messages } = JSON.parse(entry.input) as { messages: Message[] }
  const message = messages.filter((m) => m.role === 'user').at(-1)
  return message ? [{ runId: entry.runId, position: entry.position, steer: entry.steer, message }] : []
}

/**
 * The answers a failed output guardrail holds back (docs/guardrails.md#withheld-answers): streamed already, in the
 * open batch's interrupt, not in the history.
 */
function withheldOf(open: BatchRecord | undefined): { withheld?: WithheldMessage[] } {
  const withheld: WithheldMessage[] = []
  for (const { interrupt } of open?.interrupts ?? []) {
    const m = interrupt.metadata as Partial<GuardrailMetadata> | undefined
    if (interrupt.reason !== GUARDRAIL_INTERRUPT_REASON || m?.on !== 'output' || m.messageId === undefined) continue
    const { messageId, guardrail = '', reason = '', content = '' } = m
    withheld.push({ messageId, interruptId: interrupt.id, guardrail, reason, content })
  }
  return withheld.length > 0 ? { withheld } : {}
}

/** One row of the approval inbox. */
export async function threadSummary(store: Store, thread: ThreadRecord, now: number): Promise<ThreadSummary> {
  const open = await store.getOpenBatch(thread.threadId)
  const title = thread.title
  return {
    threadId: clientThreadId(thread.threadId),
    status: thread.status,
    revision: thread.revision,
    updatedAt: new Date(thread.updatedAt).toISOString(),
    ...(open && isShown(open, now) ? { interrupts: open.interrupts.map((i) => i.interrupt) } : {}),
    ...defined({ title }),
  }
}
