import { InterludeError } from '@interlude/protocol'
import type { BatchRecord } from '../../store/store.ts'
import { isDue } from '../expiry-policy.ts'
import type { ExpiryOutcome } from './expiry-claim.ts'

/** Decides a due batch at once (`ExpirySweeper.expire`). */
export type ExpireBatch = (batch: BatchRecord) => Promise<ExpiryOutcome>

/**
 * First touch (docs/approvals.md#deadlines): new input on a thread whose open batch is past its deadline, with a
 * policy that decides, applies the policy now through the sweep's own claim instead of waiting for the next round,
 * and is answered `409 THREAD_BUSY` while the continuation holds the thread — the client retries. Whoever won the
 * claim (this request, a replica's sweep, a person), the thread is about to move on, so the answer is the same.
 * `undefined`: the batch is not due (kept, or before its deadline) and stays pending.
 */
export async function expiredBatchBusy(
  batch: BatchRecord,
  now: number,
  expire: ExpireBatch | undefined,
): Promise<InterludeError | undefined> {
  if (expire === undefined || !isDue(batch, now)) return undefined
  const outcome = await expire(batch)
  const activeRunId =
    outcome.kind === 'decided' || outcome.kind === 'lost'
      ? outcome.runId
      : outcome.kind === 'busy'
        ? outcome.activeRunId
        : undefined
  return new InterludeError(
    'THREAD_BUSY',
    'The pending interrupts expired and their expiry policy is being applied; retry.',
    {
      ...(activeRunId !== undefined ? { details: { activeRunId } } : {}),
    },
  )
}
