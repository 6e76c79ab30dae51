import type { AgUiEvent } from '@interlude/protocol'
import type { ResolvedTool } from '../../agent/tool.ts'
import type { ToolCallRecord } from '../../store/store.ts'
import { editedResult } from '../tools/edited-result.ts'
import { toolInvocation } from '../tools/effects-ledger.ts'
import type { AskedOutcome, EffectOutcome } from '../tools/effects-ledger.ts'
import { runServerTool } from '../tools/server-tool-run.ts'
import { EMPTY_CHECKPOINT } from '../tools/tool-asks.ts'
import type { AskSession, ToolCheckpoint } from '../tools/tool-asks.ts'
import { askInterruptFor } from '../tools/tool-interrupts.ts'
import { subagentRunner } from './subagent-run.ts'
import type { Turn } from './turn-state.ts'

/**
 * A server tool runs now (with the answers of its questions so far, if it asked); an external tool is started and
 * its result awaited. A tool that asks past its answers leaves its questions in `turn.asked`.
 */
export async function* runEffect(
  turn: Turn,
  tool: ResolvedTool,
  record: ToolCallRecord,
  args: unknown,
  edited = false,
  checkpoint: ToolCheckpoint = EMPTY_CHECKPOINT,
): AsyncGenerator<AgUiEvent> {
  const { deps } = turn
  const signal = deps.toolSignal ?? deps.signal
  let outcome: EffectOutcome | 'awaiting_result' | undefined
  if (tool.kind === 'external') {
    const invocation = () => toolInvocation(turn.policyContext(record.toolCallId), signal)
    outcome = await turn.ledger.dispatch(tool, record.toolCallId, args, invocation)
    if (outcome === 'awaiting_result') turn.markCall(record, 'awaiting_result')
  } else {
    const { outcome: executed, asks } = yield* runServerTool({
      tool,
      toolCallId: record.toolCallId,
      args,
      checkpoint,
      policy: turn.policyContext(record.toolCallId),
      toolSignal: signal,
      ledger: turn.ledger,
      writes: turn.writes,
      validators: deps.validators,
      logError: deps.logError,
      onStateCommitted: (state) => turn.setState(state),
      ...(tool.subagent ? { subagent: subagentRunner(tool, deps.signal, deps.validators, deps.logError) } : {}),
    })
    if (executed.status === 'asked') {
      await released(turn, tool, record, asks, executed, { args, edited })
      return
    }
    outcome = executed
  }
  if (typeof outcome === 'object')
    yield* turn.settle(
      record,
      outcome.status,
      edited ? editedResult(args, outcome.result) : outcome.result,
      outcome.state,
    )
}

/**
 * The tool asked: its claim is released (`awaiting_decision`) and the arguments it runs with are kept, before the
 * batch is stored — a crash in between leaves a call that is not started and runs (and asks) again.
 */
async function released(
  turn: Turn,
  tool: ResolvedTool,
  record: ToolCallRecord,
  asks: AskSession,
  asked: AskedOutcome,
  run: { readonly args: unknown; readonly edited: boolean },
): Promise<void> {
  const checkpoint = asks.checkpoint
  if (checkpoint.args === undefined)
    await turn.writes.saveCheckpoint(record.toolCallId, { ...checkpoint, args: run.args, edited: run.edited })
  if (asks.claimed || record.status !== 'awaiting_decision' || asked.state !== undefined)
    await turn.writes.settle({
      toolCallId: record.toolCallId,
      status: 'awaiting_decision',
      result: undefined,
      message: undefined,
      ...(asked.state !== undefined ? { state: asked.state } : {}),
    })
  if (asked.state !== undefined) turn.setState(asked.state)
  turn.markCall(record, 'awaiting_decision')
  for (const request of asked.requests)
    turn.asked.push(askInterruptFor(tool, record.toolCallId, request, expiryDefaults(turn)))
}

export function expiryDefaults(turn: Turn): { ttlMs: number; onExpiry: Turn['deps']['onExpiry'] } {
  return { ttlMs: turn.deps.interruptTtlMs, onExpiry: turn.deps.onExpiry }
}
