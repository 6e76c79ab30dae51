import type { Message, ThreadSnapshot, ThreadSummary, UnsettledEffect } from '@interlude/protocol'
import type { Store, ThreadRecord } from '../store/store.ts'
import { isShown } from './expiry-policy.ts'

/**
 * The owner's view of a thread for cold recovery (docs/protocol.md, ThreadSnapshot): the complete pending
 * batch while open and unexpired (or kept past its deadline, docs/approvals.md#deadlines), and unknown effects — calls whose run died after they
 * started and that `reconcile` could not settle (never re-executed blindly).
 */
export async function threadSnapshot(store: Store, thread: ThreadRecord, now: number): Promise<ThreadSnapshot> {
  const [messages, open, started] = await Promise.all([
    store.listMessages(thread.threadId),
    store.getOpenBatch(thread.threadId),
    store.listToolCalls(thread.threadId, { status: ['unknown', 'started'] }),
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
  }
}

function firstUserText(messages: readonly Message[]): string | undefined {
  const first = messages.find((m) => m.role === 'user')
  if (!first) return undefined
  const content = (first as { content: unknown }).content
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((p: { text?: unknown }) => (typeof p.text === 'string' ? p.text : '')).join(' ')
        : ''
  const trimmed = text.trim()
  return trimmed.length === 0 ? undefined : trimmed.length > 80 ? `${trimmed.slice(0, 79)}…` : trimmed
}

/** One row of the approval inbox. */
export async function threadSummary(store: Store, thread: ThreadRecord, now: number): Promise<ThreadSummary> {
  const [open, messages] = await Promise.all([store.getOpenBatch(thread.threadId), store.listMessages(thread.threadId)])
  const title = firstUserText(messages)
  return {
    threadId: thread.threadId,
    status: thread.status,
    revision: thread.revision,
    updatedAt: new Date(thread.updatedAt).toISOString(),
    ...(open && isShown(open, now) ? { interrupts: open.interrupts.map((i) => i.interrupt) } : {}),
    ...(title !== undefined ? { title } : {}),
  }
}
