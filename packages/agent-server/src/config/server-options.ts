import type { ExpiryPolicy } from '@interlude/protocol'
import type { CanDecide } from '../agent/decider.ts'
import type { Clock } from '../clock.ts'
import type { Limits, QuotaRefusal } from './limits.ts'
import type { ModelUsage } from '../models/model.ts'
import type { Logger } from '../observability/logger.ts'
import type { WebhookEndpoint } from '../webhooks/webhook-config.ts'
import type { SlackOptions } from './outside-options.ts'
import type { WebhookDeliveryOptions } from '../webhooks/webhook-sender.ts'
import type { CorsOptions } from './cors-options.ts'
import type { MultitaskStrategy } from './multitask.ts'

/**
 * The settings of one server, as `createAgentServer` and `startServer` take them. Each is optional: absent (or
 * `undefined`) takes its default from `SERVER_DEFAULTS` (config/defaults.ts). `resolveServerConfig` resolves and
 * checks them once, when the server is created; a bad value throws a `RangeError` naming the option.
 */
export interface ServerOptions {
  /** Mount point of the routes. @default SERVER_DEFAULTS.basePath */
  readonly basePath?: string | undefined
  /**
   * The server clock in epoch ms: interrupt expiry, run leases, recovery, timestamps (inject to test them).
   * @default systemClock
   */
  readonly now?: Clock | undefined
  /** Lifetime of an interrupt batch. @default SERVER_DEFAULTS.interruptTtlSeconds */
  readonly interruptTtlSeconds?: number | undefined
  /**
   * What happens to a batch when its deadline passes, for tools that set no `onExpiry` (docs/approvals.md#deadlines).
   * @default 'deny' for tool approvals, 'cancel' for `askUser`
   */
  readonly onExpiry?: ExpiryPolicy | undefined
  /**
   * What input for a busy thread does when its `forwardedProps.interlude.multitask` names no strategy
   * (docs/protocol.md#multitask). @default SERVER_DEFAULTS.multitask (`reject`)
   */
  readonly multitask?: MultitaskStrategy | undefined
  /**
   * Interval of the expiry sweep of due batches; `0`: only on first touch and `expirySweeper.sweepOnce()`.
   * @default SERVER_DEFAULTS.expirySweepMs
   */
  readonly expirySweepMs?: number | undefined
  /** Admission limits, quotas and history bounds; each one left out keeps its default. @default DEFAULT_LIMITS */
  readonly limits?: Partial<Limits> | undefined
  /**
   * This process is the only one using the store. At startup every run a previous process left
   * `running` is taken over and continued (docs/architecture.md, "Durable continuation"). With `false` (several
   * replicas on one database) only runs whose lease ended are taken over — at startup, by a periodic sweep and on
   * first touch of their thread. @default true for SQLite, false otherwise
   */
  readonly exclusive?: boolean | undefined
  /**
   * Lease of a running run, renewed by its process; after it the run counts as abandoned.
   * @default SERVER_DEFAULTS.runLeaseMs
   */
  readonly runLeaseMs?: number | undefined
  /**
   * Interval of the log poll that wakes live tails of runs executing in other processes (and of the recovery sweep,
   * ×4). @default SERVER_DEFAULTS.pollMs without a store change feed, SERVER_DEFAULTS.changeFeedPollMs with one
   */
  readonly pollMs?: number | undefined
  /** Silence on an SSE stream before a `: ping` comment is sent. @default SERVER_DEFAULTS.heartbeatMs */
  readonly heartbeatMs?: number | undefined
  /** Where unexpected errors are reported (never to clients). @default an `error` line of `logger` */
  readonly logError?: ((message: string, error: unknown) => void) | undefined
  /**
   * Structured JSON logs, one line per event (README, "Logs and metrics"). @default `createLogger()`: stdout at
   * `INTERLUDE_LOG_LEVEL`, else `info` (`silent` under vitest)
   */
  readonly logger?: Logger | undefined
  /**
   * Principals who may read `GET {base}/metrics` (Prometheus text; besides the `approvers`). Without any, the route
   * answers `404 NOT_FOUND` to everybody; `startServer({ metricsPort })` serves the same text on a port of its own.
   * @default []
   */
  readonly metricsPrincipals?: readonly string[] | undefined
  /** Also export Node process metrics (CPU, memory, event loop, GC). @default false (`startServer`: with metrics) */
  readonly processMetrics?: boolean | undefined
  /**
   * Who may decide an interrupt (docs/approvals.md); a tool's `approvers` narrows it further.
   * @default the thread's owner, or a principal named in `approvers`
   */
  readonly canDecide?: CanDecide | undefined
  /** Principals who may decide every batch on the server (read by the default `canDecide` only). @default [] */
  readonly approvers?: readonly string[] | undefined
  /**
   * Named groups of principals, for a tool's `policy` (`of: ['group:sre']`, `escalate.to`;
   * docs/approvals.md#organisation-policies). A group grants nothing by itself: it only names who a policy means.
   * @default {}
   */
  readonly groups?: Readonly<Record<string, readonly string[]>> | undefined
  /**
   * Endpoints that receive `interrupt.opened`, `interrupt.decided`, `interrupt.expired` and `run.failed`, signed per
   * the Standard Webhooks spec, at least once, from a durable outbox (docs/approvals.md, "Webhooks"). @default []
   */
  readonly webhooks?: readonly WebhookEndpoint[] | undefined
  /** Tuning of the webhook sender (poll, lock, concurrency, timeout, retries); the defaults suit most hosts. */
  readonly webhookDelivery?: WebhookDeliveryOptions | undefined
  /**
   * Where the server is reached from outside (docs/approvals.md#deciding-outside-the-app): with it, `interrupt.opened`
   * webhooks carry signed single-use decision links `{publicUrl}{basePath}/decide/<token>`.
   */
  readonly publicUrl?: string | undefined
  /** The secret decision links are signed with. @default `INTERLUDE_SESSION_SECRET` (`startServer`: the session secret) */
  readonly linkSecret?: string | undefined
  /** Deciding in Slack: the signed actions route, the user map, the incoming webhook (docs/approvals.md). */
  readonly slack?: SlackOptions | undefined
  /** Cross-origin access for browser apps on other origins (preflights, allowed headers). @default same origin only */
  readonly cors?: CorsOptions | undefined
  /**
   * Graceful shutdown (`shutdown()`, SIGTERM/SIGINT in the CLI): how long running turns may take to finish before
   * their leases are released for the restart or another replica (docs/architecture.md, "Shutdown").
   * @default SERVER_DEFAULTS.shutdownGraceMs
   */
  readonly shutdownGraceMs?: number | undefined
  /**
   * Admission turns under a burst (docs/architecture.md, "Admission under a burst"); `false`: every admission runs
   * as soon as its request is read, as before turns existed. @default on, with SERVER_DEFAULTS.admissionTurns
   */
  readonly admissionTurns?: AdmissionTurnsOptions | false | undefined
  /** Called on every quota refusal (`RATE_LIMITED`, `SERVER_BUSY`): the hook a refusal counter plugs into. */
  readonly onQuotaRefused?: ((refusal: QuotaRefusal) => void) | undefined
  /** Token caps per thread / per principal and the `onUsage` hook (docs/protocol.md#token-usage). @default no caps */
  readonly usage?: UsageOptions | undefined
}

