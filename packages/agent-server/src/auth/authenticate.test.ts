import { describe, expect, it } from 'vitest'
import { InterludeError } from '@interlude/protocol'
import { anonymousSessionCookie, bearerTokens, tokensProblem, weakTokenNames } from './authenticate.ts'

const req = (headers: Record<string, string>) => new Request('http://x/api/agent/runs', { headers })

describe('bearerTokens', () => {
  const auth = bearerTokens({ alice: 'a-secret', bob: 'b-secret' })
  it('maps a token to its principal and refuses anything else', async () => {
    expect(await auth(req({ Authorization: 'Bearer a-secret' }))).toEqual({ principal: 'alice' })
    expect(await auth(req({ Authorization: 'bearer b-secret' }))).toEqual({ principal: 'bob' })
    expect(await auth(req({ Authorization: 'Bearer nope' }))).toBeNull()
    expect(await auth(req({ Authorization: 'Bearer a-secretX' }))).toBeNull()
    expect(await auth(req({}))).toBeNull()
  })
})

describe('anonymousSessionCookie', () => {
  const auth = anonymousSessionCookie({ secret: 'a-long-enough-secret' })
  it('issues a signed HttpOnly cookie and recognises it afterwards', async () => {
    const first = await auth(req({}))
    expect(first?.setCookie).toMatch(
      /^interlude_session=[0-9a-f-]+\.\d+\.[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=2592000$/,
    )
    const cookie = first!.setCookie!.split(';')[0]!
    const again = await auth(req({ Cookie: `other=1; ${cookie}` }))
    expect(again).toEqual({ principal: first!.principal, anonymous: true })
  })

  it('a tampered or foreign-secret cookie starts a new session instead of impersonating', async () => {
    const first = await auth(req({}))
    const [name, value] = first!.setCookie!.split(';')[0]!.split('=')
    const [id] = value!.split('.')
    const forged = await auth(req({ Cookie: `${name}=${id}.AAAA` }))
    expect(forged?.principal).not.toBe(first!.principal)
    expect(forged?.setCookie).toBeDefined()
    const other = anonymousSessionCookie({ secret: 'another-long-secret!' })
    expect((await other(req({ Cookie: first!.setCookie!.split(';')[0]! })))?.principal).not.toBe(first!.principal)
  })

  it('refuses short secrets and secrets with whitespace', () => {
    expect(() => anonymousSessionCookie({ secret: 'short' })).toThrow(RangeError)
    expect(() => anonymousSessionCookie({ secret: 'a long secret with spaces' })).toThrow(/whitespace/)
  })

  it('a cookie older than the server-side max age is not accepted: a new session starts', async () => {
    let now = Date.UTC(2026, 0, 1)
    const timed = anonymousSessionCookie({ secret: 'a-long-enough-secret', maxAgeSeconds: 3600, now: () => now })
    const first = await timed(req({}))
    const cookie = first!.setCookie!.split(';')[0]!
    now += 3600 * 1000
    expect(await timed(req({ Cookie: cookie }))).toEqual({ principal: first!.principal, anonymous: true })
    now += 1000
    const later = await timed(req({ Cookie: cookie }))
    expect(later?.principal).not.toBe(first!.principal)
    expect(later?.setCookie).toMatch(/Max-Age=3600/)
  })

  it('the issue time is signed: moving it forward forges nothing', async () => {
    const first = await auth(req({}))
    const [name, value] = first!.setCookie!.split(';')[0]!.split('=') as [string, string]
    const [id, iat, mac] = value.split('.') as [string, string, string]
    const moved = await auth(req({ Cookie: `${name}=${id}.${Number(iat) + 1000}.${mac}` }))
    expect(moved?.principal).not.toBe(first!.principal)
  })

  it('two session cookies in one request are refused (session fixation), even when one is valid', async () => {
    const first = await auth(req({}))
    const cookie = first!.setCookie!.split(';')[0]!
    const planted = (await auth(req({})))!.setCookie!.split(';')[0]!
    let refusal: unknown
    try {
      await auth(req({ Cookie: `${planted}; ${cookie}` }))
    } catch (error) {
      refusal = error
    }
    expect(InterludeError.isInstance(refusal)).toBe(true)
    expect(refusal).toMatchObject({ code: 'UNAUTHENTICATED', details: { reason: 'duplicate_session_cookie' } })
  })

  it('over HTTPS the cookie is __Host- prefixed and Secure; over http it is neither', async () => {
    const https = await auth(new Request('https://app.example.com/api/agent/threads'))
    expect(https?.setCookie).toMatch(/^__Host-interlude_session=.*; Path=\/; .*; Secure$/)
    expect(https?.setCookie).not.toMatch(/Domain=/)
    const cookie = https!.setCookie!.split(';')[0]!
    const again = await auth(new Request('https://app.example.com/x', { headers: { Cookie: cookie } }))
    expect(again).toEqual({ principal: https!.principal, anonymous: true })
    const http = await auth(req({ 'X-Forwarded-Proto': 'https' }))
    expect(http?.setCookie).toMatch(/^interlude_session=/)
    expect(http?.setCookie).not.toMatch(/Secure/)
  })

  it('behind a trusted proxy X-Forwarded-Proto: https makes the cookie Secure; `secure: true` always does', async () => {
    const proxied = anonymousSessionCookie({ secret: 'a-long-enough-secret', trustProxy: true })
    expect((await proxied(req({ 'X-Forwarded-Proto': 'https' })))?.setCookie).toMatch(/^__Host-.*Secure$/)
    expect((await proxied(req({ 'X-Forwarded-Proto': 'http' })))?.setCookie).not.toMatch(/Secure/)
    const always = anonymousSessionCookie({ secret: 'a-long-enough-secret', secure: true })
    expect((await always(req({})))?.setCookie).toMatch(/^__Host-.*Secure$/)
  })
})

describe('token checks', () => {
  it('refuses whitespace, empty and shared secrets; names the short ones', () => {
    expect(tokensProblem({ alice: 'alice-secret-token', bob: 'bob-secret-token' })).toBeUndefined()
    expect(tokensProblem({ alice: 'has space inside!!' })).toMatch(/whitespace/)
    expect(tokensProblem({ alice: 'same-secret-value', bob: 'same-secret-value' })).toMatch(/share one token/)
    expect(tokensProblem({ alice: '' })).toMatch(/non-empty/)
    expect(() => bearerTokens({ alice: 'same-secret-value', bob: 'same-secret-value' })).toThrow(RangeError)
    expect(weakTokenNames({ alice: 'x', bob: 'bob-secret-token' })).toEqual(['alice'])
  })
})
