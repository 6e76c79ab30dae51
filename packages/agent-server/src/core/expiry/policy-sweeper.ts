import { SYSTEM_ESCALATION_PRINCIPAL } from '@interlude/protocol'
import type { DecisionRecord } from '@interlude/protocol'
import { SERVER_DEFAULTS } from '../../config/defaults.ts'
import type { Clock } from '../../clock.ts'
import type { ClaimBatchRequest, PendingBatchRecord, Store, VoteWrite } from '../../store/store.ts'
import { describeThread } from '../../store/thread-key.ts'
import type { WebhookOutbox } from '../../webhooks/webhook-outbox.ts'
import type { DecisionRights } from '../access/decision-rights.ts'
import { decisionRecord } from '../decision-record.ts'

export interface PolicySweeperOptions {
  readonly store: Pick<Store, 'listPendingBatches' | 'claimBatch'>
  readonly rights: Pick<DecisionRights, 'policyOf' | 'tally' | 'hasTimedPolicies'>
  readonly now: Clock
  readonly logError: (message: string, error: unknown) => void
  readonly webhooks?: WebhookOutbox | undefined
  /** Interval of the periodic sweep; `0`: only `sweepOnce`. @default SERVER_DEFAULTS.expirySweepMs */
  readonly sweepMs?: number
}

const REMINDER_PRINCIPAL = 'system:reminder'

/** Open batches read per query, and per round at most (a round's cost is bounded; the next round goes on). */
const PAGE = 100
const MAX_PAGES = 50

/**
 * The timed parts of organisation policies (docs/approvals.md#organisation-policies), on every replica: an open batch
 * whose `escalate.after` passed unsettled gets its `system:escalation` record and `interrupt.escalated` webhook; one
 * within `remind.before` of its deadline gets its `interrupt.reminder` webhook. Each is written like a vote — under a
 * run id derived from the batch, conditioned on the batch's votes — so replicas racing each other write it once.
 * Only a server whose tools escalate or remind (or set a policy from arguments) sweeps at all.
 */
export class PolicySweeper {
  readonly #o: PolicySweeperOptions
  #timer: ReturnType<typeof setInterval> | undefined
  #round: Promise<void> | undefined
  /** Batches this replica already reminded about or escalated (the store says so too; this spares the write). */
  readonly #done = new Set<string>()

  constructor(options: PolicySweeperOptions) {
    this.#o = options
  }

  start(): void {
    const every = this.#o.sweepMs ?? SERVER_DEFAULTS.expirySweepMs
    if (this.#timer !== undefined || every === 0 || !this.#o.rights.hasTimedPolicies()) return
    this.#timer = setInterval(() => {
      this.#round ??= this.sweepOnce().finally(() => (this.#round = undefined))
    }, every)
    this.#timer.unref?.()
  }

  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    await this.#round
  }

  /** One round over the open batches, newest first. Never throws: a store error is logged and the round ends. */
  async sweepOnce(): Promise<void> {
    let before: { createdAt: number; batchId: string } | undefined
    const open = new Set<string>()
    try {
      for (let page = 0; page < MAX_PAGES; page++) {
        const batches = await this.#o.store.listPendingBatches({ limit: PAGE, ...(before ? { before } : {}) })
        for (const batch of batches) {
          open.add(batch.batchId)
          await this.#visit(batch)
        }
        const last = batches.at(-1)
        if (batches.length < PAGE || last === undefined) return this.#forgetClosed(open)
        before = { createdAt: last.createdAt, batchId: last.batchId }
      }
    } catch (error) {
      this.#o.logError('policy sweep: could not read the open batches', error)
    }
  }

  /** After a whole round: what was done for batches no longer open is not needed any more (bounded memory). */
  #forgetClosed(open: ReadonlySet<string>): void {
    for (const key of this.#done) if (!open.has(key.slice(key.indexOf(':') + 1))) this.#done.delete(key)
  }

  async #visit(batch: PendingBatchRecord): Promise<void> {
    const now = this.#o.now()
    if (now >= batch.expiresAt) return
    const policies = batch.interrupts.map((item) => this.#o.rights.policyOf(item))
    // A policy without `remind` never reminds (not `expiresAt - Infinity`, which would be at once).
    const remindAt = Math.min(
      ...policies.map((p) => (p.remindBeforeMs === undefined ? Infinity : batch.expiresAt - p.remindBeforeMs)),
    )
    if (now >= remindAt && !this.#done.has(`reminder:${batch.batchId}`)) {
      this.#done.add(`reminder:${batch.batchId}`)
      await this.#write(batch, { kind: 'reminder', stage: 0, expectedVotes: 0, settles: false })
    }
    const escalateAt = Math.min(...policies.map((p) => batch.createdAt + (p.escalate?.afterMs ?? Infinity)))
    if (now < escalateAt || this.#done.has(`escalation:${batch.batchId}`)) return
    const tally = await this.#o.rights.tally(batch)
    if (tally === undefined || tally.escalated) return
    const open = tally.interrupts.find((i) => i.settled === undefined && i.policy.escalate !== undefined)
    if (open === undefined) return
    this.#done.add(`escalation:${batch.batchId}`)
    const stage = open.policy.stages.length
    await this.#write(batch, { kind: 'escalation', stage, expectedVotes: tally.records.length, settles: false })
  }

  /** The record (or the reminder's mark) and its webhook, in one write; a lost race writes nothing. */
  async #write(batch: PendingBatchRecord, vote: VoteWrite): Promise<void> {
    const { store, webhooks } = this.#o
    const now = this.#o.now()
    const runId = `${vote.kind}_${batch.batchId}`
    const subject = {
      threadId: batch.threadId,
      owner: batch.ownerId,
      runId: batch.runId,
      interrupts: batch.interrupts.map((i) => i.interrupt),
      // What decision links are made from (docs/approvals.md#decision-links).
      stored: batch.interrupts,
      expiresAt: batch.expiresAt,
    }
    // A reminder's mark is never listed; it names the sweep, not the escalation.
    const decidedBy = vote.kind === 'reminder' ? REMINDER_PRINCIPAL : SYSTEM_ESCALATION_PRINCIPAL
    const record: DecisionRecord = {
      ...decisionRecord(batch, { runId, entries: [], decidedBy, via: 'expiry', now }),
      stage: vote.stage,
    }
    const outbox =
      vote.kind === 'reminder'
        ? await webhooks?.reminder(subject, now)
        : await webhooks?.escalated(subject, record, now)
    const request: ClaimBatchRequest = {
      threadId: batch.threadId,
      batchId: batch.batchId,
      runId,
      decisionHash: runId,
      decision: [],
      now,
      executorId: '',
      leaseUntil: now,
      decidedBy,
      via: 'expiry',
      vote,
      ...(outbox !== undefined && outbox.length > 0 ? { outbox } : {}),
    }
    try {
      const written = await store.claimBatch(request)
      // Another vote came first: the next round judges the batch again.
      if (!written.ok && written.reason === 'votes_changed') this.#done.delete(`${vote.kind}:${batch.batchId}`)
      if (written.ok) webhooks?.committed(outbox)
    } catch (error) {
      this.#done.delete(`${vote.kind}:${batch.batchId}`)
      this.#o.logError(`${vote.kind} of batch ${batch.batchId} on ${describeThread(batch.threadId)} failed`, error)
    }
  }
}
