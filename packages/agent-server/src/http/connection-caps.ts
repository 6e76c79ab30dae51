import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { InterludeError } from '@interlude/protocol'
import type { Limits } from '../config/limits.ts'

export interface ConnectionCapOptions extends Pick<
  Limits,
  'maxConnections' | 'maxConnectionsPerIp' | 'headersTimeoutMs'
> {
  /**
   * Behind a reverse proxy every connection comes from the proxy's address, so a per-address cap would be the whole
   * service's limit: with `trustProxy` it is not applied (the proxy limits its clients; quotas are per principal).
   */
  readonly trustProxy?: boolean | undefined
}

/** What the caps see now (`RunningServer.connections`). */
export interface ConnectionStats {
  /** Admitted sockets. */
  readonly open: number
  /** Admitted sockets between requests (keep-alive), the first to give way. */
  readonly idle: number
  /** Sockets held unread until a slot frees (or Node's headers timeout closes them). */
  readonly waiting: number
  /** Admitted sockets per remote address. */
  readonly byAddress: ReadonlyMap<string, number>
}

/** The caps on a server: what they see now, and the waiters to close when the server closes. */
export interface ConnectionCaps {
  stats(): ConnectionStats
  /** Closes every socket still waiting (Node's `closeAllConnections` does not know them yet). */
  closeWaiting(): void
}

interface Conn {
  readonly socket: Socket
  readonly address: string
  inflight: number
  timer?: NodeJS.Timeout
}

const ignore = () => undefined

/**
 * The answer to a socket the caps cannot take (waiting room full, or nothing freed in time): a complete HTTP response
 * written before its request is read, so the client sees a retryable `503 SERVER_BUSY`, not a reset.
 */
