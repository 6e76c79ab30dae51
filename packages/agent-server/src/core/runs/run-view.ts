import type { DecisionRecord, RunView, RunViewStatus } from '@interlude/protocol'
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

/** `GET {base}/threads/:threadId/runs/:runId` (docs/protocol.md): where a run stands, and the decision it carries. */
export function runView(run: RunRecord, decision: DecisionRecord | undefined): RunView {
  return {
    threadId: clientThreadId(run.threadId),
    runId: run.runId,
    status: STATUS[run.status],
    ...defined({
      outcome: run.outcome,
      errorCode: run.errorCode,
      decision: decision && withClientThreadId(decision),
      usage: run.usage,
    }),
  }
}
