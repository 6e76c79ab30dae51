import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'

/** The outcome of authenticating one request. */
export interface Authenticated {
  /** Stable id of the principal; threads belong to it. */
  readonly principal: string
  /** A `Set-Cookie` value to send back (e.g. a freshly issued anonymous session). */
  readonly setCookie?: string
}

/** `authenticate(request) -> principal | null` (docs/architecture.md). `null` answers `UNAUTHENTICATED` (401). */
export type Authenticate = (request: Request) => Authenticated | null | Promise<Authenticated | null>

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8')
  const y = Buffer.from(b, 'utf8')
  return x.length === y.length && timingSafeEqual(x, y)
}

/**
 * Bearer tokens: `Authorization: Bearer <secret>` maps to the principal named by the token.
 * @example bearerTokens({ alice: 'secret' })
 */
export function bearerTokens(tokens: Readonly<Record<string, string>>): Authenticate {
  const entries = Object.entries(tokens)
  if (entries.length === 0) throw new RangeError('bearerTokens needs at least one token.')
  for (const [name, secret] of entries) {
    if (name.length === 0 || secret.length === 0) throw new RangeError('Token names and secrets must be non-empty.')
  }
  return (request) => {
    const header = request.headers.get('authorization')
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null
    if (!match) return null
    const presented = match[1]!
    // Compare against every token so timing does not reveal which names exist.
    let principal: string | undefined
    for (const [name, secret] of entries) if (safeEqual(presented, secret) && principal === undefined) principal = name
    return principal === undefined ? null : { principal }
  }
}

export interface AnonymousSessionOptions {
  /** HMAC key; keep it stable across restarts or every session is lost. At least 16 characters. */
  readonly secret: string
  /** @default 'interlude_session' */
  readonly cookieName?: string
  /** Add `Secure` to the cookie (HTTPS deployments). @default false */
  readonly secure?: boolean
  /** @default 365 days */
  readonly maxAgeSeconds?: number
}

function sign(secret: string, id: string): string {
  return createHmac('sha256', secret).update(id).digest('base64url')
}

function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/**
 * Signed anonymous sessions for the workbench: a request without a valid cookie gets a new
 * session id (HMAC-signed, HttpOnly, SameSite=Lax) and owns the threads it creates from then on.
 */
export function anonymousSessionCookie(options: AnonymousSessionOptions): Authenticate {
  if (options.secret.length < 16) throw new RangeError('The session secret must have at least 16 characters.')
  const name = options.cookieName ?? 'interlude_session'
  const maxAge = options.maxAgeSeconds ?? 365 * 24 * 3600
  return (request) => {
    const value = readCookie(request.headers.get('cookie'), name)
    if (value !== undefined) {
      const dot = value.lastIndexOf('.')
      const id = dot > 0 ? value.slice(0, dot) : ''
      if (/^[A-Za-z0-9-]{1,64}$/.test(id) && safeEqual(value.slice(dot + 1), sign(options.secret, id))) {
        return { principal: `anon:${id}` }
      }
    }
    const id = randomUUID()
    const cookie = [
      `${name}=${id}.${sign(options.secret, id)}`,
      'Path=/',
      'HttpOnly',
      'SameSite=Lax',
      `Max-Age=${maxAge}`,
    ]
    if (options.secure) cookie.push('Secure')
    return { principal: `anon:${id}`, setCookie: cookie.join('; ') }
  }
}

/** A random secret suitable for `anonymousSessionCookie`. */
export function generateSessionSecret(): string {
  return randomBytes(32).toString('base64url')
}
