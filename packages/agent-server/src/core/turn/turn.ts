import { randomUUID } from 'node:crypto'
import { InterludeError } from '@interlude/protocol'
import type {
  AgUiEvent,
  AssistantMessage,
  DecisionRecord,
  Interrupt,
  Message,
  PermissionRule,
  RememberScope,
  ResumeEntry,
} from '@interlude/protocol'
import type { PolicyContext, ResolvedTool } from '../../agent/tool.ts'
import type { ModelChunk } from '../../models/model.ts'
import { NOT_STARTED_CALL_STATUSES, OPEN_CALL_STATUSES } from '../../store/statuses.ts'
import type { StoredInterrupt, ToolCallRecord } from '../../store/store.ts'
import { EffectsLedger, settleUnsettled, toolInvocation } from '../tools/effects-ledger.ts'
import type { AskedOutcome, EffectOutcome } from '../tools/effects-ledger.ts'
import { ev, toolResult } from '../ev.ts'
import type { ExecutionDeps } from './execute-run.ts'
import { interruptBatch, interruptFor } from '../tools/interrupts.ts'
import type { PendingInterrupt } from '../tools/interrupts.ts'
import { DEFAULT_LIMITS } from '../limits.ts'
import { modelTools } from './model-events.ts'
import { modelWindow, sized } from './model-window.ts'
import type { HistoryLimits, SizedMessage } from './model-window.ts'
import type { ModelEventsOptions, ModelResponse } from './model-events.ts'
import type { ResumeRunPlan, RunPlan } from '../run-plan.ts'
import { RunWrites } from '../run-writes.ts'
import { callArgsKey, ruleFor, ruleFromApproval } from '../tools/permission-rules.ts'
import { parseJson } from '../strict-json.ts'
import { authorizeCall, classifyCalls, recordedKind, recordedStatus } from '../tools/tool-verdicts.ts'
import type { Verdict, VerdictContext } from '../tools/tool-verdicts.ts'
import { checkUsageCaps } from './usage.ts'
import { clientThreadId } from '../../store/thread-key.ts'
import { editedResult } from '../tools/edited-result.ts'
import { DEFAULT_MAX_TOOL_ARGUMENT_BYTES, oversizedPlaceholder, oversizedVerdict } from '../tools/oversized-args.ts'
import { runServerTool } from '../tools/server-tool-run.ts'
import { EMPTY_CHECKPOINT, parseCheckpoint } from '../tools/tool-asks.ts'
import type { AskSession, ToolCheckpoint } from '../tools/tool-asks.ts'
import { askInterruptFor, withAnswers } from '../tools/tool-interrupts.ts'

/** What a round of tool calls left: go on with the model, pause for decisions, or wait for results. */
export type Step =
  | { readonly kind: 'continue' }
  | { readonly kind: 'interrupt'; readonly interrupts: Interrupt[] }
  | { readonly kind: 'waiting' }

type SettledStatus = 'succeeded' | 'failed' | 'denied' | 'cancelled' | 'rejected' | 'unknown'

interface ApprovalPayload {
  readonly approved: boolean
  readonly editedArgs?: unknown
  readonly reason?: string
  /** Approve later matching calls without asking (docs/approvals.md#remembered-permissions). */
  readonly remember?: RememberScope
}

/**
 * The mutable view of one turn — history, state and the open tool calls — and every step that
 * changes it. Each step yields its AG-UI events and writes its rows through `RunWrites`.
 */
export class Turn {
  readonly #plan: RunPlan
  readonly #deps: ExecutionDeps
  readonly #writes: RunWrites
  readonly #ledger: EffectsLedger
  readonly #verdicts: VerdictContext
  readonly #limits: HistoryLimits
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
  state: unknown = {}
  #stateChanged = false
  #calls = new Map<string, ToolCallRecord>()
  /** Calls in a batch this run stored (they stay answerable: never closed by this run). */
  #batched = new Set<string>()
  /** Questions tools asked from inside `execute` since the last batch (docs/approvals.md#asking-from-inside-a-tool). */
  #asked: PendingInterrupt[] = []

