import type { JsonSchema } from '../../schema/json-schema.ts'
import { isToolInterruptReason } from '../../agent/tool-interrupt.ts'
import type { ToolInterruptRequest } from '../../agent/tool-interrupt.ts'
import type { ValidatorCache } from '../../schema/validator-cache.ts'
import { remoteRefs } from '../../schema/validator-cache.ts'
import { parseJson, strictJson } from '../strict-json.ts'

/**
 * Asking from inside a tool (docs/approvals.md#asking-from-inside-a-tool): the answers a call received, the session
 * that hands them back in order when `execute` runs again, and the rule of when its effect counts as started.
 */

/** One answer of a call's question, in the order the questions were asked. */
export interface ToolAnswer {
  readonly interruptId: string
  readonly status: 'resolved' | 'cancelled'
  readonly payload?: unknown
}

/** What the store keeps of a call that asked (`Store.saveToolCheckpoint`). */
export interface ToolCheckpoint {
  /** The arguments `execute` runs with (an approval may have edited them). */
  readonly args?: unknown
  /** The arguments came from an approval's `editedArgs` (the result says so, docs/approvals.md#edited-arguments). */
  readonly edited?: boolean
  readonly answers: readonly ToolAnswer[]
  /** The stored results of the call's `ctx.step`s: by name, one per occurrence (docs/approvals.md#memoised-steps). */
  readonly steps?: Readonly<Record<string, readonly StepResult[]>>
  /** A subagent tool's progress (`core/turn/subagent-run.ts`). */
  readonly subagent?: unknown
}

/** One stored step result (wrapped, so `null` is a result like any other). */
export interface StepResult {
  readonly value: unknown
}

export const EMPTY_CHECKPOINT: ToolCheckpoint = { answers: [] }

export function parseCheckpoint(json: string | undefined): ToolCheckpoint {
  if (json === undefined) return EMPTY_CHECKPOINT
  const parsed = parseJson(json)
  const value = parsed.ok ? (parsed.value as Partial<ToolCheckpoint> | null) : null
  return value && Array.isArray(value.answers) ? (value as ToolCheckpoint) : EMPTY_CHECKPOINT
}

/** A question as the turn turns it into an interrupt (a subagent's approvals carry their subagent run). */
export interface AskRequest {
  /** The interrupt id, when the asker names it first (a subagent shows it in its own `RUN_FINISHED`). */
  readonly id?: string
  /** The call the interrupt names; default the asking call (a subagent names its own call). */
  readonly toolCallId?: string
  readonly reason: string
  readonly message: string
  readonly responseSchema: JsonSchema
  readonly metadata?: Record<string, unknown>
  readonly subagentRunId?: string
}

/** Unwinds a tool's `execute` when it asks past its stored answers; the turn pauses with `AskSession.pending`. */
export class ToolPaused extends Error {
  constructor() {
    super('The tool is waiting for an answer.')
    this.name = 'ToolPaused'
  }
}

/** The ledger refused the claim: the call was started by another attempt and must not run again. */
export class AlreadyStartedError extends Error {
  constructor() {
    super('This call was already started.')
    this.name = 'AlreadyStartedError'
  }
}

export interface AskSessionDeps {
  readonly checkpoint: ToolCheckpoint
  /** The effects ledger's claim of this call (`EffectsLedger.claim`). */
  readonly claim: () => Promise<boolean>
  /**
   * Stores the checkpoint (fenced), with the state the tool changed so far when given (one write); used for a
   * subagent's progress and for steps.
   */
  readonly save: (checkpoint: ToolCheckpoint, state?: { readonly value: unknown }) => Promise<void>
  readonly validators: ValidatorCache
}

/**
 * One execution of one call. **The started rule:** a call's effect counts as started (the ledger's claim) from the
 * point where `execute` has consumed every answer it has: before `execute` for a call without answers (every tool,
 * as without questions), else inside the `ctx.interrupt` that returns the last stored answer. Before that point the
 * tool is only replaying questions it already asked: a crash there leaves the call not started and it runs again;
 * after it, a crash leaves the call `started` and it becomes `unknown` (or `reconcile` settles it), never re-run.
 * When the tool asks a new question the claim is released (`awaiting_decision`) with the batch.
 */
export class AskSession {
  readonly #d: AskSessionDeps
  #checkpoint: ToolCheckpoint
  #next = 0
  #claimed = false
  /** Occurrences of each step name in this execution. */
  readonly #steps = new Map<string, number>()
  /** The questions the tool asked past its answers: the turn pauses with them. */
  pending: readonly AskRequest[] | undefined
  /** A failure of the claim inside `ctx.interrupt` (cancel, fencing, already started): rethrown after `execute`. */
  fatal: unknown

  constructor(deps: AskSessionDeps) {
    this.#d = deps
    this.#checkpoint = deps.checkpoint
  }

  /** The call is claimed before `execute` only when it has no answers yet. */
  get claimsAtStart(): boolean {
    return this.#checkpoint.answers.length === 0
  }

