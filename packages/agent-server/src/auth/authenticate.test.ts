import { describe, expect, it } from 'vitest'
import { anonymousSessionCookie, bearerTokens } from './authenticate.ts'

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
      /^interlude_session=[0-9a-f-]+\.[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/,
    )
    const cookie = first!.setCookie!.split(';')[0]!
    const again = await auth(req({ Cookie: `other=1; ${cookie}` }))
    expect(again).toEqual({ principal: first!.principal })
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

  it('refuses short secrets', () => {
    expect(() => anonymousSessionCookie({ secret: 'short' })).toThrow(RangeError)
  })
})
