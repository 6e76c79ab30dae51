import type { RuleMakerCheck } from '../tools/permission-rules.ts'
import { randomUUID } from 'node:crypto'
import type { AgUiEvent } from '@interlude/protocol'
import type { ResolvedAgent } from '../../agent/agent.ts'
import type { ServerConfig } from '../../config/server-config.ts'
import type { ValidatorCache } from '../../schema/validator-cache.ts'
import { RunNotActiveError } from '../../store/store.ts'
import type { Store } from '../../store/store.ts'
import { isStoreUnavailable } from '../../store/store-errors.ts'
import type { WebhookOutbox } from '../../webhooks/webhook-outbox.ts'
import type { OpenBatchCache } from '../open-batch-cache.ts'
import { sharedSlice, yieldToEventLoop } from '../cpu-slice.ts'
import type { AdmissionTurns } from './admission-turns.ts'
import type { EventHub } from '../log/event-hub.ts'
import { ev, isTerminal } from '../ev.ts'
import { finishRequest } from './finish-request.ts'
import { executeRun } from '../turn/execute-run.ts'
import type { ExecutionDeps } from '../turn/execute-run.ts'
import { LogWriter } from '../log/log-writer.ts'
import { CancelTombstones } from './cancel-tombstones.ts'
import type { RunPlan } from '../run-plan.ts'
import { StrayRuns } from './stray-runs.ts'
import { describeThread } from '../../store/thread-key.ts'

export interface RunManagerOptions extends Pick<
  ServerConfig,
  'now' | 'logError' | 'interruptTtlSeconds' | 'onExpiry' | 'limits' | 'runLeaseMs' | 'usage'
> {
  readonly store: Store
  readonly hub: EventHub
  readonly agent: ResolvedAgent
  readonly validators: ValidatorCache
  /** Webhook rows of opened batches and failed runs (docs/approvals.md, "Webhooks"). */
  readonly webhooks: WebhookOutbox
  /** Told of each batch a run opens (`open-batch-cache.ts`); the admission deps hold the same instance. */
  readonly openBatches: OpenBatchCache
  /** Admitted runs start once the admissions queued before them are done (`admission-turns.ts`); `undefined`: off. */
  readonly turns: AdmissionTurns | undefined
  /** Whether a remembered rule's maker may still decide the call (`DecisionRights.ruleMakerMayDecide`). */
  readonly ruleMakerMayDecide?: RuleMakerCheck
}

/** What every run's execution reads; the signals and the flush are per run. */
type SharedDeps = Omit<ExecutionDeps, 'signal' | 'toolSignal' | 'persistEmitted'>

/** Events buffered before a write to the log (`LogWriter`). */
const FLUSH_EVERY = 256

interface ActiveRun {
  readonly controller: AbortController
  readonly done: Promise<void>
}

/** Why a run's signal was aborted. */
export type StopReason = 'cancel' | 'shutdown' | 'fenced' | 'handover'

const key = (threadId: string, runId: string) => `${threadId}\u0000${runId}`

/**
 * Drives admitted runs in the background, independent of any HTTP connection: a dropped client
 * does not stop a run; its events keep going to the log. Events are appended in small
 * transactions (batched, in order, with per-thread `seq`) and then announced on the hub.
 *
 * Each process is one executor (`executorId`). Its runs carry a lease in the store that it renews every third of
 * the lease (at most every 500 ms); the same round trip returns the runs' cancel flags, so a cancel received by
 * another replica stops the run at its next stop point. A run missing from the renewal was taken over (its lease
 * had ended): it stops without writing anything more (fenced).
 */