/** One model call's token counts, as the `onUsage` hook sees them (docs/protocol.md#token-usage). */
export interface UsageReport {
  readonly threadId: string
  readonly runId: string
  /** The thread's owner (whose allowance the tokens count against). */
  readonly principal: string
  /** The provider's name, e.g. `openai:gpt-4o-mini`. */
  readonly model: string
  readonly usage: ModelUsage
}

/** Token accounting of the model calls (docs/decisions.md#the-model-boundary). Caps count input + output tokens of finished and running runs. */
export interface UsageOptions {
  /** Tokens one thread may use over its life; the next model call past it fails with `USAGE_LIMIT_EXCEEDED`. */
  readonly maxTokensPerThread?: number
  /** Tokens all threads of one principal (owner) may use together. */
  readonly maxTokensPerPrincipal?: number
  /** Called after every model call that reported usage (logs, metrics). Must not throw. */
  readonly onUsage?: (report: UsageReport) => void
}

/** How admissions of a burst take turns with the event loop (docs/architecture.md, "Admission under a burst"). */
export interface AdmissionTurnsOptions {
  /** CPU an event-loop iteration gives to admissions before it reads its sockets again. @default SERVER_DEFAULTS */
  readonly sliceMs?: number
  /** How long an admitted run waits at most for the admissions in progress (0 to 60000). @default SERVER_DEFAULTS */
  readonly maxRunDelayMs?: number
}
