/** Admission limits (docs/architecture.md); each breach is answered with a typed error before any stream byte. */
export interface Limits {
  /**
   * Request body bytes (`PAYLOAD_TOO_LARGE`). Large enough for clients that re-send the whole
   * history every run (`HttpAgent`); what is new in a request is bounded by the limits below.
   * @default 8 MiB
   */
  readonly maxBodyBytes: number
  /**
   * Nesting depth of the JSON body (objects and arrays; the body itself is depth 1). Deeper
   * bodies are `INVALID_INPUT` with `details: { reason: 'too_deep', maxDepth }`. Checked
   * iteratively right after parsing, so no later serialisation or schema walk can overflow the
   * stack. @default 64
   */
  readonly maxJsonDepth: number
  /**
   * New (unseen) messages in one `RunAgentInput` (`PAYLOAD_TOO_LARGE`). Messages the thread
   * already has (a re-sent history) do not count. @default 1000
   */
  readonly maxMessagesPerInput: number
  /** Bytes of one new (unseen) message as JSON (`PAYLOAD_TOO_LARGE`). @default 1 MiB */
  readonly maxMessageBytes: number
  /** Bytes of one resume payload as JSON (`PAYLOAD_TOO_LARGE`). @default 64 KiB */
  readonly maxPayloadBytes: number
  /**
   * Interrupts in one batch. Calls beyond it get an error result the model can read; a resume
   * with more entries is `INVALID_INPUT`. @default 16
   */
  readonly maxInterruptsPerBatch: number
  /**
   * Messages one thread may hold (docs/decisions.md#bounded-histories, docs/protocol.md#limits). New input that would
   * cross it is `413 THREAD_TOO_LARGE`; a run that would cross it ends with `RUN_ERROR THREAD_TOO_LARGE`.
   * @default 10000
   */
  readonly threadMaxMessages: number
  /** Bytes (message JSON) one thread may hold; same answers as `threadMaxMessages`. @default 32 MiB */
  readonly threadMaxBytes: number
  /**
   * The model window (docs/protocol.md#the-model-window): at most this many of the newest messages are sent to the
   * model, besides the first user message. @default 200
   */
  readonly modelWindowMessages: number
  /** The model window's bytes (message JSON), counted from the newest message. @default 256 KiB */
  readonly modelWindowBytes: number
  /** Bytes of message JSON in one snapshot page (at least one message is always sent). @default 1 MiB */
  readonly snapshotPageBytes: number
  /**
   * A pausing run's `MESSAGES_SNAPSHOT` carries the whole history only while the thread holds at most this many bytes
   * of messages; above it the pause sends none (docs/protocol.md#what-a-run-streams). @default 64 KiB
   */
  readonly pauseSnapshotMaxBytes: number

  // ---- Quotas and limits (docs/decisions.md#operating-it; README "Quotas and limits"). `0` turns a limit off.