const BUSY = (() => {
  const body = JSON.stringify(
    new InterludeError('SERVER_BUSY', 'Too many open connections; try again shortly.', {
      details: { retryAfterSeconds: 1 },
    }).toEnvelope(),
  )
  return (
    'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  )
})()

function turnAway(socket: Socket): void {
  // The file descriptor goes as soon as the answer is handed to the kernel, which sends it and the FIN on its own:
  // turned-away sockets must not pile up against the open-file limit.
  socket.end(BUSY, () => socket.destroy())
  // A client that never reads its answer does not keep the socket either.
  setTimeout(() => socket.destroy(), 1000).unref()
}

/**
 * Caps on open connections, per process (`maxConnections`) and per remote address (`maxConnectionsPerIp`), that never
 * lock a client out with sockets nobody uses (docs/decisions.md#connections):
 * - an idle keep-alive socket gives way: a newcomer over a cap closes the oldest idle socket (of its address for the
 *   per-address cap), so one client's burst leaves keep-alive sockets behind that the next client reclaims;
 * - when every socket is busy, the newcomer waits unread in a bounded waiting room (as many as the cap) and is
 *   admitted when a socket closes or turns idle; if nothing frees within `headersTimeoutMs`, or the waiting room is
 *   full, it is answered `503 SERVER_BUSY` with `Retry-After` before its request is read (the old cap reset it).
 * A waiting socket is not handed to Node's HTTP server until it is admitted (`emit('connection')` is Node's supported
 * way to pass it a socket later): pausing it is not enough, its parser reads the socket natively.
 * `server.maxConnections` is not used: Node would close the newcomer before any of this could run.
 */
export function capConnections(server: Server, options: ConnectionCapOptions): ConnectionCaps {
  const max = options.maxConnections
  const perIp = options.trustProxy === true ? 0 : options.maxConnectionsPerIp
  const waitingRoom = max > 0 ? max : 1024
  const waitingPerAddress = perIp > 0 ? Math.min(perIp, waitingRoom) : waitingRoom
  const conns = new Map<Socket, Conn>()
  const byAddress = new Map<string, number>()
  // Insertion order is the order sockets turned idle: the first entry is the longest idle.
  const idle = new Set<Conn>()
  const waiting: Conn[] = []
  const waitMs = options.headersTimeoutMs > 0 ? options.headersTimeoutMs : 10_000
  // Node's own handling of a connection (the HTTP parser, its timeouts), run when we admit a socket.
  const handOver = server.listeners('connection') as ((socket: Socket) => void)[]
  server.removeAllListeners('connection')

  const count = (address: string) => byAddress.get(address) ?? 0
  const overGlobal = () => max > 0 && conns.size >= max
  const overAddress = (address: string) => perIp > 0 && count(address) >= perIp

  function oldestIdle(address?: string): Conn | undefined {
    for (const conn of idle) if (address === undefined || conn.address === address) return conn
    return undefined
  }

  /** Frees a slot for `address` by closing idle sockets; true when it may be admitted now. */
  function makeRoom(address: string): boolean {
    if (overAddress(address)) {
      const victim = oldestIdle(address)
      if (victim === undefined) return false
      close(victim)
    }
    if (overGlobal()) {
      const victim = oldestIdle()
      if (victim === undefined) return false
      close(victim)
    }
    return !overAddress(address) && !overGlobal()
  }

  function close(conn: Conn): void {
    forget(conn)
    conn.socket.destroy()
  }

  function forget(conn: Conn): void {
    if (!conns.delete(conn.socket)) return
    idle.delete(conn)
    const left = count(conn.address) - 1
    if (left <= 0) byAddress.delete(conn.address)
    else byAddress.set(conn.address, left)
  }

  function admit(conn: Conn): void {
    conns.set(conn.socket, conn)
    byAddress.set(conn.address, count(conn.address) + 1)
    if (conn.timer !== undefined) clearTimeout(conn.timer)
    conn.socket.off('error', ignore)
    for (const listener of handOver) listener.call(server, conn.socket)
  }

  /** Admits waiters in arrival order while there is (or can be made) room for them. */
  function drain(): void {
    for (let i = 0; i < waiting.length;) {
      const conn = waiting[i]!
      if (conn.socket.destroyed) {
        waiting.splice(i, 1)
      } else if (makeRoom(conn.address)) {
        waiting.splice(i, 1)
        admit(conn)
      } else if (overGlobal()) {
        return // nothing frees for anyone behind it either
      } else i++
    }
  }

  server.on('connection', (socket: Socket) => {
    const conn: Conn = { socket, address: socket.remoteAddress ?? '', inflight: 0 }
    socket.once('close', () => {
      if (conn.timer !== undefined) clearTimeout(conn.timer)
      const queued = waiting.indexOf(conn)
      if (queued >= 0) waiting.splice(queued, 1)
      if (conns.has(socket)) {
        forget(conn)
        drain()
      }
    })
    // In arrival order per address: a newcomer never passes a waiter of its own address, but waiters held by their
    // address's cap do not hold up other addresses.
    const sameAddress = waiting.reduce((n, w) => n + (w.address === conn.address ? 1 : 0), 0)
    if (sameAddress === 0 && makeRoom(conn.address)) {
      admit(conn)
      return
    }
    if (waiting.length >= waitingRoom || sameAddress >= waitingPerAddress) {
      socket.on('error', ignore)
      turnAway(socket)
      return
    }
    // Unread until admitted (it buffers at most one high-water mark); errors of a waiting socket are ours to take.
    socket.on('error', ignore)
    conn.timer = setTimeout(() => {
      const queued = waiting.indexOf(conn)
      if (queued >= 0) waiting.splice(queued, 1)
      turnAway(socket)
    }, waitMs)
    conn.timer.unref()
    waiting.push(conn)
  })

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const conn = conns.get(req.socket)
    if (conn === undefined) return
    conn.inflight++
    idle.delete(conn)
    res.once('close', () => {
      conn.inflight--
      if (conn.inflight > 0 || conn.socket.destroyed || !conns.has(conn.socket)) return
      idle.add(conn)
      if (waiting.length > 0) drain()
    })
  })

  return {
    stats: () => ({ open: conns.size, idle: idle.size, waiting: waiting.length, byAddress: new Map(byAddress) }),
    closeWaiting: () => {
      for (const conn of waiting.splice(0)) conn.socket.destroy()
    },
  }
}
