import type { AgUiEvent, Message } from '@interlude/protocol'
import { applyEvents } from '@interlude/react/core'
import type { TransportEvent } from '@interlude/react/core'
import { Recorder } from '../recording/recorder.ts'
import type {
  Json,
  RecordedBatch,
  RecordedError,
  Recording,
  RequestEndOutcome,
  SnapshotProjection,
} from '../recording/recording-types.ts'
import { toJson } from '../recording/to-json.ts'

/**
 * A thread's stored log turned into a workbench recording, event by event: every event becomes an `sse-event` frame
 * (with its log sequence as the SSE id), followed by a `snapshot` frame when it changed what a client would show. The
 * messages and the state come from the SDK's own event assembly (`applyEvents` of `@interlude/react/core`, the code
 * `ChatRuntime` applies streams with); the run lifecycle, the paused batch and its answers come from the lifecycle
 * events and `interlude.decision`. The existing player and inspector show the result like any recording.
 *
 * The log has no times: frame `t` is synthetic, one `stepMs` per event, so "recorded gaps" pace it evenly.
 */

export interface LogRecordingOptions {
  readonly threadId: string
  readonly title: string
  /** Frames kept before the reader stops (a memory bound). @default 20_000 */
  readonly maxFrames?: number
  /** Synthetic time per event, in ms. @default 50 */
  readonly stepMs?: number
  /** Wall clock for `createdAt`. @default Date.now */
  readonly wallClock?: () => number
}

const DECISION_EVENT = 'interlude.decision'

export class LogRecording {
  readonly threadId: string
  readonly #title: string
  readonly #recorder: Recorder
  readonly #stepMs: number
  #clock = 0
  #messages: readonly Message[] = []
  #state: unknown = {}
  #pending: RecordedBatch | null = null
  /** The last batch that paused a run (its id is that run's id: the server's `batchId`). */
  #lastBatch: RecordedBatch | null = null
  #runId: string | null = null
  #running = false
  #error: RecordedError | null = null
  #last: SnapshotProjection | undefined
  #lastSeq: string | undefined
  #eventCount = 0
  #stateCache: { readonly of: unknown; readonly json: Json } | undefined
  readonly #json = new WeakMap<object, Json>()

