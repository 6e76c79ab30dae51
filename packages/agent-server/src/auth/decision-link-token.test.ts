import { describe, expect, it } from 'vitest'
import { linkKey, newLinkId, signLink, verifyLink } from './decision-link-token.ts'

const claims = {
  linkId: newLinkId(),
  threadId: 'eng\u001ft1',
  interruptId: 'int_1',
  decider: 'mgr',
  action: 'approve' as const,
  expiresAt: 1_900_000_000_000,
}

describe('decision link tokens', () => {
  it('round-trips the claims under the same key', () => {
    const key = linkKey('a-session-secret-of-enough-length')
    expect(verifyLink(key, signLink(key, claims))).toEqual(claims)
  })

  it('refuses another key, any changed character and malformed tokens', () => {
    const key = linkKey('a-session-secret-of-enough-length')
    const token = signLink(key, claims)
    expect(verifyLink(linkKey('another-session-secret-here'), token)).toBeUndefined()
    for (let i = 0; i < token.length; i++) {
      const c = token[i] === 'A' ? 'B' : 'A'
      const changed = `${token.slice(0, i)}${c}${token.slice(i + 1)}`
      if (changed !== token) expect(verifyLink(key, changed), `position ${i}`).toBeUndefined()
    }
    for (const bad of ['', '.', 'abc', `${token}.x`, token.split('.')[0]!, `.${token.split('.')[1]}`])
      expect(verifyLink(key, bad)).toBeUndefined()
  })

  it('refuses the same MAC bytes spelled differently (the unused bits of the last base64url character)', () => {
    const key = linkKey('a-session-secret-of-enough-length')
    const token = signLink(key, claims)
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const last = alphabet.indexOf(token[token.length - 1]!)
    const respelled = `${token.slice(0, -1)}${alphabet[last ^ 1]}`
    const [, mac] = token.split('.')
    expect(Buffer.from(respelled.split('.')[1]!, 'base64url')).toEqual(Buffer.from(mac!, 'base64url'))
    expect(verifyLink(key, respelled)).toBeUndefined()
    expect(verifyLink(key, token)).toEqual(claims)
  })

  it('a signed payload that is not a link (wrong version, action or expiry) is refused', () => {
    const key = linkKey('a-session-secret-of-enough-length')
    for (const wire of [{ v: 2 }, { ...claims, action: 'maybe' }, { ...claims, expiresAt: 'soon' }]) {
      const token = signLink(key, wire as never)
      expect(verifyLink(key, token)).toBeUndefined()
    }
  })

  it('a link key is not the secret, and differs per secret', () => {
    expect(linkKey('secret-one-secret-one').equals(Buffer.from('secret-one-secret-one'))).toBe(false)
    expect(linkKey('secret-one-secret-one').equals(linkKey('secret-two-secret-two'))).toBe(false)
  })
})
