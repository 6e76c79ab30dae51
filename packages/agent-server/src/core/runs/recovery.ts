import type { Logger } from '../../observability/logger.ts'
import { DECISION_EVENT_NAME, EventType } from '@interlude/protocol'
import type { AgUiEvent } from '@interlude/protocol'
import type { ResolvedAgent } from '../../agent/agent.ts'
import type { ServerConfig } from '../../config/server-config.ts'
import { UNFINISHED_CALL_STATUSES } from '../../store/statuses.ts'
import type { CloseCall, RunRecord, Store, ThreadRecord } from '../../store/store.ts'
import type { WebhookOutbox } from '../../webhooks/webhook-outbox.ts'
import type { EventHub } from '../log/event-hub.ts'
import { settleUnsettled } from '../tools/effects-ledger.ts'
import { ev, toNewEvent, toolResult } from '../ev.ts'
import type { RunManager } from './run-manager.ts'
import type { RunPlan } from '../run-plan.ts'
import { resumePlan } from '../run-plan.ts'
import { describeThread, threadLogFields } from '../../store/thread-key.ts'

/**
 * `exclusive`: this process is the only one using the store, so at startup every run left `running` is taken over at
 * once; otherwise only runs whose lease ended are (several replicas). `now`: leases are compared with it.
 */
export interface RecoveryOptions extends Pick<ServerConfig, 'exclusive' | 'now' | 'logError'> {
  readonly store: Store
  readonly hub: EventHub
  readonly agent: ResolvedAgent
  readonly runs: RunManager
  /** `run.failed` rows for the runs it closes (docs/approvals.md, "Webhooks"). */
  readonly webhooks?: WebhookOutbox
  /** One `recovery.closed` line per run it closes (observability/logger.ts). */
  readonly log?: Pick<Logger, 'info'>
}

export const ABANDONED_MESSAGE = 'The server stopped while this run was executing.'
const NOT_RUN = 'The server stopped before this call ran; it did not run.'

/**
 * Takes over runs whose process died (docs/architecture.md, "Durable continuation"): on start, periodically, and on
 * first touch of their thread. A run counts as abandoned once its lease ended (or, in exclusive mode, at startup;
 * a graceful shutdown ends its leases at once). The takeover is exactly-once across replicas (a conditional update
 * of the run's executor and lease); the winner then **continues** the run in this process, in the same run and the
 * same log, from what its log and ledger hold durably (`executeRun` with a `continuation`):
 *
 * - the log is completed: `RUN_STARTED` (and the decision record) if the attempt died before writing them, END
 *   events of the text messages and tool calls it left open;
 * - effects left `started` are never re-executed: the tool's `reconcile(toolCallId)` may settle them, otherwise they
 *   become `unknown` (listed in the snapshot's `unsettledEffects`, with a result the model reads);
 * - the decision of a resume is applied to the calls it has not reached yet (an approved call whose effect never
 *   started runs once — the ledger's claim makes it at most once), calls of the last model response that were not
 *   handled are handled, and the model is called again where the turn needs it.
 *
 * Only when the run cannot be continued (its decision record is gone) is it closed as before: calls that never
 * started get a cancelled result, then `RUN_ERROR RUN_FAILED`.
 */
export class RunRecovery {
  readonly #o: RecoveryOptions
  #timer: ReturnType<typeof setInterval> | undefined
  #sweeping = false
  #after: (() => Promise<void>) | undefined

  /** Run after each sweep and at startup: the run queue starts input a dead process left queued. */
  afterSweep(fn: () => Promise<void>): void {
    this.#after = fn
  }

  constructor(options: RecoveryOptions) {
    this.#o = options
  }

  /** Startup: continues abandoned runs (every running run of other executors in exclusive mode). */
  async startup(): Promise<void> {
    const { store, runs, exclusive, now } = this.#o
    const abandoned = await store.listAbandonedRuns({
      now: now(),
      all: exclusive,
      excludeExecutor: runs.executorId,
    })
    for (const run of abandoned) await this.close(run.threadId, run.runId, exclusive)
    await this.#after?.()
  }