  constructor(options: LogRecordingOptions) {
    this.threadId = options.threadId
    this.#title = options.title
    this.#stepMs = options.stepMs ?? 50
    this.#recorder = new Recorder({
      now: () => this.#clock,
      maxFrames: options.maxFrames ?? 20_000,
      ...(options.wallClock ? { wallClock: options.wallClock } : {}),
    })
  }

  /** The last log sequence read (where a dropped read goes on: `?after=`). */
  get lastSeq(): string | undefined {
    return this.#lastSeq
  }

  get eventCount(): number {
    return this.#eventCount
  }

  /** True once `maxFrames` was reached: later events were not kept. */
  get truncated(): boolean {
    return this.#recorder.getStatus().truncated
  }

  /** Records a read of the log (`GET …/events?after=`), answered with an event stream; returns its request id. */
  startRead(): string {
    const requestId = this.#recorder.nextRequestId()
    const after = this.#lastSeq === undefined ? '' : `?after=${this.#lastSeq}`
    this.#recorder.add({
      kind: 'request-start',
      requestId,
      method: 'GET',
      path: `/threads/${encodeURIComponent(this.threadId)}/events${after}`,
      purpose: 'events',
    })
    return requestId
  }

  /** The response head (recorded when the first events arrive: the transport hides the head itself). */
  answered(requestId: string): void {
    this.#recorder.add({
      kind: 'request-response',
      requestId,
      status: 200,
      ok: true,
      contentType: 'text/event-stream',
    })
  }

  endRead(requestId: string, outcome: RequestEndOutcome, eventCount: number, error?: RecordedError): void {
    this.#recorder.add({ kind: 'request-end', requestId, outcome, eventCount, ...(error ? { error } : {}) })
  }

  /** Applies events in log order, a frame (and a snapshot when something changed) per event. */
  addEvents(requestId: string, events: readonly TransportEvent[]): void {
    for (const { id, event } of events) {
      if (this.truncated) return
      this.#clock += this.#stepMs
      this.#eventCount += 1
      if (id !== undefined) this.#lastSeq = id
      this.#recorder.add({ kind: 'sse-event', requestId, sseId: id ?? null, event: toJson(event) })
      this.#apply(event)
      this.#snapshot()
    }
  }

  toRecording(notes: string): Recording {
    return this.#recorder.toRecording({ title: this.#title, app: '@interlude/workbench', notes })
  }

  #apply(event: AgUiEvent): void {
    const e = event as unknown as { readonly [key: string]: unknown }
    switch (event.type) {
      case 'RUN_STARTED':
        // A run that starts while a batch waits is the one that answers it: the batch is answered from here on.
        this.#runId = typeof e.runId === 'string' ? e.runId : null
        this.#running = true
        this.#pending = null
        this.#error = null
        return
      case 'RUN_FINISHED': {
        this.#running = false
        const outcome = (e.outcome ?? {}) as { type?: unknown; interrupts?: unknown }
        if (outcome.type === 'interrupt' && Array.isArray(outcome.interrupts) && typeof e.runId === 'string') {
          this.#pending = { id: e.runId, interrupts: outcome.interrupts.map((item) => toJson(item)) }
          this.#lastBatch = this.#pending
        }
        return
      }
      case 'RUN_ERROR':
        this.#running = false
        this.#error = {
          code: typeof e.code === 'string' ? e.code : 'RUN_ERROR',
          message: typeof e.message === 'string' ? e.message : 'The run failed.',
        }
        return
      case 'CUSTOM':
        if (e.name === DECISION_EVENT) this.#answers(e.value)
        return
      default: {
        const result = applyEvents(this.#messages, this.#state, [event])
        this.#messages = result.messages
        this.#state = result.state
      }
    }
  }

  /** The answers of a decision as the batch's submitted form: the inspector's "form choices at that moment". */
  #answers(value: unknown): void {
    const batch = this.#lastBatch
    const entries = (value as { entries?: unknown } | null)?.entries
    if (batch === null || !Array.isArray(entries)) return
    const choices: { [interruptId: string]: Json } = {}
    for (const entry of entries) {
      const interruptId = (entry as { interruptId?: unknown } | null)?.interruptId
      if (typeof interruptId === 'string') choices[interruptId] = toJson(entry)
    }
    this.#recorder.add({
      kind: 'form',
      batchId: batch.id,
      phase: 'submit',
      choices,
      entries: entries.map((entry) => toJson(entry)),
    })
  }

  #snapshot(): void {
    const last = this.#last
    const messages = last && this.#messages.length === last.messages.length ? this.#sameMessages(last) : undefined
    const next: SnapshotProjection = {
      threadId: this.threadId,
      status: this.#running ? 'streaming' : 'idle',
      connection: 'idle',
      isLoading: this.#running,
      isResuming: false,
      runId: this.#runId,
      messages: messages ?? this.#messages.map((message) => this.#messageJson(message)),
      state: this.#stateJson(),
      pendingInterrupts: this.#pending,
      error: this.#error,
      recovery: { revision: 0, required: false },
      unsettledEffects: [],
    }
    if (last && sameProjection(last, next)) return
    this.#last = next
    this.#recorder.add({ kind: 'snapshot', snapshot: next })
  }

  /** The state as JSON, copied again only when the assembly replaced it. */
  #stateJson(): Json {
    const cached = this.#stateCache
    if (cached !== undefined && cached.of === this.#state) return cached.json
    this.#stateCache = { of: this.#state, json: toJson(this.#state) }
    return this.#stateCache.json
  }

  /** The previous frame's list when every message is the same object (untouched messages keep their identity). */
  #sameMessages(last: SnapshotProjection): readonly Json[] | undefined {
    for (let i = 0; i < this.#messages.length; i++)
      if (this.#json.get(this.#messages[i]!) !== last.messages[i]) return undefined
    return last.messages
  }

  #messageJson(message: Message): Json {
    const cached = this.#json.get(message)
    if (cached !== undefined) return cached
    const json = toJson(message)
    this.#json.set(message, json)
    return json
  }
}

function sameProjection(a: SnapshotProjection, b: SnapshotProjection): boolean {
  return (
    a.messages === b.messages &&
    a.state === b.state &&
    a.pendingInterrupts === b.pendingInterrupts &&
    a.error === b.error &&
    a.isLoading === b.isLoading &&
    a.runId === b.runId
  )
}

/** Messages of a frame's snapshot that a fork can start after: those with an id (every stored message has one). */
export function messageIdOf(message: Json): string | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined
  const id = (message as { readonly [key: string]: Json }).id
  return typeof id === 'string' ? id : undefined
}
