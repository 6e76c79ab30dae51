import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import type { Limits } from '../config/limits.ts'

export type ConnectionLimits = Pick<
  Limits,
  'headersTimeoutMs' | 'requestTimeoutMs' | 'maxConnections' | 'maxConnectionsPerIp'
>

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

/**
 * Caps on open connections: `server.maxConnections` for the process (beyond it Node closes new sockets at once,
 * so accepting never runs into the open-file limit) and `maxConnectionsPerIp` per remote address, so one client
 * holding sockets open (slow headers, idle keep-alive) cannot take every slot. Returns how many sockets each
 * address holds (tests).
 */
export function capConnections(server: Server, limits: ConnectionLimits): () => ReadonlyMap<string, number> {
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections
  const byAddress = new Map<string, number>()
  const perIp = limits.maxConnectionsPerIp
  if (perIp > 0) {
    server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? ''
      const open = byAddress.get(address) ?? 0
      if (open >= perIp) {
        socket.destroy()
        return
      }
      byAddress.set(address, open + 1)
      socket.once('close', () => {
        const left = (byAddress.get(address) ?? 1) - 1
        if (left <= 0) byAddress.delete(address)
        else byAddress.set(address, left)
      })
    })
  }
  return () => byAddress
}
