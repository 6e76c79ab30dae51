import type { DecisionRecord, Message, PermissionRule } from '@interlude/protocol'
import type { Clock } from '../clock.ts'
import type {
  BeginEffectResult,
  NewBatch,
  NewEvent,
  NewToolCall,
  SettleToolCallRequest,
  Store,
  TakenSteers,
} from '../store/store.ts'
import type { WebhookOutbox } from '../webhooks/webhook-outbox.ts'
import type { OpenBatchCache } from './open-batch-cache.ts'

/** A settlement as the turn states it; the run, the thread and the time are added here. */
export type Settlement = Omit<SettleToolCallRequest, 'threadId' | 'runId' | 'now'>

/**
 * The rows one run writes while it executes, all through this one door (docs/architecture.md).
 *
 * Write order: the events the run emitted so far are appended to the log before any row that
 * depends on them (a message, the calls, an effect claim, a result, a batch). A row is never
 * visible before the events that produced it, so a snapshot's `lastEventId` always covers its
 * history and a client that restores from it then tails the log sees every event exactly once.
 *
 * Three writes skip that wait, because no snapshot or replay reads them against the log: token usage (recorded as
 * the model streams; waiting would stall the stream), a remembered permission rule and a rule's decision record
 * (both read by id or by tool, never by position in the log; the record's own event follows it).
 *
 * Outside this door, by design: the events themselves (`log/log-writer.ts` appends them; they are what the rule
 * orders the rows after) and the run's end (`runs/run-manager.ts` writes the terminal event, the run's status and the
 * thread's release in one `finishRun`, after the turn has returned).
 */
export class RunWrites {
  readonly #store: Store
  readonly #threadId: string
  readonly #runId: string
  readonly #persistEmitted: () => Promise<void>
  readonly #now: Clock
  readonly #owner: string
  readonly #webhooks: WebhookOutbox | undefined
  readonly #openBatches: OpenBatchCache | undefined

  constructor(
    store: Store,
    run: { readonly threadId: string; readonly runId: string; readonly principal: string },
    persistEmitted: () => Promise<void>,
    now: Clock,
    webhooks?: WebhookOutbox,
    openBatches?: OpenBatchCache,
  ) {
    this.#store = store
    this.#threadId = run.threadId
    this.#runId = run.runId
    this.#owner = run.principal
    this.#persistEmitted = persistEmitted
    this.#now = now
    this.#webhooks = webhooks
    this.#openBatches = openBatches
  }

  appendMessage(message: Message): Promise<void> {
    return this.#afterEvents(() => this.#store.appendMessages(this.#threadId, this.#runId, [message]))
  }

  recordCalls(records: readonly NewToolCall[]): Promise<void> {
    return this.#afterEvents(() => this.#store.insertToolCalls(records))
  }

  /** The effects ledger's claim (`Store.beginEffect`); `beforeClaim` is the last local stop point. */
  beginEffect(toolCallId: string, beforeClaim: () => void): Promise<BeginEffectResult> {
    return this.#afterEvents(() => {
      beforeClaim()
      return this.#store.beginEffect(this.#threadId, toolCallId, this.#runId, this.#now())
    })
  }

  settle(settlement: Settlement): Promise<void> {
    return this.#afterEvents(() =>
      this.#store.settleToolCall({ threadId: this.#threadId, runId: this.#runId, ...settlement, now: this.#now() }),
    )
  }

  /**
   * A call's checkpoint of answers, steps and subagent progress (docs/approvals.md#asking-from-inside-a-tool); fenced.
   * With `state`, the thread state is replaced in the same write (a step's, docs/approvals.md#memoised-steps).
   */
  saveCheckpoint(toolCallId: string, checkpoint: unknown, state?: { readonly value: unknown }): Promise<void> {
    return this.#afterEvents(() =>
      this.#store.saveToolCheckpoint({
        threadId: this.#threadId,
        runId: this.#runId,
        toolCallId,
        json: JSON.stringify(checkpoint),
        ...(state !== undefined ? { stateJson: JSON.stringify(state.value ?? null) } : {}),
        now: this.#now(),
      }),
    )
  }

  /** Stores the batch with its `interrupt.opened` webhook rows (docs/approvals.md, "Webhooks"), in one write. */
  async createBatch(batch: NewBatch): Promise<void> {
    const subject = { threadId: this.#threadId, owner: this.#owner, runId: this.#runId }
    const interrupts = batch.interrupts.map((i) => i.interrupt)
    const opened = { ...subject, interrupts, stored: batch.interrupts, expiresAt: batch.expiresAt }
    const outbox = (await this.#webhooks?.opened(opened, this.#now())) ?? []
    await this.#afterEvents(() => this.#store.createBatch(outbox.length > 0 ? { ...batch, outbox } : batch))
    this.#webhooks?.committed(outbox)
    // Its resume is then admitted with the claim alone (`open-batch-cache.ts`).
    this.#openBatches?.created(this.#owner, batch)
  }

  /** A remembered permission made by an approval (docs/approvals.md#remembered-permissions); same id on a retry. */
  rememberRule(rule: PermissionRule): Promise<void> {
    return this.#store.addPermissionRule(rule)
  }

  /** The `via: "rule"` record of a call a remembered permission approved. */
  recordRuleDecision(record: DecisionRecord): Promise<void> {
    return this.#store.addRuleDecision(record)
  }

  /**
   * Adds a stale approval to the decision record this run carries out (docs/approvals.md#stale-approvals); fenced.
   * The record as it is now, for its event.
   */
  markDecisionStale(interruptId: string): Promise<DecisionRecord | undefined> {
    return this.#afterEvents(() => this.#store.markDecisionStale(this.#threadId, this.#runId, interruptId))
  }

  /**
   * Takes the thread's steers (docs/protocol.md#multitask): their messages and the events `render` makes of them, in
   * one fenced write after everything the run emitted so far (the events are written by the store, in that write).
   */
  takeSteers(render: (message: Message) => readonly NewEvent[]): Promise<TakenSteers> {
    const none: TakenSteers = { messages: [], events: [] }
    const take = this.#store.takeSteers?.bind(this.#store)
    if (!take) return Promise.resolve(none)
    return this.#afterEvents(() => take({ threadId: this.#threadId, runId: this.#runId, now: this.#now(), render }))
  }

  /** Token usage as the model reports it (docs/protocol.md#token-usage); a store without usage keeps none. */
  async addUsage(usage: { readonly inputTokens: number; readonly outputTokens: number }): Promise<void> {
    await this.#store.addRunUsage?.(this.#threadId, this.#runId, usage)
  }

  async #afterEvents<T>(write: () => Promise<T>): Promise<T> {
    await this.#persistEmitted()
    return write()
  }
}
