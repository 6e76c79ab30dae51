import { InterludeError } from '@interlude/protocol'
import type { PolicyContext, ResolvedTool, ToolContext } from '../../agent/tool.ts'
import { InterruptCancelledError } from '../../agent/tool-interrupt.ts'
import type { ToolInterruptRequest } from '../../agent/tool-interrupt.ts'
import { RunNotActiveError } from '../../store/store.ts'
import type { ToolCallRecord } from '../../store/store.ts'
import { publicMessage } from '../ev.ts'
import { RunCancelled } from '../run-cancelled.ts'
import type { RunWrites } from '../run-writes.ts'
import { parseJson, resultText, strictJson } from '../strict-json.ts'
import { clientThreadId } from '../../store/thread-key.ts'
import { AlreadyStartedError } from './tool-asks.ts'
import type { AskRequest, AskSession } from './tool-asks.ts'

const NOT_JSON_RESULT = 'Tool returned a value that is not JSON.'
const NOT_JSON_STATE = 'Tool set a state that is not JSON.'

/** What a call whose effect was attempted is settled with (`cancelled`: its question was cancelled, uncaught). */
export interface EffectOutcome {
  readonly status: 'succeeded' | 'failed' | 'cancelled'
  readonly result: unknown
  readonly state?: unknown
}

/** The tool asked past its answers: the turn pauses with these questions (docs/approvals.md#asking-from-inside-a-tool). */
export interface AskedOutcome {
  readonly status: 'asked'
  readonly requests: readonly AskRequest[]
  /**
   * A subagent's state changes so far (its tools that ran before it asked are never run again, so their changes are
   * committed with the pause); a plain tool's changes before a question are discarded (it runs again).
   */
  readonly state?: unknown
}

const ALREADY_STARTED: EffectOutcome = {
  status: 'failed',
  result: { status: 'error', error: 'This call was already started; its outcome is unknown.' },
}

/** The result of a call whose question was cancelled and which did not catch `InterruptCancelledError`. */
export const QUESTION_CANCELLED = {
  status: 'cancelled',
  message: 'The person cancelled the question this tool asked; the tool stopped without finishing.',
}

/** The context a tool runs with, and the state it set (`undefined`: unchanged). */
export interface ToolInvocation {
  readonly context: ToolContext
  readonly nextState: () => unknown
}

/**
 * The context a tool runs with: the policy context (which carries a private copy of the state)
 * plus `updateState` on that copy, the signal tools see, and for a subagent tool `runSubagent`.
 */
export function toolInvocation(
  policy: PolicyContext,
  signal: AbortSignal,
  asks?: AskSession,
  subagent?: (args: unknown, context: ToolContext) => Promise<unknown>,
): ToolInvocation {
  let state = policy.state
  let changed = false
  const context: ToolContext = {
    ...policy,
    signal,
    updateState: (update) => {
      state = update(state)
      changed = true
    },
    interrupt: async <T>(request: ToolInterruptRequest): Promise<T> => {
      if (!asks) throw new TypeError('ctx.interrupt is only available while a server tool executes.')
      const answer = await asks.interrupt(request)
      if (answer.status === 'cancelled') throw new InterruptCancelledError(answer.interruptId)
      return answer.payload as T
    },
    step: async <T>(name: string, fn: () => T | Promise<T>): Promise<T> => {
      if (!asks) throw new TypeError('ctx.step is only available while a server tool executes.')
      return (await asks.step(name, fn, () => (changed ? { value: state } : undefined))) as T
    },
    ...(subagent ? { runSubagent: (args: unknown) => subagent(args, context) } : {}),
  }
  return { context, nextState: () => (changed ? state : undefined) }
}

export interface EffectsLedgerDeps {
  readonly writes: RunWrites
  readonly threadId: string
  readonly runId: string
  /** Cancel or shutdown: checked right before the claim. */
  readonly signal: AbortSignal
  readonly logError: (message: string, error: unknown) => void
}

