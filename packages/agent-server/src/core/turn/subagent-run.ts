import { randomUUID } from 'node:crypto'
import { EventType, SUBAGENT_EVENT_NAME } from '@interlude/protocol'
import type { AgUiEvent, AssistantMessage, Message, SubagentEventValue } from '@interlude/protocol'
import type { ResolvedAgent } from '../../agent/agent.ts'
import type { SubagentSpec } from '../../agent/subagent-tool.ts'
import type { ResolvedTool, ToolContext } from '../../agent/tool.ts'
import type { ValidatorCache } from '../../schema/validator-cache.ts'
import { ev, publicMessage, toolResult } from '../ev.ts'
import { approvedCall, type ApprovalPayload } from '../tools/approved-call.ts'
import { editedResult } from '../tools/edited-result.ts'
import { interruptRequest } from '../tools/interrupts.ts'
import type { SubagentRunner } from '../tools/server-tool-run.ts'
import type { AskRequest, AskSession, ToolAnswer } from '../tools/tool-asks.ts'
import { ToolPaused } from '../tools/tool-asks.ts'
import { classifyCall } from '../tools/tool-verdicts.ts'
import type { VerdictContext } from '../tools/tool-verdicts.ts'
import { assistantMessage, modelEvents, modelTools } from './model-events.ts'
import { preview, runSubagentTool } from './subagent-tool-call.ts'

/**
 * Subagents (docs/approvals.md#subagents, docs/protocol.md#subagents): an agent used as a tool of another agent. The
 * turn offers a subagent tool's own model/tool loop to its `execute` (`ctx.runSubagent`); it pauses through the parent call's
 * `ctx.interrupt` machinery (`AskSession`): its approvals and questions carry `subagentRunId` and
 * `metadata.subagent`, surface in the parent's batch, and their answers come back to this call when it runs again.
 * Its progress (its private messages) is the call's checkpoint: a re-execution continues from it and never calls the
 * model again for steps it finished. Its events reach the parent's stream as `CUSTOM interlude.subagent`.
 */

/** What a subagent run uses of the parent's turn. */
interface SubagentRuntime {
  /** The subagent, resolved with the parent at startup. */
  readonly agent: ResolvedAgent
  readonly asks: AskSession
  /** Into the parent run's stream (persisted with the run's log). */
  readonly emit: (event: AgUiEvent) => void
  readonly validators: ValidatorCache
  /** Cancel or shutdown of the parent run: the subagent's model calls stop. */
  readonly signal: AbortSignal
  readonly logError: (message: string, error: unknown) => void
}

/** The subagent's progress as the parent call's checkpoint keeps it. */
interface Progress {
  readonly messages: readonly Message[]
  readonly modelCalls: number
  /** Answers of the parent call's questions the steps in `messages` consumed. */
  readonly answersUsed: number
}

/** A call of the subagent that waits for a person. */
interface Waiting {
  readonly callId: string
  readonly tool: ResolvedTool
  readonly args: unknown
  readonly request: AskRequest
}

function subagentRunIdOf(parentToolCallId: string): string {
  return `subrun_${parentToolCallId}`
}

/**
 * How the turn runs a subagent tool's agent (`tool.subagent`, set by `defineSubagentTool`): with the parent call's
 * context and question session, its events into the parent's stream.
 */
export function subagentRunner(
  tool: ResolvedTool,
  signal: AbortSignal,
  validators: ValidatorCache,
  logError: (message: string, error: unknown) => void,
): SubagentRunner {
  const spec = tool.definition.subagent
  const agent = tool.subagent
  if (!spec || !agent) throw new TypeError(`The tool "${tool.name}" is not a subagent tool.`)
  return (args, ctx, asks, emit) =>
    new SubagentRun(spec, tool.name, { agent, asks, emit, validators, signal, logError }, ctx).execute(args)
}

class SubagentRun {
  readonly #spec: SubagentSpec
  readonly #name: string
  readonly #rt: SubagentRuntime
  readonly #ctx: ToolContext
  readonly #runId: string
  readonly #verdicts: VerdictContext
  /** The progress as last stored (a round is stored before it asks, only if something changed). */
  #saved: Progress | undefined

