import { EventType } from '@interlude/protocol'
import type { AgUiEvent, RunFinishedOutcome } from '@interlude/protocol'
import type { FinishRunRequest } from '../../store/store.ts'
import type { WebhookOutbox } from '../../webhooks/webhook-outbox.ts'
import { toNewEvent } from '../ev.ts'
import type { RunPlan } from '../run-plan.ts'

/**
 * A run's end as one store write (`Store.finishRun`): its terminal event, its status and outcome, the batch a resume
 * closes, and the `run.failed` webhook row of a failure (docs/approvals.md, "Webhooks").
 */
export function finishRequest(
  plan: RunPlan,
  terminal: AgUiEvent,
  now: number,
  webhooks: WebhookOutbox | undefined,
): FinishRunRequest {
  const outcome: RunFinishedOutcome | undefined =
    terminal.type === EventType.RUN_FINISHED
      ? ((terminal as { outcome?: RunFinishedOutcome }).outcome ?? { type: 'success' })
      : undefined
  const status: FinishRunRequest['status'] =
    outcome === undefined
      ? 'failed'
      : outcome.type === 'interrupt'
        ? 'interrupted'
        : outcome.type === 'cancelled'
          ? 'cancelled'
          : 'succeeded'
  const closeBatch: FinishRunRequest['closeBatch'] =
    plan.kind === 'resume'
      ? {
          batchId: plan.batch.batchId,
          // An expired batch closes as such, whether a cancellation or the expiry sweep decided it.
          status: plan.expired ? 'expired' : plan.allCancelled ? 'cancelled' : 'resolved',
        }
      : undefined
  const errorCode = outcome === undefined ? String((terminal as { code?: unknown }).code ?? 'INTERNAL') : undefined
  // A failed run is reported with its end, in the same write (docs/approvals.md, "Webhooks").
  const outbox =
    errorCode !== undefined
      ? (webhooks?.failed({ threadId: plan.threadId, owner: plan.principal, runId: plan.runId }, errorCode, now) ?? [])
      : []
  return {
    threadId: plan.threadId,
    runId: plan.runId,
    status,
    outcome,
    errorCode,
    events: [toNewEvent(terminal)],
    closeBatch,
    now,
    ...(outbox.length > 0 ? { outbox } : {}),
  }
}
