import { SERVER_DEFAULTS } from '../../config/defaults.ts'
import type { Logger } from '../../observability/logger.ts'
import type { Clock } from '../../clock.ts'
import type { ValidatorCache } from '../../schema/validator-cache.ts'
import type { BatchRecord, ClaimBatchRequest, ClaimBatchResult, Store } from '../../store/store.ts'
import type { WebhookOutbox } from '../../webhooks/webhook-outbox.ts'
import { yieldToEventLoop } from '../cpu-slice.ts'
import type { ExpiryClaim, ExpiryOutcome } from './expiry-claim.ts'
import { claimOutcome, expiryClaim } from './expiry-claim.ts'
import { ContinuationQueue } from './expiry-continuations.ts'
import type { RunManager } from '../runs/run-manager.ts'
import { describeThread, threadLogFields } from '../../store/thread-key.ts'

export type { ExpiryOutcome } from './expiry-claim.ts'

export interface ExpirySweeperOptions {
  readonly store: Store
  readonly runs: Pick<RunManager, 'start' | 'lease' | 'whenDone' | 'hold'>
  readonly validators: ValidatorCache
  readonly now: Clock
  readonly logError: (message: string, error: unknown) => void
  /**
   * Interval of the periodic sweep; `0` sweeps only on demand (`sweepOnce`, first touch).
   * @default SERVER_DEFAULTS.expirySweepMs
   */
  readonly sweepMs?: number
  /** Due batches read per query. @default 100 */
  readonly pageSize?: number
  /** Continuations of a round running at once; the rest wait, claimed (`ContinuationQueue`). @default 8 */
  readonly maxContinuations?: number
  /** `interrupt.expired` rows committed with the claim (docs/approvals.md#webhooks). @default none */
  readonly webhooks?: WebhookOutbox | undefined
  /** One `expiry.decided` line per batch its deadline decided (observability/logger.ts). */
  readonly log?: Pick<Logger, 'info'>
}

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
    const sweepMs = options.sweepMs ?? SERVER_DEFAULTS.expirySweepMs
    if (!Number.isFinite(sweepMs) || sweepMs < 0) throw new RangeError('expirySweepMs must be 0 or a positive number.')
    const pageSize = options.pageSize ?? 100
    if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError('pageSize must be a positive integer.')
    this.#o = { ...options, sweepMs }
    this.#pageSize = pageSize
    this.#continuations = new ContinuationQueue(options.runs, options.maxContinuations ?? 8)
  }

  start(): void {
    const every = this.#o.sweepMs ?? SERVER_DEFAULTS.expirySweepMs
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
   * One round: every batch due at the start of the round, page by page, earliest deadline first, each page claimed in
   * one store transaction where the store offers it (`claimBatches`). Answers how many this replica decided. Busy
   * threads stay due for the next round; a page of nothing new ends the round.
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
      const fresh = page.filter((batch) => !seen.has(batch.batchId))
      for (const batch of fresh) seen.add(batch.batchId)
      decided += await this.#decide(fresh)
      if (performance.now() - sliceStart > SWEEP_SLICE_MS) {
        await yieldToEventLoop()
        sliceStart = performance.now()
      }
      if (page.length < this.#pageSize || fresh.length === 0) return decided
    }
  }

  /**
   * Applies a due batch's policy now (first touch by new input): the claim, then the continuation, started at once
   * (somebody is waiting for the thread). Never throws; a store error is logged and the batch stays due.
   */
  async expire(batch: BatchRecord): Promise<ExpiryOutcome> {
    const claim = await this.#prepare(batch)
    if (!('request' in claim)) return claim
    try {
      return this.#settle(claim, await this.#o.store.claimBatch(claim.request), 'now')
    } catch (error) {
      this.#o.logError(`expiry of batch ${batch.batchId} on thread ${describeThread(batch.threadId)} failed`, error)
      return { kind: 'skipped' }
    }
  }

  /** Decides one page: prepares each claim, commits them together, queues the winners' continuations. */
  async #decide(batches: readonly BatchRecord[]): Promise<number> {
    const claims: ExpiryClaim[] = []
    for (const batch of batches) {
      const claim = await this.#prepare(batch)
      if ('request' in claim) claims.push(claim)
    }
    const results = await this.#claimAll(claims.map((c) => c.request))
    let decided = 0
    claims.forEach((claim, i) => {
      const result = results[i]
      if (result !== undefined && this.#settle(claim, result, 'queued').kind === 'decided') decided++
    })
    return decided
  }

  async #prepare(batch: BatchRecord): Promise<ExpiryClaim | ExpiryOutcome> {
    try {
      return await expiryClaim(this.#o, batch)
    } catch (error) {
      this.#o.logError(`expiry of batch ${batch.batchId} on thread ${describeThread(batch.threadId)} failed`, error)
      return { kind: 'skipped' }
    }
  }

  /** The claims' answers in order; `undefined` where a store error left one undecided (logged; due next round). */
  async #claimAll(requests: readonly ClaimBatchRequest[]): Promise<(ClaimBatchResult | undefined)[]> {
    const { store, logError } = this.#o
    if (requests.length === 0) return []
    if (store.claimBatches) {
      try {
        // One commit for the page instead of one per claim: on SQLite the commits are most of a mass expiry's cost.
        return await store.claimBatches(requests)
      } catch (error) {
        logError(`expiry sweep: could not claim ${requests.length} due batches`, error)
        return []
      }
    }
    const results: (ClaimBatchResult | undefined)[] = []
    for (const request of requests) {
      try {
        results.push(await store.claimBatch(request))
      } catch (error) {
        logError(`expiry of batch ${request.batchId} on thread ${describeThread(request.threadId)} failed`, error)
        results.push(undefined)
      }
    }
    return results
  }

  /** After the claim: a won one reports its webhook rows and starts (or queues) its continuation. */
  #settle(claim: ExpiryClaim, result: ClaimBatchResult, start: 'now' | 'queued'): ExpiryOutcome {
    const outcome = claimOutcome(claim, result)
    if (outcome.kind !== 'decided') return outcome
    this.#o.webhooks?.committed(claim.request.outbox)
    this.#o.log?.info(
      { event: 'expiry.decided', ...threadLogFields(claim.request.threadId), batchId: claim.request.batchId },
      'batch decided by its deadline',
    )
    if (start === 'now') this.#continuations.startNow(claim.plan)
    else this.#continuations.push(claim.plan)
    return outcome
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
