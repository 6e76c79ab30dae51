import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { DECISION_EVENT_NAME, EventType } from '@interlude/protocol'
import type { StoredEvent } from '../store/store.ts'

/**
 * Prometheus metrics of one server (README, "Logs and metrics"), on prom-client with a registry of its own (so two
 * servers in one process never mix their counts). Run and interrupt counters are derived from the events this
 * process commits (an `EventHub` tap): they count what is durable, once, where the run executes.
 *
 * Other parts increment them through the server's instance (`AgentServer.metrics`, or `c.var.metrics` in a
 * middleware), e.g. a rate limiter: `c.var.metrics.recordQuotaRefusal('myQuota')`.
 */
export interface ServerMetricsOptions {
  /** Runs executing in this process, read at each scrape. */
  readonly activeRuns?: () => number
  /** Also export Node process metrics (CPU, memory, event loop lag, GC). @default false */
  readonly processMetrics?: boolean
}

/** Outcomes of `interlude_runs_finished_total`. */
export type RunOutcomeLabel = 'success' | 'interrupt' | 'cancelled' | 'error'

export class ServerMetrics {
  readonly registry = new Registry()
  readonly runsStarted: Counter
  readonly runsFinished: Counter<'outcome'>
  readonly runErrors: Counter<'code'>
  readonly interruptsOpened: Counter
  readonly interruptsDecided: Counter<'via'>
  readonly interruptsExpired: Counter
  readonly admissionSeconds: Histogram
  readonly turnWaitSeconds: Histogram
  readonly openStreams: Gauge
  readonly refusals: Counter<'code'>
  readonly quotaRefusals: Counter<'reason'>
  readonly modelTokens: Counter<'kind'>

  constructor(options: ServerMetricsOptions = {}) {
    const registers = [this.registry]
    this.runsStarted = new Counter({ name: 'interlude_runs_started_total', help: 'Runs started', registers })
    this.runsFinished = new Counter({
      name: 'interlude_runs_finished_total',
      help: 'Runs ended, by outcome (success, interrupt, cancelled, error)',
      labelNames: ['outcome'],
      registers,
    })
    this.runErrors = new Counter({
      name: 'interlude_run_errors_total',
      help: 'Runs ended with RUN_ERROR, by code',
      labelNames: ['code'],
      registers,
    })
    this.interruptsOpened = new Counter({
      name: 'interlude_interrupts_opened_total',
      help: 'Interrupts opened (runs paused for a person)',
      registers,
    })
    this.interruptsDecided = new Counter({
      name: 'interlude_interrupts_decided_total',
      help: 'Interrupts decided by a person, by channel (run: a resume; api: POST decisions)',
      labelNames: ['via'],
      registers,
    })
    this.interruptsExpired = new Counter({
      name: 'interlude_interrupts_expired_total',
      help: 'Interrupts decided by their deadline (the expiry policy)',
      registers,
    })
    this.admissionSeconds = new Histogram({
      name: 'interlude_admission_duration_seconds',
      help: 'Admission time of admitted runs and decisions: from the admission turn (authentication, body, validation, ownership, resume checks, claim; the wait for the turn is interlude_admission_turn_wait_seconds), or from the parsed body when admission turns are off',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    })
    this.turnWaitSeconds = new Histogram({
      name: 'interlude_admission_turn_wait_seconds',
      help: 'Wait of run and decision requests for their admission turn under a burst (0 for a lone request)',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    })
    this.openStreams = new Gauge({ name: 'interlude_open_streams', help: 'Open SSE streams', registers })
    this.refusals = new Counter({
      name: 'interlude_refusals_total',
      help: 'Requests answered with an error envelope, by code',
      labelNames: ['code'],
      registers,
    })
    this.quotaRefusals = new Counter({
      name: 'interlude_quota_refusals_total',
      help: 'Requests refused by a per-principal quota or rate limit, by reason',
      labelNames: ['reason'],
      registers,
    })
    this.modelTokens = new Counter({
      name: 'interlude_model_tokens_total',
      help: 'Tokens used by model calls (docs/protocol.md#token-usage), by kind (input, output)',
      labelNames: ['kind'],
      registers,
    })
    const activeRuns = options.activeRuns
    new Gauge({
      name: 'interlude_active_runs',
      help: 'Runs executing in this process',
      registers,
      collect() {
        this.set(activeRuns?.() ?? 0)
      },
    })
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry })
  }

  /** One refusal by a quota or rate limit (`reason`: which one, the quota's name as in `details.quota`, such as `concurrentRuns`). */
  recordQuotaRefusal(reason: string): void {
    this.quotaRefusals.inc({ reason })
  }

  /** Tokens of one model call (the `onUsage` hook of the run core). */
  recordModelUsage(usage: { readonly inputTokens: number; readonly outputTokens: number }): void {
    this.modelTokens.inc({ kind: 'input' }, usage.inputTokens)
    this.modelTokens.inc({ kind: 'output' }, usage.outputTokens)
  }

  /** Counts runs and interrupts from events this process committed (an `EventHub.tap`). */
  observeEvents(events: readonly StoredEvent[]): void {
    for (const e of events) {
      switch (e.type) {
        case EventType.RUN_STARTED:
          this.runsStarted.inc()
          break
        case EventType.RUN_FINISHED: {
          const outcome = (JSON.parse(e.json) as { outcome?: { type?: string; interrupts?: unknown[] } }).outcome
          const type = outcome?.type ?? 'success'
          this.runsFinished.inc({ outcome: type === 'interrupt' || type === 'cancelled' ? type : 'success' })
          if (type === 'interrupt') this.interruptsOpened.inc(outcome?.interrupts?.length ?? 0)
          break
        }
        case EventType.RUN_ERROR: {
          const code = (JSON.parse(e.json) as { code?: unknown }).code
          this.runsFinished.inc({ outcome: 'error' })
          this.runErrors.inc({ code: typeof code === 'string' ? code : 'unknown' })
          break
        }
        case EventType.CUSTOM: {
          const custom = JSON.parse(e.json) as { name?: unknown; value?: { via?: unknown; interruptIds?: unknown[] } }
          if (custom.name !== DECISION_EVENT_NAME) break
          const count = custom.value?.interruptIds?.length ?? 0
          const via = custom.value?.via
          if (via === 'expiry') this.interruptsExpired.inc(count)
          else this.interruptsDecided.inc({ via: via === 'api' ? 'api' : 'run' }, count)
          break
        }
      }
    }
  }

  /** The exposition text (`text/plain; version=0.0.4`). */
  text(): Promise<string> {
    return this.registry.metrics()
  }

  get contentType(): string {
    return this.registry.contentType
  }
}