  /** Periodic sweep of runs whose lease ended (replicas that crashed while nobody touches their threads). */
  startSweeping(everyMs: number): void {
    if (this.#timer !== undefined) return
    this.#timer = setInterval(() => void this.sweep(), everyMs)
    this.#timer.unref?.()
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
  }

  async sweep(): Promise<void> {
    if (this.#sweeping) return
    this.#sweeping = true
    try {
      const abandoned = await this.#o.store.listAbandonedRuns({ now: this.#o.now() })
      for (const run of abandoned) await this.close(run.threadId, run.runId, false)
      await this.#after?.()
    } catch (error) {
      this.#o.logError('recovery sweep failed', error)
    } finally {
      this.#sweeping = false
    }
  }

  /**
   * First touch: if the thread's active run executes nowhere (not here, lease ended), continue it here.
   * Returns the thread as it is afterwards.
   */
  async touch(thread: ThreadRecord): Promise<ThreadRecord> {
    const runId = thread.activeRunId
    if (runId === undefined || this.#o.runs.isActive(thread.threadId, runId)) return thread
    const run = await this.#o.store.getRun(thread.threadId, runId)
    if (!run || run.status !== 'running' || (run.leaseUntil ?? 0) >= this.#o.now()) return thread
    await this.close(thread.threadId, runId, false)
    return (await this.#o.store.getThread(thread.threadId)) ?? thread
  }

  /**
   * Takes over one run and continues it here (or, if it cannot be continued, closes it). `false` if another process
   * took it (or the run is alive).
   */
  async close(threadId: string, runId: string, force: boolean): Promise<boolean> {
    const { store, runs, now } = this.#o
    if (runs.isActive(threadId, runId)) return false
    // Between the take-over and `start` (planning reads the log; `#fail` may call a tool's `reconcile`) the run is
    // this executor's without executing here: held, so the lease renewal never hands it on as a stray.
    runs.hold(threadId, runId)
    try {
      const lease = runs.lease()
      const run = await store.takeOverRun({
        threadId,
        runId,
        executorId: lease.executorId,
        leaseUntil: lease.leaseUntil,
        now: now(),
        force,
      })
      if (!run) return false
      const thread = await store.getThread(threadId)
      if (!thread) return false
      const plan = await this.#continuation(thread, run)
      if (plan) {
        runs.start(plan)
        return true
      }
      return await this.#fail(thread, run)
    } catch (error) {
      this.#o.logError(`could not take over abandoned run ${describeThread(threadId)}/${runId}`, error)
      return false
    } finally {
      runs.unhold(threadId, runId)
    }
  }

  /** The plan that continues `run` in the same log, or `undefined` when its decision record is missing. */
  async #continuation(thread: ThreadRecord, run: RunRecord): Promise<RunPlan | undefined> {
    const { store } = this.#o
    const { threadId, runId } = run
    const log = await this.#logOf(threadId, runId)
    const prefix: AgUiEvent[] = []
    if (!log.started) prefix.push(ev.runStarted(threadId, runId))
    const base = {
      threadId,
      runId,
      principal: thread.ownerId,
      // Browser tools and context of the original request are not stored: the continuation runs without them.
      clientTools: [],
      context: [],
    }
    if (run.kind !== 'resume') {
      prefix.push(...log.ends)
      return { kind: 'input', ...base, continuation: { prefix } }
    }
    const record = await store.getDecision(threadId, runId)
    const first = record?.interruptIds[0]
    const batch = first !== undefined ? await store.getBatchOfInterrupt(threadId, first) : undefined
    if (!record || !batch) return undefined
    if (!log.decided) prefix.push(ev.decision(record))
    prefix.push(...log.ends)
    const allCancelled = record.entries.every((e) => e.status === 'cancelled')
    // As admission decided it: the expiry sweep's decision, or an all-cancelled resume after the deadline.
    const expired = record.via === 'expiry' || (allCancelled && batch.expiresAt <= Date.parse(record.at))
    return {
      ...resumePlan({ threadId, runId, owner: thread.ownerId, batch, entries: record.entries, allCancelled, expired }),
      continuation: { prefix },
    }
  }

  /** The last resort: closes the run as failed, like a run whose decision cannot be carried out. */
  async #fail(thread: ThreadRecord, run: RunRecord): Promise<boolean> {
    const { store, hub, now } = this.#o
    const { threadId, runId } = run
    const closing = await this.#closing(thread, run)
    const at = now()
    const outbox = this.#o.webhooks?.failed({ threadId, owner: thread.ownerId, runId }, 'RUN_FAILED', at) ?? []
    const stored = await store.finishRun({
      threadId,
      runId,
      status: 'failed',
      outcome: undefined,
      errorCode: 'RUN_FAILED',
      events: closing.events.map(toNewEvent),
      closeBatch: run.batchId !== undefined ? { batchId: run.batchId, status: 'resolved' } : undefined,
      closeCalls: closing.calls,
      ...(closing.state !== undefined ? { state: closing.state } : {}),
      now: at,
      ...(outbox.length > 0 ? { outbox } : {}),
    })
    if (!stored) return false
    hub.publish(threadId, stored)
    this.#o.webhooks?.committed(outbox)
    this.#o.log?.info(
      { event: 'recovery.closed', ...threadLogFields(threadId), runId },
      'abandoned run closed by recovery',
    )
    return true
  }

  async #closing(
    thread: ThreadRecord,
    run: RunRecord,
  ): Promise<{ events: AgUiEvent[]; calls: CloseCall[]; state: unknown }> {
    const { store } = this.#o
    const { threadId, runId } = run
    const events: AgUiEvent[] = [...(await this.#logOf(threadId, runId)).ends]
    const [calls, open] = await Promise.all([
      store.listToolCalls(threadId, { status: UNFINISHED_CALL_STATUSES }),
      store.getOpenBatch(threadId),
    ])
    const answerable = new Set(open?.interrupts.map((i) => i.toolCallId) ?? [])
    const closeCalls: CloseCall[] = []
    let state: unknown = thread.state
    let stateChanged = false
    for (const call of calls) {
      if (answerable.has(call.toolCallId)) continue
      let closed: Reconciled
      if (call.status === 'started') {
        const outcome = await settleUnsettled(
          this.#o.agent.tools.get(call.toolName),
          call,
          { threadId: thread.threadId, principal: thread.ownerId, state },
          this.#o.logError,
        )
        closed = { status: outcome.status, settled: toolResult(call.toolCallId, outcome.result) }
        if (outcome.state !== undefined) {
          state = outcome.state
          stateChanged = true
        }
      } else {
        closed = {
          status: 'cancelled',
          settled: toolResult(call.toolCallId, { status: 'cancelled', message: NOT_RUN }),
        }
      }
      const { content, message, event } = closed.settled
      closeCalls.push({
        toolCallId: call.toolCallId,
        from: [call.status],
        status: closed.status,
        result: content,
        message,
      })
      events.push(event)
    }
    if (stateChanged) events.push(ev.stateSnapshot(state))
    events.push({ type: EventType.RUN_ERROR, code: 'RUN_FAILED', message: ABANDONED_MESSAGE } as AgUiEvent)
    return { events, calls: closeCalls, state: stateChanged ? state : undefined }
  }

  /** What the dead attempt's log holds: its start, its decision record, and the END events of what it left open. */
  async #logOf(threadId: string, runId: string): Promise<{ started: boolean; decided: boolean; ends: AgUiEvent[] }> {
    const texts = new Set<string>()
    const calls = new Set<string>()
    let started = false
    let decided = false
    let after = 0
    for (;;) {
      const page = await this.#o.store.readEvents(threadId, { runId, afterSeq: after, limit: 1000 })
      for (const e of page) {
        after = e.seq
        if (e.type === EventType.RUN_STARTED) started = true
        else if (e.type === EventType.CUSTOM && isOwnDecision(e.json, runId)) decided = true
        else if (e.type === EventType.TEXT_MESSAGE_START)
          texts.add((JSON.parse(e.json) as { messageId: string }).messageId)
        else if (e.type === EventType.TEXT_MESSAGE_END)
          texts.delete((JSON.parse(e.json) as { messageId: string }).messageId)
        else if (e.type === EventType.TOOL_CALL_START)
          calls.add((JSON.parse(e.json) as { toolCallId: string }).toolCallId)
        else if (e.type === EventType.TOOL_CALL_END)
          calls.delete((JSON.parse(e.json) as { toolCallId: string }).toolCallId)
      }
      if (page.length < 1000) break
    }
    return {
      started,
      decided,
      ends: [...[...texts].map((id) => ev.textEnd(id)), ...[...calls].map((id) => ev.toolEnd(id))],
    }
  }
}

/** How recovery closes one call: its ledger status and its result. */
interface Reconciled {
  readonly status: CloseCall['status']
  readonly settled: ReturnType<typeof toolResult>
}

/** The run's own decision event (a deciding vote's run emits the earlier votes of its batch before it). */
function isOwnDecision(json: string, runId: string): boolean {
  const event = JSON.parse(json) as { name?: string; value?: { runId?: string } }
  return event.name === DECISION_EVENT_NAME && event.value?.runId === runId
}
