/**
 * The workbench recording format, version 1: a JSON document with an ordered list of frames.
 * Every frame has a strictly increasing `seq` and `t`, the milliseconds since the recording
 * started (a monotonic clock, so `t` never decreases). Everything is plain JSON: a recording can
 * be downloaded, checked in, loaded from a file and replayed without any network.
 */

export const RECORDING_VERSION = 1

/** JSON values as they appear inside a recording. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json }

/** An `InterludeError` reduced to what leaves a process: code, message, details. */
export interface RecordedError {
  readonly code: string
  readonly message: string
  readonly details?: Json
}

/** The batch exactly as the SDK exposed it (`useChat().pendingInterrupts`). */
export interface RecordedBatch {
  /** The local ownership token; never sent over the wire. */
  readonly id: string
  readonly interrupts: readonly Json[]
}

/** A JSON projection of one `useChat` snapshot. */
export interface SnapshotProjection {
  readonly threadId: string
  readonly status: string
  readonly connection: string
  readonly isLoading: boolean
  readonly isResuming: boolean
  readonly runId: string | null
  readonly messages: readonly Json[]
  readonly state: Json
  readonly pendingInterrupts: RecordedBatch | null
  readonly error: RecordedError | null
  readonly recovery: { readonly revision: number; readonly required: boolean }
  readonly unsettledEffects: readonly Json[]
  /**
   * The decision records the client holds (`useChat().decisions`: who decided each batch, via what, when). Absent in
   * recordings made before decisions reached the client; a replay then reads them from the `interlude.decision`
   * events.
   */
  readonly decisions?: readonly Json[]
}

/** What an HTTP request was for. */
export type RequestPurpose =
  | 'run'
  | 'resume'
  | 'events'
  /** `GET …/events?follow=1`: the thread followed while a batch is pending (a decision made elsewhere joins here). */
  | 'follow'
  | 'thread'
  | 'inbox'
  | 'cancel'
  /** `POST …/threads/:id/decisions` (the Approvals view, closing an expired `keep` batch). */
  | 'decisions'
  | 'other'

interface FrameBase {
  readonly seq: number
  /** Milliseconds since the recording started. */
  readonly t: number
}

/** One SSE event as it arrived, with the request that carried it. */
export interface SseEventFrame extends FrameBase {
  readonly kind: 'sse-event'
  readonly requestId: string
  /** The SSE `id:` (the server's per-thread sequence), if the frame had one. */
  readonly sseId: string | null
  /** The event exactly as parsed from `data:` (any JSON, also malformed events). */
  readonly event: Json
}

/** Every change of the `useChat` snapshot. */
export interface SnapshotFrame extends FrameBase {
  readonly kind: 'snapshot'
  readonly snapshot: SnapshotProjection
}

/** The form choices for one batch at that moment; `submit` is recorded before `resume` is called. */
export interface FormFrame extends FrameBase {
  readonly kind: 'form'
  readonly batchId: string
  readonly phase: 'draft' | 'submit'
  /** Per interrupt id: what the person chose so far (decision, edited args, answers). */
  readonly choices: { readonly [interruptId: string]: Json }
  /** The complete `resume` argument's entries, on `submit`. */
  readonly entries?: readonly Json[]
}

/** A request started. `input` is a summary (the history is in the snapshots). */
export interface RequestStartFrame extends FrameBase {
  readonly kind: 'request-start'
  readonly requestId: string
  readonly method: string
  readonly path: string
  readonly purpose: RequestPurpose
  readonly input?: Json
}

/** The response head arrived (or an admission error body). */
export interface RequestResponseFrame extends FrameBase {
  readonly kind: 'request-response'
  readonly requestId: string
  readonly status: number
  readonly ok: boolean
  readonly contentType: string | null
  /** The `{ error }` envelope of a non-2xx answer, if it was one. */
  readonly error?: RecordedError
}

export type RequestEndOutcome = 'complete' | 'http-error' | 'network-error' | 'aborted' | 'stream-error'

/** The request finished: its body ended, failed or was aborted. */
export interface RequestEndFrame extends FrameBase {
  readonly kind: 'request-end'
  readonly requestId: string
  readonly outcome: RequestEndOutcome
  readonly eventCount: number
  readonly error?: RecordedError
}

/** What the person or the app did (send, resume, stop, new conversation, recover, …). */
export interface ActionFrame extends FrameBase {
  readonly kind: 'action'
  readonly name: string
  readonly detail?: Json
  /** Set when the action was refused synchronously (e.g. `resume` threw). */
  readonly error?: RecordedError
}

export type RecordingFrame =
  SseEventFrame | SnapshotFrame | FormFrame | RequestStartFrame | RequestResponseFrame | RequestEndFrame | ActionFrame

export type FrameKind = RecordingFrame['kind']

export const FRAME_KINDS: readonly FrameKind[] = [
  'sse-event',
  'snapshot',
  'form',
  'request-start',
  'request-response',
  'request-end',
  'action',
]

export interface RecordingMeta {
  readonly title: string
  /** Which app wrote it. */
  readonly app: string
  /** Where it was recorded (origin only). */
  readonly origin?: string
  readonly userAgent?: string
  readonly notes?: string
}

export interface Recording {
  readonly version: typeof RECORDING_VERSION
  /** ISO-8601 time when frame `t = 0` was taken. */
  readonly createdAt: string
  readonly meta: RecordingMeta
  readonly frames: readonly RecordingFrame[]
}

/** A frame before the recorder numbers and stamps it. */
export type FrameInput = RecordingFrame extends infer F
  ? F extends RecordingFrame
    ? Omit<F, 'seq' | 't'>
    : never
  : never
