import { describe, expect, it } from 'vitest'
import { createLogger } from '../observability/logger.ts'
import type { Store } from '../store/store.ts'
import { SERVER_DEFAULTS } from './defaults.ts'
import { resolveServerConfig } from './server-config.ts'

/** Resolution reads the store's kind and whether it has a change feed and usage sums; it never calls it. */
const sqlite = { kind: 'sqlite' } as Store
const postgres = { kind: 'postgres', watch: () => () => undefined } as unknown as Store
const logger = createLogger({ level: 'silent' })

describe('resolveServerConfig', () => {
  it('fills every setting from SERVER_DEFAULTS; the store decides exclusive and pollMs', () => {
    const config = resolveServerConfig({ logger }, sqlite)
    expect(config).toMatchObject({
      basePath: SERVER_DEFAULTS.basePath,
      interruptTtlSeconds: SERVER_DEFAULTS.interruptTtlSeconds,
      expirySweepMs: SERVER_DEFAULTS.expirySweepMs,
      limits: SERVER_DEFAULTS.limits,
      exclusive: true,
      runLeaseMs: SERVER_DEFAULTS.runLeaseMs,
      pollMs: SERVER_DEFAULTS.pollMs,
      heartbeatMs: SERVER_DEFAULTS.heartbeatMs,
      shutdownGraceMs: SERVER_DEFAULTS.shutdownGraceMs,
      admissionTurns: SERVER_DEFAULTS.admissionTurns,
      approvers: [],
      metricsPrincipals: [],
      webhooks: [],
      usage: {},
    })
    // Only the settings whose absence means something are left undefined.
    const absent = Object.entries(config).filter(([, value]) => value === undefined)
    expect(absent.map(([key]) => key).sort()).toEqual([
      'canDecide',
      'cors',
      'links',
      'onExpiry',
      'onQuotaRefused',
      'slack',
    ])
    expect(resolveServerConfig({ logger }, postgres)).toMatchObject({
      exclusive: false,
      pollMs: SERVER_DEFAULTS.changeFeedPollMs,
    })
  })

  it('an undefined option is an absent one; given values win; the base path loses its trailing slashes', () => {
    const config = resolveServerConfig(
      { logger, basePath: '/api//', runLeaseMs: undefined, limits: { maxBodyBytes: 10 }, admissionTurns: false },
      sqlite,
    )
    expect(config.basePath).toBe('/api')
    expect(config.runLeaseMs).toBe(SERVER_DEFAULTS.runLeaseMs)
    expect(config.limits).toEqual({ ...SERVER_DEFAULTS.limits, maxBodyBytes: 10 })
    expect(config.admissionTurns).toBe(false)
  })

  it('refuses bad values with a RangeError naming the setting', () => {
    const bad = (options: Parameters<typeof resolveServerConfig>[0]) => () =>
      resolveServerConfig({ logger, ...options }, sqlite)
    expect(bad({ interruptTtlSeconds: 0 })).toThrow(/^interruptTtlSeconds must be a positive number/)
    expect(bad({ expirySweepMs: -1 })).toThrow(/^expirySweepMs must be 0 or a positive number/)
    expect(bad({ pollMs: Number.NaN })).toThrow(/^pollMs must be a positive number/)
    expect(bad({ shutdownGraceMs: -5 })).toThrow(/^shutdownGraceMs must be 0 or a positive number/)
    expect(bad({ limits: { maxRequestsPerSecond: -1 } })).toThrow(
      /^limits\.maxRequestsPerSecond must be a non-negative/,
    )
    expect(bad({ limits: { maxConnections: 1.5 } })).toThrow(/^limits\.maxConnections must be a non-negative integer/)
    expect(bad({ cors: { origins: [] } })).toThrow(/cors\.origins/)
    expect(bad({ usage: { maxTokensPerThread: 0 } })).toThrow(/usage\.maxTokensPerThread/)
    expect(bad({ webhooks: [{ url: 'ftp://x' }] })).toThrow(RangeError)
  })
})
