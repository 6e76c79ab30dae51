import type {
  AgUiEvent,
  Interrupt,
  InterludeError,
  Message,
  RunAgentInput,
  RunFinishedEvent,
} from '@interlude/protocol'
import { isExpiredAt } from '@interlude/protocol'
import { clientError, isFatal, protocolViolation, runError, toInterludeError } from './errors.ts'
import type { CoreState, InteractionKind } from './reducer.ts'
import type { Transport, TransportEvent } from './transport.ts'
import type { BrowserTool, ConnectionStatus, InteractionOutcome } from './types.ts'

/**
 * The asynchronous half of the runtime: one logical interaction (send, resume, attach), its
 * transport attempts, acknowledgement, reconnects and browser-tool follow-ups. It changes state
 * only through its host, and every continuation checks `host.isCurrent(gen)` first, so a retired
 * or stopped interaction's late callbacks are no-ops.
 */

/** What the driver needs from the runtime. */
export interface DriverHost {
  transport(): Transport
  isCurrent(gen: number): boolean
  state(): CoreState
  now(): number
  generateId(): string
  tools(): readonly BrowserTool[]
  retryAttempts(): number
  retryDelay(attempt: number): number
  reconnectAttempts(): number
  reconnectDelay(attempt: number): number
  /** No bytes for this long = a dropped connection (0 or Infinity: never). */
  idleTimeoutMs(): number
  maxToolRoundtrips(): number
  /** Observes an event (the `onEvent` callback). */
  observe(gen: number, event: AgUiEvent, id: string | undefined, runId: string): void
  /** Buffers a content event for the next coalesced commit. */
  enqueue(gen: number, event: AgUiEvent, id: string | undefined): void
  connection(gen: number, connection: ConnectionStatus): void
  acknowledge(gen: number, runId: string, id: string | undefined): void
  toolsStarted(gen: number): void
  followUp(gen: number, runId: string, messages: readonly Message[]): void
  settle(
    gen: number,
    outcome: Exclude<InteractionOutcome, 'retired'>,
    extra?: { error?: InterludeError; interrupts?: readonly Interrupt[] },
  ): void
}

/** Request-shaping configuration captured when the interaction starts (option changes later do not leak in). */
export interface InteractionConfig {
  readonly tools: RunAgentInput['tools']
  readonly context: RunAgentInput['context']
  readonly forwardedProps: Record<string, unknown>
}

export interface InteractionPlan {
  readonly gen: number
  readonly kind: InteractionKind
  readonly threadId: string
  readonly signal: AbortSignal
  readonly config: InteractionConfig
  /** The first run's request (send / resume); absent for attach. */
  readonly input?: RunAgentInput
  /** The batch being answered (expiry is checked before every send of the resume). */
  readonly resumeInterrupts?: readonly Interrupt[]
  /** attach: the live run to join. */
  readonly attachRunId?: string
  /** attach: replay cursor (events before the run's RUN_STARTED are skipped). */
  readonly attachFrom?: string
}

export function buildInput(
  threadId: string,
  runId: string,
  messages: readonly Message[],
  state: unknown,
  config: InteractionConfig,
  resume?: RunAgentInput['resume'],
): RunAgentInput {
  const input: RunAgentInput = {
    threadId,
    runId,
    protocolVersion: '1.0',
    state,
    // Activity messages are UI-only (as in HttpAgent); the server owns the rest of history.
    messages: messages.filter((m) => (m.role as string) !== 'activity') as Message[],
    tools: config.tools,
    context: config.context,
    forwardedProps: config.forwardedProps,
  }
  if (resume !== undefined) input.resume = resume
  return input
}

const RETIRED = Symbol('retired')

interface Progress {
  acked: boolean
  lastId: string | undefined
  received: number
  skipUntil: string | undefined
  finished: RunFinishedEvent | undefined
  readonly newToolCalls: Map<string, string>
  /** Tool-call ids already in history when the run started (saved calls: never executed here). */
  readonly savedToolCalls: ReadonlySet<string>
  /** The run was joined (`ALREADY_RESUMED`): another client started it, so its tools are not ours. */
  joined: boolean
}

function toolCallIdsOf(messages: readonly Message[]): Set<string> {
  const ids = new Set<string>()
  for (const m of messages) {
    if (m.role === 'assistant' && Array.isArray(m.toolCalls)) for (const c of m.toolCalls) ids.add(c.id)
    else if (m.role === 'tool') ids.add(m.toolCallId)
  }
  return ids
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}

