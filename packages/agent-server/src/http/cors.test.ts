import { afterEach, describe, expect, it } from 'vitest'
import { newThreadId, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'

const servers: InProcessServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.dispose()
})

async function serverWith(options: Parameters<typeof startInProcess>[0]): Promise<InProcessServer> {
  const server = await startInProcess(options)
  servers.push(server)
  return server
}

const APP = 'https://app.example.com'

function preflight(server: InProcessServer, path: string, origin: string, headers = 'authorization, content-type') {
  return server.request(path, {
    method: 'OPTIONS',
    principal: null,
    headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': headers },
  })
}

describe('cors option', () => {
  it('answers a preflight from an allowed origin before authentication, with the headers a client sends', async () => {
    const server = await serverWith({ cors: { origins: [APP] } })
    const answer = await preflight(server, '/runs', APP, 'authorization, content-type, last-event-id')
    expect(answer.status).toBe(204)
    expect(answer.headers.get('access-control-allow-origin')).toBe(APP)
    expect(answer.headers.get('access-control-allow-methods')).toBe('GET,POST,DELETE,OPTIONS')
    expect(answer.headers.get('access-control-allow-headers')?.toLowerCase()).toBe(
      'authorization,content-type,last-event-id',
    )
    expect(answer.headers.get('access-control-max-age')).toBe('600')
    expect(answer.headers.get('access-control-allow-credentials')).toBeNull()
  })

  it('gives an origin that is not listed no CORS headers, so the browser refuses the answer', async () => {
    const server = await serverWith({ cors: { origins: [APP] } })
    const answer = await preflight(server, '/runs', 'https://evil.example')
    expect(answer.headers.get('access-control-allow-origin')).toBeNull()
    const run = await server.postRun(runInput(newThreadId(), [userMessage('hi')]), {
      headers: { Origin: 'https://evil.example' },
    })
    // Same-origin and server-to-server calls still work: CORS only tells browsers what they may read.
    expect(run.status).toBe(200)
    expect(run.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('marks real answers for an allowed origin and exposes Server-Timing', async () => {
    const server = await serverWith({ cors: { origins: [APP], credentials: true, maxAgeSeconds: 60 } })
    const run = await server.postRun(runInput(newThreadId(), [userMessage('hi')]), { headers: { Origin: APP } })
    expect(run.status).toBe(200)
    expect(run.headers.get('access-control-allow-origin')).toBe(APP)
    expect(run.headers.get('access-control-allow-credentials')).toBe('true')
    expect(run.headers.get('access-control-expose-headers')).toBe('Server-Timing')
    expect(run.headers.get('vary')).toMatch(/Origin/)
    expect((await preflight(server, '/threads/t1', APP)).headers.get('access-control-max-age')).toBe('60')
  })

  it('without the option a preflight is an unknown route, as before', async () => {
    const server = await serverWith({})
    const answer = await preflight(server, '/runs', APP)
    expect(answer.status).toBe(404)
    expect(answer.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('refuses origins a browser would never send, and * with credentials', async () => {
    await expect(serverWith({ cors: { origins: ['https://app.example.com/'] } })).rejects.toThrow(/no path/)
    await expect(serverWith({ cors: { origins: ['app.example.com'] } })).rejects.toThrow(RangeError)
    await expect(serverWith({ cors: { origins: [] } })).rejects.toThrow(/at least one/)
    await expect(serverWith({ cors: { origins: ['*'], credentials: true } })).rejects.toThrow(/credentials/)
    await expect(serverWith({ cors: { origins: [APP], maxAgeSeconds: -1 } })).rejects.toThrow(/maxAgeSeconds/)
  })
})