  constructor(spec: SubagentSpec, name: string, runtime: SubagentRuntime, ctx: ToolContext) {
    this.#spec = spec
    this.#name = name
    this.#rt = runtime
    this.#ctx = ctx
    this.#runId = subagentRunIdOf(ctx.toolCallId)
    this.#verdicts = {
      tools: runtime.agent.tools,
      clientTools: [],
      validators: runtime.validators,
      policyContext: (toolCallId) => ({
        toolCallId,
        idempotencyKey: this.#key(toolCallId),
        threadId: ctx.threadId,
        runId: ctx.runId,
        principal: ctx.principal,
        state: structuredClone(ctx.state),
        signal: ctx.signal,
      }),
      logError: runtime.logError,
    }
  }

  async execute(args: unknown): Promise<unknown> {
    const saved = this.#rt.asks.checkpoint.subagent as Progress | undefined
    this.#saved = saved
    let progress: Progress = saved ?? {
      messages: [{ id: `msg_${randomUUID()}`, role: 'user', content: this.#spec.input(args) }],
      modelCalls: 0,
      answersUsed: 0,
    }
    // Answers of rounds the checkpoint already holds are not handed out again.
    this.#rt.asks.skip(progress.answersUsed)
    this.#emit(ev.runStarted(this.#ctx.threadId, this.#runId))
    try {
      for (;;) {
        const last = progress.messages[progress.messages.length - 1]!
        // The model's last response, with calls still open (some may have results already, stored before a pause).
        const response = progress.messages.findLast((m): m is AssistantMessage => m.role === 'assistant')
        if (response && this.#open(progress, response).length > 0) {
          progress = await this.#handleCalls(progress, response)
          continue
        }
        if (last.role === 'assistant' && (last.toolCalls?.length ?? 0) === 0) {
          this.#emit(ev.runFinished(this.#ctx.threadId, this.#runId, { type: 'success' }))
          const answer = typeof last.content === 'string' ? last.content : ''
          return this.#spec.result ? this.#spec.result(answer) : answer
        }
        if (progress.modelCalls >= this.#rt.agent.maxIterations)
          throw new Error(
            `The subagent ${this.#name} stopped after ${progress.modelCalls} model calls without finishing.`,
          )
        progress = await this.#callModel(progress)
      }
    } catch (error) {
      if (error instanceof ToolPaused && this.#rt.asks.pending !== undefined) {
        const interrupts = this.#rt.asks.pending.map(preview)
        this.#emit(ev.runFinished(this.#ctx.threadId, this.#runId, { type: 'interrupt', interrupts }))
      } else if (!(error instanceof ToolPaused)) {
        this.#emit(ev.runError('RUN_FAILED', publicMessage(error, `The subagent ${this.#name} failed.`)))
      }
      throw error
    }
  }

  /** The subagent's calls in `assistant` without a result yet. */
  #open(progress: Progress, assistant: AssistantMessage): NonNullable<AssistantMessage['toolCalls']> {
    const answered = new Set(progress.messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])))
    return (assistant.toolCalls ?? []).filter((c) => !answered.has(c.id))
  }

  async #callModel(progress: Progress): Promise<Progress> {
    const agent = this.#rt.agent
    const known = new Set(
      progress.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : [])).map((c) => c.id),
    )
    const stream = agent.model.stream({
      systemPrompt: agent.definition.systemPrompt,
      messages: progress.messages,
      tools: modelTools(agent, []),
      context: [],
      state: this.#ctx.state,
      signal: this.#rt.signal,
    })
    const events = modelEvents(stream, {
      messageId: `msg_${randomUUID()}`,
      signal: this.#rt.signal,
      isTaken: (id) => known.has(id),
    })
    let step = await events.next()
    while (!step.done) {
      this.#emit(step.value)
      step = await events.next()
    }
    const message = assistantMessage(step.value)
    return { ...progress, messages: [...progress.messages, message], modelCalls: progress.modelCalls + 1 }
  }

  /**
   * Runs what needs no decision, then asks for the rest in one round (stored first, so a re-execution neither calls
   * the model nor runs those calls again) and carries the answers out.
   */
  async #handleCalls(progress: Progress, assistant: AssistantMessage): Promise<Progress> {
    const results: Message[] = []
    const waiting: Waiting[] = []
    for (const call of this.#open(progress, assistant)) {
      const verdict = await classifyCall(
        { id: call.id, name: call.function.name, argsText: call.function.arguments },
        this.#verdicts,
      )
      switch (verdict.kind) {
        case 'reject':
          results.push(this.#result(call.id, { status: 'error', error: verdict.error }))
          break
        case 'deny':
          results.push(this.#result(call.id, { status: 'denied', reason: verdict.reason }))
          break
        case 'client':
        case 'external':
          results.push(this.#result(call.id, { status: 'error', error: 'This tool cannot run inside a subagent.' }))
          break
        case 'execute':
          results.push(this.#result(call.id, await this.#execute(verdict.tool, call.id, verdict.args)))
          break
        case 'interrupt':
          waiting.push({
            callId: call.id,
            tool: verdict.tool,
            args: verdict.args,
            request: this.#request(verdict.tool, call.id, verdict.args),
          })
          break
      }
    }
    let next: Progress = { ...progress, messages: [...progress.messages, ...results] }
    if (waiting.length === 0) return next
    const round: Progress = { ...next, answersUsed: this.#rt.asks.used }
    const stored = this.#saved
    if (!stored || stored.messages.length !== round.messages.length || stored.answersUsed !== round.answersUsed) {
      await this.#rt.asks.saveSubagent(round)
      this.#saved = round
    }
    const answers = await this.#rt.asks.ask(waiting.map((w) => w.request))
    const decided: Message[] = []
    for (let i = 0; i < waiting.length; i++) decided.push(await this.#carryOut(waiting[i]!, answers[i]!))
    next = { ...next, messages: [...next.messages, ...decided], answersUsed: this.#rt.asks.used }
    return next
  }

  /** An answered approval or question of the subagent, carried out like the parent's (`resume-step.ts`). */
  async #carryOut(waiting: Waiting, answer: ToolAnswer): Promise<Message> {
    const { callId, tool } = waiting
    if (answer.status === 'cancelled')
      return this.#result(callId, { status: 'cancelled', message: 'The request was cancelled before a decision.' })
    if (tool.kind === 'human') return this.#result(callId, answer.payload ?? null)
    const call = { toolCallId: callId, toolName: tool.name }
    const approved = await approvedCall(
      call,
      tool,
      answer.payload as ApprovalPayload,
      () => waiting.args,
      this.#verdicts,
    )
    if (!approved.ok) return this.#result(callId, approved.result)
    const value = await this.#execute(tool, callId, approved.args)
    return this.#result(callId, approved.edited ? editedResult(approved.args, value) : value)
  }

  /** The interrupt request of a subagent call that needs a person: routed back here by the parent call. */
  #request(tool: ResolvedTool, callId: string, args: unknown): AskRequest {
    // A grant applies to the agent's own calls only (docs/approvals.md#bounded-grants): a subagent's approvals offer none.
    const request = interruptRequest(tool, callId, args, { grants: false })
    const subagent = { name: this.#name, toolCallId: this.#ctx.toolCallId }
    return { ...request, subagentRunId: this.#runId, metadata: { ...request.metadata, subagent } }
  }

  /** Runs one of the subagent's own tools; its state changes go to the parent call's state. */
  #execute(tool: ResolvedTool, callId: string, args: unknown): Promise<unknown> {
    return runSubagentTool(tool, callId, args, this.#ctx, this.#key(callId), this.#rt.logError)
  }

  #result(callId: string, value: unknown): Message {
    const settled = toolResult(callId, value)
    this.#emit(settled.event)
    return settled.message
  }

  #key(callId: string): string {
    return `${this.#runId}:${callId}`
  }

  #emit(event: AgUiEvent): void {
    const value: SubagentEventValue = {
      subagentRunId: this.#runId,
      agent: this.#name,
      parentToolCallId: this.#ctx.toolCallId,
      event,
    }
    this.#rt.emit({ type: EventType.CUSTOM, name: SUBAGENT_EVENT_NAME, value } as AgUiEvent)
  }
}