export async function driveInteraction(host: DriverHost, plan: InteractionPlan): Promise<void> {
  const { gen } = plan
  try {
    let runId = plan.input?.runId ?? plan.attachRunId!
    let input = plan.input
    let roundtrips = 0
    for (;;) {
      const progress = await runOnce(host, plan, runId, input)
      if (progress === RETIRED) return
      const finished = progress.finished!
      const outcome = finished.outcome ?? { type: 'success' as const }
      if (outcome.type === 'interrupt') {
        // Calls seen before a pause stay in history; none of them runs locally.
        host.settle(gen, 'interrupt', { interrupts: outcome.interrupts })
        return
      }
      if (outcome.type === 'cancelled') {
        host.settle(gen, 'cancelled')
        return
      }
      const calls = eligibleCalls(host, plan, progress, outcome.pendingToolCallIds)
      if (calls.length === 0) {
        host.settle(gen, 'success')
        return
      }
      roundtrips += 1
      if (roundtrips > host.maxToolRoundtrips()) {
        host.settle(gen, 'failed', {
          error: clientError('INVALID_STATE', 'Too many browser-tool round trips in one interaction.'),
        })
        return
      }
      host.toolsStarted(gen)
      const results = await Promise.all(calls.map((call) => executeTool(host, plan, runId, call)))
      if (!host.isCurrent(gen)) return
      runId = host.generateId()
      const messages = [...host.state().messages, ...results]
      host.followUp(gen, runId, messages)
      // Follow-ups never carry `resume`; the checkpoint is the current one plus the tool results.
      input = buildInput(plan.threadId, runId, messages, host.state().state, plan.config)
    }
  } catch (error) {
    if (host.isCurrent(gen)) host.settle(gen, 'failed', { error: toInterludeError(error) })
  }
}

interface ToolCallRef {
  readonly id: string
  readonly name: string
  readonly tool: BrowserTool
}

/**
 * Only genuinely new calls of this run: started in this run, absent from the history captured when
 * the run started (a resumed run may re-announce saved calls), with a handler, not answered, and
 * pending per the server.
 */
function eligibleCalls(
  host: DriverHost,
  plan: InteractionPlan,
  progress: Progress,
  pendingIds: readonly string[] | undefined,
): ToolCallRef[] {
  // An attached or joined client did not start the run: it never executes the run's browser tools.
  if (plan.kind === 'attach' || progress.joined || progress.newToolCalls.size === 0) return []
  const handlers = new Map(
    host
      .tools()
      .filter((t) => t.handler)
      .map((t) => [t.name, t] as const),
  )
  const answered = new Set<string>()
  for (const m of host.state().messages) if (m.role === 'tool') answered.add(m.toolCallId)
  const calls: ToolCallRef[] = []
  for (const [id, name] of progress.newToolCalls) {
    const tool = handlers.get(name)
    if (!tool || answered.has(id) || progress.savedToolCalls.has(id)) continue
    if (pendingIds !== undefined && !pendingIds.includes(id)) continue
    calls.push({ id, name, tool })
  }
  return calls
}

function argumentsOf(messages: readonly Message[], toolCallId: string): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (m.role !== 'assistant' || !m.toolCalls) continue
    const call = m.toolCalls.find((c) => c.id === toolCallId)
    if (call) return call.function.arguments
  }
  return undefined
}

