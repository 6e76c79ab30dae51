import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import { InterludeError } from '@interlude/protocol'
import { SERVER_DEFAULTS } from '../config/defaults.ts'

/** The outcome of authenticating one request. */
export interface Authenticated {
  /** Stable id of the principal; threads belong to it. */
  readonly principal: string
  /** A `Set-Cookie` value to send back (e.g. a freshly issued anonymous session). */
  readonly setCookie?: string
  /**
   * A principal anybody can become without credentials (an anonymous session): its quotas are shared by the client
   * address (docs/protocol.md#limits), since a client can start a new one with every request.
   */
  readonly anonymous?: boolean
}

/** `authenticate(request) -> principal | null` (docs/architecture.md). `null` answers `UNAUTHENTICATED` (401). */
export type Authenticate = (request: Request) => Authenticated | null | Promise<Authenticated | null>

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8')
  const y = Buffer.from(b, 'utf8')
  return x.length === y.length && timingSafeEqual(x, y)
}

/**
 * What makes a token table unusable (refused at startup): empty names or secrets, whitespace in either, a secret
 * shared by two principals (a request could not say who it is). Short secrets are only warned about
 * (`weakTokenNames`).
 */
export function tokensProblem(tokens: Readonly<Record<string, string>>): string | undefined {
  const seen = new Map<string, string>()
  for (const [name, secret] of Object.entries(tokens)) {
    if (name.length === 0 || secret.length === 0) return 'Token names and secrets must be non-empty.'
    if (/\s/.test(name) || /\s/.test(secret)) return `The token of "${name}" contains whitespace.`
    const other = seen.get(secret)
    if (other !== undefined) return `"${other}" and "${name}" share one token secret.`
    seen.set(secret, name)
  }
  return undefined
}

/** Principals whose secret is shorter than 16 characters (guessable; warned about at startup). */
export function weakTokenNames(tokens: Readonly<Record<string, string>>): string[] {
  return Object.entries(tokens)
    .filter(([, secret]) => secret.length < 16)
    .map(([name]) => name)
}

/**
 * Bearer tokens: `Authorization: Bearer <secret>` maps to the principal named by the token.
 * @example bearerTokens({ alice: 'secret' })
 */
export function bearerTokens(tokens: Readonly<Record<string, string>>): Authenticate {
  const entries = Object.entries(tokens)
  if (entries.length === 0) throw new RangeError('bearerTokens needs at least one token.')
  const problem = tokensProblem(tokens)
  if (problem !== undefined) throw new RangeError(problem)
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
  /** HMAC key; keep it stable across restarts or every session is lost. At least 16 characters, no whitespace. */
  readonly secret: string
  /** Over HTTPS the cookie is `__Host-` + this name. @default 'interlude_session' */
  readonly cookieName?: string
  /**
   * `Secure` cookies with the `__Host-` prefix: `true` always, `false` never, `'auto'` when the request arrived over
   * HTTPS (its URL, or `X-Forwarded-Proto: https` with `trustProxy`). Browsers keep `Secure` cookies only from secure
   * origins (http://localhost and 127.0.0.1 count in Chromium and Firefox, but not a plain-http host name).
   * @default SERVER_DEFAULTS.secureCookies
   */
  readonly secure?: boolean | 'auto' | undefined
  /** Believe `X-Forwarded-Proto` (a TLS-terminating proxy in front of the server). @default false */
  readonly trustProxy?: boolean | undefined
  /**
   * Server-side lifetime of a session from its issue time (signed into the cookie): an older cookie is not accepted,
   * a new session starts. Also the cookie's `Max-Age`. @default SERVER_DEFAULTS.sessionMaxAgeSeconds (30 days)
   */
  readonly maxAgeSeconds?: number | undefined
  /** The clock of issue times (tests). @default Date.now */
  readonly now?: () => number
}

function sign(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url')
}

/** Every value of the cookie `name` in the request (a browser sends one per matching domain/path). */
function readCookies(header: string | null, name: string): string[] {
  if (!header) return []
  const values: string[] = []
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    if (part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim())
  }
  return values
}

/** Whether the request reached the server over HTTPS (directly, or at a proxy that says so, when trusted). */
export function isSecureRequest(request: Request, trustProxy: boolean): boolean {
  if (request.url.startsWith('https:')) return true
  if (!trustProxy) return false
  const proto = request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase()
  return proto === 'https'
}

/** The session-secret rules, shared by the cookie and the startup checks: long enough, no whitespace. */
export function sessionSecretProblem(secret: string): string | undefined {
  if (secret.length < 16) return 'must have at least 16 characters'
  if (/\s/.test(secret)) return 'must not contain whitespace'
  return undefined
}

/**
 * Signed anonymous sessions for the workbench: a request without a valid cookie gets a new session id and owns the
 * threads it creates from then on. The cookie carries `id.issuedAt.hmac(id.issuedAt)`, HttpOnly, SameSite=Lax; it is
 * accepted until `maxAgeSeconds` after its issue time (checked here, not only by the browser). Over HTTPS it is
 * `Secure` and `__Host-`-prefixed (no Domain, Path=/: a sibling subdomain cannot plant one). A request carrying two
 * session cookies (one planted for a parent domain or a narrower path: session fixation) is refused with
 * `UNAUTHENTICATED`, whichever is valid.
 */
export function anonymousSessionCookie(options: AnonymousSessionOptions): Authenticate {
  const problem = sessionSecretProblem(options.secret)
  if (problem !== undefined) throw new RangeError(`The session secret ${problem}.`)
  const baseName = options.cookieName ?? 'interlude_session'
  const maxAge = options.maxAgeSeconds ?? SERVER_DEFAULTS.sessionMaxAgeSeconds
  if (!(Number.isInteger(maxAge) && maxAge > 0)) throw new RangeError('maxAgeSeconds must be a positive integer.')
  const now = options.now ?? Date.now
  const secureOption = options.secure ?? SERVER_DEFAULTS.secureCookies
  const trustProxy = options.trustProxy ?? SERVER_DEFAULTS.trustProxy
  return (request) => {
    const secure = secureOption === 'auto' ? isSecureRequest(request, trustProxy) : secureOption
    const name = secure ? `__Host-${baseName}` : baseName
    const values = readCookies(request.headers.get('cookie'), name)
    if (values.length > 1) {
      throw new InterludeError('UNAUTHENTICATED', "Two session cookies were sent; clear this site's cookies.", {
        details: { reason: 'duplicate_session_cookie' },
      })
    }
    const issuedNow = Math.floor(now() / 1000)
    const value = values[0]
    if (value !== undefined) {
      const match = /^([A-Za-z0-9-]{1,64})\.(\d{1,12})\.([\w-]+)$/.exec(value)
      if (match) {
        const [, id, iat, mac] = match as unknown as [string, string, string, string]
        const age = issuedNow - Number(iat)
        if (safeEqual(mac, sign(options.secret, `${id}.${iat}`)) && age >= 0 && age <= maxAge) {
          return { principal: `anon:${id}`, anonymous: true }
        }
      }
    }
    const id = randomUUID()
    const payload = `${id}.${issuedNow}`
    const cookie = [`${name}=${payload}.${sign(options.secret, payload)}`, 'Path=/', 'HttpOnly', 'SameSite=Lax']
    cookie.push(`Max-Age=${maxAge}`)
    if (secure) cookie.push('Secure')
    return { principal: `anon:${id}`, anonymous: true, setCookie: cookie.join('; ') }
  }
}

/** A random secret suitable for `anonymousSessionCookie`. */
export function generateSessionSecret(): string {
  return randomBytes(32).toString('base64url')
}
