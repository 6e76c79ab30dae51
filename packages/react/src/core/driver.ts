import type {
  AgUiEvent,
  AwaitingExternalCall,
  Interrupt,
  InterludeError,
  Message,
  RunAgentInput,
  RunFinishedEvent,
} from '@interlude/protocol'
import { errorFromFetch } from '@interlude/protocol'
import type { RunToolCalls, ToolCallRef } from './browser-tools.ts'
import { eligibleCalls, executeTool, offeredCalls, toolCallIdsOf } from './browser-tools.ts'
import { awaitingExternalCalls } from './external-calls.ts'
import { claimCalls, withClaim } from './tool-claims.ts'
import { clientError, isFatal, protocolViolation, runError } from './errors.ts'
import { LEGACY_INTERRUPT_EVENT, loadForeign, mayBeForeign } from './foreign-support.ts'
import { checkNotExpired } from './guards.ts'
import { idleWatchdog } from './idle-watchdog.ts'
import { sleep } from './sleep.ts'
import type { InteractionPlan } from './interaction-plan.ts'
import { buildInput } from './interaction-plan.ts'
import type { ResolvedOptions } from './options.ts'
import type { CoreState } from './reducer.ts'
import type { ServerFeatures } from './server-features.ts'
import { streamCut } from './server-features.ts'
import type { Transport, TransportEvent } from './transport.ts'
import type { ConnectionStatus, PendingToolCall } from './types.ts'

/**
 * The asynchronous half of the runtime: one logical interaction (send, resume, attach), its
 * transport attempts, acknowledgement, reconnects and browser-tool follow-ups. It changes state
 * only through its host, and every continuation checks `host.isCurrent(gen)` first, so a retired
 * or stopped interaction's late callbacks are no-ops.
 */

/** The settings the driver reads live (`updateOptions` may change them between attempts). */
export type DriverSettings = Pick<
  ResolvedOptions,
  'tools' | 'retry' | 'reconnect' | 'maxToolRoundtrips' | 'now' | 'generateId'
>

/** How the driver ends an interaction (a local stop is the runtime's own). */
export type Settlement =
  | {
      readonly outcome: 'success'
      readonly offered?: readonly PendingToolCall[]
      /** The run's pending calls that wait for another system (`awaitingExternal`). */
      readonly awaiting?: readonly AwaitingExternalCall[]
    }
  | { readonly outcome: 'cancelled' }
  | { readonly outcome: 'failed'; readonly error: InterludeError }
  | { readonly outcome: 'interrupt'; readonly interrupts: readonly Interrupt[] }

/** What the driver needs from the runtime. */
export interface DriverHost {
  settings(): DriverSettings
  /** This runtime's claim id for browser calls (one per tab). */
  claimId(): string
  /** Read live: `updateOptions` may swap the transport. */
  transport(): Transport
  /** Whether the server has Interlude's routes (reconnect needs its thread log). */
  features(): ServerFeatures
  isCurrent(gen: number): boolean
  /** The committed state. No side effects: buffered deltas are not in it until `flush()`. */
  read(): CoreState
  /** Commits buffered deltas now (before reading content they carry, such as tool arguments). */
  flush(): void
  /** Hands an event to the `onEvent` observer. */
  observe(gen: number, event: AgUiEvent, id: string | undefined, runId: string): void
  /** Buffers a content event for the next coalesced commit. */
  enqueue(gen: number, event: AgUiEvent, id: string | undefined): void
  // Lifecycle steps of the current run, each committed at once:
  connection(gen: number, connection: ConnectionStatus): void
  /** The matching RUN_STARTED (and its SSE id): buffered deltas commit first. */
  acknowledge(gen: number, runId: string, id: string | undefined): void
  /** Browser tools start: buffered deltas commit first. */
  toolsStarted(gen: number): void
  /** A follow-up run starts with the tool results appended to `messages`. */
  followUp(gen: number, runId: string, messages: readonly Message[]): void
  settle(gen: number, settlement: Settlement): void
}

const RETIRED = Symbol('retired')

/** One finished run as the driver saw it. */
interface RunResult {
  readonly finished: RunFinishedEvent
  readonly toolCalls: RunToolCalls
  /** The run was joined (`ALREADY_RESUMED`): another client started it, so its tools are not ours. */
  readonly joined: boolean
}

