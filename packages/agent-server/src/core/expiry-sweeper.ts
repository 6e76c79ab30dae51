import { SYSTEM_EXPIRY_PRINCIPAL } from '@interlude/protocol'
import type { DecisionRecord } from '@interlude/protocol'
import type { Clock } from '../clock.ts'
import type { ValidatorCache } from '../schema/validator-cache.ts'
import type { BatchRecord, Store } from '../store/store.ts'
import type { WebhookOutbox } from '../webhooks/webhook-outbox.ts'
import { yieldToEventLoop } from './cpu-slice.ts'
import { ContinuationQueue } from './expiry-continuations.ts'
import { decisionHashSync } from './decision-hash.ts'
import { expiryDecision, expiryRunId, isDue } from './expiry-policy.ts'
import type { RunManager } from './run-manager.ts'
import { resumePlan } from './run-plan.ts'

export interface ExpirySweeperOptions {
  readonly store: Store
  readonly runs: Pick<RunManager, 'start' | 'lease' | 'whenDone'>
  readonly validators: ValidatorCache
  readonly now: Clock
  readonly logError: (message: string, error: unknown) => void
  /** Interval of the periodic sweep; `0` sweeps only on demand (`sweepOnce`, first touch). @default 1000 */
  readonly sweepMs?: number
  /** Due batches read per query. @default 100 */
  readonly pageSize?: number
  /** Continuations of a round running at once; the rest wait, claimed (`ContinuationQueue`). @default 8 */
  readonly maxContinuations?: number
  /** `interrupt.expired` rows committed with the claim (docs/approvals.md#webhooks). @default none */
  readonly webhooks?: WebhookOutbox | undefined
}

/** How the expiry of one batch ended. Only `decided` started a run here. */
export type ExpiryOutcome =
  | { readonly kind: 'decided'; readonly runId: string }
  /** Somebody else decided first (a person, or another replica's sweep): nothing to do. */
  | { readonly kind: 'lost'; readonly runId: string | undefined }
  /** A run is active on the thread (the one that raised the batch is still finishing): next round. */
  | { readonly kind: 'busy'; readonly activeRunId: string | undefined }
  /** Not due (kept, not yet expired, no longer open) or its thread is gone. */
  | { readonly kind: 'skipped' }

export const DEFAULT_EXPIRY_SWEEP_MS = 1000

/**
 * Work a round does between two turns of the event loop. Longer than the runs' shared 4 ms slice on purpose: every
 * decision starts a continuation, and with the runs' share the sweep would get one slice per turn among thousands of
 * its own continuations — a mass expiry would then take as long as all of them. Requests wait at most this long.
 */
const SWEEP_SLICE_MS = 50

/**
 * The expiry sweep (docs/approvals.md#deadlines), on every replica: due batches come from the store's deadline
 * index, and each is decided through the same atomic claim a person's resume goes through, as
 * `system:expiry` via `expiry`, under a run id derived from the batch. Replicas racing each other and a person
 * racing the deadline therefore end with exactly one decision; a lost claim is skipped without a word. The winner
 * starts the continuation like any resume run. Store errors are logged, never thrown out of a round.
 */
export class ExpirySweeper {
  readonly #o: ExpirySweeperOptions
  readonly #pageSize: number
  readonly #continuations: ContinuationQueue
  #timer: ReturnType<typeof setInterval> | undefined
  /** The periodic round in progress (rounds never overlap on one replica; replicas overlap freely). */
  #round: Promise<void> | undefined

  constructor(options: ExpirySweeperOptions) {
    const sweepMs = options.sweepMs ?? DEFAULT_EXPIRY_SWEEP_MS
    if (!Number.isFinite(sweepMs) || sweepMs < 0) throw new RangeError('expirySweepMs must be 0 or a positive number.')
    const pageSize = options.pageSize ?? 100
    if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError('pageSize must be a positive integer.')
    this.#o = { ...options, sweepMs }
    this.#pageSize = pageSize
    this.#continuations = new ContinuationQueue(options.runs, options.maxContinuations ?? 8)
  }

  start(): void {
    const every = this.#o.sweepMs ?? DEFAULT_EXPIRY_SWEEP_MS
    if (this.#timer !== undefined || every === 0) return
    this.#timer = setInterval(() => this.#tick(), every)
    this.#timer.unref?.()
  }

  /**
   * Stops the periodic sweep, waits for a round in progress and starts the continuations still queued, so the run
   * manager's shutdown that follows ends them like every other run.
   */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    await this.#round
    this.#continuations.flush()
  }

