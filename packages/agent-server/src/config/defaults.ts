import { DEFAULT_LIMITS } from './limits.ts'

/**
 * Every default of the server's settings, written here once: `resolveServerConfig` fills an absent option from it,
 * the parts that also run on their own (the run manager, the SSE body, the session cookie, the OpenAI provider, …)
 * fall back to it, and the CLI's usage text prints it. Settings whose default is a rule rather than a value (`onExpiry`
 * by kind, `exclusive` by store kind, the log level from the environment) say so where they are resolved.
 */
export const SERVER_DEFAULTS = {
  /** Mount point of the API routes. */
  basePath: '/api/agent',
  interruptTtlSeconds: 3600,
  expirySweepMs: 1000,
  /** Admission limits, quotas and history bounds (`config/limits.ts`). */
  limits: DEFAULT_LIMITS,
  runLeaseMs: 15_000,
  /** The log poll without a store change feed… */
  pollMs: 250,
  /** …and with one (PostgreSQL LISTEN/NOTIFY), where the poll is only a safety net. */
  changeFeedPollMs: 1000,
  /** Silence on an SSE stream before a `: ping` comment. */
  heartbeatMs: 15_000,
  shutdownGraceMs: 10_000,
  admissionTurns: { sliceMs: 2, maxRunDelayMs: 100 },
  /** What input for a busy thread does when it names no strategy (docs/protocol.md#multitask). */
  multitask: 'reject' as const,

  // `startServer` (the CLI has a few defaults of its own: `CLI_DEFAULTS` in cli-flags.ts).
  /** Any free port. */
  port: 0,
  host: '127.0.0.1',
  metricsHost: '127.0.0.1',
  model: 'scripted',
  /** Scripted model: delay between streamed tokens. */
  pacingMs: 0,
  /** PostgreSQL pools per process: run work, and connections kept open for admission. */
  dbPool: { max: 20, admissionMax: 10 },
  /** Anonymous sessions: 30 days from their issue time. */
  sessionMaxAgeSeconds: 30 * 24 * 3600,
  secureCookies: 'auto',
  trustProxy: false,

  /** The OpenAI provider's bounds (docs/decisions.md#the-model-boundary); `0` turns a timeout off. */
  openai: {
    timeoutMs: 60_000,
    idleTimeoutMs: 60_000,
    totalTimeoutMs: 300_000,
    maxRetries: 2,
    maxRetryDelayMs: 10_000,
    maxCompletionTokens: 4096,
  },
} as const
