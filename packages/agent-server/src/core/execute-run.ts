import { randomUUID } from 'node:crypto'
import { InterludeError, STREAM_ERROR_CODES } from '@interlude/protocol'
import type { AgUiEvent, AssistantMessage, Interrupt, Message, ResumeEntry, ToolMessage } from '@interlude/protocol'
import type { ResolvedAgent } from '../agent/agent.ts'
import type { PolicyContext, ResolvedTool, ToolContext } from '../agent/tool.ts'
import type { ModelTool } from '../models/model.ts'
import type { ValidatorCache } from '../schema/validator-cache.ts'
import { RunNotActiveError } from '../store/store.ts'
import type { BatchRecord, Store, StoredInterrupt, ToolCallRecord, ToolCallStatus } from '../store/store.ts'
import { ev, publicMessage } from './events.ts'
import type { ResumeRunPlan, RunPlan } from './run-plan.ts'

/** What the execution core needs from the server. */
export interface ExecutionDeps {
  readonly agent: ResolvedAgent
  readonly store: Store
  readonly validators: ValidatorCache
  readonly now: () => number
  readonly interruptTtlMs: number
  readonly maxInterruptsPerBatch: number
  /**
   * Aborted by an explicit cancel or a server shutdown — never by a dropped connection. Checked at
   * the checkpoints: before each model call, before each model chunk, before a tool starts.
   */
  readonly signal: AbortSignal
  /** What tools see as `ctx.signal`: aborted only at server shutdown (a cancel waits for a running tool). */
  readonly toolSignal?: AbortSignal
  /** Makes every event yielded so far durable before the core writes state that depends on it. */
  readonly checkpoint: () => Promise<void>
  readonly logError: (message: string, error: unknown) => void
}

interface ModelCall {
  readonly id: string
  readonly name: string
  argsText: string
}

interface ModelResponse {
  readonly messageId: string
  readonly text: string
  readonly calls: readonly ModelCall[]
}

type Verdict =
  | { readonly kind: 'reject'; readonly error: string; readonly details?: unknown }
  | { readonly kind: 'deny'; readonly reason: string }
  | { readonly kind: 'client' }
  | { readonly kind: 'interrupt'; readonly tool: ResolvedTool; readonly args: unknown }
  | { readonly kind: 'execute' | 'external'; readonly tool: ResolvedTool; readonly args: unknown }

type Step =
  | { readonly kind: 'continue' }
  | { readonly kind: 'interrupt'; readonly interrupts: Interrupt[] }
  | { readonly kind: 'waiting' }

class RunCancelled extends Error {}

/** Statuses of calls a run may still act on (everything else is settled history). */
const OPEN_STATUSES: readonly ToolCallStatus[] = ['pending', 'awaiting_decision', 'awaiting_result']

/** Calls of the turn that never started: closed with a result when the run stops early. */
const NOT_STARTED: readonly ToolCallStatus[] = ['pending', 'awaiting_decision']

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch {
    return { ok: false }
  }
}

export function resultContent(value: unknown): string {
  if (typeof value === 'string') return value
  const json = JSON.stringify(value ?? null)
  return json === undefined ? 'null' : json
}

/** A tool handed back something JSON cannot represent faithfully. */
class NotJsonError extends Error {
  constructor(what: string) {
    super(`not JSON: ${what}`)
    this.name = 'NotJsonError'
  }
}

/**
 * `JSON.stringify`, but refusing what it would silently change: functions, symbols, BigInts,
 * non-finite numbers, `undefined` as a value or array item (an `undefined` property is dropped, as
 * JSON does). Cycles and stack-deep values throw as usual. Everything throws *here*, inside the
 * tool's error handling, never later in the store.
 */
export function strictJson(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, key: string, item: unknown) {
    const type = typeof item
    if (type === 'function' || type === 'symbol' || type === 'bigint') throw new NotJsonError(type)
    if (type === 'number' && !Number.isFinite(item)) throw new NotJsonError(String(item))
    if (item === undefined && (key === '' || Array.isArray(this))) throw new NotJsonError('undefined')
    return item
  })
}

/** A tool's return value as the result text the model reads: a string as-is, anything else JSON. */
function toolResultText(value: unknown): string {
  if (typeof value === 'string') return value
  return value === undefined ? 'null' : strictJson(value)
}

