import type { ExpiryPolicy } from '@interlude/protocol'
import { expiryOptionProblem } from '../agent/expiry-options.ts'
import type { CanDecide } from '../agent/decider.ts'
import { systemClock } from '../clock.ts'
import type { Limits, QuotaRefusal } from './limits.ts'
import { createLogger, logErrorTo } from '../observability/logger.ts'
import type { Store } from '../store/store.ts'
import type { ResolvedWebhookEndpoint } from '../webhooks/webhook-config.ts'
import { resolveWebhookEndpoints } from '../webhooks/webhook-config.ts'
import type { CorsOptions } from './cors-options.ts'
import { checkCorsOptions } from './cors-options.ts'
import type { DecisionLinkConfig, SlackConfig } from './outside-options.ts'
import { resolveDecisionLinks, resolveSlack } from './outside-options.ts'
import { SERVER_DEFAULTS } from './defaults.ts'
import type { AdmissionTurnsOptions, ServerOptions, UsageOptions } from './server-options.ts'

type Resolved<T> = { readonly [K in keyof T]-?: Exclude<T[K], undefined> }

/**
 * `ServerOptions` resolved once, when the server is created: every setting present, defaults applied, values checked.
 * The server's parts take the slice they read (`Pick<ServerConfig, …>`) instead of options of their own.
 */
export interface ServerConfig extends Omit<
  Resolved<ServerOptions>,
  | 'onExpiry'
  | 'limits'
  | 'canDecide'
  | 'webhooks'
  | 'cors'
  | 'admissionTurns'
  | 'onQuotaRefused'
  | 'publicUrl'
  | 'linkSecret'
  | 'slack'
> {
  /** `undefined`: no public URL, no decision links (docs/approvals.md#deciding-outside-the-app). */
  readonly links: DecisionLinkConfig | undefined
  /** `undefined`: no Slack route, no Slack messages. */
  readonly slack: SlackConfig | undefined
  /** `undefined`: by kind (docs/approvals.md#deadlines). */
  readonly onExpiry: ExpiryPolicy | undefined
  readonly limits: Limits
  /** `undefined`: the thread's owner or an `approvers` principal (`core/access/decision-rights.ts`). */
  readonly canDecide: CanDecide | undefined
  /** Checked, with their signers (`resolveWebhookEndpoints`). */
  readonly webhooks: readonly ResolvedWebhookEndpoint[]
  /** `undefined`: same origin only. */
  readonly cors: CorsOptions | undefined
  readonly admissionTurns: Required<AdmissionTurnsOptions> | false
  readonly onQuotaRefused: ((refusal: QuotaRefusal) => void) | undefined
}

/**
 * Fills every absent setting from `SERVER_DEFAULTS` and checks the result; throws a `RangeError` naming a bad one.
 * The store decides two defaults (`exclusive`, `pollMs`) and whether token caps can be kept; it is not called.
 */
export function resolveServerConfig(options: ServerOptions, store: Store): ServerConfig {
  const d = SERVER_DEFAULTS
  const logger = options.logger ?? createLogger()
  const config: ServerConfig = {
    basePath: (options.basePath ?? d.basePath).replace(/\/+$/, ''),
    now: options.now ?? systemClock,
    interruptTtlSeconds: options.interruptTtlSeconds ?? d.interruptTtlSeconds,
    onExpiry: options.onExpiry,
    multitask: options.multitask ?? d.multitask,
    expirySweepMs: options.expirySweepMs ?? d.expirySweepMs,
    limits: { ...d.limits, ...options.limits },
    exclusive: options.exclusive ?? store.kind === 'sqlite',
    runLeaseMs: options.runLeaseMs ?? d.runLeaseMs,
    pollMs: options.pollMs ?? (store.watch ? d.changeFeedPollMs : d.pollMs),
    heartbeatMs: options.heartbeatMs ?? d.heartbeatMs,
    logger,
    logError: options.logError ?? logErrorTo(logger),
    metricsPrincipals: options.metricsPrincipals ?? [],
    processMetrics: options.processMetrics ?? false,
    canDecide: options.canDecide,
    approvers: options.approvers ?? [],
    groups: options.groups ?? {},
    webhooks: resolveWebhookEndpoints(options.webhooks ?? []),
    webhookDelivery: options.webhookDelivery ?? {},
    links: resolveDecisionLinks(options.publicUrl, options.linkSecret),
    slack: resolveSlack(options.slack),
    cors: options.cors,
    shutdownGraceMs: options.shutdownGraceMs ?? d.shutdownGraceMs,
    admissionTurns: options.admissionTurns === false ? false : { ...d.admissionTurns, ...options.admissionTurns },
    onQuotaRefused: options.onQuotaRefused,
    usage: options.usage ?? {},
  }
  checkServerConfig(config, store)
  return config
}

/** The numeric settings and the least each may be (`0`: zero allowed, `>0`: positive). */
const NUMBER_RULES = {
  interruptTtlSeconds: '>0',
  expirySweepMs: '0',
  runLeaseMs: '>0',
  pollMs: '>0',
  heartbeatMs: '>0',
  shutdownGraceMs: '0',
} as const satisfies Partial<Record<keyof ServerConfig, '0' | '>0'>>

/**
 * The limits checked at creation: non-negative integers (`0` turns a quota, cap or timeout off). The history bounds
 * and body sizes are read as they are given (the CLI refuses 0 for them).
 */
const INTEGER_LIMITS = [
  'maxConcurrentRunsPerPrincipal',
  'maxOpenStreamsPerPrincipal',
  'maxNewThreadsPerMinute',
  'maxRequestsPerSecond',
  'maxFailedAuthPerMinute',
  'maxAnonymousSessionsPerMinute',
  'maxBufferedBodyBytes',
  'maxBufferedBodyBytesPerPrincipal',
  'headersTimeoutMs',
  'requestTimeoutMs',
  'maxConnections',
  'maxConnectionsPerIp',
] as const satisfies readonly (keyof Limits)[]

function checkServerConfig(config: ServerConfig, store: Store): void {
  for (const [key, least] of Object.entries(NUMBER_RULES)) {
    const value = config[key as keyof typeof NUMBER_RULES]
    if (!(Number.isFinite(value) && (least === '0' ? value >= 0 : value > 0)))
      throw new RangeError(`${key} must be ${least === '0' ? '0 or ' : ''}a positive number.`)
  }
  for (const key of INTEGER_LIMITS) {
    const value = config.limits[key]
    if (!(Number.isInteger(value) && value >= 0)) throw new RangeError(`limits.${key} must be a non-negative integer.`)
  }
  if (config.cors) checkCorsOptions(config.cors)
  checkUsageOptions(config.usage, store)
  const expiryProblem = expiryOptionProblem(config.onExpiry)
  if (expiryProblem !== undefined) throw new RangeError(expiryProblem)
}

export function checkUsageOptions(options: UsageOptions | undefined, store: Store): void {
  for (const key of ['maxTokensPerThread', 'maxTokensPerPrincipal'] as const) {
    const value = options?.[key]
    if (value === undefined) continue
    if (!(Number.isSafeInteger(value) && value > 0)) throw new RangeError(`usage.${key} must be a positive integer.`)
    if (!store.sumUsage || !store.addRunUsage)
      throw new RangeError(`usage.${key} needs a store with addRunUsage and sumUsage.`)
  }
}