async function executeTool(
  host: DriverHost,
  plan: InteractionPlan,
  runId: string,
  call: ToolCallRef,
): Promise<Message> {
  const id = host.generateId()
  const answer = (content: string, error?: string): Message =>
    (error === undefined
      ? { id, role: 'tool', toolCallId: call.id, content }
      : { id, role: 'tool', toolCallId: call.id, content, error }) as Message
  let args: unknown
  try {
    const text = argumentsOf(host.state().messages, call.id)
    args = text === undefined || text === '' ? {} : JSON.parse(text)
  } catch {
    return answer(JSON.stringify({ error: 'Invalid tool arguments (not JSON).' }), 'Invalid tool arguments (not JSON).')
  }
  try {
    const value = await call.tool.handler!(args, {
      toolCallId: call.id,
      threadId: plan.threadId,
      runId,
      signal: plan.signal,
    })
    return answer(typeof value === 'string' ? value : (JSON.stringify(value ?? null) ?? 'null'))
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    return answer(JSON.stringify({ error: message }), message)
  }
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
): Promise<Progress | typeof RETIRED> {
  const { gen, signal } = plan
  let target = runId
  let mode: 'post' | 'join' = input === undefined ? 'join' : 'post'
  let joinFrom = plan.attachFrom
  const progress: Progress = {
    acked: false,
    lastId: undefined,
    received: 0,
    skipUntil: undefined,
    finished: undefined,
    newToolCalls: new Map(),
    // The history this run starts from (the request's messages, or the committed ones when joining).
    savedToolCalls: toolCallIdsOf(input?.messages ?? host.state().messages),
    joined: mode === 'join',
  }
  let attempts = 0
  let reconnects = 0
  for (;;) {
    if (!host.isCurrent(gen)) return RETIRED
    // One attempt = one request; the idle watchdog aborts only the attempt, never the interaction.
    const watchdog = idleWatchdog(signal, host.idleTimeoutMs())
    const options = { signal: watchdog.signal, onActivity: watchdog.alive }
    let source: AsyncIterable<readonly TransportEvent[]>
    if (!progress.acked) {
      if (mode === 'post') {
        // Expiry is checked before claiming and again right before every send of the resume.
        const expired =
          plan.resumeInterrupts?.filter((i) => isExpiredAt(i.expiresAt, host.now())).map((i) => i.id) ?? []
        if (expired.length > 0) {
          watchdog.dispose()
          throw clientError('INTERRUPT_EXPIRED', 'The interrupt batch has expired; start a new thread to continue.', {
            interruptIds: expired,
          })
        }
        host.connection(gen, 'connecting')
        source = host.transport().run(input!, options)
      } else {
        host.connection(gen, 'connecting')
        progress.skipUntil = target
        source = host.transport().connect(plan.threadId, { ...options, lastEventId: joinFrom })
      }
    } else {
      host.connection(gen, 'reconnecting')
      source = host.transport().connect(plan.threadId, { ...options, lastEventId: progress.lastId })
    }
    const before = progress.received
    try {
      await consume(host, plan, target, source, progress, watchdog.alive)
      if (!host.isCurrent(gen)) return RETIRED
      if (progress.finished) return progress
      throw clientError('PROTOCOL_ERROR', 'The stream ended before the run finished.', { reason: 'truncated_stream' })
    } catch (raw) {
      if (!host.isCurrent(gen)) return RETIRED
      const error =
        watchdog.fired() && !signal.aborted
          ? clientError('NETWORK_ERROR', 'The connection went silent (no events or pings).', {
              reason: 'idle_timeout',
              idleTimeoutMs: host.idleTimeoutMs(),
            })
          : toInterludeError(raw)
      if (isFatal(error)) throw error
      if (!progress.acked) {
        const details = error.details as { runId?: unknown } | undefined
        if (
          error.code === 'ALREADY_RESUMED' &&
          plan.kind === 'resume' &&
          mode === 'post' &&
          typeof details?.runId === 'string'
        ) {
          // The same decision was admitted under another runId (another tab, a lost response):
          // join that run's events instead of failing. Its RUN_STARTED is the acknowledgement.
          mode = 'join'
          progress.joined = true
          target = details.runId
          joinFrom = host.state().lastEventId
          continue
        }
        if (error.retryable && attempts < host.retryAttempts()) {
          attempts += 1
          await sleep(host.retryDelay(attempts), signal)
          continue
        }
        throw error
      }
      // After acknowledgement the request is never re-sent: heal by reconnecting from the last id.
      if (progress.received > before) reconnects = 0
      if (progress.lastId === undefined || !error.retryable || reconnects >= host.reconnectAttempts()) throw error
      reconnects += 1
      await sleep(host.reconnectDelay(reconnects), signal)
    } finally {
      watchdog.dispose()
    }
  }
}

interface IdleWatchdog {
  readonly signal: AbortSignal
  /** Bytes arrived (an event batch or a comment): restart the countdown. */
  readonly alive: () => void
  readonly fired: () => boolean
  readonly dispose: () => void
}

/** An AbortSignal that follows `parent` and also aborts after `timeoutMs` without `alive()`. */
function idleWatchdog(parent: AbortSignal, timeoutMs: number): IdleWatchdog {
  const controller = new AbortController()
  const follow = () => controller.abort(parent.reason)
  if (parent.aborted) follow()
  else parent.addEventListener('abort', follow, { once: true })
  const enabled = timeoutMs > 0 && Number.isFinite(timeoutMs)
  let timer: ReturnType<typeof setTimeout> | undefined
  let fired = false
  let disposed = false
  const alive = () => {
    if (!enabled || disposed || fired) return
    if (timer !== undefined) clearTimeout(timer)
    timer = setTimeout(() => {
      fired = true
      controller.abort(new DOMException('The connection went silent.', 'AbortError'))
    }, timeoutMs)
  }
  alive()
  return {
    signal: controller.signal,
    alive,
    fired: () => fired,
    dispose: () => {
      disposed = true
      if (timer !== undefined) clearTimeout(timer)
      parent.removeEventListener('abort', follow)
    },
  }
}

async function consume(
  host: DriverHost,
  plan: InteractionPlan,
  target: string,
  source: AsyncIterable<readonly TransportEvent[]>,
  progress: Progress,
  alive: () => void,
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
        if (event.type !== 'RUN_STARTED' || event.runId !== progress.skipUntil) continue
        progress.skipUntil = undefined
      }
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
          if (event.threadId !== threadId || event.runId !== target)
            throw protocolViolation('RUN_FINISHED does not match the run.')
          progress.finished = event
          if (id !== undefined) host.enqueue(gen, event, id) // carries the cursor into the final commit
          return
        case 'RUN_ERROR':
          throw runError(event)
        default:
          if (!progress.acked) throw protocolViolation(`${event.type} before RUN_STARTED.`)
          if (event.type === 'TOOL_CALL_START') progress.newToolCalls.set(event.toolCallId, event.toolCallName)
          else if (event.type === 'TOOL_CALL_CHUNK' && event.toolCallId && event.toolCallName)
            progress.newToolCalls.set(event.toolCallId, event.toolCallName)
          host.enqueue(gen, event, id)
      }
    }
  }
}