/** Commits the buffered deltas, then reads the state (where the driver reads content they carry). */
function flushAndRead(host: DriverHost): CoreState {
  host.flush()
  return host.read()
}

export async function driveInteraction(host: DriverHost, plan: InteractionPlan): Promise<void> {
  const { gen } = plan
  try {
    let runId =
      plan.kind === 'attach' ? plan.runId : plan.kind === 'settle' ? host.settings().generateId() : plan.input.runId
    let input = plan.kind === 'attach' || plan.kind === 'settle' ? undefined : plan.input
    if (plan.kind === 'resume' && plan.interrupts.some(mayBeForeign)) {
      // Answers to foreign bridges' interrupts go out in the shape their server takes.
      const { adaptResumeEntry } = await loadForeign()
      if (!host.isCurrent(gen)) return
      const resume = plan.input.resume?.map((e) =>
        adaptResumeEntry(
          plan.interrupts.find((i) => i.id === e.interruptId),
          e,
        ),
      )
      input = { ...plan.input, ...(resume ? { resume } : {}) }
    }
    let roundtrips = 0
    const results = async (calls: readonly ToolCallRef[], run = true) => {
      // Claimed before anything runs here: one tab runs a call, the others are refused (./tool-claims.ts).
      const ids = calls.map((c) => c.id)
      const claimId = await claimCalls(host.transport(), host.features(), plan.threadId, ids, host.claimId())
      if (!host.isCurrent(gen)) return false
      host.toolsStarted(gen)
      const answers = await Promise.all(calls.map((call) => executeTool(host, plan, runId, call, run)))
      if (!host.isCurrent(gen)) return false
      runId = host.settings().generateId()
      const messages = [...flushAndRead(host).messages, ...answers]
      host.followUp(gen, runId, messages)
      // Follow-ups never carry `resume`; the checkpoint is the current one plus the tool results.
      input = buildInput(plan.threadId, runId, messages, host.read().state, withClaim(plan.config, claimId))
      return true
    }
    if (plan.kind === 'settle') {
      // Another of the owner's clients may have settled them meanwhile: ask first, run nothing twice
      // that we can see (the server still admits only the first result set).
      if (host.features().available) {
        const { messages } = await host.transport().getThread(plan.threadId, { signal: plan.signal })
        const answered = toolCallIdsOf(messages.filter((m) => m.role === 'tool'))
        const taken = plan.calls.filter((c) => answered.has(c.toolCallId)).map((c) => c.toolCallId)
        if (taken.length > 0)
          throw clientError('TOOL_RESULTS_ALREADY_SUBMITTED', 'These browser tool calls already have a result.', {
            toolCallIds: taken,
          })
        if (!host.isCurrent(gen)) return
      }
      const tools = host.settings().tools
      const calls = plan.calls.map((c) => ({
        id: c.toolCallId,
        name: c.toolName,
        tool: tools.find((t) => t.name === c.toolName) ?? { name: c.toolName, description: '' },
      }))
      if (!(await results(calls, plan.run))) return
    }
    for (;;) {
      const run = await runOnce(host, plan, runId, input)
      if (run === RETIRED) return
      const outcome = run.finished.outcome ?? { type: 'success' as const }
      if (outcome.type === 'interrupt') {
        // Calls seen before a pause stay in history; none of them runs locally.
        // Foreign bridges' interrupts get a title and an answer schema (docs/decisions.md#foreign-servers).
        const foreign = outcome.interrupts.some(mayBeForeign) ? await loadForeign() : undefined
        const interrupts = foreign ? outcome.interrupts.map(foreign.presentForeignInterrupt) : outcome.interrupts
        host.settle(gen, { outcome: 'interrupt', interrupts })
        return
      }
      if (outcome.type === 'cancelled') {
        host.settle(gen, { outcome: 'cancelled' })
        return
      }
      // An attached or joined client did not start the run: it never executes the run's browser
      // tools. What the server still waits for and is not run here (those, and saved calls a
      // resumed run lists) is offered (`pendingToolCalls`); the server admits one client's results.
      const tools = host.settings().tools
      const pendingIds = outcome.pendingToolCallIds
      const calls =
        plan.kind === 'attach' || run.joined
          ? []
          : eligibleCalls(tools, flushAndRead(host).messages, run.toolCalls, pendingIds)
      if (calls.length === 0) {
        const { messages, awaitingExternal } = flushAndRead(host)
        const offered = pendingIds?.length ? offeredCalls(tools, messages, pendingIds) : []
        const awaiting = awaitingExternalCalls(tools, messages, pendingIds, awaitingExternal)
        host.settle(gen, { outcome: 'success', awaiting, ...(offered.length > 0 ? { offered } : {}) })
        return
      }
      roundtrips += 1
      if (roundtrips > host.settings().maxToolRoundtrips) {
        host.settle(gen, {
          outcome: 'failed',
          error: clientError('INVALID_STATE', 'Too many browser-tool round trips in one interaction.'),
        })
        return
      }
      if (!(await results(calls))) return
    }
  } catch (error) {
    if (host.isCurrent(gen)) host.settle(gen, { outcome: 'failed', error: errorFromFetch(error) })
  }
}

