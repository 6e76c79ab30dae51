import type { AgUiEvent } from '@interlude/protocol'
import type { ToolCallRecord } from '../../store/store.ts'
import { parseJson } from '../strict-json.ts'
import { toolGone } from '../tools/approved-call.ts'
import { EMPTY_CHECKPOINT, parseCheckpoint } from '../tools/tool-asks.ts'
import { authorizeCall } from '../tools/tool-verdicts.ts'
import { runEffect } from './run-effect.ts'
import type { Turn } from './turn-state.ts'

/**
 * Held calls (docs/decisions.md#a-turn-keeps-its-promises): under `pausePolicy: 'hold'` the free calls of a model
 * response wait, recorded and `pending`, while another call of the same response waits for a person — a batch to be
 * decided, a browser tab or an external system to send its result. They run when that is over, in the model's order.
 */

/**
 * Runs the given held calls in order. A call that asks from inside `execute` leaves its questions in `turn.asked`:
 * the calls after it stay held and wait for that batch too.
 */
export async function* runHeldCalls(turn: Turn, records: readonly ToolCallRecord[]): AsyncGenerator<AgUiEvent> {
  for (const record of records) {
    if (turn.asked.length > 0) return
    const current = turn.call(record.toolCallId)
    if (current?.status === 'pending') yield* runHeld(turn, current, false)
  }
}

/**
 * The calls an earlier run of this turn held while its response waited for browser or external results, run once no
 * result is awaited any more (an input run that brought the last result). A new user message never gets here: its
 * admission closes held calls together with the awaited ones (`closingResult`).
 */
export async function* runReleasedHeld(turn: Turn): AsyncGenerator<AgUiEvent> {
  if (turn.awaitingResults().length > 0) return
  yield* runHeldCalls(
    turn,
    turn.openCalls().filter((c) => turn.isHeld(c)),
  )
}

/**
 * A held call runs now, as it would have without the pause — `authorize` again first (the resource may have changed
 * while the batch waited). A call a stale re-ask deferred runs with what it was decided with (its checkpoint). A batch
 * all cancelled abandons the turn: its held calls never run.
 */
export async function* runHeld(turn: Turn, record: ToolCallRecord, cancelled: boolean): AsyncGenerator<AgUiEvent> {
  if (cancelled) {
    yield* turn.settle(record, 'cancelled', { status: 'cancelled', message: HELD_CANCELLED })
    return
  }
  if (record.kind === 'client') {
    // A browser call is offered now: its run ends waiting for a tab's result (docs/protocol.md#browser-tool-claims).
    await turn.writes.settle({
      toolCallId: record.toolCallId,
      status: 'awaiting_result',
      result: undefined,
      message: undefined,
    })
    turn.markCall(record, 'awaiting_result')
    return
  }
  const tool = turn.deps.agent.tools.get(record.toolName)
  if (!tool) {
    yield* turn.settle(record, 'rejected', toolGone(record.toolName))
    return
  }
  const deferred = record.status === 'awaiting_decision'
  const checkpoint = deferred
    ? parseCheckpoint(await turn.deps.store.getToolCheckpoint(turn.plan.threadId, record.toolCallId))
    : EMPTY_CHECKPOINT
  const args = checkpoint.approved?.args ?? checkpoint.args ?? requestedArgs(record)
  const edited = checkpoint.approved?.edited ?? checkpoint.edited === true
  const denial = await authorizeCall(tool, args, record.toolCallId, turn.verdicts)
  if (denial !== undefined) {
    yield* turn.settle(record, 'denied', { status: 'denied', reason: denial })
    return
  }
  yield* runEffect(turn, tool, record, args, edited, checkpoint)
}

const HELD_CANCELLED = 'The decision this call waited for was cancelled; it did not run.'

/** The arguments the model proposed (`{}` when they are not JSON: the call was rejected before it could run). */
export function requestedArgs(record: ToolCallRecord): unknown {
  const parsed = parseJson(record.argsText)
  return parsed.ok ? parsed.value : {}
}
