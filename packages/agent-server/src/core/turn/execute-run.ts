import type { RuleMakerCheck } from '../tools/permission-rules.ts'
import { InterludeError, RUN_ERROR_CODES } from '@interlude/protocol'
import type { AgUiEvent, ExpiryPolicy } from '@interlude/protocol'
import type { ResolvedAgent } from '../../agent/agent.ts'
import type { Clock } from '../../clock.ts'
import type { ValidatorCache } from '../../schema/validator-cache.ts'
import { RunNotActiveError } from '../../store/store.ts'
import type { Store, StoredEvent } from '../../store/store.ts'
import type { OpenBatchCache } from '../open-batch-cache.ts'
import type { WebhookOutbox } from '../../webhooks/webhook-outbox.ts'
import { earlierVotes } from '../decision-record.ts'
import { ev } from '../ev.ts'
import { modelEvents } from './model-events.ts'
import type { HistoryLimits } from './model-window.ts'
import { RunCancelled } from '../run-cancelled.ts'
import type { RunPlan } from '../run-plan.ts'
import { handleLeftCalls, settleUnsettledEffects } from './continuation-step.ts'
import { callModel, recordAnswer } from './model-step.ts'
import { applyDecisions } from './resume-step.ts'
import { runReleasedHeld } from './held-calls.ts'
import { handleToolCalls, storeBatch } from './tool-step.ts'
import { checkBudget } from './budget-step.ts'
import { joinSteers } from './steer-step.ts'
import { guardInput, guardOutput } from './guardrail-step.ts'
import { applyTurnDecision } from './turn-decisions.ts'
import { Turn } from './turn-state.ts'
import type { Step } from './turn-state.ts'
import type { UsageOptions } from '../../config/server-options.ts'
import { describeThread } from '../../store/thread-key.ts'

/** What the execution core needs from the server. */
export interface ExecutionDeps {
  readonly agent: ResolvedAgent
  readonly store: Store
  readonly validators: ValidatorCache
  readonly now: Clock
  readonly interruptTtlMs: number
  /** The server-wide expiry policy (docs/approvals.md#deadlines); `undefined`: by kind. */
  readonly onExpiry?: ExpiryPolicy | undefined
  readonly maxInterruptsPerBatch: number
  /**
   * Aborted by an explicit cancel or a server shutdown — never by a dropped connection. Checked at
   * the stop points: before each model call, before each model chunk, before a tool starts.
   */
  readonly signal: AbortSignal
  /** What tools see as `ctx.signal`: aborted only at server shutdown (a cancel waits for a running tool). */
  readonly toolSignal?: AbortSignal
  /** Makes every event yielded so far durable; awaited before each row the run writes (see `RunWrites`). */
  readonly persistEmitted: () => Promise<void>
  readonly logError: (message: string, error: unknown) => void
  /** Webhook rows for the batches the run opens (docs/approvals.md, "Webhooks"). */
  readonly webhooks?: WebhookOutbox
  /** Told of each batch the run opens, so its resume is admitted with one statement (`open-batch-cache.ts`). */
  readonly openBatches?: OpenBatchCache
  /** Thread cap, model window and pause snapshot bounds (docs/decisions.md#bounded-histories, `config/limits.ts`). */
  readonly history?: Partial<HistoryLimits>
  /** Token caps and the usage hook (docs/decisions.md#the-model-boundary, docs/protocol.md#token-usage). */
  readonly usage?: UsageOptions
  /**
   * Tool-call arguments larger than this are rejected and stored as a short placeholder (`Limits.maxToolArgumentBytes`,
   * default in `config/limits.ts`).
   */
  readonly maxToolArgumentBytes: number
  /** Whether a remembered rule's maker may still decide the call it would approve (checked at use). */
  readonly ruleMakerMayDecide?: RuleMakerCheck
  /** Announces events the store wrote for the run outside the log writer (steers taken, `steer-step.ts`). */
  readonly publish?: (events: readonly StoredEvent[]) => void
}

/**
 * The execution core: one run as an async sequence of AG-UI events (docs/architecture.md). RUN_STARTED first,
 * exactly one terminal event (RUN_FINISHED or RUN_ERROR) last. The ReAct loop: model call → tool
 * calls → tool results → model, until the model answers without tools, a person must decide, a
 * browser/external result is awaited, or a budget is reached (docs/guardrails.md#budgets). The SSE route, the replay
 * route and tests consume the same sequence (through the run manager's log). The steps live beside it: resume
 * (`resume-step.ts`), continuation (`continuation-step.ts`), model (`model-step.ts`) and tools (`tool-step.ts`).
 */