/**
 * The effects ledger (docs/architecture.md): a tool's effect runs at most once, whatever crashes,
 * replicas or retries do. The claim is one conditional write; once it succeeded, the call always
 * ends settled with what the tool did — never closed as "did not run".
 */
export class EffectsLedger {
  readonly #d: EffectsLedgerDeps

  constructor(deps: EffectsLedgerDeps) {
    this.#d = deps
  }

  /**
   * The stop point before a tool starts: a local cancel, then the claim — moves the call to
   * `started` only once, only while this run is active and no cancel was requested for it in the
   * store (a cancel received by another replica). `false`: already started elsewhere, must not run again.
   */
  async claim(toolCallId: string): Promise<boolean> {
    const { writes, signal, threadId, runId } = this.#d
    const begun = await writes.beginEffect(toolCallId, () => {
      if (signal.aborted) throw new RunCancelled()
    })
    if (begun === 'cancel_requested') throw new RunCancelled()
    if (begun === 'not_active') throw new RunNotActiveError(threadId, runId)
    return begun === 'started'
  }

  /** Claims and runs a server tool. A result or state JSON cannot hold is a failed call the model can read. */
  async execute(
    tool: ResolvedTool,
    toolCallId: string,
    args: unknown,
    invocation: () => ToolInvocation,
    asks?: AskSession,
  ): Promise<EffectOutcome | AskedOutcome> {
    const { logError } = this.#d
    // docs/approvals.md#asking-from-inside-a-tool: claimed here unless the call replays answers first.
    if (!asks || asks.claimsAtStart) {
      if (!(await this.claim(toolCallId))) return ALREADY_STARTED
      asks?.markClaimed()
    }
    const { context, nextState } = invocation()
    let value: unknown
    try {
      value = await tool.definition.execute!(args, context)
    } catch (error) {
      const settled = this.#afterAsking(tool, asks, nextState)
      if (settled) return settled
      if (InterruptCancelledError.isInstance(error)) return { status: 'cancelled', result: QUESTION_CANCELLED }
      if (!InterludeError.isInstance(error)) logError(`tool ${tool.name} failed`, error)
      return {
        status: 'failed',
        result: { status: 'error', error: publicMessage(error, `The tool ${tool.name} failed.`) },
      }
    }
    // A tool that caught its own pause still pauses; one that did not reach its last answer is claimed now.
    const settled = this.#afterAsking(tool, asks, nextState)
    if (settled) return settled
    if (asks && !asks.claimed) {
      try {
        await asks.finish()
      } catch (error) {
        if (error instanceof AlreadyStartedError) return ALREADY_STARTED
        throw error
      }
    }
    // The effect ran: whatever it handed back, the call is settled. The state change of a call
    // whose result or state is not JSON is discarded.
    let content: string
    let state: unknown
    try {
      content = resultText(value)
    } catch (error) {
      logError(`tool ${tool.name} returned a value that is not JSON`, error)
      return { status: 'failed', result: { status: 'error', error: NOT_JSON_RESULT } }
    }
    try {
      const next = nextState()
      state = next === undefined ? undefined : (JSON.parse(strictJson(next)) as unknown)
    } catch (error) {
      logError(`tool ${tool.name} set a state that is not JSON`, error)
      return { status: 'failed', result: { status: 'error', error: NOT_JSON_STATE } }
    }
    return { status: 'succeeded', result: content, ...(state !== undefined ? { state } : {}) }
  }

