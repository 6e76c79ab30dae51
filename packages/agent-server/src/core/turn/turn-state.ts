import { InterludeError } from '@interlude/protocol'
import type { AgUiEvent, AssistantMessage, Interrupt, Message } from '@interlude/protocol'
import type { PolicyContext } from '../../agent/tool.ts'
import { NOT_STARTED_CALL_STATUSES, OPEN_CALL_STATUSES } from '../../store/statuses.ts'
import type { ToolCallRecord } from '../../store/store.ts'
import { clientThreadId } from '../../store/thread-key.ts'
import { toolResult } from '../ev.ts'
import { DEFAULT_LIMITS } from '../../config/limits.ts'
import type { RunPlan } from '../run-plan.ts'
import { RunWrites } from '../run-writes.ts'
import { EffectsLedger } from '../tools/effects-ledger.ts'
import type { PendingInterrupt } from '../tools/interrupts.ts'
import { callArgsKey, ruleFor } from '../tools/permission-rules.ts'
import { recordedKind, recordedStatus } from '../tools/tool-verdicts.ts'
import type { Verdict, VerdictContext } from '../tools/tool-verdicts.ts'
import type { ExecutionDeps } from './execute-run.ts'
import { modelWindow, sized } from './model-window.ts'
import type { HistoryLimits, SizedMessage } from './model-window.ts'
import { TurnGuards } from './turn-guards.ts'

/** What a step left: go on with the model, pause for decisions, or wait for results. */
export type Step =
  | { readonly kind: 'continue' }
  | { readonly kind: 'interrupt'; readonly interrupts: Interrupt[] }
  | { readonly kind: 'waiting' }

export type SettledStatus = 'succeeded' | 'failed' | 'denied' | 'cancelled' | 'rejected' | 'unknown'

/** A call as the model wrote it. */
export interface CallText {
  readonly id: string
  readonly name: string
  readonly argsText: string
}

/**
 * The mutable view of one turn — the history page, the state and the open tool calls — with the collaborators every
 * step uses. The steps (`model-step.ts`, `tool-step.ts`, `resume-step.ts`, `continuation-step.ts`) change it only
 * through these methods, and every row they write goes through `writes` (`RunWrites`).
 */
export class Turn {
  readonly plan: RunPlan
  readonly deps: ExecutionDeps
  readonly writes: RunWrites
  readonly ledger: EffectsLedger
  readonly verdicts: VerdictContext
  readonly limits: HistoryLimits
  /** The state as the steps see it; `takeStateChange` tells whether a step changed it. */
  state: unknown = {}
  /** Calls in a batch this run stored (they stay answerable: never closed by this run). */
  readonly batched = new Set<string>()
  /** Questions tools asked from inside `execute` since the last batch (docs/approvals.md#asking-from-inside-a-tool). */
  asked: PendingInterrupt[] = []
  /** Guardrail retries and the run's budgets (docs/guardrails.md). */
  readonly guards: TurnGuards
  /**
   * The newest messages of the thread (a bounded page, docs/protocol.md#the-model-window) and what this run
   * appended; `#before` older messages exist in the store and are never loaded.
   */
  #history: SizedMessage[] = []
  #before = 0
  #firstUser: SizedMessage | undefined
  /** The thread's running totals (the thread cap), as loaded plus what this run appended. */
  #totals = { messages: 0, bytes: 0 }
  /** Every tool call id of the thread: a new call never reuses one. */
  #callIds = new Set<string>()
  #calls = new Map<string, ToolCallRecord>()
  #stateChanged = false

  constructor(plan: RunPlan, deps: ExecutionDeps) {
    this.plan = plan
    this.deps = deps
    this.writes = new RunWrites(deps.store, plan, deps.persistEmitted, deps.now, deps.webhooks, deps.openBatches)
    this.ledger = new EffectsLedger({
      writes: this.writes,
      threadId: plan.threadId,
      runId: plan.runId,
      signal: deps.signal,
      logError: deps.logError,
    })
    this.limits = { ...DEFAULT_LIMITS, ...deps.history }
    this.guards = new TurnGuards(deps.agent)
    this.verdicts = {
      tools: deps.agent.tools,
      clientTools: plan.clientTools,
      validators: deps.validators,
      policyContext: (toolCallId) => this.policyContext(toolCallId),
      logError: deps.logError,
      findRule: async (tool, args, toolCallId) => {
        // Rules name the client's thread id; the owner makes it the owner's thread.
        const threadId = clientThreadId(plan.threadId)
        const rules = await deps.store.matchPermissionRules({
          owner: plan.principal,
          threadId,
          toolName: tool.name,
          argsKey: callArgsKey(tool, args),
        })
        const use = { tool, args, toolCallId, owner: plan.principal, threadId }
        return ruleFor(use, rules, deps.ruleMakerMayDecide)
      },
    }
  }

