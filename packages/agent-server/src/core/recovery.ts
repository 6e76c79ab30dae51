import type { Logger } from '../observability/logger.ts'
import { EventType } from '@interlude/protocol'
import type { AgUiEvent } from '@interlude/protocol'
import type { ResolvedAgent } from '../agent/agent.ts'
import type { Clock } from '../clock.ts'
import { UNFINISHED_CALL_STATUSES } from '../store/statuses.ts'
import type { CloseCall, RunRecord, Store, ThreadRecord, ToolCallRecord } from '../store/store.ts'
import type { WebhookOutbox } from '../webhooks/webhook-outbox.ts'
import type { EventHub } from './event-hub.ts'
import { ev, toNewEvent, toolResult } from './events.ts'
import type { RunManager } from './run-manager.ts'

export interface RecoveryOptions {
  readonly store: Store
  readonly hub: EventHub
  readonly agent: ResolvedAgent
  readonly runs: RunManager
  /**
   * This process is the only one using the store: at startup every run left `running` is closed
   * at once. Otherwise only runs whose lease ended are closed (several replicas).
   */
  readonly exclusive: boolean
  /** The server clock: leases are compared with it. */
  readonly now: Clock
  readonly logError: (message: string, error: unknown) => void
  /** `run.failed` rows for the runs it closes (docs/approvals.md, "Webhooks"). */
  readonly webhooks?: WebhookOutbox
  /** One `recovery.closed` line per run it closes (observability/logger.ts). */
  readonly log?: Pick<Logger, 'info'>
}

export const ABANDONED_MESSAGE = 'The server stopped while this run was executing.'
const NOT_RUN = 'The server stopped before this call ran; it did not run.'
const UNKNOWN =
  'The server stopped while this call was running. It may or may not have taken effect; it was not run again. Check before retrying.'

/**
 * Closes runs whose process died (docs/architecture.md, restart semantics): on start, periodically, and on
 * first touch of their thread. A run counts as abandoned once its lease ended (or, in exclusive
 * mode, at startup). Closing is exactly-once across replicas: the run is first taken over with a
 * conditional update, then closed in one `finishRun` transaction that is itself conditional on
 * the run still running:
 *
 * - calls that never started (`pending`, `awaiting_decision` outside a stored pending batch) get a
 *   cancelled result: they did not run;
 * - calls left `started` (an effect that may or may not have happened) are never re-executed:
 *   the tool's `reconcile(toolCallId)` may settle them, otherwise they become `unknown` with a
 *   result that says so (the model reads it) and are listed in the snapshot's `unsettledEffects`;
 * - open text messages and tool calls of the run's stream get their END events, then the results,
 *   then `RUN_ERROR { code: 'RUN_FAILED' }`;
 * - a batch the run had claimed is closed (`resolved`); a pending batch stays untouched and
 *   answerable; the thread is released.
 */
export class RunRecovery {
  readonly #o: RecoveryOptions
  #timer: ReturnType<typeof setInterval> | undefined
  #sweeping = false

  constructor(options: RecoveryOptions) {
    this.#o = options
  }

