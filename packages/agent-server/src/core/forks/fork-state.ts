import type { ForkStore, ThreadRecord } from '../../store/store.ts'
import type { ForkDeps } from './fork-thread.ts'

/** Events of one run read per page while looking for where a message begins. */
const PAGE = 500

/**
 * The thread's state right after the message at `position` (docs/time-travel.md#state): the newest `STATE_SNAPSHOT`
 * the parent logged before the first event of the message that follows it. The log is read by index and in pages of
 * one run, never whole; a thread that never changed its state starts from the agent's initial state.
 */
export async function stateAfter(
  deps: ForkDeps,
  forks: ForkStore,
  parent: ThreadRecord,
  position: number,
): Promise<unknown> {
  const next = await forks.getForkMessage(parent.threadId, { position: position + 1 })
  // The last message: the parent's state now (a run in progress has not committed its own state yet).
  if (!next && parent.status !== 'running') return parent.state
  const beforeSeq = next
    ? await firstSeqOf(deps, parent.threadId, next.message.role === 'user' ? undefined : next.message.id, next.runId)
    : undefined
  const json = await forks.getLastStateSnapshot(parent.threadId, beforeSeq === undefined ? {} : { beforeSeq })
  if (json === undefined) return deps.initialState()
  return (JSON.parse(json) as { snapshot?: unknown }).snapshot ?? null
}

/** The seq of the first event of message `messageId` written by `runId` (a user message: its run's first event). */
async function firstSeqOf(
  deps: ForkDeps,
  threadId: string,
  messageId: string | undefined,
  runId: string | undefined,
): Promise<number | undefined> {
  if (runId === undefined) return undefined
  let first: number | undefined
  for (let afterSeq = 0; ;) {
    const page = await deps.store.readEvents(threadId, { runId, afterSeq, limit: PAGE })
    for (const event of page) {
      first ??= event.seq
      // A user message is the input of its run: the run's first event follows it.
      if (messageId === undefined) return first
      if (namesMessage(event.json, messageId)) return event.seq
    }
    if (page.length < PAGE) return first
    afterSeq = page[page.length - 1]!.seq
  }
}

/** Whether an event starts or carries the message (text, a tool call's parent message, a tool result). */
function namesMessage(json: string, messageId: string): boolean {
  if (!json.includes(messageId)) return false
  const event = JSON.parse(json) as { messageId?: unknown; parentMessageId?: unknown }
  return event.messageId === messageId || event.parentMessageId === messageId
}
