import { describe, expect, it } from 'vitest'
import { FLAGS } from '../cli-flags.ts'
import { serversPerTest } from '../test-utils/in-process.ts'

/** The smaller edges of who-may-what (docs/approvals.md#who-may-what): addresses, CORS and settings at startup. */
const server = serversPerTest({ approvers: ['mgr'] })

describe('?owner= names one owner', () => {
  it('given twice it is refused (400 INVALID_INPUT) on thread and rule routes', async () => {
    const s = await server()
    for (const path of ['/threads/t1?owner=eng&owner=mgr', '/permission-rules?owner=eng&owner=mgr']) {
      const r = await s.request(path, { principal: 'mgr' })
      expect(r.status).toBe(400)
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('INVALID_INPUT')
    }
  })
})

describe('an allowed app may revoke rules across origins', () => {
  it('the preflight of DELETE /permission-rules/:id allows DELETE', async () => {
    const app = 'https://app.example.com'
    const s = await server({ cors: { origins: [app] } })
    const answer = await s.request('/permission-rules/rule_1', {
      method: 'OPTIONS',
      principal: null,
      headers: {
        Origin: app,
        'Access-Control-Request-Method': 'DELETE',
        'Access-Control-Request-Headers': 'authorization',
      },
    })
    expect(answer.status).toBe(204)
    expect(answer.headers.get('access-control-allow-methods')?.split(',')).toContain('DELETE')
  })
})

describe('a webhook URL with credentials is refused when the server is created', () => {
  it('user:password@ in the URL is a RangeError that never echoes the password', async () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
    for (const url of ['http://user:hunter2@hooks.example/in', 'https://token@hooks.example/in']) {
      const error = await server({ webhooks: [{ url, secret }] }).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(RangeError)
      expect((error as Error).message).toMatch(/must not carry credentials/)
      expect((error as Error).message).not.toContain('hunter2')
    }
  })
})

describe('--workers N multiplies per-process quotas', () => {
  it('says so beside the flag', () => {
    expect(FLAGS.workers.help).toMatch(/quotas are per process: n workers allow n times/)
  })
})
