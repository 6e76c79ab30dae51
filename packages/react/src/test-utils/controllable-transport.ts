import type { AgUiEvent, Interrupt, RunAgentInput, ThreadSnapshot } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import type { ConnectOptions, RunRequestOptions, SubmitAnswer, Transport, TransportEvent } from '../core/transport.ts'

/**
 * A transport the test drives event by event. Every request becomes an `EventChannel`; the test
 * pushes events, failures or the end, and awaits `drained()` to know the runtime has consumed
 * everything pushed so far (no timers involved).
 */

type Item =
  | { readonly kind: 'event'; readonly value: TransportEvent }
  | { readonly kind: 'error'; readonly error: unknown }
  | { readonly kind: 'end' }

export class EventChannel implements AsyncIterable<readonly TransportEvent[]> {
  readonly #queue: Item[] = []
  #wake: (() => void) | undefined
  readonly #drainWaiters: (() => void)[] = []
  #idle = false
  #done = false
  readonly #counter: { value: number }
  readonly signal: AbortSignal

  readonly #onActivity: (() => void) | undefined

  constructor(signal: AbortSignal, counter: { value: number } = { value: 1 }, onActivity?: () => void) {
    this.signal = signal
    this.#counter = counter
    this.#onActivity = onActivity
    signal.addEventListener('abort', () => this.#wake?.(), { once: true })
  }

  get aborted(): boolean {
    return this.signal.aborted
  }

  /** Pushes an event with an automatic increasing id (or the given one; `null` for none). */
  push(event: AgUiEvent, id?: string | null): this {
    const value: TransportEvent = id === null ? { event } : { id: id ?? String(this.#counter.value++), event }
    this.#queue.push({ kind: 'event', value })
    this.#notify()
    return this
  }

  /** Bytes without an event (an SSE comment such as the server's `: ping`). */
  ping(): this {
    this.#onActivity?.()
    return this
  }

  pushAll(events: readonly AgUiEvent[]): this {
    for (const e of events) this.push(e)
    return this
  }

  /** The request fails (before the first event: an admission error; later: a dropped stream). */
  fail(error: unknown): this {
    this.#queue.push({ kind: 'error', error })
    this.#notify()
    return this
  }

  end(): this {
    this.#queue.push({ kind: 'end' })
    this.#notify()
    return this
  }

  /** Resolves once the consumer has taken every queued item and waits for more (or stopped). */
  drained(): Promise<void> {
    if (this.#done || (this.#idle && this.#queue.length === 0)) return Promise.resolve()
    return new Promise((resolve) => this.#drainWaiters.push(resolve))
  }

  #notify(): void {
    this.#idle = false
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }

  #settleDrain(): void {
    for (const resolve of this.#drainWaiters.splice(0)) resolve()
  }

  /** One event per batch: the runtime is stepped event by event. */
  async *[Symbol.asyncIterator](): AsyncGenerator<readonly TransportEvent[]> {
    try {
      for (;;) {
        if (this.signal.aborted) throw new InterludeError('ABORTED', 'The request was aborted.')
        const item = this.#queue.shift()
        if (!item) {
          this.#idle = true
          this.#settleDrain()
          await new Promise<void>((resolve) => (this.#wake = resolve))
          continue
        }
        if (item.kind === 'end') return
        if (item.kind === 'error') throw item.error
        yield [item.value]
      }
    } finally {
      this.#done = true
      this.#settleDrain()
    }
  }
}

export interface RunCall {
  readonly kind: 'run'
  readonly input: RunAgentInput
  readonly body: string
  readonly channel: EventChannel
}

export interface ConnectCall {
  readonly kind: 'connect'
  readonly threadId: string
  readonly lastEventId: string | undefined
  /** Opened with `?follow=1` (stays open across runs). */
  readonly stay: boolean
  readonly channel: EventChannel
}

/** One `submit` (input sent while busy); the test answers it. */
export interface SubmitCall {
  readonly input: RunAgentInput
  readonly answer: (value: SubmitAnswer) => void
  readonly refuse: (error: unknown) => void
}

export class ControllableTransport implements Transport {
  readonly runs: RunCall[] = []
  readonly connects: ConnectCall[] = []
  readonly cancels: { threadId: string; runId: string }[] = []
  readonly threads = new Map<string, ThreadSnapshot | InterludeError>()
  /** Next sequence number of run channels (continues across requests like a server log). */
  readonly counter = { value: 1 }
  readonly #waiters: (() => void)[] = []

  run(input: RunAgentInput, { signal, onActivity }: RunRequestOptions): AsyncIterable<readonly TransportEvent[]> {
    const channel = new EventChannel(signal, this.counter, onActivity)
    // The body is captured as sent (JSON), so later mutations cannot fake a retry's payload.
    this.runs.push({
      kind: 'run',
      input: JSON.parse(JSON.stringify(input)) as RunAgentInput,
      body: JSON.stringify(input),
      channel,
    })
    this.#notify()
    return channel
  }

  connect(
    threadId: string,
    { lastEventId, signal, onActivity, stay }: ConnectOptions,
  ): AsyncIterable<readonly TransportEvent[]> {
    const channel = new EventChannel(
      signal,
      { value: lastEventId === undefined ? 1 : Number(lastEventId) + 1 },
      onActivity,
    )
    this.connects.push({ kind: 'connect', threadId, lastEventId, stay: stay === true, channel })
    this.#notify()
    return channel
  }

  /** Pages of earlier messages by `before` cursor (`getEarlierPage`). */
  readonly pages = new Map<string, ThreadSnapshot | InterludeError>()
  /** Every snapshot request, with its cursor. */
  readonly lookups: { threadId: string; before: string | undefined }[] = []

  async getThread(threadId: string, options: { readonly before?: string } = {}): Promise<ThreadSnapshot> {
    this.lookups.push({ threadId, before: options.before })
    await Promise.resolve()
    const value = options.before === undefined ? this.threads.get(threadId) : this.pages.get(options.before)
    if (value === undefined) throw new InterludeError('THREAD_NOT_FOUND', 'Thread not found.')
    if (InterludeError.isInstance(value)) throw value
    return value
  }

  async cancel(threadId: string, runId: string): Promise<void> {
    this.cancels.push({ threadId, runId })
  }

  readonly submits: SubmitCall[] = []

  submit(input: RunAgentInput): Promise<SubmitAnswer> {
    return new Promise((answer, refuse) => {
      this.submits.push({ input: JSON.parse(JSON.stringify(input)) as RunAgentInput, answer, refuse })
      this.#notify()
    })
  }

  async waitForSubmit(n: number): Promise<SubmitCall> {
    while (this.submits.length < n) await new Promise<void>((resolve) => this.#waiters.push(resolve))
    return this.submits[n - 1]!
  }

  #notify(): void {
    for (const w of this.#waiters.splice(0)) w()
  }

  /** Resolves when the n-th (1-based) run request has been made. */
  async waitForRun(n: number): Promise<RunCall> {
    while (this.runs.length < n) await new Promise<void>((resolve) => this.#waiters.push(resolve))
    return this.runs[n - 1]!
  }

  async waitForConnect(n: number): Promise<ConnectCall> {
    while (this.connects.length < n) await new Promise<void>((resolve) => this.#waiters.push(resolve))
    return this.connects[n - 1]!
  }
}

/** Event builders (AG-UI 1.0 shapes). */
export const ev = {
  runStarted: (threadId: string, runId: string): AgUiEvent => ({ type: 'RUN_STARTED', threadId, runId }) as AgUiEvent,
  finished: (threadId: string, runId: string, outcome?: unknown): AgUiEvent =>
    (outcome === undefined
      ? { type: 'RUN_FINISHED', threadId, runId }
      : { type: 'RUN_FINISHED', threadId, runId, outcome }) as AgUiEvent,
  interrupted: (threadId: string, runId: string, interrupts: readonly Interrupt[]): AgUiEvent =>
    ({ type: 'RUN_FINISHED', threadId, runId, outcome: { type: 'interrupt', interrupts } }) as AgUiEvent,
  runError: (message: string, code?: string): AgUiEvent =>
    (code === undefined ? { type: 'RUN_ERROR', message } : { type: 'RUN_ERROR', message, code }) as AgUiEvent,
  textStart: (messageId: string): AgUiEvent =>
    ({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' }) as AgUiEvent,
  text: (messageId: string, delta: string): AgUiEvent =>
    ({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta }) as AgUiEvent,
  textEnd: (messageId: string): AgUiEvent => ({ type: 'TEXT_MESSAGE_END', messageId }) as AgUiEvent,
  toolStart: (toolCallId: string, toolCallName: string, parentMessageId?: string): AgUiEvent =>
    (parentMessageId === undefined
      ? { type: 'TOOL_CALL_START', toolCallId, toolCallName }
      : { type: 'TOOL_CALL_START', toolCallId, toolCallName, parentMessageId }) as AgUiEvent,
  toolArgs: (toolCallId: string, delta: string): AgUiEvent =>
    ({ type: 'TOOL_CALL_ARGS', toolCallId, delta }) as AgUiEvent,
  toolEnd: (toolCallId: string): AgUiEvent => ({ type: 'TOOL_CALL_END', toolCallId }) as AgUiEvent,
  toolResult: (messageId: string, toolCallId: string, content: string): AgUiEvent =>
    ({ type: 'TOOL_CALL_RESULT', messageId, toolCallId, content, role: 'tool' }) as AgUiEvent,
  stateSnapshot: (snapshot: unknown): AgUiEvent => ({ type: 'STATE_SNAPSHOT', snapshot }) as AgUiEvent,
  stateDelta: (delta: unknown[]): AgUiEvent => ({ type: 'STATE_DELTA', delta }) as AgUiEvent,
  messagesSnapshot: (messages: unknown[]): AgUiEvent => ({ type: 'MESSAGES_SNAPSHOT', messages }) as AgUiEvent,
}

/** The approval schema of a tool-bound interrupt (docs/protocol.md). */
export const approvalSchema = {
  type: 'object',
  properties: { approved: { type: 'boolean' }, reason: { type: 'string' } },
  required: ['approved'],
  additionalProperties: false,
} as const

export function approvalInterrupt(id: string, toolCallId: string, extra: Partial<Interrupt> = {}): Interrupt {
  return {
    id,
    reason: 'tool_call',
    toolCallId,
    message: `Approve ${toolCallId}?`,
    responseSchema: { ...approvalSchema },
    ...extra,
  }
}

/** Lets pending promise continuations run (a macrotask turn). */
export function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0))
}

/** Waits until the runtime consumed everything pushed on the channel and reacted to it. */
export async function step(channel: EventChannel): Promise<void> {
  await channel.drained()
  await tick()
}