export async function* executeRun(plan: RunPlan, deps: ExecutionDeps): AsyncGenerator<AgUiEvent, void, undefined> {
  const { threadId, runId } = plan
  const continuation = plan.continuation
  // A continuation goes on in the same run's log: what its dead attempt already wrote is not repeated, only what it
  // left open is closed (docs/architecture.md, "Durable continuation").
  if (continuation) yield* continuation.prefix
  else yield ev.runStarted(threadId, runId)
  const turn = new Turn(plan, deps)

  /**
   * After a step: the state if it changed, and for a pause the state, the pause snapshot and the RUN_FINISHED that
   * carries the batch. `true`: the run ended paused.
   */
  async function* paused(step: Step | undefined): AsyncGenerator<AgUiEvent, boolean, undefined> {
    if (turn.takeStateChange() || step?.kind === 'interrupt') yield ev.stateSnapshot(turn.state)
    if (step?.kind !== 'interrupt') return false
    // Bounded: the whole history of a small thread, nothing above `pauseSnapshotMaxBytes` (docs/protocol.md).
    const snapshot = turn.pauseSnapshot()
    if (snapshot !== undefined) yield ev.messagesSnapshot(snapshot)
    yield ev.runFinished(threadId, runId, { type: 'interrupt', interrupts: step.interrupts })
    return true
  }

  try {
    if (plan.kind === 'resume' && !continuation) {
      // Who decided, right after RUN_STARTED: in the log, so every replay and follower sees it — under a policy, the
      // votes (and escalation) that came before the deciding one too (docs/approvals.md#organisation-policies).
      const record = await deps.store.getDecision(threadId, runId)
      if (record?.vote) for (const earlier of await earlierVotes(deps.store, record)) yield ev.decision(earlier)
      if (record) yield ev.decision(record)
    }
    await turn.load()
    // docs/guardrails.md: a withheld answer, a stopped user message or a reached budget is decided here.
    const decided = plan.kind === 'resume' && !continuation ? yield* applyTurnDecision(turn, plan) : undefined
    if (decided === 'ended') return
    if (decided === undefined && (yield* resumed(turn, paused))) return
    if (plan.kind === 'input' && !continuation && (yield* paused(yield* guardInput(turn)))) return
    for (;;) {
      if (deps.signal.aborted) throw new RunCancelled()
      // Messages steered into the running turn join it before the model request (docs/protocol.md#multitask).
      const steered = yield* joinSteers(turn)
      if (typeof steered === 'object' && (yield* paused(steered))) return
      const budget = yield* checkBudget(turn)
      if (budget === 'ended' || (yield* paused(budget))) return
      const call = callModel(turn)
      const response = yield* modelEvents(call.stream, call.options)
      if (response.calls.length === 0) {
        const output = yield* guardOutput(turn, response)
        if (output === 'retry') continue
        if (yield* paused(output === 'pass' ? undefined : output)) return
        await recordAnswer(turn, response)
        // A steer that arrived while the answer streamed is answered in this turn, by one more model request.
        const late = yield* joinSteers(turn)
        if (late === 'joined') continue
        if (typeof late === 'object' && (yield* paused(late))) return
        yield ev.runFinished(threadId, runId, { type: 'success' })
        return
      }
      const step = yield* handleToolCalls(turn, response)
      if (yield* paused(step)) return
      if (step.kind === 'waiting') {
        yield ev.runFinished(threadId, runId, { type: 'success', pendingToolCallIds: turn.awaitingResults() })
        return
      }
    }
  } catch (error) {
    // Fenced: another process closed this run; write nothing more.
    if (error instanceof RunNotActiveError) throw error
    // Graceful shutdown past its grace: stop here, write nothing more; the lease is released and the turn is
    // continued elsewhere (docs/architecture.md, "Shutdown").
    if (error instanceof RunCancelled && deps.signal.reason === 'handover') throw error
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
      deps.logError(`run ${describeThread(threadId)}/${runId}: could not close open calls`, closeError)
    }
    // Unknown errors become INTERNAL with a generic message; the raw text only goes to the log.
    const failure = InterludeError.fromUnknown(error)
    if (!InterludeError.isInstance(error) || failure.code === 'INTERNAL' || failure.code === 'MODEL_ERROR') {
      deps.logError(`run ${describeThread(threadId)}/${runId} failed`, error)
    }
    const code = (RUN_ERROR_CODES as readonly string[]).includes(failure.code) ? failure.code : 'RUN_FAILED'
    // Typed details of a model failure or a usage cap (docs/decisions.md#the-model-boundary): kinds and numbers only, no upstream text.
    const details = code === 'MODEL_ERROR' || code === 'USAGE_LIMIT_EXCEEDED' ? failure.details : undefined
    yield ev.runError(code, failure.message, details)
  }
}

type Paused = (step: Step | undefined) => AsyncGenerator<AgUiEvent, boolean, undefined>

/**
 * Where a resumed or continued run stands before the model loop: the decisions carried out, what a dead attempt left
 * settled or run, and whether the turn already ended. `true`: the run finished here (paused or not).
 */
async function* resumed(turn: Turn, paused: Paused): AsyncGenerator<AgUiEvent, boolean, undefined> {
  const { plan } = turn
  const { threadId, runId, continuation } = plan
  if (continuation) {
    yield* settleUnsettledEffects(turn)
    yield* paused(undefined)
  }
  // A tool that asked from inside `execute` may ask again (docs/approvals.md#asking-from-inside-a-tool).
  if (plan.kind === 'resume' && (yield* paused(yield* applyDecisions(turn, plan)))) return true
  if (continuation) {
    if (yield* paused(yield* handleLeftCalls(turn))) return true
    if (turn.answered()) {
      yield ev.runFinished(threadId, runId, { type: 'success' })
      return true
    }
  }
  // Free calls held while their response waited for browser or external results run once the last one arrived.
  if (plan.kind === 'input') {
    yield* runReleasedHeld(turn)
    if (turn.asked.length > 0 && (yield* paused(await storeBatch(turn, [])))) return true
  }
  const awaited = turn.awaitingResults()
  if (awaited.length > 0) {
    yield ev.runFinished(threadId, runId, { type: 'success', pendingToolCallIds: awaited })
    return true
  }
  // docs/architecture.md: if every entry of a batch is cancelled, the turn ends without another model call.
  if (plan.kind === 'resume' && plan.allCancelled) {
    yield ev.runFinished(threadId, runId, { type: 'success' })
    return true
  }
  return false
}
