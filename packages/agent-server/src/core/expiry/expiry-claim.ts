import { SYSTEM_EXPIRY_PRINCIPAL } from '@interlude/protocol'
import type { Clock } from '../../clock.ts'
import type { ValidatorCache } from '../../schema/validator-cache.ts'
import type { BatchRecord, ClaimBatchRequest, ClaimBatchResult, Store } from '../../store/store.ts'
import type { WebhookOutbox } from '../../webhooks/webhook-outbox.ts'
import { decisionHashSync } from '../decision-hash.ts'
import { decisionRecord } from '../decision-record.ts'
import { expiryDecision, expiryRunId, isDue } from '../expiry-policy.ts'
import type { RunManager } from '../runs/run-manager.ts'
import type { ResumeRunPlan } from '../run-plan.ts'
import { resumePlan } from '../run-plan.ts'

/** How the expiry of one batch ended. Only `decided` started (or queued) a run here. */
export type ExpiryOutcome =
  | { readonly kind: 'decided'; readonly runId: string }
  /** Somebody else decided first (a person, or another replica's sweep): nothing to do. */
  | { readonly kind: 'lost'; readonly runId: string | undefined }
  /** A run is active on the thread (the one that raised the batch is still finishing): next round. */
  | { readonly kind: 'busy'; readonly activeRunId: string | undefined }
  /** Not due (kept, not yet expired, no longer open) or its thread is gone. */
  | { readonly kind: 'skipped' }

/** What deciding one due batch writes (the claim, with its outbox rows) and then starts. */
export interface ExpiryClaim {
  readonly request: ClaimBatchRequest
  readonly plan: ResumeRunPlan
}

export interface ExpiryClaimDeps {
  readonly store: Store
  readonly runs: Pick<RunManager, 'lease'>
  readonly validators: ValidatorCache
  readonly now: Clock
  readonly webhooks?: WebhookOutbox | undefined
}

/**
 * The claim that decides a due batch as `system:expiry` via `expiry` (docs/approvals.md#deadlines): the same request
 * a person's resume makes, under a run id derived from the batch, with the `interrupt.expired` rows; or why the batch
 * is not decided now.
 */
export async function expiryClaim(
  deps: ExpiryClaimDeps,
  batch: BatchRecord,
): Promise<ExpiryClaim | Exclude<ExpiryOutcome, { kind: 'decided' | 'lost' }>> {
  const { store, runs, validators, now } = deps
  const decision = expiryDecision(batch, validators)
  if (decision === undefined || !isDue(batch, now())) return { kind: 'skipped' }
  const thread = await store.getThread(batch.threadId)
  if (!thread) return { kind: 'skipped' }
  if (thread.activeRunId !== undefined) return { kind: 'busy', activeRunId: thread.activeRunId }
  const { threadId, ownerId: owner } = thread
  const runId = expiryRunId(batch.batchId)
  const at = now()
  // The record the claim stores, as the webhook reports it (docs/approvals.md#decision-records).
  const record = decisionRecord(batch, {
    runId,
    entries: decision.entries,
    decidedBy: SYSTEM_EXPIRY_PRINCIPAL,
    via: 'expiry',
    now: at,
  })
  const interrupts = batch.interrupts.map((i) => i.interrupt)
  const outbox = deps.webhooks?.expired({ threadId, owner, runId, interrupts }, record, at) ?? []
  return {
    request: {
      threadId,
      batchId: batch.batchId,
      runId,
      decisionHash: decisionHashSync(decision.entries),
      decision: decision.entries,
      now: at,
      ...runs.lease(),
      decidedBy: SYSTEM_EXPIRY_PRINCIPAL,
      via: 'expiry',
      ...(outbox.length > 0 ? { outbox } : {}),
    },
    // The continuation of an expired batch: a resume run in the owner's name, with no browser tools.
    plan: resumePlan({ threadId, runId, owner, batch, ...decision, expired: true }),
  }
}

/** What a claim's answer means for the sweep: a lost claim is not an error, only somebody else's decision. */
export function claimOutcome(claim: ExpiryClaim, result: ClaimBatchResult): ExpiryOutcome {
  if (result.ok) return { kind: 'decided', runId: claim.request.runId }
  if (result.reason === 'busy') return { kind: 'busy', activeRunId: undefined }
  return { kind: 'lost', runId: result.reason === 'already_claimed' ? result.claimedByRunId : undefined }
}
