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
import { appendMessagesTx } from './appends.ts'
import type { Queryable } from './query.ts'
import { fenced, rows } from './query.ts'
import * as sql from './statements.ts'

/**
 * The tool-call ledger of the PostgreSQL store, which is also the effects ledger
 * (docs/architecture.md#effects-ledger): its reads, and the writes that record calls, start effects and settle them.
 * The `…Tx` writes run inside the caller's transaction, fenced by the thread row's lock.
 */

export async function listToolCallIds(q: Queryable, threadId: string): Promise<string[]> {
  return (await rows(q, sql.listToolCallIds(threadId))).map((r) => r.tool_call_id)
}

export async function listToolCalls(
  q: Queryable,
  threadId: string,
  filter: { readonly status?: readonly ToolCallStatus[] },
): Promise<ToolCallRecord[]> {
  return (await rows(q, sql.listToolCalls(threadId, filter.status))).map(toToolCall)
}

export async function getToolCall(
  q: Queryable,
  threadId: string,
  toolCallId: string,
): Promise<ToolCallRecord | undefined> {
  const row = (await rows(q, sql.getToolCall(threadId, toolCallId)))[0]
  return row ? toToolCall(row) : undefined
}

/** Each run's thread row locked (and the run checked active) once, then its calls. */
export async function insertToolCallsTx(q: Queryable, records: readonly NewToolCall[]): Promise<void> {
  const locked = new Set<string>()
  for (const r of records) {
    const key = `${r.threadId}\u0000${r.runId}`
    if (!locked.has(key)) {
      await fenced(q, sql.lockIfActive(r.threadId, r.runId), r.threadId, r.runId)
      locked.add(key)
    }
    await q.query(sql.insertToolCall(r))
  }
}

/** One conditional statement starts the effect; otherwise why not (`../refusals.ts`). */
export async function beginEffect(
  q: Queryable,
  threadId: string,
  toolCallId: string,
  runId: string,
  now: number,
): Promise<BeginEffectResult> {
  if ((await q.query(sql.beginEffect(threadId, toolCallId, runId, now))).rowCount === 1) return 'started'
  const facts = (await rows(q, sql.effectFacts(threadId, runId)))[0]!
  return effectRefusal({ active: facts.active, cancelRequested: facts.cancel })
}

/** Fenced: the result, its tool message and the state change (or a revision bump) together. */
export async function settleToolCallTx(q: Queryable, request: SettleToolCallRequest): Promise<void> {
  const { threadId, runId, now } = request
  const state = 'state' in request ? { json: JSON.stringify(request.state ?? null) } : undefined
  await fenced(q, sql.bumpIfActive(threadId, runId, now, state), threadId, runId)
  const settled = { status: request.status, result: request.result ?? null, now }
  await q.query(sql.settleToolCall(threadId, request.toolCallId, settled))
  if (request.message) await appendMessagesTx(q, threadId, runId, [request.message], now)
}

/** Settles an `unknown` effect only. */
export async function reconcileEffect(q: Queryable, request: ReconcileEffectRequest): Promise<boolean> {
  const { threadId, toolCallId, status, result, now } = request
  const closed = await q.query(sql.closeToolCall(threadId, { toolCallId, status, result, from: ['unknown'] }, now))
  return closed.rowCount === 1
}

/** One conditional statement claims a browser call (row lock: concurrent claims queue, one wins); else why not. */
export async function claimToolCall(q: Queryable, request: ClaimToolCallRequest): Promise<ClaimToolCallResult> {
  const { threadId, toolCallId, claimId, now } = request
  if ((await q.query(sql.claimToolCall(threadId, toolCallId, claimId, now))).rowCount === 1) return { ok: true }
  return toolCallClaimRefusal(await getToolCall(q, threadId, toolCallId))
}