  get claimed(): boolean {
    return this.#claimed
  }

  get checkpoint(): ToolCheckpoint {
    return this.#checkpoint
  }

  markClaimed(): void {
    this.#claimed = true
  }

  /** Answers handed out so far. */
  get used(): number {
    return this.#next
  }

  /** Moves past answers a stored checkpoint already consumed (a subagent's finished rounds). */
  skip(count: number): void {
    this.#next = Math.min(Math.max(this.#next, count), this.#checkpoint.answers.length)
  }

  /** Hands back the next stored answers, or records the questions and unwinds `execute` (`ToolPaused`). */
  async ask(requests: readonly AskRequest[]): Promise<readonly ToolAnswer[]> {
    // The tool caught the pause (or a failed claim) and asked again: it stays paused.
    if (this.pending !== undefined || this.fatal !== undefined) throw new ToolPaused()
    const answers = this.#checkpoint.answers
    if (this.#next + requests.length <= answers.length) {
      const got = answers.slice(this.#next, this.#next + requests.length)
      this.#next += requests.length
      if (this.#next === answers.length && !this.#claimed) await this.#claim()
      return got
    }
    this.pending = requests
    throw new ToolPaused()
  }

  /** `ctx.interrupt`: one question, its answer's payload (or `InterruptCancelledError`, thrown by the caller). */
  async interrupt(request: ToolInterruptRequest): Promise<ToolAnswer> {
    const [answer] = await this.ask([checkedRequest(request, this.#d.validators)])
    return answer!
  }

  /** At the end of `execute`: a tool that did not reach its last stored answer is claimed now. */
  async finish(): Promise<void> {
    if (!this.#claimed) await this.#claim()
  }

  /**
   * `ctx.step` (docs/approvals.md#memoised-steps): the stored result of this occurrence of `name`, or `fn`'s result,
   * stored (with the state the tool changed so far, `state()`) before it is returned. A step after the tool asked
   * past its answers does not run: the tool is unwinding.
   */
  async step(name: string, fn: () => unknown, state: () => { readonly value: unknown } | undefined): Promise<unknown> {
    if (typeof name !== 'string' || name.length === 0 || name.length > 200)
      throw new TypeError('ctx.step: name must be a string of 1 to 200 characters.')
    if (typeof fn !== 'function') throw new TypeError('ctx.step: fn must be a function.')
    if (this.pending !== undefined || this.fatal !== undefined) throw new ToolPaused()
    const occurrence = this.#steps.get(name) ?? 0
    this.#steps.set(name, occurrence + 1)
    const stored = this.#checkpoint.steps?.[name]?.[occurrence]
    if (stored !== undefined) return structuredClone(stored.value)
    const produced = await fn()
    let value: unknown
    try {
      value = JSON.parse(strictJson(produced === undefined ? null : produced)) as unknown
    } catch (error) {
      throw new TypeError(`ctx.step: the result of "${name}" is not JSON.`, { cause: error })
    }
    const list = this.#checkpoint.steps?.[name] ?? []
    const next: ToolCheckpoint = {
      ...this.#checkpoint,
      steps: { ...this.#checkpoint.steps, [name]: [...list.slice(0, occurrence), { value }] },
    }
    await this.#d.save(next, state())
    this.#checkpoint = next
    return structuredClone(value)
  }

  /** Stores a subagent's progress with the answers so far. */
  async saveSubagent(progress: unknown): Promise<void> {
    const next = { ...this.#checkpoint, subagent: progress }
    await this.#d.save(next)
    this.#checkpoint = next
  }

  async #claim(): Promise<void> {
    try {
      if (!(await this.#d.claim())) throw new AlreadyStartedError()
    } catch (error) {
      this.fatal = error
      throw error
    }
    this.#claimed = true
  }
}

/** A `ctx.interrupt` request as the tool wrote it, checked: a bad one fails the tool (a programming error). */
function checkedRequest(request: ToolInterruptRequest, validators: ValidatorCache): AskRequest {
  const reason = request.reason ?? 'confirmation'
  if (!isToolInterruptReason(reason))
    throw new TypeError('ctx.interrupt: reason must be "confirmation", "input_required" or "interlude:<name>".')
  if (typeof request.message !== 'string' || request.message.length === 0)
    throw new TypeError('ctx.interrupt: message must be a non-empty string.')
  const schema = request.responseSchema
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    throw new TypeError('ctx.interrupt: responseSchema must be a JSON Schema object.')
  if (remoteRefs(schema).length > 0) throw new TypeError('ctx.interrupt: responseSchema may use local $refs only.')
  // Compiled now: the answer is checked with it at admission, so it must compile.
  validators.compile(schema)
  const metadata = request.metadata
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)))
    throw new TypeError('ctx.interrupt: metadata must be an object.')
  return { reason, message: request.message, responseSchema: schema, ...(metadata ? { metadata } : {}) }
}