const NOT_JSON_RESULT = 'Tool returned a value that is not JSON.'
const NOT_JSON_STATE = 'Tool set a state that is not JSON.'

interface ApprovalPayload {
  readonly approved: boolean
  readonly editedArgs?: unknown
  readonly reason?: string
}

/**
 * The execution core: one run as an async sequence of AG-UI events (docs/architecture.md). RUN_STARTED first,
 * exactly one terminal event (RUN_FINISHED or RUN_ERROR) last. The ReAct loop: model call → tool
 * calls → tool results → model, until the model answers without tools, a person must decide, a
 * browser/external result is awaited, or `maxIterations` is reached. The SSE route, the replay
 * route and tests consume the same sequence (through the run manager's log).
 */
export async function* executeRun(plan: RunPlan, deps: ExecutionDeps): AsyncGenerator<AgUiEvent, void, undefined> {
  const { threadId, runId } = plan
  yield ev.runStarted(threadId, runId)
  const turn = new Turn(plan, deps)
  try {
    await turn.load()
    if (plan.kind === 'resume') {
      yield* turn.applyDecisions(plan)
      if (turn.takeStateChange()) yield ev.stateSnapshot(turn.state)
    }
    const awaited = turn.awaitingResults()
    if (awaited.length > 0) {
      yield ev.runFinished(threadId, runId, { type: 'success', pendingToolCallIds: awaited })
      return
    }
    // docs/architecture.md: if every entry of a batch is cancelled, the turn ends without another model call.
    if (plan.kind === 'resume' && plan.allCancelled) {
      yield ev.runFinished(threadId, runId, { type: 'success' })
      return
    }
    for (let iteration = 0; iteration < deps.agent.maxIterations; iteration++) {
      if (deps.signal.aborted) throw new RunCancelled()
      const response = yield* turn.callModel()
      if (response.calls.length === 0) {
        yield ev.runFinished(threadId, runId, { type: 'success' })
        return
      }
      const step = yield* turn.handleToolCalls(response)
      if (turn.takeStateChange() || step.kind === 'interrupt') yield ev.stateSnapshot(turn.state)
      if (step.kind === 'interrupt') {
        yield ev.messagesSnapshot(turn.messages)
        yield ev.runFinished(threadId, runId, { type: 'interrupt', interrupts: step.interrupts })
        return
      }
      if (step.kind === 'waiting') {
        yield ev.runFinished(threadId, runId, { type: 'success', pendingToolCallIds: turn.awaitingResults() })
        return
      }
    }
    yield ev.runError(
      'RUN_FAILED',
      `The agent stopped after ${deps.agent.maxIterations} model calls without finishing.`,
    )
  } catch (error) {
    // Fenced: another process closed this run; write nothing more.
    if (error instanceof RunNotActiveError) throw error
    if (error instanceof RunCancelled) {
      // Calls that never started get a cancelled result, so the history stays answerable.
      yield* turn.closeOpenCalls({
        status: 'cancelled',
        message: 'The run was cancelled before this call ran; it did not run.',
      })
      yield ev.runFinished(threadId, runId, { type: 'cancelled' })
      return
    }
    try {
      yield* turn.closeOpenCalls({
        status: 'cancelled',
        message: 'The run failed before this call ran; it did not run.',
      })
    } catch (closeError) {
      if (closeError instanceof RunNotActiveError) throw closeError
      deps.logError(`run ${threadId}/${runId}: could not close open calls`, closeError)
    }
    // Unknown errors become INTERNAL with a generic message; the raw text only goes to the log.
    const failure = InterludeError.fromUnknown(error)
    if (!InterludeError.isInstance(error) || failure.code === 'INTERNAL' || failure.code === 'MODEL_ERROR') {
      deps.logError(`run ${threadId}/${runId} failed`, error)
    }
    const code = (STREAM_ERROR_CODES as readonly string[]).includes(failure.code) ? failure.code : 'RUN_FAILED'
    yield ev.runError(code, failure.message)
  }
}

/** The mutable view of one turn: history, state and the open tool calls. */
class Turn {
  readonly #plan: RunPlan
  readonly #deps: ExecutionDeps
  messages: Message[] = []
  state: unknown = {}
  #stateChanged = false
  #calls = new Map<string, ToolCallRecord>()
  /** Calls in a batch this run stored (they stay answerable: never closed by this run). */
  #batched = new Set<string>()
  #ownerPrincipal: string

