import { describe, expect, it } from 'vitest'
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