  async load(): Promise<void> {
    const { store } = this.deps
    const thread = await store.getThread(this.plan.threadId)
    if (!thread) throw new InterludeError('THREAD_NOT_FOUND', 'Thread not found.')
    this.state = thread.state
    this.#totals = { messages: thread.messageCount, bytes: thread.messageBytes }
    // One bounded page, never the whole history (docs/decisions.md#bounded-histories); positions count the messages
    // before it.
    const page = await store.listMessagePage(this.plan.threadId, {
      limit: this.limits.modelWindowMessages,
      maxBytes: this.limits.modelWindowBytes,
    })
    this.#history = page.map(({ message, bytes }) => ({ message, bytes }))
    this.#before = page[0]?.position ?? 0
    this.#firstUser = this.#before > 0 ? await store.getFirstUserMessage(this.plan.threadId) : undefined
    this.#callIds = new Set(await store.listToolCallIds(this.plan.threadId))
    for (const call of await store.listToolCalls(this.plan.threadId, { status: OPEN_CALL_STATUSES }))
      this.#calls.set(call.toolCallId, call)
  }

  // ---- history ----

  /** The messages of the next model call (docs/protocol.md#the-model-window). */
  modelMessages(): Message[] {
    return modelWindow(this.#history, this.#before, this.#firstUser, {
      maxMessages: this.limits.modelWindowMessages,
      maxBytes: this.limits.modelWindowBytes,
    })
  }

  lastMessage(): Message | undefined {
    return this.#history[this.#history.length - 1]?.message
  }

  /**
   * What a pausing run's `MESSAGES_SNAPSHOT` carries (docs/protocol.md#what-a-run-streams): the whole history while
   * the thread is small (at most `pauseSnapshotMaxBytes` and loaded entirely), else nothing — AG-UI clients replace
   * their list with a snapshot, so a part of the history would delete the rest from them.
   */
  pauseSnapshot(): Message[] | undefined {
    if (this.#before > 0 || this.#totals.bytes > this.limits.pauseSnapshotMaxBytes) return undefined
    return this.#history.map((m) => m.message)
  }

  /** The thread cap for a message this run is about to store (its own output), as a typed end of the run. */
  checkCap(adding: number, bytes: number): void {
    const { threadMaxMessages, threadMaxBytes } = this.limits
    if (this.#totals.messages + adding > threadMaxMessages || this.#totals.bytes + bytes > threadMaxBytes) {
      throw new InterludeError('THREAD_TOO_LARGE', 'The thread is full; start a new thread.', {
        details: {
          maxMessages: threadMaxMessages,
          maxBytes: threadMaxBytes,
          messages: this.#totals.messages,
          bytes: this.#totals.bytes,
        },
      })
    }
  }

  /** Stores one of the model's messages (its size already checked against the cap) and keeps it in the page. */
  async appendMessage(message: AssistantMessage, bytes = sized(message).bytes): Promise<void> {
    await this.writes.appendMessage(message)
    this.#remember(message, bytes)
  }

  /** User messages a steer wrote into the thread (`steer-step.ts`): the next model request reads them. */
  join(messages: readonly Message[]): void {
    for (const message of messages) this.#remember(message)
  }

  #remember(message: Message, bytes = sized(message).bytes): void {
    this.#history.push({ message, bytes })
    this.#totals = { messages: this.#totals.messages + 1, bytes: this.#totals.bytes + bytes }
  }

  // ---- tool calls ----

  /** A call id the model may not use for a new call: the thread has it already. */
  isTakenCallId(id: string): boolean {
    return this.#calls.has(id) || this.#callIds.has(id)
  }

  call(toolCallId: string): ToolCallRecord | undefined {
    return this.#calls.get(toolCallId)
  }

  /** The open calls in the order they were recorded: a response's calls in the model's order. */
  openCalls(): ToolCallRecord[] {
    return [...this.#calls.values()]
  }

  /**
   * A call an earlier run of this turn held while its response's batch waited (`pausePolicy: 'hold'`,
   * docs/decisions.md#a-turn-keeps-its-promises): recorded, never started, in no batch.
   */
  isHeld(record: ToolCallRecord): boolean {
    return record.status === 'pending' && record.runId !== this.plan.runId && !this.batched.has(record.toolCallId)
  }

  /** The calls of this run that were recorded but never started and are not in a stored batch. */
  leftCalls(): ToolCallRecord[] {
    return [...this.#calls.values()].filter(
      (c) =>
        c.runId === this.plan.runId && NOT_STARTED_CALL_STATUSES.includes(c.status) && !this.batched.has(c.toolCallId),
    )
  }

  /** No call is open and the history ends with the model's final answer. */
  answered(): boolean {
    const last = this.lastMessage()
    return last?.role === 'assistant' && (last.toolCalls?.length ?? 0) === 0 && this.#calls.size === 0
  }

  awaitingResults(): string[] {
    return [...this.#calls.values()].filter((c) => c.status === 'awaiting_result').map((c) => c.toolCallId)
  }

  /** One model response's calls with their verdicts, in one write: none of them is recorded, or all are. */
  async recordCalls(
    messageId: string,
    calls: readonly CallText[],
    verdicts: readonly Verdict[],
  ): Promise<ToolCallRecord[]> {
    const { threadId, runId } = this.plan
    // A browser call of a response that waits for a decision is held too: no tab may claim it before the decision.
    const holdBrowser = this.deps.agent.pausePolicy === 'hold' && verdicts.some((v) => v.kind === 'interrupt')
    const records = calls.map((call, i) => ({
      threadId,
      toolCallId: call.id,
      runId,
      messageId,
      toolName: call.name,
      argsText: call.argsText,
      kind: recordedKind(verdicts[i]!),
      status: holdBrowser && verdicts[i]!.kind === 'client' ? ('pending' as const) : recordedStatus(verdicts[i]!),
      now: this.deps.now(),
    }))
    await this.writes.recordCalls(records)
    return records.map((r) => {
      const record: ToolCallRecord = {
        ...r,
        result: undefined,
        attemptRunId: undefined,
        startedAt: undefined,
        finishedAt: undefined,
      }
      this.#calls.set(r.toolCallId, record)
      this.#callIds.add(r.toolCallId)
      return record
    })
  }

  /** A call's new status while it stays open (`awaiting_result`, `awaiting_decision`). */
  markCall(record: ToolCallRecord, status: 'awaiting_result' | 'awaiting_decision'): void {
    this.#calls.set(record.toolCallId, { ...record, status })
  }

  /** Writes the result (ledger + tool message + optional state, one transaction) and yields it. */
  async *settle(
    record: ToolCallRecord,
    status: SettledStatus,
    result: unknown,
    state?: unknown,
  ): AsyncGenerator<AgUiEvent> {
    const settled = toolResult(record.toolCallId, result)
    await this.writes.settle({
      toolCallId: record.toolCallId,
      status,
      result: settled.content,
      message: settled.message,
      ...(state !== undefined ? { state } : {}),
    })
    this.#calls.delete(record.toolCallId)
    this.#remember(settled.message)
    if (state !== undefined) this.setState(state)
    yield settled.event
  }

  /** Settles every call of this turn that never started (and is not in a stored pending batch). */
  async *closeOpenCalls(result: { status: 'cancelled'; message: string }): AsyncGenerator<AgUiEvent> {
    for (const record of [...this.#calls.values()]) {
      if (!NOT_STARTED_CALL_STATUSES.includes(record.status) || this.batched.has(record.toolCallId)) continue
      yield* this.settle(record, 'cancelled', result)
    }
  }

  // ---- state ----

  setState(state: unknown): void {
    this.state = state
    this.#stateChanged = true
  }

  takeStateChange(): boolean {
    const changed = this.#stateChanged
    this.#stateChanged = false
    return changed
  }

  /** What `authorize`, `approval` and a tool see of the run (a private copy of the state). */
  policyContext(toolCallId: string): PolicyContext {
    return {
      toolCallId,
      idempotencyKey: toolCallId,
      threadId: clientThreadId(this.plan.threadId),
      runId: this.plan.runId,
      principal: this.plan.principal,
      state: structuredClone(this.state),
      signal: this.deps.signal,
    }
  }
}