  /** Continuations decided by a round and not started yet. */
  get waitingContinuations(): number {
    return this.#continuations.waiting
  }

  /**
   * One round: every batch due at the start of the round, page by page, earliest deadline first. Answers how many
   * this replica decided. Busy threads stay due for the next round; a page of nothing new ends the round.
   */
  async sweepOnce(): Promise<number> {
    const { store, now, logError } = this.#o
    const at = now()
    const seen = new Set<string>()
    let decided = 0
    let sliceStart = performance.now()
    for (;;) {
      let page: BatchRecord[]
      try {
        page = await store.listDueBatches({ now: at, limit: this.#pageSize })
      } catch (error) {
        logError('expiry sweep: could not list due batches', error)
        return decided
      }
      let fresh = 0
      for (const batch of page) {
        if (seen.has(batch.batchId)) continue
        seen.add(batch.batchId)
        fresh++
        if ((await this.#expire(batch, 'queued')).kind === 'decided') decided++
        if (performance.now() - sliceStart > SWEEP_SLICE_MS) {
          await yieldToEventLoop()
          sliceStart = performance.now()
        }
      }
      if (page.length < this.#pageSize || fresh === 0) return decided
    }
  }

  /**
   * Applies a due batch's policy now (first touch by new input): the claim, then the continuation, started at once
   * (somebody is waiting for the thread). Never throws; a store error is logged and the batch stays due.
   */
  expire(batch: BatchRecord): Promise<ExpiryOutcome> {
    return this.#expire(batch, 'now')
  }

  async #expire(batch: BatchRecord, start: 'now' | 'queued'): Promise<ExpiryOutcome> {
    const { store, runs, validators, now, logError } = this.#o
    try {
      const decision = expiryDecision(batch, validators)
      if (decision === undefined || !isDue(batch, now())) return { kind: 'skipped' }
      const thread = await store.getThread(batch.threadId)
      if (!thread) return { kind: 'skipped' }
      if (thread.activeRunId !== undefined) return { kind: 'busy', activeRunId: thread.activeRunId }
      const { threadId, ownerId: owner } = thread
      const runId = expiryRunId(batch.batchId)
      const at = now()
      // The record the claim stores, as the webhook reports it (docs/approvals.md#decision-records).
      const record: DecisionRecord = {
        threadId,
        runId,
        interruptIds: batch.interrupts.map((i) => i.interrupt.id),
        entries: decision.entries,
        decidedBy: SYSTEM_EXPIRY_PRINCIPAL,
        via: 'expiry',
        at: new Date(at).toISOString(),
      }
      const interrupts = batch.interrupts.map((i) => i.interrupt)
      const outbox = this.#o.webhooks?.expired({ threadId, owner, runId, interrupts }, record, at) ?? []
      const claim = await store.claimBatch({
        threadId: batch.threadId,
        batchId: batch.batchId,
        runId,
        decisionHash: decisionHashSync(decision.entries),
        decision: decision.entries,
        now: at,
        ...runs.lease(),
        decidedBy: SYSTEM_EXPIRY_PRINCIPAL,
        via: 'expiry',
        ...(outbox.length > 0 ? { outbox } : {}),
      })
      if (claim.ok) {
        this.#o.webhooks?.committed(outbox)
        // The continuation of an expired batch: a resume run in the owner's name, with no browser tools.
        const plan = resumePlan({ threadId, runId, owner, batch, ...decision, expired: true })
        if (start === 'now') this.#continuations.startNow(plan)
        else this.#continuations.push(plan)
        return { kind: 'decided', runId }
      }
      if (claim.reason === 'busy') return { kind: 'busy', activeRunId: undefined }
      return { kind: 'lost', runId: claim.reason === 'already_claimed' ? claim.claimedByRunId : undefined }
    } catch (error) {
      logError(`expiry of batch ${batch.batchId} on thread ${batch.threadId} failed`, error)
      return { kind: 'skipped' }
    }
  }

  #tick(): void {
    this.#round ??= this.sweepOnce().then(
      () => {
        this.#round = undefined
      },
      (error: unknown) => {
        this.#round = undefined
        this.#o.logError('expiry sweep failed', error)
      },
    )
  }
}
