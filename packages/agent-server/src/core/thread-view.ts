import type { ThreadSnapshot, ThreadSummary, UnsettledEffect } from '@interlude/protocol'
import type { Store, ThreadRecord } from '../store/store.ts'
import { isShown } from './expiry-policy.ts'

/**
 * The owner's view of a thread for cold recovery (docs/protocol.md, ThreadSnapshot): the complete pending
 * batch while open and unexpired (or kept past its deadline, docs/approvals.md#deadlines), and unknown effects —
 * calls whose run died after they started and that `reconcile` could not settle (never re-executed blindly).
 */
export async function threadSnapshot(store: Store, thread: ThreadRecord, now: number): Promise<ThreadSnapshot> {
  const [messages, open, started, decisions] = await Promise.all([
    store.listMessages(thread.threadId),
    store.getOpenBatch(thread.threadId),
    store.listToolCalls(thread.threadId, { status: ['unknown', 'started'] }),
    store.listDecisions(thread.threadId),
  ])
  // `started` by the active run means it is executing right now; otherwise its run is gone.
  const unsettled: UnsettledEffect[] = started
    .filter((c) => c.status === 'unknown' || (c.attemptRunId !== undefined && c.attemptRunId !== thread.activeRunId))
    .map((c) => ({ toolCallId: c.toolCallId, toolName: c.toolName, status: 'unknown' }))
  return {
    threadId: thread.threadId,
    revision: thread.revision,
    status: thread.status,
    messages,
    state: thread.state,
    ...(open && isShown(open, now) ? { interrupts: open.interrupts.map((i) => i.interrupt) } : {}),
    ...(thread.activeRunId !== undefined ? { activeRunId: thread.activeRunId } : {}),
    lastEventId: thread.lastSeq,
    ...(unsettled.length > 0 ? { unsettledEffects: unsettled } : {}),
    // Who decided each batch (docs/approvals.md#decision-records).
    ...(decisions.length > 0 ? { decisions } : {}),
  }
}

/** One row of the approval inbox. */
export async function threadSummary(store: Store, thread: ThreadRecord, now: number): Promise<ThreadSummary> {
  const open = await store.getOpenBatch(thread.threadId)
  const title = thread.title
  return {
    threadId: thread.threadId,
    status: thread.status,
    revision: thread.revision,
    updatedAt: new Date(thread.updatedAt).toISOString(),
    ...(open && isShown(open, now) ? { interrupts: open.interrupts.map((i) => i.interrupt) } : {}),
    ...(title !== undefined ? { title } : {}),
  }
}