  constructor(plan: RunPlan, deps: ExecutionDeps) {
    this.#plan = plan
    this.#deps = deps
    this.#writes = new RunWrites(deps.store, plan, deps.persistEmitted, deps.now, deps.webhooks, deps.openBatches)
    this.#ledger = new EffectsLedger({
      writes: this.#writes,
      threadId: plan.threadId,
      runId: plan.runId,
      signal: deps.signal,
      logError: deps.logError,
    })
    this.#limits = { ...DEFAULT_LIMITS, ...deps.history }
    this.#verdicts = {
      tools: deps.agent.tools,
      clientTools: plan.clientTools,
      validators: deps.validators,
      policyContext: (toolCallId) => this.#policyContext(toolCallId),
      logError: deps.logError,
      findRule: async (tool, args) =>
        ruleFor(
          tool,
          await deps.store.matchPermissionRules({
            owner: plan.principal,
            // Rules name the client's thread id; the owner makes it the owner's thread.
            threadId: clientThreadId(plan.threadId),
            toolName: tool.name,
            argsKey: callArgsKey(tool, args),
          }),
          args,
        ),
    }
  }

  async load(): Promise<void> {
    const { store } = this.#deps
    const thread = await store.getThread(this.#plan.threadId)
    if (!thread) throw new InterludeError('THREAD_NOT_FOUND', 'Thread not found.')
    this.state = thread.state
    this.#totals = { messages: thread.messageCount, bytes: thread.messageBytes }
    // One bounded page, never the whole history (issue 12.4); positions count the messages before it.
    const page = await store.listMessagePage(this.#plan.threadId, {
      limit: this.#limits.modelWindowMessages,
      maxBytes: this.#limits.modelWindowBytes,
    })
    this.#history = page.map(({ message, bytes }) => ({ message, bytes }))
    this.#before = page[0]?.position ?? 0
    this.#firstUser = this.#before > 0 ? await store.getFirstUserMessage(this.#plan.threadId) : undefined
    this.#callIds = new Set(await store.listToolCallIds(this.#plan.threadId))
    for (const call of await store.listToolCalls(this.#plan.threadId, { status: OPEN_CALL_STATUSES }))
      this.#calls.set(call.toolCallId, call)
  }

  /**
   * What a pausing run's `MESSAGES_SNAPSHOT` carries (docs/protocol.md#what-a-run-streams): the whole history while
   * the thread is small (at most `pauseSnapshotMaxBytes` and loaded entirely), else nothing — AG-UI clients replace
   * their list with a snapshot, so a part of the history would delete the rest from them.
   */
  pauseSnapshot(): Message[] | undefined {
    if (this.#before > 0 || this.#totals.bytes > this.#limits.pauseSnapshotMaxBytes) return undefined
    return this.#history.map((m) => m.message)
  }

  /** The thread cap for a message this run is about to store (its own output), as a typed end of the run. */
  #checkCap(adding: number, bytes: number): void {
    const { threadMaxMessages, threadMaxBytes } = this.#limits
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

  #remember(message: Message, bytes = sized(message).bytes): void {
    this.#history.push({ message, bytes })
    this.#totals = { messages: this.#totals.messages + 1, bytes: this.#totals.bytes + bytes }
  }

  takeStateChange(): boolean {
    const changed = this.#stateChanged
    this.#stateChanged = false
    return changed
  }

  awaitingResults(): string[] {
    return [...this.#calls.values()].filter((c) => c.status === 'awaiting_result').map((c) => c.toolCallId)
  }

  /** Settles every call of this turn that never started (and is not in a stored pending batch). */
  async *closeOpenCalls(result: { status: 'cancelled'; message: string }): AsyncGenerator<AgUiEvent> {
    for (const record of [...this.#calls.values()]) {
      if (!NOT_STARTED_CALL_STATUSES.includes(record.status) || this.#batched.has(record.toolCallId)) continue
      yield* this.#settle(record, 'cancelled', result)
    }
  }

  // ---- continuation (docs/architecture.md, "Durable continuation") ----------------------------

  /**
   * Effects the dead attempt left `started` are never run again: the tool's `reconcile` settles them, or they
   * become `unknown` (listed in the snapshot's `unsettledEffects`).
   */
  async *settleUnsettledEffects(): AsyncGenerator<AgUiEvent, void, undefined> {
    const { store, agent, logError } = this.#deps
    const { threadId, principal } = this.#plan
    for (const call of await store.listToolCalls(threadId, { status: ['started'] })) {
      const outcome = await settleUnsettled(
        agent.tools.get(call.toolName),
        call,
        { threadId, principal, state: this.state },
        logError,
      )
      yield* this.#settle(call, outcome.status, outcome.result, outcome.state)
    }
  }

  /**
   * The calls of the last model response the dead attempt recorded (or only wrote into the history) but did not
   * handle: handled now as `handleToolCalls` would have — a tool whose effect never started runs once, a call
   * needing a decision pauses. A batch the attempt already stored ends the run as its pause. `undefined`: nothing
   * was left.
   */
  async *handleLeftCalls(): AsyncGenerator<AgUiEvent, Step | undefined, undefined> {
    const { store, now } = this.#deps
    const { threadId, runId } = this.#plan
    const open = await store.getOpenBatch(threadId)
    if (open !== undefined && open.runId === runId) {
      for (const i of open.interrupts) this.#batched.add(i.toolCallId)
      return { kind: 'interrupt', interrupts: open.interrupts.map((i) => i.interrupt) }
    }
    const last = this.#history[this.#history.length - 1]?.message
    if (last?.role === 'assistant' && (last.toolCalls?.length ?? 0) > 0) {
      const first = last.toolCalls![0]!
      // One response's calls are recorded in one write: none of them is, or all are.
      if ((await store.getToolCall(threadId, first.id)) === undefined) {
        const calls = last.toolCalls!.map((c) => ({ id: c.id, name: c.function.name, argsText: c.function.arguments }))
        const verdicts = await classifyCalls(calls, this.#verdicts, this.#deps.maxInterruptsPerBatch)
        const records = calls.map((call, i) => ({
          threadId,
          toolCallId: call.id,
          runId,
          messageId: last.id,
          toolName: call.name,
          argsText: call.argsText,
          kind: recordedKind(verdicts[i]!),
          status: recordedStatus(verdicts[i]!),
          now: now(),
        }))
        await this.#writes.recordCalls(records)
        const recorded = records.map((r) => {
          const record: ToolCallRecord = {
            ...r,
            result: undefined,
            attemptRunId: undefined,
            startedAt: undefined,
            finishedAt: undefined,
          }
          this.#calls.set(r.toolCallId, record)
          return record
        })
        return yield* this.#processCalls(recorded, verdicts)
      }
    }
    const left = [...this.#calls.values()].filter(
      (c) => c.runId === runId && NOT_STARTED_CALL_STATUSES.includes(c.status) && !this.#batched.has(c.toolCallId),
    )
    if (left.length === 0) return undefined
    const verdicts = await classifyCalls(
      left.map((c) => ({ id: c.toolCallId, name: c.toolName, argsText: c.argsText })),
      this.#verdicts,
      this.#deps.maxInterruptsPerBatch,
    )
    return yield* this.#processCalls(left, verdicts)
  }

  /** The history ends with the model's final answer: the attempt died after it, nothing is left to ask. */
  answered(): boolean {
    const last = this.#history[this.#history.length - 1]?.message
    return last?.role === 'assistant' && (last.toolCalls?.length ?? 0) === 0 && this.#calls.size === 0
  }

  // ---- resume -------------------------------------------------------------------------------

  /**
   * Carries out the decision for each call of the batch. A tool that asked from inside `execute` runs again with its
   * answers and may ask again: those questions become the next batch (the returned pause).
   */
  async *applyDecisions(plan: ResumeRunPlan): AsyncGenerator<AgUiEvent, Step | undefined, undefined> {
    if (plan.continuation) {
      // The dead attempt already paused again: `handleLeftCalls` ends the run with that batch.
      const open = await this.#deps.store.getOpenBatch(this.#plan.threadId)
      if (open !== undefined && open.runId === this.#plan.runId) return undefined
    }
    const byId = new Map<string, ResumeEntry>(plan.decision.map((e) => [e.interruptId, e]))
    const asks = new Map<string, StoredInterrupt[]>()
    for (const item of plan.batch.interrupts)
      if (item.kind === 'ask') asks.set(item.toolCallId, [...(asks.get(item.toolCallId) ?? []), item])
    for (const item of plan.batch.interrupts) {
      const entry = byId.get(item.interrupt.id)
      const record = this.#calls.get(item.toolCallId)
      if (!entry || !record || record.status !== 'awaiting_decision') continue
      if (item.kind === 'ask') {
        // One re-execution per call, with all of its answers from this batch.
        const group = asks.get(item.toolCallId)!
        if (group[0] === item) yield* this.#answerAsks(group, byId, record)
        continue
      }
      yield* this.#applyDecision(item, entry, record)
    }
    return this.#asked.length > 0 ? yield* this.#pauseWith([]) : undefined
  }

  /** Stores a call's new answers, then runs the tool again from the top (docs/approvals.md#asking-from-inside-a-tool). */
  async *#answerAsks(
    items: readonly StoredInterrupt[],
    entries: ReadonlyMap<string, ResumeEntry>,
    record: ToolCallRecord,
  ): AsyncGenerator<AgUiEvent> {
    const tool = this.#deps.agent.tools.get(record.toolName)
    if (!tool || tool.kind !== 'server') {
      yield* this.#settle(record, 'rejected', {
        status: 'error',
        error: `Tool "${record.toolName}" is no longer available.`,
      })
      return
    }
    const stored = parseCheckpoint(await this.#deps.store.getToolCheckpoint(this.#plan.threadId, record.toolCallId))
    const checkpoint = withAnswers(stored, items, entries)
    // Durable before the tool runs again: a crash from here on replays the same answers.
    if (checkpoint !== stored) await this.#writes.saveCheckpoint(record.toolCallId, checkpoint)
    let args = checkpoint.args
    if (args === undefined) {
      const parsed = parseJson(record.argsText)
      args = parsed.ok ? parsed.value : {}
    }
    yield* this.#runEffect(tool, record, args, checkpoint.edited === true, checkpoint)
  }

  async *#applyDecision(item: StoredInterrupt, entry: ResumeEntry, record: ToolCallRecord): AsyncGenerator<AgUiEvent> {
    if (entry.status === 'cancelled') {
      yield* this.#settle(record, 'cancelled', {
        status: 'cancelled',
        message: 'The request was cancelled before a decision.',
      })
      return
    }
    if (item.kind === 'input') {
      yield* this.#settle(record, 'succeeded', entry.payload ?? null)
      return
    }
    const payload = entry.payload as ApprovalPayload
    if (!payload.approved) {
      yield* this.#settle(record, 'denied', { status: 'denied', reason: payload.reason ?? 'Denied by the user.' })
      return
    }
    const tool = this.#deps.agent.tools.get(record.toolName)
    if (!tool) {
      yield* this.#settle(record, 'rejected', {
        status: 'error',
        error: `Tool "${record.toolName}" is no longer available.`,
      })
      return
    }
    let args: unknown
    if (payload.editedArgs !== undefined) {
      args = payload.editedArgs
    } else {
      const parsed = parseJson(record.argsText)
      args = parsed.ok ? parsed.value : {}
    }
    // editedArgs were validated against the parameter schema at admission; check again because
    // the tool may have changed between the pause and the resume.
    const valid = this.#deps.validators.validate(tool.parameters, args)
    if (!valid.ok) {
      yield* this.#settle(record, 'rejected', {
        status: 'error',
        error: 'The arguments do not match the tool schema.',
        issues: valid.issues,
      })
      return
    }
    // Re-check authorisation right before execution: the resource may have changed while the
    // person decided.
    const denial = await authorizeCall(tool, args, record.toolCallId, this.#verdicts)
    if (denial !== undefined) {
      yield* this.#settle(record, 'denied', { status: 'denied', reason: denial })
      return
    }
    if (payload.remember !== undefined && tool.rememberScopes.includes(payload.remember)) {
      // Stored before the effect runs: a continuation after a crash makes the same rule (same id), once.
      await this.#rememberApproval(tool, payload.remember, args, item.interrupt.id)
    }
    yield* this.#runEffect(tool, record, args, payload.editedArgs !== undefined)
  }

  async #rememberApproval(tool: ResolvedTool, scope: RememberScope, args: unknown, interruptId: string): Promise<void> {
    const { store, now } = this.#deps
    const { threadId, runId, principal } = this.#plan
    const decidedBy = (await store.getDecision(threadId, runId))?.decidedBy ?? principal
    await store.addPermissionRule(
      ruleFromApproval({
        tool,
        scope,
        args,
        owner: principal,
        threadId: clientThreadId(threadId),
        decidedBy,
        interruptId,
        at: now(),
      }),
    )
  }

  /** The `via: "rule"` record of a call a remembered permission approved, stored and in the log. */
  async *#ruleDecision(rule: PermissionRule, toolCallId: string): AsyncGenerator<AgUiEvent> {
    const record: DecisionRecord = {
      threadId: this.#plan.threadId,
      runId: this.#plan.runId,
      interruptIds: [],
      entries: [],
      decidedBy: rule.createdBy,
      via: 'rule',
      at: new Date(this.#deps.now()).toISOString(),
      ruleId: rule.ruleId,
      toolCallId,
    }
    await this.#deps.store.addRuleDecision(record)
    yield ev.decision(record)
  }

  // ---- model --------------------------------------------------------------------------------

  /**
   * The next model call: the provider's stream over the history, and how `modelEvents` names its
   * events. The loop translates the stream itself (one generator less per event on the hot path).
   */
  callModel(): { readonly stream: AsyncIterable<ModelChunk>; readonly options: ModelEventsOptions } {
    const { agent, signal } = this.#deps
    // A full thread ends here, before a model call whose answer could not be stored.
    this.#checkCap(1, 1)
    const messages = modelWindow(this.#history, this.#before, this.#firstUser, {
      maxMessages: this.#limits.modelWindowMessages,
      maxBytes: this.#limits.modelWindowBytes,
    })
    const request = {
      systemPrompt: agent.definition.systemPrompt,
      messages,
      tools: modelTools(agent, this.#plan.clientTools),
      context: this.#plan.context,
      state: this.state,
      signal,
    }
    const stream = this.#accounted(() => agent.model.stream(request))
    const options: ModelEventsOptions = {
      messageId: `msg_${randomUUID()}`,
      signal,
      isTaken: (id) => this.#calls.has(id) || this.#callIds.has(id),
    }
    return { stream, options }
  }

  /**
   * The provider's stream behind the token caps (checked before the call) and with its usage
   * recorded on the run as it arrives (issue 14, docs/protocol.md#token-usage).
   */
  async *#accounted(open: () => AsyncIterable<ModelChunk>): AsyncGenerator<ModelChunk> {
    const { store, usage: options, agent } = this.#deps
    const { threadId, runId, principal } = this.#plan
    await checkUsageCaps(store, { threadId, principal }, options)
    for await (const chunk of open()) {
      if (chunk.type === 'usage') {
        await store.addRunUsage?.(threadId, runId, chunk.usage)
        try {
          options?.onUsage?.({
            threadId: clientThreadId(threadId),
            runId,
            principal,
            model: agent.model.name,
            usage: chunk.usage,
          })
        } catch (error) {
          this.#deps.logError('onUsage threw', error)
        }
      }
      yield chunk
    }
  }

  /** A text-only answer joins the history (calls are recorded by `handleToolCalls`). */
  async recordAnswer(response: ModelResponse): Promise<void> {
    if (response.calls.length > 0 || response.text.length === 0) return
    const message: AssistantMessage = { id: response.messageId, role: 'assistant', content: response.text }
    const { bytes } = sized(message)
    this.#checkCap(1, bytes)
    await this.#writes.appendMessage(message)
    this.#remember(message, bytes)
  }

  // ---- tool calls ---------------------------------------------------------------------------

  /** Records the response's calls, settles what needs no decision, then pauses or goes on. */
  async *handleToolCalls(response: ModelResponse): AsyncGenerator<AgUiEvent, Step, undefined> {
    const { threadId, runId } = this.#plan
    const { now } = this.#deps
    // Oversized arguments are refused and never stored: a placeholder takes their place in the
    // history, so one runaway output cannot be re-sent on every later turn (issue 14).
    const maxArgs = this.#deps.maxToolArgumentBytes ?? DEFAULT_MAX_TOOL_ARGUMENT_BYTES
    const sizes = response.calls.map((c) => Buffer.byteLength(c.argsText, 'utf8'))
    const argsOf = response.calls.map((c, i) => (sizes[i]! > maxArgs ? oversizedPlaceholder(sizes[i]!) : c.argsText))
    const draft: AssistantMessage = {
      id: response.messageId,
      role: 'assistant',
      ...(response.text.length > 0 ? { content: response.text } : {}),
      toolCalls: response.calls.map((c, i) => ({
        id: c.id,
        type: 'function' as const,
        function: { name: c.name, arguments: argsOf[i]! },
      })),
    }
    // Checked before anything of the response is stored: its calls then never wait for results.
    this.#checkCap(1, sized(draft).bytes)
    const kept = response.calls.filter((_, i) => sizes[i]! <= maxArgs)
    const classified = await classifyCalls(kept, this.#verdicts, this.#deps.maxInterruptsPerBatch)
    let next = 0
    const verdicts: Verdict[] = response.calls.map((_, i) =>
      sizes[i]! > maxArgs ? oversizedVerdict(sizes[i]!, maxArgs) : classified[next++]!,
    )

    const assistant: AssistantMessage = {
      id: response.messageId,
      role: 'assistant',
      ...(response.text.length > 0 ? { content: response.text } : {}),
      toolCalls: response.calls.map((c, i) => ({
        id: c.id,
        type: 'function' as const,
        function: { name: c.name, arguments: argsOf[i]! },
      })),
    }
    await this.#writes.appendMessage(assistant)
    this.#remember(assistant)
    for (const call of response.calls) this.#callIds.add(call.id)
    const records = response.calls.map((call, i) => {
      const verdict = verdicts[i]!
      return {
        threadId,
        toolCallId: call.id,
        runId,
        messageId: response.messageId,
        toolName: call.name,
        argsText: argsOf[i]!,
        kind: recordedKind(verdict),
        status: recordedStatus(verdict),
        now: now(),
      } as const
    })
    await this.#writes.recordCalls(records)
    for (const r of records) {
      this.#calls.set(r.toolCallId, {
        ...r,
        result: undefined,
        attemptRunId: undefined,
        startedAt: undefined,
        finishedAt: undefined,
      })
    }

    return yield* this.#processCalls(
      response.calls.map((c) => this.#calls.get(c.id)!),
      verdicts,
    )
  }

  /** Settles, runs or pauses recorded calls by their verdicts (one model response's calls). */
  async *#processCalls(
    calls: readonly ToolCallRecord[],
    verdicts: readonly Verdict[],
  ): AsyncGenerator<AgUiEvent, Step, undefined> {
    // Everything that needs no decision is settled before the pause, so denied calls never look pending.
    const interrupts: PendingInterrupt[] = []
    const expiry = { ttlMs: this.#deps.interruptTtlMs, onExpiry: this.#deps.onExpiry }
    for (let i = 0; i < calls.length; i++) {
      const verdict = verdicts[i]!
      const record = calls[i]!
      switch (verdict.kind) {
        case 'reject':
          yield* this.#settle(record, 'rejected', {
            status: 'error',
            error: verdict.error,
            ...(verdict.details ? { issues: verdict.details } : {}),
          })
          break
        case 'deny':
          yield* this.#settle(record, 'denied', { status: 'denied', reason: verdict.reason })
          break
        case 'execute':
        case 'external':
          if (verdict.rule) yield* this.#ruleDecision(verdict.rule, record.toolCallId)
          yield* this.#runEffect(verdict.tool, record, verdict.args)
          break
        case 'interrupt':
          interrupts.push(interruptFor(verdict.tool, record.toolCallId, verdict.args, expiry))
          break
        case 'client':
          break
      }
    }

    if (interrupts.length > 0 || this.#asked.length > 0) return yield* this.#pauseWith(interrupts)
    return this.awaitingResults().length > 0 ? { kind: 'waiting' } : { kind: 'continue' }
  }

  /** Stores one batch of the calls' interrupts and the questions tools asked (in that order) and pauses. */
  // eslint-disable-next-line require-yield
  async *#pauseWith(interrupts: readonly PendingInterrupt[]): AsyncGenerator<AgUiEvent, Step, undefined> {
    const all = [...interrupts, ...this.#asked]
    this.#asked = []
    const batch = interruptBatch(this.#plan, all, this.#deps.now())
    // Durably stored before the RUN_FINISHED frame exists.
    await this.#writes.createBatch(batch)
    for (const i of batch.interrupts) this.#batched.add(i.toolCallId)
    return { kind: 'interrupt', interrupts: batch.interrupts.map((i) => i.interrupt) }
  }

  /**
   * A server tool runs now (with the answers of its questions so far, if it asked); an external tool is started and
   * its result awaited. A tool that asks past its answers leaves its questions in `#asked`.
   */
  async *#runEffect(
    tool: ResolvedTool,
    record: ToolCallRecord,
    args: unknown,
    edited = false,
    checkpoint: ToolCheckpoint = EMPTY_CHECKPOINT,
  ): AsyncGenerator<AgUiEvent> {
    const signal = this.#deps.toolSignal ?? this.#deps.signal
    let outcome: EffectOutcome | 'awaiting_result' | undefined
    if (tool.kind === 'external') {
      const invocation = () => toolInvocation(this.#policyContext(record.toolCallId), signal)
      outcome = await this.#ledger.dispatch(tool, record.toolCallId, args, invocation)
      if (outcome === 'awaiting_result') this.#calls.set(record.toolCallId, { ...record, status: 'awaiting_result' })
    } else {
      const { outcome: executed, asks } = yield* runServerTool({
        tool,
        toolCallId: record.toolCallId,
        args,
        checkpoint,
        policy: this.#policyContext(record.toolCallId),
        toolSignal: signal,
        runSignal: this.#deps.signal,
        ledger: this.#ledger,
        writes: this.#writes,
        validators: this.#deps.validators,
        logError: this.#deps.logError,
      })
      if (executed.status === 'asked') {
        yield* this.#released(tool, record, asks, executed, { args, edited })
        return
      }
      outcome = executed
    }
    if (typeof outcome === 'object')
      yield* this.#settle(
        record,
        outcome.status,
        edited ? editedResult(args, outcome.result) : outcome.result,
        outcome.state,
      )
  }

  /**
   * The tool asked: its claim is released (`awaiting_decision`) and the arguments it runs with are kept, before the
   * batch is stored — a crash in between leaves a call that is not started and runs (and asks) again.
   */
  // eslint-disable-next-line require-yield
  async *#released(
    tool: ResolvedTool,
    record: ToolCallRecord,
    asks: AskSession,
    asked: AskedOutcome,
    run: { readonly args: unknown; readonly edited: boolean },
  ): AsyncGenerator<AgUiEvent> {
    const checkpoint = asks.checkpoint
    if (checkpoint.args === undefined)
      await this.#writes.saveCheckpoint(record.toolCallId, { ...checkpoint, args: run.args, edited: run.edited })
    if (asks.claimed || record.status !== 'awaiting_decision' || asked.state !== undefined)
      await this.#writes.settle({
        toolCallId: record.toolCallId,
        status: 'awaiting_decision',
        result: undefined,
        message: undefined,
        ...(asked.state !== undefined ? { state: asked.state } : {}),
      })
    if (asked.state !== undefined) {
      this.state = asked.state
      this.#stateChanged = true
    }
    this.#calls.set(record.toolCallId, { ...record, status: 'awaiting_decision' })
    const expiry = { ttlMs: this.#deps.interruptTtlMs, onExpiry: this.#deps.onExpiry }
    for (const request of asked.requests) this.#asked.push(askInterruptFor(tool, record.toolCallId, request, expiry))
  }

  #policyContext(toolCallId: string): PolicyContext {
    return {
      toolCallId,
      idempotencyKey: toolCallId,
      threadId: clientThreadId(this.#plan.threadId),
      runId: this.#plan.runId,
      principal: this.#plan.principal,
      state: structuredClone(this.state),
      signal: this.#deps.signal,
    }
  }

  /** Writes the result (ledger + tool message + optional state, one transaction) and yields it. */
  async *#settle(
    record: ToolCallRecord,
    status: SettledStatus,
    result: unknown,
    state?: unknown,
  ): AsyncGenerator<AgUiEvent> {
    const settled = toolResult(record.toolCallId, result)
    await this.#writes.settle({
      toolCallId: record.toolCallId,
      status,
      result: settled.content,
      message: settled.message,
      ...(state !== undefined ? { state } : {}),
    })
    this.#calls.delete(record.toolCallId)
    this.#remember(settled.message)
    if (state !== undefined) {
      this.state = state
      this.#stateChanged = true
    }
    yield settled.event
  }
}
