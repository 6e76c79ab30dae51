import type {
  AgUiEvent,
  ForkCreated,
  ForkRequest,
  RunAgentInput,
  ThreadFork,
  ThreadSnapshot,
} from '@interlude/protocol'
import type { ReconcileEffectOptions } from './types.ts'

/** One received event with its SSE `id:` (the server's per-thread sequence), if any. */
export interface TransportEvent {
  readonly id?: string | undefined
  readonly event: AgUiEvent
}

export interface RunRequestOptions {
  readonly signal: AbortSignal
  /** Called when bytes other than events arrive (SSE comments such as `: ping`): the stream is alive. */
  readonly onActivity?: () => void
}

export interface ConnectOptions {
  /** Replay strictly after this event id; `undefined` replays the thread from its start. */
  readonly lastEventId: string | undefined
  readonly signal: AbortSignal
  /** Called when bytes other than events arrive (SSE comments such as `: ping`): the stream is alive. */
  readonly onActivity?: () => void
  /** True when joining a live run (attach, `ALREADY_RESUMED`) rather than healing a drop: the `follow` endpoint. */
  readonly follow?: boolean
  /** Stay open across runs (`?follow=1`): watching a thread whose batch is pending (docs/client-contract.md#decided-elsewhere). */
  readonly stay?: boolean
}

/**
 * How the server took input sent while the thread was busy (docs/protocol.md#multitask): queued at a position, written
 * into the running turn (`steered`), or started at once because the thread had become free (`started`).
 */
export type SubmitAnswer = { readonly queued: number } | { readonly steered: true } | { readonly started: true }

/**
 * How the runtime talks to an agent endpoint. Streams yield **batches** of events (typically the
 * events decoded from one network read): a per-event async hop costs more than parsing the event. Every failure is an `InterludeError`: admission
 * errors keep the server's code (and `details`), a failed fetch is `NETWORK_ERROR`, a malformed
 * stream `PROTOCOL_ERROR`, an abort `ABORTED`.
 */
export interface Transport {
  /** `POST {base}/runs`: starts a run (or resumes one) and streams its events. */
  run(input: RunAgentInput, options: RunRequestOptions): AsyncIterable<readonly TransportEvent[]>
  /** `GET {base}/threads/:threadId/events`: replay after `lastEventId`, then the live tail. */
  connect(threadId: string, options: ConnectOptions): AsyncIterable<readonly TransportEvent[]>
  /**
   * `GET {base}/threads/:threadId`: the server snapshot for cold recovery; with `before`, the page of messages before
   * that `messagesCursor` (`EarlierMessages`).
   */
  getThread(
    threadId: string,
    options?: { readonly signal?: AbortSignal; readonly before?: string },
  ): Promise<ThreadSnapshot>
  /**
   * `POST {base}/runs` of input with a multitask strategy: answers how it was taken, never streams (a run that started at
   * once is read from the thread log).
   */
  submit?(input: RunAgentInput, options?: { readonly signal?: AbortSignal }): Promise<SubmitAnswer>
  /** `POST {base}/threads/:threadId/runs/:runId/cancel`: an explicit stop. */
  cancel?(threadId: string, runId: string): Promise<void>
  /** `POST {base}/threads/:threadId/effects/:toolCallId/reconcile`: settles an unknown effect by hand. */
  reconcile?(threadId: string, body: ReconcileEffectOptions): Promise<void>
  /** `POST {base}/threads/:threadId/tool-calls/:toolCallId/claim`: claims a browser call before it runs here. */
  claim?(threadId: string, toolCallId: string, claimId: string): Promise<void>
  /** `POST {base}/threads/:threadId/fork`: a new thread with a prefix of this one's history (docs/time-travel.md). */
  fork?(threadId: string, request: ForkRequest): Promise<ForkCreated>
  /** `GET {base}/threads/:threadId/forks`: the thread's forks, oldest first. */
  forks?(threadId: string): Promise<readonly ThreadFork[]>
}
