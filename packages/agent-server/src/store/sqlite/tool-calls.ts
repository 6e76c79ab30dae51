import type {
  BeginEffectResult,
  ClaimToolCallRequest,
  ClaimToolCallResult,
  NewToolCall,
  ReconcileEffectRequest,
  SettleToolCallRequest,
  ToolCallRecord,
  ToolCallStatus,
} from '../store.ts'
import { toToolCall } from '../rows.ts'
import { effectRefusal, toolCallClaimRefusal } from '../refusals.ts'
import { appendMessagesTx, fenceTx } from './appends.ts'
import type { SqliteStatements } from './statements.ts'

/**
 * The tool-call ledger of the SQLite store, which is also the effects ledger (docs/architecture.md#effects-ledger):
 * its reads, and the writes that record calls, start effects and settle them. The writes run inside the caller's
 * write transaction.
 */

export function listToolCallIds(s: SqliteStatements, threadId: string): string[] {
  return s.listToolCallIds.all(threadId).map((r) => r.tool_call_id)
}

export function listToolCalls(
  s: SqliteStatements,
  threadId: string,
  filter: { readonly status?: readonly ToolCallStatus[] },
): ToolCallRecord[] {
  const wanted = filter.status
  const rows =
    wanted === undefined
      ? s.listToolCalls.all(threadId)
      : s.listToolCallsByStatus.all({ threadId, statusesJson: JSON.stringify(wanted) })
  return rows.map(toToolCall)
}

export function getToolCall(s: SqliteStatements, threadId: string, toolCallId: string): ToolCallRecord | undefined {
  const row = s.getToolCall.get(threadId, toolCallId)
  return row ? toToolCall(row) : undefined
}

/** Each call fenced by its run. */
export function insertToolCallsTx(s: SqliteStatements, records: readonly NewToolCall[]): void {
  for (const r of records) {
    fenceTx(s, r.threadId, r.runId)
    s.insertToolCall.run(r)
  }
}

/** One conditional update starts the effect; otherwise why not (`../refusals.ts`). */
export function beginEffectTx(
  s: SqliteStatements,
  threadId: string,
  toolCallId: string,
  runId: string,
  now: number,
): BeginEffectResult {
  if (s.beginEffect.run({ threadId, runId, toolCallId, now }).changes === 1) return 'started'
  return effectRefusal({
    active: s.isActive.get({ threadId, runId }) !== undefined,
    cancelRequested: (s.getRun.get(threadId, runId)?.cancel_requested_at ?? null) !== null,
  })
}

/** Fenced: the result, its tool message and the state change (or a revision bump) together. */
export function settleToolCallTx(s: SqliteStatements, request: SettleToolCallRequest): void {
  const { threadId, runId, now } = request
  fenceTx(s, threadId, runId)
  s.settleToolCall.run({ ...request, result: request.result ?? null })
  if (request.message) appendMessagesTx(s, threadId, runId, [request.message], now)
  if ('state' in request) s.setState.run({ threadId, stateJson: JSON.stringify(request.state ?? null), now })
  else s.bumpRevision.run({ threadId, now })
}

/** Settles an `unknown` effect only. */
export function reconcileEffectTx(s: SqliteStatements, request: ReconcileEffectRequest): boolean {
  const from = JSON.stringify(['unknown'])
  return s.closeToolCall.run({ ...request, fromJson: from }).changes === 1
}

/** One conditional update claims a browser call; otherwise why not (`../refusals.ts`). */
export function claimToolCallTx(s: SqliteStatements, request: ClaimToolCallRequest): ClaimToolCallResult {
  if (s.claimToolCall.run(request).changes === 1) return { ok: true }
  return toolCallClaimRefusal(getToolCall(s, request.threadId, request.toolCallId))
}
