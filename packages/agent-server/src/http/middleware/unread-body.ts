import { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { MiddlewareHandler } from 'hono'
import type { ServerEnv } from '../env.ts'

/** How long a connection answered over an unread body stays half-closed (answer sent, nothing read) before it goes. */
export const UNREAD_LINGER_MS = 2000

/** A body left unread up to this size is read and discarded by Node (so the connection stays reusable). */
const DUMP_MAX_BYTES = 64 * 1024

type HeldSocket = Socket & { _paused?: boolean; destroySoon?: () => void }

const held = new WeakSet<Socket>()

/** With `@hono/node-server`, `env.incoming` is Node's request (absent under `app.request`, HTTP/2's differs). */
export function http1Incoming(env: unknown): IncomingMessage | undefined {
  const incoming = (env as { incoming?: unknown } | undefined)?.incoming
  return incoming instanceof IncomingMessage && incoming.httpVersionMajor === 1 ? incoming : undefined
}

/**
 * Answers with `Connection: close` and never reads the rest of the body: the bytes the client still sends stay in the
 * kernel's socket buffers (bounded by the receive window, outside the process's heap and RSS) until the connection is
 * destroyed. Returns whether it applies (an HTTP/1 request whose body has not been read to its end).
 *
 * Reading and discarding the rest instead (a "lingering close") costs the process every byte the client sends: 100
 * held 8 MB bodies took RSS from 84 MB to ~900 MB. Closing at once with unread data makes the kernel send a reset,
 * which can destroy the answer still in flight. So: the socket stops reading, the answer is written, the write side
 * is half-closed (FIN, the client reads the answer and its end), and the socket is destroyed `UNREAD_LINGER_MS` later.
 */
export function leaveBodyUnread(env: unknown): boolean {
  const incoming = http1Incoming(env)
  if (!incoming || incoming.complete) return false
  const socket = incoming.socket as HeldSocket | null
  if (!socket || socket.destroyed || held.has(socket)) return true
  held.add(socket)
  // `_paused` is Node's own "do not resume this socket" flag (its HTTP server sets it while pipelined answers back
  // up): with it neither Node's dump of an unread body on `finish` nor @hono/node-server's drain of one
  // (`IncomingMessage.resume()`) starts reading the socket again.
  socket._paused = true
  socket.pause()
  // Node ends a `Connection: close` answer with `socket.destroySoon()` (FIN, then destroy once written): replaced for
  // this socket by a half-close that lingers, unread, before the destroy.
  let closing = false
  socket.destroySoon = () => {
    if (closing) return
    closing = true
    if (socket.destroyed) return
    socket.end()
    const timer = setTimeout(() => socket.destroy(), UNREAD_LINGER_MS)
    timer.unref()
    socket.once('close', () => clearTimeout(timer))
  }
  return true
}

/** Whether more than `DUMP_MAX_BYTES` of the body may be left to read (a larger declared length, or chunked). */
function largeRestLeft(incoming: IncomingMessage): boolean {
  if (incoming.complete) return false
  const declared = incoming.headers['content-length']
  if (declared === undefined) return incoming.headers['transfer-encoding'] !== undefined
  const length = Number(declared)
  return !(Number.isFinite(length) && length <= DUMP_MAX_BYTES)
}

/**
 * Every answer given over a large body left unread (a 401 before authentication, a 429 of the request quota, a 404,
 * a refusal of `jsonBody`): the connection is closed without reading the rest (`leaveBodyUnread`), instead of Node
 * reading and discarding a body of any size to keep the connection alive. Small rests are left to Node.
 */
export const closeOverUnreadBodies: MiddlewareHandler<ServerEnv> = async (c, next) => {
  await next()
  const incoming = http1Incoming(c.env)
  if (!incoming || !largeRestLeft(incoming)) return
  if (!leaveBodyUnread(c.env)) return
  try {
    c.res.headers.set('Connection', 'close')
  } catch {
    // Immutable headers (a fetched Response passed through): rebuilt with the header.
    c.res = new Response(c.res.body, { status: c.res.status, headers: withClose(c.res.headers) })
  }
}

function withClose(headers: Headers): Headers {
  const copy = new Headers(headers)
  copy.set('Connection', 'close')
  return copy
}
