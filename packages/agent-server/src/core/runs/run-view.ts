import type { DecisionRecord, RunFinishedOutcome, RunView, RunViewStatus } from '@interlude/protocol'
import type { RunRecord, RunStatus } from '../../store/store.ts'
import { clientThreadId, withClientThreadId } from '../../store/thread-key.ts'
import { defined } from '../../defined.ts'

const STATUS: Readonly<Record<RunStatus, RunViewStatus>> = {
  running: 'running',
  succeeded: 'finished',
  failed: 'failed',
  cancelled: 'cancelled',
  interrupted: 'interrupted',
}

/**
 * The outcome with its reason (docs/guardrails.md#outcome-reasons): a run that ended on a budget or a guardrail wrote
 * it into its `RUN_FINISHED`; a pause is `interrupted`, a cancel `cancelled`.
 */
function withReason(outcome: RunFinishedOutcome): NonNullable<RunView['outcome']> {
  if ('reason' in outcome) return outcome as NonNullable<RunView['outcome']>
  if (outcome.type === 'interrupt') return { ...outcome, reason: 'interrupted' }
  if (outcome.type === 'cancelled') return { ...outcome, reason: 'cancelled' }
  return outcome
}

/** `GET {base}/threads/:threadId/runs/:runId` (docs/protocol.md): where a run stands, and the decision it carries. */
export function runView(run: RunRecord, decision: DecisionRecord | undefined): RunView {
  return {
    threadId: clientThreadId(run.threadId),
    runId: run.runId,
    status: STATUS[run.status],
    ...defined({
      outcome: run.outcome && withReason(run.outcome),
      errorCode: run.errorCode,
      decision: decision && withClientThreadId(decision),
      usage: run.usage,
      // The batch it paused with (its own id), else the one it carried out (docs/time-travel.md).
      batchId: run.outcome?.type === 'interrupt' ? run.runId : decision?.batchId,
    }),
  }
}
