import type { Limits } from '../config/limits.ts'

export type ConnectionLimits = Pick<Limits, 'headersTimeoutMs' | 'requestTimeoutMs'>

/**
 * Node's own server options for the timeouts: `headersTimeout` closes a connection whose header block is not
 * complete in time (slow-header clients), `requestTimeout` one whose request (headers and body) is not; Node checks
 * both every `connectionsCheckingInterval`, so that interval is kept short.
 */
export function serverTimeoutOptions(limits: ConnectionLimits): {
  headersTimeout: number
  requestTimeout: number
  connectionsCheckingInterval: number
} {
  const headersTimeout = limits.headersTimeoutMs
  // Node requires headersTimeout <= requestTimeout when both are set.
  const requestTimeout = limits.requestTimeoutMs === 0 ? 0 : Math.max(limits.requestTimeoutMs, headersTimeout)
  const shortest = Math.min(...[headersTimeout, requestTimeout].filter((ms) => ms > 0), 30_000)
  return { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.max(250, Math.min(2000, shortest / 4)) }
}