interface Progress {
  /** The run this attempt reads; joining the next run of a queue (`attach` with `next`), the first one that starts. */
  target: string
  acked: boolean
  lastId: string | undefined
  received: number
  skipUntil: string | undefined
  finished: RunFinishedEvent | undefined
  readonly started: Map<string, string>
  /** Pauses announced by legacy `CUSTOM on_interrupt` events (foreign bridges), by id. */
  readonly legacy: Map<string, Interrupt>
}

/**
 * One run: attempts before acknowledgement (retries reuse the same runId and entries), the join of
 * an `ALREADY_RESUMED` run, and reconnects after acknowledgement from the last seen event id.
 */
async function runOnce(
  host: DriverHost,
  plan: InteractionPlan,
  runId: string,
  input: RunAgentInput | undefined,
): Promise<RunResult | typeof RETIRED> {
  const { gen, signal } = plan
  // The request to post; none when joining the run's events from the thread log (from `joinFrom`).
  let post = input
  let joinFrom = plan.kind === 'attach' ? plan.from : undefined
  // The history this run starts from (the request's messages, or the committed ones when joining).
  const saved = toolCallIdsOf(input === undefined ? flushAndRead(host).messages : input.messages)
  let joined = input === undefined
  const progress: Progress = {
    target: runId,
    acked: false,
    lastId: undefined,
    received: 0,
    skipUntil: undefined,
    finished: undefined,
    started: new Map(),
    legacy: new Map(),
  }
  let attempts = 0
  let reconnects = 0
  // The failure that cut the acknowledged stream (reported if the server turns out unable to replay).
  let cut: InterludeError | undefined
  for (;;) {
    if (!host.isCurrent(gen)) return RETIRED
    const settings = host.settings()
    // Expiry is checked before claiming and again right before every send of the resume.
    if (!progress.acked && post !== undefined && plan.kind === 'resume')
      checkNotExpired(plan.interrupts, settings.now(), plan.input.resume)
    // One attempt = one request; the idle watchdog aborts only the attempt, never the interaction.
    const watchdog = idleWatchdog(signal, settings.reconnect.idleTimeoutMs)
    const options = { signal: watchdog.signal, onActivity: watchdog.alive }
    host.connection(gen, progress.acked ? 'reconnecting' : 'connecting')
    let source: AsyncIterable<readonly TransportEvent[]>
    const reconnecting = progress.acked
    if (reconnecting) {
      source = host.transport().connect(plan.threadId, { ...options, lastEventId: progress.lastId })
    } else if (post !== undefined) {
      source = host.transport().run(post, options)
    } else {
      progress.skipUntil = progress.target
      // The next queued run may not have started yet: a stream that stays open across runs (`?follow=1`).
      const stay = plan.kind === 'attach' && plan.next
      source = host.transport().connect(plan.threadId, { ...options, lastEventId: joinFrom, follow: true, stay })
    }
    const before = progress.received
    // Foreign bridges end the response to our own request with their backend's run id
    // (docs/decisions.md#foreign-servers); a replay from the thread log stays strict.
    const ownResponse = !reconnecting && post !== undefined
    try {
      await consume(host, plan, source, progress, watchdog.alive, ownResponse)
      if (!host.isCurrent(gen)) return RETIRED
      if (progress.finished)
        return { finished: progress.finished, toolCalls: { started: progress.started, saved }, joined }
      throw clientError('PROTOCOL_ERROR', 'The stream ended before the run finished.', { reason: 'truncated_stream' })
    } catch (raw) {
      if (!host.isCurrent(gen)) return RETIRED
      const error =
        watchdog.fired() && !signal.aborted
          ? clientError('NETWORK_ERROR', 'The connection went silent (no events or pings).', {
              reason: 'idle_timeout',
              idleTimeoutMs: host.settings().reconnect.idleTimeoutMs,
            })
          : errorFromFetch(raw)
      if (isFatal(error)) throw error
      if (!progress.acked) {
        const details = error.details as { runId?: unknown } | undefined
        if (
          error.code === 'ALREADY_RESUMED' &&
          plan.kind === 'resume' &&
          post !== undefined &&
          typeof details?.runId === 'string'
        ) {
          // The same decision was admitted under another runId (another tab, a lost response):
          // join that run's events instead of failing. Its RUN_STARTED is the acknowledgement.
          joined = true
          post = undefined
          progress.target = details.runId
          joinFrom = flushAndRead(host).lastEventId
          continue
        }
        if (error.retryable && attempts < host.settings().retry.attempts) {
          attempts += 1
          await sleep(host.settings().retry.delayMs(attempts), signal)
          continue
        }
        throw error
      }
      // After acknowledgement the request is never re-sent: heal by reconnecting from the last id.
      // A server without the thread log (no event ids, plain AG-UI) cannot heal it: a typed, final cut.
      const features = host.features()
      if (reconnecting && features.observe(error)) throw streamCut(cut ?? error)
      if (progress.received > before) reconnects = 0
      if (!error.retryable) throw error
      if (progress.lastId === undefined || !features.available) throw streamCut(error)
      if (reconnects >= host.settings().reconnect.attempts) throw error
      cut = error
      reconnects += 1
      await sleep(host.settings().reconnect.delayMs(reconnects), signal)
    } finally {
      watchdog.dispose()
    }
  }
}