export class RunManager {
  readonly executorId = `exec_${randomUUID()}`
  readonly leaseMs: number
  readonly #o: RunManagerOptions
  readonly #deps: SharedDeps
  readonly #active = new Map<string, ActiveRun>()
  /** Runs renewed as this executor's without executing here (`#letGoOfStrays`). */
  readonly #strays: StrayRuns
  /** Aborted only at shutdown: the signal tools see (a cancel never tears down a running tool). */
  readonly #shutdown = new AbortController()
  #timer: ReturnType<typeof setInterval> | undefined
  #beating = false
  /** Set once the leases were handed over: no renewal may extend them again. */
  #released = false
  /** `shutdown()` began, or `drain()` passed its grace period: runs admitted from now on are handed over, not run. */
  #stopping = false
  /** Cancels that arrived before their run started here (`cancelBeforeStart`). */
  readonly #tombstones: CancelTombstones
  /** Told of each thread whose run this process ended (the run queue starts the next input). */
  readonly #ended: ((threadId: string) => void)[] = []

  constructor(options: RunManagerOptions) {
    this.#o = options
    this.leaseMs = options.runLeaseMs
    const { limits } = options
    this.#deps = {
      agent: options.agent,
      store: options.store,
      validators: options.validators,
      now: options.now,
      logError: options.logError,
      interruptTtlMs: options.interruptTtlSeconds * 1000,
      onExpiry: options.onExpiry,
      maxInterruptsPerBatch: limits.maxInterruptsPerBatch,
      history: limits,
      usage: options.usage,
      maxToolArgumentBytes: limits.maxToolArgumentBytes,
      webhooks: options.webhooks,
      openBatches: options.openBatches,
      ...(options.ruleMakerMayDecide ? { ruleMakerMayDecide: options.ruleMakerMayDecide } : {}),
    }
    this.#tombstones = new CancelTombstones(options.now)
    this.#strays = new StrayRuns(this.leaseMs / 2)
  }

  /** `listener` is called with the thread of each run this process ends (after its end committed). */
  onRunEnded(listener: (threadId: string) => void): void {
    this.#ended.push(listener)
  }

  /** Lease fields for a run admitted now by this process. */
  lease(): { executorId: string; leaseUntil: number } {
    return { executorId: this.executorId, leaseUntil: this.#o.now() + this.leaseMs }
  }

  /**
   * A run this process claimed in the store and will start soon (a queued expiry continuation, a continuation being
   * planned): never taken for a stray (`#letGoOfStrays`). `start` ends the hold; `unhold` ends it without a start.
   */
  hold(threadId: string, runId: string): void {
    this.#strays.hold(key(threadId, runId))
  }

  unhold(threadId: string, runId: string): void {
    this.#strays.unhold(key(threadId, runId))
  }

  /**
   * Starts executing an admitted run. Returns at once; the run continues in the background. Once this process stops
   * its runs (`shutdown`, or `drain` past its grace period), a run admitted late — its claim committed after the runs
   * were stopped — is not executed here: its lease ends at once and the restart or another replica continues it.
   */
  start(plan: RunPlan): void {
    const controller = new AbortController()
    const id = key(plan.threadId, plan.runId)
    this.#strays.unhold(id)
    if (this.#stopping) {
      void this.#handOver(plan.threadId, plan.runId)
      return
    }
    if (this.#active.has(id)) {
      // One execution per run and process: a second start of a run executing here would be a second writer.
      this.#o.logError(`run ${describeThread(plan.threadId)}/${plan.runId} is executing here already`, undefined)
      return
    }
    const done = this.#drive(plan, controller.signal).finally(() => {
      this.#active.delete(id)
      if (this.#active.size === 0) this.#stopHeartbeat()
    })
    this.#active.set(id, { controller, done })
    this.#startHeartbeat()
    // Cancelled before it was admitted (a stop right after the request): it stops at its first stop point.
    if (this.#tombstones.take(plan.threadId, plan.runId, plan.principal))
      controller.abort('cancel' satisfies StopReason)
  }

  /**
   * A cancel by `principal` for a run that is not executing here (yet): kept for a minute, so a run
   * admitted under that runId afterwards is cancelled at once (docs/protocol.md#cancel).
   */
  cancelBeforeStart(threadId: string, runId: string, principal: string): void {
    if (!this.#active.has(key(threadId, runId))) this.#tombstones.record(threadId, runId, principal)
  }

  isActive(threadId: string, runId: string): boolean {
    return this.#active.has(key(threadId, runId))
  }

  /** Resolves when the run ends here (at once if it is not executing in this process). */
  whenDone(threadId: string, runId: string): Promise<void> {
    return this.#active.get(key(threadId, runId))?.done ?? Promise.resolve()
  }

  /** Stops a local run at its next stop point (outcome `cancelled`). `false` if it is not here. */
  cancel(threadId: string, runId: string): boolean {
    return this.#abort(threadId, runId, 'cancel')
  }

  get activeCount(): number {
    return this.#active.size
  }

  /** Resolves when no run is executing (used by tests and graceful shutdown). */
  async idle(): Promise<void> {
    while (this.#active.size > 0) await Promise.allSettled([...this.#active.values()].map((r) => r.done))
  }

  /** Cancels every run and waits for each to write its terminal event. */
  async shutdown(): Promise<void> {
    this.#stopping = true
    this.#shutdown.abort()
    for (const run of this.#active.values())
      if (!run.controller.signal.aborted) run.controller.abort('shutdown' satisfies StopReason)
    await this.idle()
    this.#stopHeartbeat()
  }

  /**
   * Graceful shutdown (docs/architecture.md, "Shutdown"): running turns get `graceMs` to finish; the rest stop at
   * their next stop point without ending (a running tool finishes first; nothing is marked cancelled), and every
   * lease this process holds — queued continuations included — is released at once, so the restart or another
   * replica continues those turns from their last durable checkpoint. Answers how many were handed over.
   */
  async drain(graceMs: number): Promise<number> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))
    await Promise.race([this.idle(), grace])
    clearTimeout(timer)
    this.#stopping = true
    let handedOver = 0
    for (const run of this.#active.values()) {
      if (run.controller.signal.aborted) continue
      run.controller.abort('handover' satisfies StopReason)
      handedOver++
    }
    await this.idle()
    await this.releaseLeases()
    return handedOver
  }

  /** Ends every lease of this process now (lease 0): its running runs count as abandoned at once. */
  async releaseLeases(): Promise<void> {
    this.#released = true
    this.#stopHeartbeat()
    while (this.#beating) await new Promise((resolve) => setTimeout(resolve, 5))
    await this.#o.store.heartbeatRuns(this.executorId, 0)
  }

  /** One lease renewal + cancel-flag check (exposed for tests). */
  async heartbeat(): Promise<void> {
    if (this.#beating || this.#active.size === 0 || this.#released) return
    this.#beating = true
    try {
      const beats = await this.#o.store.heartbeatRuns(this.executorId, this.#o.now() + this.leaseMs)
      const held = new Set<string>()
      const strays = new Set<string>()
      for (const beat of beats) {
        const id = key(beat.threadId, beat.runId)
        held.add(id)
        if (beat.cancelRequested) this.#abort(beat.threadId, beat.runId, 'cancel')
        if (!this.#active.has(id)) strays.add(id)
      }
      await this.#letGoOfStrays(strays)
      for (const [id, run] of this.#active) {
        // Started after the renewal read, or finished meanwhile: only runs the store no longer
        // lists as ours and still running here were taken over.
        if (!held.has(id) && !run.controller.signal.aborted) {
          const [threadId, runId] = id.split('\u0000') as [string, string]
          const record = await this.#o.store.getRun(threadId, runId)
          if (record && (record.status !== 'running' || record.executorId !== this.executorId))
            this.#abort(threadId, runId, 'fenced')
        }
      }
    } catch (error) {
      this.#o.logError('run heartbeat failed', error)
    } finally {
      this.#beating = false
    }
  }

  /** A run admitted after this process stopped its runs: its lease ends now, under an executor id never renewed. */
  async #handOver(threadId: string, runId: string): Promise<void> {
    try {
      await this.#letGo(threadId, runId)
    } catch {
      // The store closed first: the lease lapses on its own and recovery continues the run then.
    }
  }

  /** Ends a run's lease under another executor id: not renewed here again; the next sweep continues or closes it. */
  async #letGo(threadId: string, runId: string): Promise<void> {
    await this.#o.store.takeOverRun({
      threadId,
      runId,
      executorId: `${this.executorId}:let-go`,
      leaseUntil: 0,
      now: this.#o.now(),
      force: true,
    })
  }

  /** Hands the runs stray for half a lease to recovery (`stray-runs.ts`; docs/architecture.md, "Durable continuation"). */
  async #letGoOfStrays(strays: ReadonlySet<string>): Promise<void> {
    for (const id of this.#strays.due(strays)) {
      // Started while an earlier one was handed over.
      if (this.#active.has(id)) continue
      const [threadId, runId] = id.split('\u0000') as [string, string]
      await this.#letGo(threadId, runId)
      this.#o.logError(`run ${describeThread(threadId)}/${runId} was not executing here; handed to recovery`, undefined)
    }
  }

  #abort(threadId: string, runId: string, reason: StopReason): boolean {
    const run = this.#active.get(key(threadId, runId))
    if (!run) return false
    if (!run.controller.signal.aborted) run.controller.abort(reason)
    return true
  }

  #startHeartbeat(): void {
    if (this.#timer !== undefined) return
    // Lease renewal + cancel-flag check: several times per lease, at most every 500 ms.
    const every = Math.max(20, Math.min(500, Math.floor(this.leaseMs / 3)))
    this.#timer = setInterval(() => void this.heartbeat(), every)
    this.#timer.unref?.()
  }

  #stopHeartbeat(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    this.#strays.clear()
  }

  async #drive(plan: RunPlan, signal: AbortSignal): Promise<void> {
    const { store, hub, logError } = this.#o
    const writer = new LogWriter(store, hub, plan.threadId, plan.runId, FLUSH_EVERY)
    let terminal: AgUiEvent | undefined
    let fenced = false
    // Let the admission response go out (and pending I/O and queued admissions run) before the run takes the CPU.
    await (this.#o.turns?.admissionsFirst() ?? yieldToEventLoop())
    try {
      const events = executeRun(plan, {
        ...this.#deps,
        signal,
        toolSignal: this.#shutdown.signal,
        persistEmitted: () => writer.flush(),
        publish: (stored) => hub.publish(plan.threadId, stored),
      })
      for await (const event of events) {
        if (isTerminal(event.type)) {
          terminal = event
          break
        }
        writer.push(event)
        writer.throwIfFailed()
        if (writer.full) await writer.relieve()
        // Cooperative time slicing: hot runs (0 ms pacing, microtask-only awaits) must not
        // starve admissions and other streams of the event loop.
        await sharedSlice.yieldIfSpent()
      }
    } catch (error) {
      if (error instanceof RunNotActiveError) fenced = true
      else if (signal.reason !== ('handover' satisfies StopReason))
        logError(`run ${describeThread(plan.threadId)}/${plan.runId} crashed`, error)
    }
    if (fenced || signal.reason === ('fenced' satisfies StopReason)) return
    if (signal.reason === ('handover' satisfies StopReason)) {
      // Handed over: what the run emitted is kept, it is not ended; its continuation closes what is open.
      await writer
        .flush()
        .catch((error: unknown) =>
          logError(`run ${describeThread(plan.threadId)}/${plan.runId}: handover flush`, error),
        )
      return
    }
    terminal ??= ev.runError('INTERNAL', 'Internal error')
    try {
      await writer.flush()
      const request = finishRequest(plan, terminal, this.#o.now(), this.#o.webhooks)
      const stored = await store.finishRun(request)
      if (stored) {
        hub.publish(plan.threadId, stored)
        this.#o.webhooks.committed(request.outbox)
        for (const listener of this.#ended) listener(plan.threadId)
      }
    } catch (error) {
      // A fenced run was closed by another process; otherwise the run stays `running` until its
      // lease ends and recovery closes it.
      if (!(error instanceof RunNotActiveError)) {
        logError(`run ${describeThread(plan.threadId)}/${plan.runId} could not be finished`, error)
        // No durable end: this process's open streams end now, typed (docs/decisions.md#operating-it); recovery ends
        // the run later.
        hub.lose(plan.threadId, plan.runId, isStoreUnavailable(error) ? 'STORE_UNAVAILABLE' : 'INTERNAL')
      }
    }
  }
}