  constructor(plan: RunPlan, deps: ExecutionDeps) {
    this.#plan = plan
    this.#deps = deps
    this.#ownerPrincipal = plan.principal
  }

  async load(): Promise<void> {
    const { store } = this.#deps
    const thread = await store.getThread(this.#plan.threadId)
    if (!thread) throw new InterludeError('THREAD_NOT_FOUND', 'Thread not found.')
    this.state = thread.state
    this.messages = await store.listMessages(this.#plan.threadId)
    for (const call of await store.listToolCalls(this.#plan.threadId, { status: OPEN_STATUSES }))
      this.#calls.set(call.toolCallId, call)
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
      if (!NOT_STARTED.includes(record.status) || this.#batched.has(record.toolCallId)) continue
      yield* this.#settle(record, 'cancelled', result)
    }
  }

  // ---- resume -------------------------------------------------------------------------------

  async *applyDecisions(plan: ResumeRunPlan): AsyncGenerator<AgUiEvent, void, undefined> {
    const byId = new Map<string, ResumeEntry>(plan.decision.map((e) => [e.interruptId, e]))
    for (const item of plan.batch.interrupts) {
      const entry = byId.get(item.interrupt.id)
      const record = this.#calls.get(item.toolCallId)
      if (!entry || !record || record.status !== 'awaiting_decision') continue
      yield* this.#applyDecision(item, entry, record)
    }
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
    const denial = await this.#authorize(tool, args, record.toolCallId)
    if (denial !== undefined) {
      yield* this.#settle(record, 'denied', { status: 'denied', reason: denial })
      return
    }
    if (tool.kind === 'external') yield* this.#dispatchExternal(tool, record, args)
    else yield* this.#execute(tool, record, args)
  }

  // ---- model --------------------------------------------------------------------------------

  async *callModel(): AsyncGenerator<AgUiEvent, ModelResponse, undefined> {
    const { agent, signal } = this.#deps
    const messageId = `msg_${randomUUID()}`
    const calls: ModelCall[] = []
    const byKey = new Map<string, ModelCall>()
    const open = new Set<string>()
    let text = ''
    let textOpen = false
    const tools: ModelTool[] = [...agent.tools.values()].map((t) => ({
      name: t.name,
      description: t.definition.description,
      parameters: t.parameters,
    }))
    for (const t of this.#plan.clientTools) {
      if (!agent.tools.has(t.name))
        tools.push({
          name: t.name,
          description: t.description,
          parameters: (t.parameters ?? { type: 'object' }) as Record<string, unknown>,
        })
    }
    const stream = agent.model.stream({
      systemPrompt: agent.definition.systemPrompt,
      messages: this.messages,
      tools,
      context: this.#plan.context,
      state: this.state,
      signal,
    })
    try {
      for await (const chunk of stream) {
        if (signal.aborted) break
        if (chunk.type === 'text') {
          if (chunk.delta.length === 0) continue
          if (!textOpen) {
            textOpen = true
            yield ev.textStart(messageId)
          }
          text += chunk.delta
          yield ev.textContent(messageId, chunk.delta)
        } else if (chunk.type === 'tool_call_start') {
          if (textOpen) {
            textOpen = false
            yield ev.textEnd(messageId)
          }
          const call: ModelCall = { id: this.#uniqueCallId(chunk.id, calls), name: chunk.name, argsText: '' }
          calls.push(call)
          byKey.set(chunk.key, call)
          open.add(call.id)
          yield ev.toolStart(call.id, call.name, messageId)
        } else {
          const call = byKey.get(chunk.key)
          if (!call || chunk.delta.length === 0) continue
          call.argsText += chunk.delta
          yield ev.toolArgs(call.id, chunk.delta)
        }
      }
    } catch (error) {
      if (signal.aborted) throw new RunCancelled()
      throw new InterludeError('MODEL_ERROR', 'The model request failed.', { cause: error })
    }
    // Close whatever is open so the sequence stays valid (also when cancelled mid-stream).
    if (textOpen) yield ev.textEnd(messageId)
    for (const call of calls) if (open.has(call.id)) yield ev.toolEnd(call.id)
    if (signal.aborted) throw new RunCancelled()
    if (calls.length === 0 && text.length > 0) {
      await this.#deps.checkpoint()
      const message: AssistantMessage = { id: messageId, role: 'assistant', content: text }
      await this.#deps.store.appendMessages(this.#plan.threadId, this.#plan.runId, [message])
      this.messages.push(message)
    }
    return { messageId, text, calls }
  }

  #uniqueCallId(proposed: string | undefined, current: readonly ModelCall[]): string {
    const valid = proposed !== undefined && /^[\w.:-]{1,128}$/.test(proposed)
    if (
      valid &&
      !this.#calls.has(proposed) &&
      !current.some((c) => c.id === proposed) &&
      !this.#knownCallIds().has(proposed)
    )
      return proposed
    return `call_${randomUUID()}`
  }

  #knownCallIds(): Set<string> {
    const ids = new Set<string>()
    for (const m of this.messages) if (m.role === 'assistant') for (const c of m.toolCalls ?? []) ids.add(c.id)
    return ids
  }

  // ---- tool calls ---------------------------------------------------------------------------

  async *handleToolCalls(response: ModelResponse): AsyncGenerator<AgUiEvent, Step, undefined> {
    const { store, now } = this.#deps
    const { threadId, runId } = this.#plan
    const verdicts: Verdict[] = []
    let interrupting = 0
    for (const call of response.calls) {
      let verdict = await this.#classify(call)
      if (verdict.kind === 'interrupt' && ++interrupting > this.#deps.maxInterruptsPerBatch) {
        verdict = {
          kind: 'reject',
          error: `Too many calls need a decision at once (limit ${this.#deps.maxInterruptsPerBatch}). Ask again with fewer.`,
        }
      }
      verdicts.push(verdict)
    }

    await this.#deps.checkpoint()
    const assistant: AssistantMessage = {
      id: response.messageId,
      role: 'assistant',
      ...(response.text.length > 0 ? { content: response.text } : {}),
      toolCalls: response.calls.map((c) => ({
        id: c.id,
        type: 'function' as const,
        function: { name: c.name, arguments: c.argsText },
      })),
    }
    await store.appendMessages(threadId, runId, [assistant])
    this.messages.push(assistant)
    const records = response.calls.map((call, i) => {
      const verdict = verdicts[i]!
      const status: ToolCallStatus =
        verdict.kind === 'interrupt' ? 'awaiting_decision' : verdict.kind === 'client' ? 'awaiting_result' : 'pending'
      const kind = verdict.kind === 'client' ? 'client' : 'tool' in verdict ? verdict.tool.kind : 'server'
      return {
        threadId,
        toolCallId: call.id,
        runId,
        messageId: response.messageId,
        toolName: call.name,
        argsText: call.argsText,
        kind,
        status,
        now: now(),
      } as const
    })
    await store.insertToolCalls(records)
    for (const r of records) {
      this.#calls.set(r.toolCallId, {
        ...r,
        result: undefined,
        attemptRunId: undefined,
        startedAt: undefined,
        finishedAt: undefined,
      })
    }

    // Everything that needs no decision is settled before the pause, so denied calls never look pending.
    const interrupts: StoredInterrupt[] = []
    for (let i = 0; i < response.calls.length; i++) {
      const verdict = verdicts[i]!
      const record = this.#calls.get(response.calls[i]!.id)!
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
          yield* this.#execute(verdict.tool, record, verdict.args)
          break
        case 'external':
          yield* this.#dispatchExternal(verdict.tool, record, verdict.args)
          break
        case 'interrupt':
          interrupts.push(this.#interruptFor(verdict.tool, record, verdict.args))
          break
        case 'client':
          break
      }
    }

    if (interrupts.length > 0) {
      // One clock read per batch: every interrupt and the stored batch share one expiry, so
      // admission, the snapshot and the inbox agree.
      const createdAt = now()
      const expiresAt = createdAt + this.#deps.interruptTtlMs
      const expiresAtIso = new Date(expiresAt).toISOString()
      const stamped = interrupts.map((i): StoredInterrupt => ({
        ...i,
        interrupt: { ...i.interrupt, expiresAt: expiresAtIso },
      }))
      await this.#deps.checkpoint()
      // Durably stored before the RUN_FINISHED frame exists.
      await store.createBatch({
        batchId: `batch_${randomUUID()}`,
        threadId,
        runId,
        interrupts: stamped,
        createdAt,
        expiresAt,
        onExpiry: 'keep',
      })
      for (const i of stamped) this.#batched.add(i.toolCallId)
      return { kind: 'interrupt', interrupts: stamped.map((i) => i.interrupt) }
    }
    return this.awaitingResults().length > 0 ? { kind: 'waiting' } : { kind: 'continue' }
  }

  async #classify(call: ModelCall): Promise<Verdict> {
    const tool = this.#deps.agent.tools.get(call.name)
    if (!tool) {
      if (this.#plan.clientTools.some((t) => t.name === call.name)) return { kind: 'client' }
      return { kind: 'reject', error: `Unknown tool "${call.name}".` }
    }
    const parsed = parseJson(call.argsText.length === 0 ? '{}' : call.argsText)
    if (!parsed.ok) return { kind: 'reject', error: 'The arguments are not valid JSON.' }
    const valid = this.#deps.validators.validate(tool.parameters, parsed.value)
    if (!valid.ok)
      return { kind: 'reject', error: 'The arguments do not match the tool schema.', details: valid.issues }
    const args = parsed.value
    const denial = await this.#authorize(tool, args, call.id)
    if (denial !== undefined) return { kind: 'deny', reason: denial }
    if (tool.kind === 'human') return { kind: 'interrupt', tool, args }
    const approval = tool.definition.approval ?? 'never'
    let needsApproval: boolean
    if (approval === 'always') needsApproval = true
    else if (approval === 'never') needsApproval = false
    else {
      try {
        needsApproval = (await approval(args, this.#policyContext(call.id))) === true
      } catch (error) {
        this.#deps.logError(`approval policy of ${tool.name} threw`, error)
        return { kind: 'deny', reason: 'The approval policy failed.' }
      }
    }
    if (needsApproval) return { kind: 'interrupt', tool, args }
    return { kind: tool.kind === 'external' ? 'external' : 'execute', tool, args }
  }

  /** `undefined` when allowed, else the denial reason. A throwing policy denies (fail closed). */
  async #authorize(tool: ResolvedTool, args: unknown, toolCallId: string): Promise<string | undefined> {
    const authorize = tool.definition.authorize
    if (!authorize) return undefined
    try {
      return (await authorize(args, this.#policyContext(toolCallId))) === true ? undefined : 'Not authorized by policy.'
    } catch (error) {
      this.#deps.logError(`authorize of ${tool.name} threw`, error)
      return 'The authorization check failed.'
    }
  }

  #policyContext(toolCallId: string): PolicyContext {
    return {
      toolCallId,
      idempotencyKey: toolCallId,
      threadId: this.#plan.threadId,
      runId: this.#plan.runId,
      principal: this.#ownerPrincipal,
      state: structuredClone(this.state),
      signal: this.#deps.signal,
    }
  }

  /** The interrupt of an undecided call; its `expiresAt` is stamped once per batch. */
  #interruptFor(tool: ResolvedTool, record: ToolCallRecord, args: unknown): StoredInterrupt {
    const id = `int_${randomUUID()}`
    const human = tool.definition.human
    if (human) {
      return {
        kind: 'input',
        toolCallId: record.toolCallId,
        toolName: tool.name,
        interrupt: {
          id,
          reason: 'input_required',
          message: human.message(args),
          toolCallId: record.toolCallId,
          responseSchema: human.responseSchema,
          metadata: { toolName: tool.name },
        },
      }
    }
    const message = tool.definition.approvalMessage?.(args) ?? `Allow ${tool.name} with ${JSON.stringify(args)}?`
    return {
      kind: 'approval',
      toolCallId: record.toolCallId,
      toolName: tool.name,
      interrupt: {
        id,
        reason: 'tool_call',
        message,
        toolCallId: record.toolCallId,
        responseSchema: tool.approvalSchema,
        metadata: { toolName: tool.name, arguments: args, allowEdits: tool.definition.allowEdits === true },
      },
    }
  }

  /**
   * The checkpoint before a tool starts: a local cancel, then the effects ledger — one conditional
   * update that moves the call to `started` only once, only while this run is active and no
   * cancel was requested for it in the store (a cancel received by another replica).
   * `false`: already started elsewhere, must not run again.
   */
  async #beginEffect(record: ToolCallRecord): Promise<boolean> {
    const { store, now, signal } = this.#deps
    await this.#deps.checkpoint()
    if (signal.aborted) throw new RunCancelled()
    const begun = await store.beginEffect(record.threadId, record.toolCallId, this.#plan.runId, now())
    if (begun === 'cancel_requested') throw new RunCancelled()
    if (begun === 'not_active') throw new RunNotActiveError(record.threadId, this.#plan.runId)
    return begun === 'started'
  }

  async *#execute(tool: ResolvedTool, record: ToolCallRecord, args: unknown): AsyncGenerator<AgUiEvent> {
    if (!(await this.#beginEffect(record))) {
      yield* this.#settle(record, 'failed', {
        status: 'error',
        error: 'This call was already started; its outcome is unknown.',
      })
      return
    }
    const { context, nextState } = this.#toolContext(record.toolCallId)
    let value: unknown
    try {
      value = await tool.definition.execute!(args, context)
    } catch (error) {
      if (!InterludeError.isInstance(error)) this.#deps.logError(`tool ${tool.name} failed`, error)
      yield* this.#settle(record, 'failed', {
        status: 'error',
        error: publicMessage(error, `The tool ${tool.name} failed.`),
      })
      return
    }
    // The effect ran: whatever it handed back, the call is settled (never closed as "did not
    // run"). A result or state JSON cannot hold makes it a failed call the model can read; the
    // state change is then discarded.
    let content: string
    let state: unknown
    try {
      content = toolResultText(value)
    } catch (error) {
      this.#deps.logError(`tool ${tool.name} returned a value that is not JSON`, error)
      yield* this.#settle(record, 'failed', { status: 'error', error: NOT_JSON_RESULT })
      return
    }
    try {
      const next = nextState()
      state = next === undefined ? undefined : (JSON.parse(strictJson(next)) as unknown)
    } catch (error) {
      this.#deps.logError(`tool ${tool.name} set a state that is not JSON`, error)
      yield* this.#settle(record, 'failed', { status: 'error', error: NOT_JSON_STATE })
      return
    }
    yield* this.#settle(record, 'succeeded', content, state)
  }

  async *#dispatchExternal(tool: ResolvedTool, record: ToolCallRecord, args: unknown): AsyncGenerator<AgUiEvent> {
    const { store, now } = this.#deps
    if (!(await this.#beginEffect(record))) return
    const execute = tool.definition.execute
    if (execute) {
      const { context } = this.#toolContext(record.toolCallId)
      try {
        await execute(args, context)
      } catch (error) {
        if (!InterludeError.isInstance(error)) this.#deps.logError(`external tool ${tool.name} failed to start`, error)
        yield* this.#settle(record, 'failed', {
          status: 'error',
          error: publicMessage(error, `The tool ${tool.name} could not be started.`),
        })
        return
      }
    }
    await store.settleToolCall({
      threadId: record.threadId,
      runId: this.#plan.runId,
      toolCallId: record.toolCallId,
      status: 'awaiting_result',
      result: undefined,
      message: undefined,
      now: now(),
    })
    this.#calls.set(record.toolCallId, { ...record, status: 'awaiting_result' })
  }

  #toolContext(toolCallId: string): { context: ToolContext; nextState: () => unknown } {
    let state = structuredClone(this.state)
    let changed = false
    const context: ToolContext = {
      ...this.#policyContext(toolCallId),
      signal: this.#deps.toolSignal ?? this.#deps.signal,
      state,
      updateState: (update) => {
        state = update(state)
        changed = true
      },
    }
    return { context, nextState: () => (changed ? state : undefined) }
  }

  /** Writes the result (ledger + tool message + optional state, one transaction) and yields it. */
  async *#settle(
    record: ToolCallRecord,
    status: 'succeeded' | 'failed' | 'denied' | 'cancelled' | 'rejected',
    result: unknown,
    state?: unknown,
  ): AsyncGenerator<AgUiEvent> {
    const content = resultContent(result)
    const message: ToolMessage = { id: `msg_${randomUUID()}`, role: 'tool', toolCallId: record.toolCallId, content }
    await this.#deps.checkpoint()
    await this.#deps.store.settleToolCall({
      threadId: record.threadId,
      runId: this.#plan.runId,
      toolCallId: record.toolCallId,
      status,
      result: content,
      message,
      ...(state !== undefined ? { state } : {}),
      now: this.#deps.now(),
    })
    this.#calls.delete(record.toolCallId)
    this.messages.push(message)
    if (state !== undefined) {
      this.state = state
      this.#stateChanged = true
    }
    yield ev.toolResult(message.id, record.toolCallId, content)
  }
}

export type { BatchRecord }