  /** After `execute`: the questions it asked, or the claim failure it met (rethrown: cancel, fencing). */
  #afterAsking(
    tool: ResolvedTool,
    asks: AskSession | undefined,
    nextState: () => unknown,
  ): AskedOutcome | EffectOutcome | undefined {
    if (!asks) return undefined
    if (asks.fatal !== undefined) {
      if (asks.fatal instanceof AlreadyStartedError) return ALREADY_STARTED
      throw asks.fatal
    }
    if (asks.pending === undefined) return undefined
    if (!tool.subagent) return { status: 'asked', requests: asks.pending }
    const next = nextState()
    try {
      const state = next === undefined ? undefined : (JSON.parse(strictJson(next)) as unknown)
      return { status: 'asked', requests: asks.pending, ...(state !== undefined ? { state } : {}) }
    } catch (error) {
      this.#d.logError(`subagent ${tool.name} set a state that is not JSON`, error)
      return { status: 'asked', requests: asks.pending }
    }
  }

  /**
   * Claims and starts an external tool; its result arrives later by toolCallId (`awaiting_result`
   * is recorded here). `undefined`: already started elsewhere.
   */
  async dispatch(
    tool: ResolvedTool,
    toolCallId: string,
    args: unknown,
    invocation: () => ToolInvocation,
  ): Promise<EffectOutcome | 'awaiting_result' | undefined> {
    if (!(await this.claim(toolCallId))) return undefined
    const execute = tool.definition.execute
    if (execute) {
      try {
        await execute(args, invocation().context)
      } catch (error) {
        if (!InterludeError.isInstance(error)) this.#d.logError(`external tool ${tool.name} failed to start`, error)
        return {
          status: 'failed',
          result: { status: 'error', error: publicMessage(error, `The tool ${tool.name} could not be started.`) },
        }
      }
    }
    await this.#d.writes.settle({ toolCallId, status: 'awaiting_result', result: undefined, message: undefined })
    return 'awaiting_result'
  }
}

/** What an effect left `started` by a dead attempt is settled with (docs/architecture.md, "Durable continuation"). */
export interface UnsettledOutcome {
  readonly status: 'succeeded' | 'failed' | 'unknown'
  readonly result: unknown
  /** The state the tool's `reconcile` set (only with `succeeded`). */
  readonly state?: unknown
}

export const UNKNOWN_EFFECT =
  'The server stopped while this call was running. It may or may not have taken effect; it was not run again. Check before retrying.'

/**
 * An effect whose attempt died after the claim is never run again: the tool's optional `reconcile(toolCallId)` may
 * tell what happened; otherwise it is `unknown` with a result that says so (the model reads it).
 */
export async function settleUnsettled(
  tool: ResolvedTool | undefined,
  call: ToolCallRecord,
  context: { readonly threadId: string; readonly principal: string; readonly state: unknown },
  logError: (message: string, error: unknown) => void,
): Promise<UnsettledOutcome> {
  const unknown: UnsettledOutcome = { status: 'unknown', result: { status: 'unknown', error: UNKNOWN_EFFECT } }
  const reconcile = tool?.definition.reconcile
  if (!reconcile) return unknown
  let next = structuredClone(context.state)
  let changed = false
  const parsed = parseJson(call.argsText)
  try {
    const result = await reconcile(call.toolCallId, {
      toolCallId: call.toolCallId,
      idempotencyKey: call.toolCallId,
      threadId: clientThreadId(context.threadId),
      runId: call.attemptRunId ?? call.runId,
      principal: context.principal,
      requestedArgs: parsed.ok ? parsed.value : undefined,
      state: next,
      updateState: (update) => {
        next = update(next)
        changed = true
      },
    })
    if (!result || (result.status !== 'succeeded' && result.status !== 'failed')) return unknown
    const value =
      result.status === 'succeeded' ? result.result : (result.result ?? { status: 'error', error: 'The call failed.' })
    // What reconcile hands back must be JSON, like any tool result.
    resultText(value)
    const state = changed && result.status === 'succeeded' ? (JSON.parse(strictJson(next)) as unknown) : undefined
    return { status: result.status, result: value, ...(state !== undefined ? { state } : {}) }
  } catch (error) {
    logError(`reconcile of ${call.toolName} (${call.toolCallId}) threw`, error)
    return unknown
  }
}
