import type { Store } from '../../store/store.ts'

/** Events of one run read per page while looking for where a message begins. */
const PAGE = 500

/**
 * Where message `messageId` begins in run `runId`'s events: the seq of the first event that starts or carries it (text,
 * a tool call's parent message, a tool result, a steered user message's `TEXT_MESSAGE_START`), and the run's first
 * seq. Read by index in pages of one run, never the whole log; stops at the message.
 */
export async function messageStart(
  store: Store,
  threadId: string,
  runId: string,
  messageId: string,
): Promise<{ readonly seq?: number; readonly runFirstSeq?: number }> {
  let runFirstSeq: number | undefined
  for (let afterSeq = 0; ;) {
    const page = await store.readEvents(threadId, { runId, afterSeq, limit: PAGE })
    for (const event of page) {
      runFirstSeq ??= event.seq
      if (namesMessage(event.json, messageId)) return { seq: event.seq, runFirstSeq }
    }
    if (page.length < PAGE) return runFirstSeq === undefined ? {} : { runFirstSeq }
    afterSeq = page[page.length - 1]!.seq
  }
}

/** Whether an event starts or carries the message (text, a tool call's parent message, a tool result). */
function namesMessage(json: string, messageId: string): boolean {
  if (!json.includes(messageId)) return false
  const event = JSON.parse(json) as { messageId?: unknown; parentMessageId?: unknown }
  return event.messageId === messageId || event.parentMessageId === messageId
}