  /**
   * Runs of one principal executing at once (new input and resumes; the thread owner is charged). Counted in the store
   * at admission, so it holds across replicas (plus this process's admissions in flight). `RATE_LIMITED`. @default 16
   */
  readonly maxConcurrentRunsPerPrincipal: number
  /** Event streams (`POST /runs`, `GET …/events`) one principal holds open on this process. `RATE_LIMITED`. @default 32 */
  readonly maxOpenStreamsPerPrincipal: number
  /** Threads one principal may create per minute (per process). `RATE_LIMITED`. @default 60 */
  readonly maxNewThreadsPerMinute: number
  /** Authenticated requests of one principal per second (per process). `RATE_LIMITED`. @default 100 */
  readonly maxRequestsPerSecond: number
  /**
   * Failed authentications (`401`) one client address may cause per minute (per process); beyond it a request whose
   * credentials fail is answered `429 RATE_LIMITED` with `Retry-After`. Requests that authenticate are never slowed.
   * @default 30
   */
  readonly maxFailedAuthPerMinute: number
  /**
   * New anonymous sessions (cookie mode) one client address may start per minute (per process). Anonymous principals
   * of one address also share one budget of requests per second and open streams; `0` turns both off (behind a
   * proxy every client has the proxy's address). `RATE_LIMITED`. @default 30
   */
  readonly maxAnonymousSessionsPerMinute: number
  /**
   * Bytes of request bodies buffered at once, across all requests of this process. A body that does not fit is not
   * read: `SERVER_BUSY` (503) with `Retry-After`. Bodies up to 64 KiB are not counted (the connection caps bound
   * them), so small requests pass while large ones wait. @default 64 MiB
   */
  readonly maxBufferedBodyBytes: number
  /** The share of `maxBufferedBodyBytes` one principal may hold at once (`RATE_LIMITED`). @default 16 MiB */
  readonly maxBufferedBodyBytesPerPrincipal: number
  /** A body that sends nothing for this long is refused (`INVALID_INPUT`, `reason: 'body_timeout'`). @default 10000 */
  readonly bodyIdleTimeoutMs: number
  /** Node `server.headersTimeout`: the whole header block must arrive within it, or the socket is closed. @default 10000 */
  readonly headersTimeoutMs: number
  /** Node `server.requestTimeout`: the whole request (headers and body) must arrive within it. @default 60000 */
  readonly requestTimeoutMs: number
  /**
   * Open connections of the process. Over it a new socket closes the longest-idle keep-alive socket, or waits unread
   * until one frees (at most `headersTimeoutMs`, then `503 SERVER_BUSY`); docs/decisions.md#connections. Keep it at
   * most half the open-file limit (`ulimit -n`): waiting sockets hold files too. @default 1000
   */
  readonly maxConnections: number
  /**
   * Open connections from one remote address, with the same give-way and waiting rules. Not applied with
   * `trustProxy` (behind a proxy every connection has the proxy's address). @default 256
   */
  readonly maxConnectionsPerIp: number
  /**
   * Bytes of one tool call's arguments as the model streamed them. Larger arguments are rejected (an
   * error result the model reads) and the history keeps a short placeholder instead
   * (docs/decisions.md#the-model-boundary). @default 64 KiB
   */
  readonly maxToolArgumentBytes: number
}

export const DEFAULT_LIMITS: Limits = {
  maxBodyBytes: 8 * 1024 * 1024,
  maxJsonDepth: 64,
  maxMessagesPerInput: 1000,
  maxMessageBytes: 1024 * 1024,
  maxPayloadBytes: 64 * 1024,
  maxInterruptsPerBatch: 16,
  threadMaxMessages: 10_000,
  threadMaxBytes: 32 * 1024 * 1024,
  modelWindowMessages: 200,
  modelWindowBytes: 256 * 1024,
  snapshotPageBytes: 1024 * 1024,
  pauseSnapshotMaxBytes: 64 * 1024,
  maxConcurrentRunsPerPrincipal: 16,
  maxOpenStreamsPerPrincipal: 32,
  maxNewThreadsPerMinute: 60,
  maxRequestsPerSecond: 100,
  maxFailedAuthPerMinute: 30,
  maxAnonymousSessionsPerMinute: 30,
  maxBufferedBodyBytes: 64 * 1024 * 1024,
  maxBufferedBodyBytesPerPrincipal: 16 * 1024 * 1024,
  bodyIdleTimeoutMs: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  maxConnections: 1000,
  maxConnectionsPerIp: 256,
  maxToolArgumentBytes: 64 * 1024,
}

/**
 * The per-principal quotas turned off: for load tests and benchmarks that put many users' traffic on one principal
 * (the server-wide limits stay on).
 */
export const NO_PRINCIPAL_QUOTAS = {
  maxConcurrentRunsPerPrincipal: 0,
  maxOpenStreamsPerPrincipal: 0,
  maxNewThreadsPerMinute: 0,
  maxRequestsPerSecond: 0,
  maxBufferedBodyBytesPerPrincipal: 0,
  maxFailedAuthPerMinute: 0,
  maxAnonymousSessionsPerMinute: 0,
} as const satisfies Partial<Limits>

/** Which quota refused a request (the `details.quota` of `RATE_LIMITED`, the label of a refusal metric). */
export type QuotaName =
  | 'requestsPerSecond'
  | 'openStreams'
  | 'concurrentRuns'
  | 'newThreadsPerMinute'
  | 'bufferedBodyBytes'
  | 'bufferedBodyBytesPerPrincipal'
  | 'failedAuthPerMinute'
  | 'anonymousSessionsPerMinute'

/** A refusal, as reported to `onQuotaRefused` (observability plugs a counter in here). */
export interface QuotaRefusal {
  readonly quota: QuotaName
  readonly principal: string | undefined
}