  /** Startup: closes abandoned runs (every running run of other executors in exclusive mode). */
  async startup(): Promise<void> {
    const { store, runs, exclusive, now } = this.#o
    const abandoned = await store.listAbandonedRuns({
      now: now(),
      all: exclusive,
      excludeExecutor: runs.executorId,
    })
    for (const run of abandoned) await this.close(run.threadId, run.runId, exclusive)
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
    } catch (error) {
      this.#o.logError('recovery sweep failed', error)
    } finally {
      this.#sweeping = false
    }
  }

  /**
   * First touch: if the thread's active run executes nowhere (not here, lease ended), close it.
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

  /** Takes over and closes one run. `false` if another process did (or the run is alive). */
  async close(threadId: string, runId: string, force: boolean): Promise<boolean> {
    const { store, runs, hub, now } = this.#o
    if (runs.isActive(threadId, runId)) return false
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
      this.#o.log?.info({ event: 'recovery.closed', threadId, runId }, 'abandoned run closed by recovery')
      return true
    } catch (error) {
      this.#o.logError(`could not close abandoned run ${threadId}/${runId}`, error)
      return false
    }
  }

  async #closing(
    thread: ThreadRecord,
    run: RunRecord,
  ): Promise<{ events: AgUiEvent[]; calls: CloseCall[]; state: unknown }> {
    const { store } = this.#o
    const { threadId, runId } = run
    const events: AgUiEvent[] = await this.#closeOpenConstructs(threadId, runId)
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
        const reconciled = await this.#reconcile(call, thread, state)
        if (reconciled) {
          closed = reconciled
          if (reconciled.state !== undefined) {
            state = reconciled.state
            stateChanged = true
          }
        } else {
          closed = { status: 'unknown', settled: toolResult(call.toolCallId, { status: 'unknown', error: UNKNOWN }) }
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

  /** END events for text messages and tool calls the dead run left open in its stream. */
  async #closeOpenConstructs(threadId: string, runId: string): Promise<AgUiEvent[]> {
    const texts = new Set<string>()
    const calls = new Set<string>()
    let after = 0
    for (;;) {
      const page = await this.#o.store.readEvents(threadId, { runId, afterSeq: after, limit: 1000 })
      for (const e of page) {
        after = e.seq
        if (e.type === EventType.TEXT_MESSAGE_START) texts.add((JSON.parse(e.json) as { messageId: string }).messageId)
        else if (e.type === EventType.TEXT_MESSAGE_END)
          texts.delete((JSON.parse(e.json) as { messageId: string }).messageId)
        else if (e.type === EventType.TOOL_CALL_START)
          calls.add((JSON.parse(e.json) as { toolCallId: string }).toolCallId)
        else if (e.type === EventType.TOOL_CALL_END)
          calls.delete((JSON.parse(e.json) as { toolCallId: string }).toolCallId)
      }
      if (page.length < 1000) break
    }
    return [...[...texts].map((id) => ev.textEnd(id)), ...[...calls].map((id) => ev.toolEnd(id))]
  }

  /**
   * The tool's own answer for an effect left `started`; `undefined` when it cannot tell (no
   * `reconcile`, no verdict, it threw, or its result is not JSON): the effect stays unknown.
   */
  async #reconcile(call: ToolCallRecord, thread: ThreadRecord, state: unknown): Promise<Reconciled | undefined> {
    const reconcile = this.#o.agent.tools.get(call.toolName)?.definition.reconcile
    if (!reconcile) return undefined
    let next = structuredClone(state)
    let changed = false
    let requestedArgs: unknown
    try {
      requestedArgs = JSON.parse(call.argsText) as unknown
    } catch {
      requestedArgs = undefined
    }
    try {
      const result = await reconcile(call.toolCallId, {
        toolCallId: call.toolCallId,
        idempotencyKey: call.toolCallId,
        threadId: thread.threadId,
        runId: call.attemptRunId ?? call.runId,
        principal: thread.ownerId,
        requestedArgs,
        state: next,
        updateState: (update) => {
          next = update(next)
          changed = true
        },
      })
      if (!result || (result.status !== 'succeeded' && result.status !== 'failed')) return undefined
      const value =
        result.status === 'succeeded'
          ? result.result
          : (result.result ?? { status: 'error', error: 'The call failed.' })
      return {
        status: result.status,
        settled: toolResult(call.toolCallId, value),
        ...(changed && result.status === 'succeeded' ? { state: next } : {}),
      }
    } catch (error) {
      this.#o.logError(`reconcile of ${call.toolName} (${call.toolCallId}) threw`, error)
      return undefined
    }
  }
}

/** How recovery closes one call: its ledger status, its result, and a reconciled state change. */
interface Reconciled {
  readonly status: CloseCall['status']
  readonly settled: ReturnType<typeof toolResult>
  readonly state?: unknown
}
