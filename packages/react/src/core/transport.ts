import type { AgUiEvent, RunAgentInput, ThreadSnapshot } from '@interlude/protocol'

/** One received event with its SSE `id:` (the server's per-thread sequence), if any. */
export interface TransportEvent {
  readonly id?: string | undefined
  readonly event: AgUiEvent
}

export interface RunRequestOptions {
  readonly signal: AbortSignal
}

export interface ConnectOptions {
  /** Replay strictly after this event id; `undefined` replays the thread from its start. */
  readonly lastEventId: string | undefined
  readonly signal: AbortSignal
}

/**
 * How the runtime talks to an agent endpoint. Every failure is an `InterludeError`: admission
 * errors keep the server's code (and `details`), a failed fetch is `NETWORK_ERROR`, a malformed
 * stream `PROTOCOL_ERROR`, an abort `ABORTED`.
 */
export interface Transport {
  /** `POST {base}/runs`: starts a run (or resumes one) and streams its events. */
  run(input: RunAgentInput, options: RunRequestOptions): AsyncIterable<TransportEvent>
  /** `GET {base}/threads/:threadId/events`: replay after `lastEventId`, then the live tail. */
  connect(threadId: string, options: ConnectOptions): AsyncIterable<TransportEvent>
  /** `GET {base}/threads/:threadId`: the server snapshot for cold recovery. */
  getThread(threadId: string, options?: { readonly signal?: AbortSignal }): Promise<ThreadSnapshot>
  /** `POST {base}/threads/:threadId/runs/:runId/cancel`: an explicit stop. */
  cancel?(threadId: string, runId: string): Promise<void>
}