async function consume(
  host: DriverHost,
  plan: InteractionPlan,
  source: AsyncIterable<readonly TransportEvent[]>,
  progress: Progress,
  alive: () => void,
  ownResponse: boolean,
): Promise<void> {
  const { gen, threadId } = plan
  for await (const batch of source) {
    alive()
    for (const item of batch) {
      if (!host.isCurrent(gen)) return
      const { event } = item
      const id = item.id
      if (id !== undefined) progress.lastId = id
      progress.received += 1
      if (progress.skipUntil !== undefined) {
        // Joining a run from the thread log: earlier runs' events are history, not this run.
        if (event.type !== 'RUN_STARTED') continue
        if (plan.kind === 'attach' && plan.next) progress.target = event.runId
        else if (event.runId !== progress.skipUntil) continue
        progress.skipUntil = undefined
      }
      const { target } = progress
      host.observe(gen, event, id, target)
      if (!host.isCurrent(gen)) return
      switch (event.type) {
        case 'RUN_STARTED':
          if (progress.acked) throw protocolViolation('A second RUN_STARTED arrived for the same run.')
          if (event.threadId !== threadId || event.runId !== target)
            throw protocolViolation('RUN_STARTED does not match the request.')
          progress.acked = true
          host.acknowledge(gen, target, id)
          break
        case 'RUN_FINISHED':
          if (!progress.acked) throw protocolViolation('RUN_FINISHED before RUN_STARTED.')
          if (event.threadId !== threadId || (event.runId !== target && !ownResponse))
            throw protocolViolation('RUN_FINISHED does not match the run.')
          progress.finished =
            event.outcome === undefined && progress.legacy.size > 0
              ? { ...event, outcome: { type: 'interrupt', interrupts: [...progress.legacy.values()] } }
              : event
          if (id !== undefined) host.enqueue(gen, event, id) // carries the cursor into the final commit
          return
        case 'RUN_ERROR':
          throw runError(event)
        default:
          if (!progress.acked) throw protocolViolation(`${event.type} before RUN_STARTED.`)
          if (event.type === 'CUSTOM' && event.name === LEGACY_INTERRUPT_EVENT) {
            const { legacyInterrupt } = await loadForeign()
            if (!host.isCurrent(gen)) return
            const interrupt = legacyInterrupt(event, target, progress.legacy.size)
            if (interrupt) progress.legacy.set(interrupt.id, interrupt)
          }
          if (event.type === 'TOOL_CALL_START') progress.started.set(event.toolCallId, event.toolCallName)
          else if (event.type === 'TOOL_CALL_CHUNK' && event.toolCallId && event.toolCallName)
            progress.started.set(event.toolCallId, event.toolCallName)
          host.enqueue(gen, event, id)
      }
    }
  }
}
