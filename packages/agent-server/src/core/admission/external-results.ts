import { InterludeError } from '@interlude/protocol'
import type { ExternalResultsSettled, Message, SettledExternalResult } from '@interlude/protocol'
import type { ResolvedTool } from '../../agent/tool.ts'
import type { Store, ToolCallRecord } from '../../store/store.ts'
import { clientThreadId } from '../../store/thread-key.ts'

/**
 * External results from the owning system (docs/protocol.md#external-results): who may post a result for an external
 * call besides the thread's owner, and the answer to a result that arrives for a call already settled. The call's
 * operation id is its `toolCallId` (`ctx.idempotencyKey`), so results are deduplicated by it: the first one settles
 * the call, every later one gets that first result back and settles nothing.
 */

/** What the model reads for an external call a new user message overtook: it was dispatched, so it may have run. */
export const EXTERNAL_UNKNOWN_RESULT = JSON.stringify({
  status: 'unknown',
  message: 'The operation was dispatched but no result arrived before the next message; it may have happened.',
})

// A principal who may not post to the thread cannot tell it from a missing one.
const notFound = () => new InterludeError('THREAD_NOT_FOUND', 'Thread not found.')

/** The thread's calls a set of tool messages answers, read one by one (bounded by the input, never the history). */
export async function callsAnswered(
  store: Pick<Store, 'getToolCall'>,
  threadId: string,
  messages: readonly Message[],
): Promise<Map<string, ToolCallRecord>> {
  const ids = [...new Set(messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])))]
  const calls = await Promise.all(ids.map((id) => store.getToolCall(threadId, id)))
  return new Map(calls.flatMap((call) => (call ? [[call.toolCallId, call] as const] : [])))
}

/**
 * A principal who is not the owner posts results only: every message a `tool` message for an external call whose
 * tool lists it in `resultFrom`. Anything else is `THREAD_NOT_FOUND`, exactly as for a stranger, and changes nothing.
 */
export function checkResultPoster(
  principal: string,
  messages: readonly Message[],
  calls: ReadonlyMap<string, ToolCallRecord>,
  tools: ReadonlyMap<string, ResolvedTool>,
): void {
  if (messages.length === 0) throw notFound()
  for (const message of messages) {
    if (message.role !== 'tool') throw notFound()
    const call = calls.get(message.toolCallId)
    if (call?.kind !== 'external') throw notFound()
    const listed = tools.get(call.toolName)?.definition.resultFrom
    if (!listed?.includes(principal)) throw notFound()
  }
}

/**
 * The answer to results that all arrive too late: every external call `results` answers is settled already (by an
 * earlier result, or left `unknown` by a new user message). `undefined` when one of them still awaits its result —
 * then the results are admitted as usual and the first of them wins in the store's conditional write.
 */
export function settledAnswer(
  threadId: string,
  results: readonly Message[],
  calls: ReadonlyMap<string, ToolCallRecord>,
): ExternalResultsSettled | undefined {
  const answered: SettledExternalResult[] = []
  const seen = new Set<string>()
  for (const message of results) {
    if (message.role !== 'tool' || seen.has(message.toolCallId)) continue
    seen.add(message.toolCallId)
    const call = calls.get(message.toolCallId)
    if (call?.kind !== 'external' || call.status === 'awaiting_result' || call.result === undefined) return undefined
    answered.push({ toolCallId: call.toolCallId, status: call.status, content: call.result })
  }
  if (answered.length === 0) return undefined
  return { threadId: clientThreadId(threadId), settled: answered }
}
