import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto'
import type { DecisionLinkAction } from '@interlude/protocol'

/**
 * Signed decision links (docs/approvals.md#deciding-outside-the-app). A token is `<payload>.<mac>`, both base64url:
 * the payload is the JSON of `LinkClaims`, the mac an HMAC-SHA256 of the payload's text under the link key. The token
 * is opaque to its holder; only the server that holds the key can make or read one.
 */
export interface LinkClaims {
  /** The link's id: the key of its single use (`decision_links_used`). */
  readonly linkId: string
  /** The store's thread key (owner and the client's id). */
  readonly threadId: string
  /** An interrupt of the batch the link decides. */
  readonly interruptId: string
  /** The principal the link decides as. */
  readonly decider: string
  readonly action: DecisionLinkAction
  /** Epoch milliseconds; never after the batch's own `expiresAt`. */
  readonly expiresAt: number
}

/** The wire form of the claims: short keys, a version. */
interface Payload {
  readonly v: 1
  readonly l: string
  readonly t: string
  readonly i: string
  readonly d: string
  readonly a: DecisionLinkAction
  readonly e: number
}

const KEY_LABEL = 'interlude/decision-links/v1'

/**
 * The link key, derived from the server's secret (the anonymous-session secret, README "Sessions and secrets"): an
 * HMAC under a label of its own, so a link's mac can never stand for a session cookie's, nor the other way round.
 */
export function linkKey(secret: string): Buffer {
  return createHmac('sha256', secret).update(KEY_LABEL).digest()
}

/** A fresh link id. */
export function newLinkId(): string {
  return `lnk_${randomUUID()}`
}

function mac(key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(payload).digest()
}

export function signLink(key: Buffer, claims: LinkClaims): string {
  const wire: Payload = {
    v: 1,
    l: claims.linkId,
    t: claims.threadId,
    i: claims.interruptId,
    d: claims.decider,
    a: claims.action,
    e: claims.expiresAt,
  }
  const payload = Buffer.from(JSON.stringify(wire), 'utf8').toString('base64url')
  return `${payload}.${mac(key, payload).toString('base64url')}`
}

/**
 * The claims of an intact token, or `undefined` for anything else (a changed byte, another key, a malformed token):
 * the mac is compared in constant time before the payload is parsed.
 */
export function verifyLink(key: Buffer, token: string): LinkClaims | undefined {
  if (token.length > 4096) return undefined
  const dot = token.indexOf('.')
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return undefined
  const payload = token.slice(0, dot)
  // The MAC's text, not its decoded bytes, must be the issued one: base64url decoding ignores the last character's
  // unused bits, so another spelling of the same bytes would pass (a link is exactly one string).
  const given = Buffer.from(token.slice(dot + 1), 'utf8')
  const expected = Buffer.from(mac(key, payload).toString('base64url'), 'utf8')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
  let wire: unknown
  try {
    wire = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  return claimsOf(wire)
}

function claimsOf(wire: unknown): LinkClaims | undefined {
  if (typeof wire !== 'object' || wire === null) return undefined
  const w = wire as Partial<Record<keyof Payload, unknown>>
  const strings = [w.l, w.t, w.i, w.d].every((s) => typeof s === 'string' && s.length > 0)
  if (w.v !== 1 || !strings || (w.a !== 'approve' && w.a !== 'deny') || !Number.isSafeInteger(w.e)) return undefined
  return {
    linkId: w.l as string,
    threadId: w.t as string,
    interruptId: w.i as string,
    decider: w.d as string,
    action: w.a,
    expiresAt: w.e as number,
  }
}
