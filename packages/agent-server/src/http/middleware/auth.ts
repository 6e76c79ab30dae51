import type { MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { Authenticate } from '../../auth/authenticate.ts'
import type { ServerEnv } from '../env.ts'
import type { AddressGuard } from './address-guard.ts'
import { clientAddress } from './address-guard.ts'

/**
 * Resolves the principal of every request (401 `UNAUTHENTICATED` when there is none). With a guard, failed
 * authentications and new anonymous sessions are budgeted per client address (`429 RATE_LIMITED`); a request that
 * authenticates is never slowed by other clients' failures.
 */
export function auth(authenticate: Authenticate, guard?: AddressGuard): MiddlewareHandler<ServerEnv> {
  return async function auth(c, next) {
    const address = clientAddress(c)
    const result = await Promise.resolve(authenticate(c.req.raw)).catch(async (error: unknown) => {
      if (error instanceof InterludeError && error.code === 'UNAUTHENTICATED') await guard?.failed(address)
      throw error
    })
    if (!result) {
      await guard?.failed(address)
      throw new InterludeError('UNAUTHENTICATED', 'Authentication required.')
    }
    // Refused before the session exists: its cookie is never sent.
    if (result.anonymous && result.setCookie) await guard?.newSession(address)
    // Set before the handler runs so that error and streaming responses carry it too.
    if (result.setCookie) c.header('Set-Cookie', result.setCookie, { append: true })
    c.set('principal', result.principal)
    // Anonymous principals of one address share its per-principal budgets (requests, streams).
    const shared = result.anonymous === true && guard?.sharesAnonymous === true
    c.set('quotaKey', shared ? `address:${address}` : result.principal)
    await next()
  }
}
