import type { Page, Request } from '@playwright/test'
import { test as base, expect } from '@playwright/test'
import type { RunningServer } from './server.ts'
import { startServer } from './server.ts'

export interface RecordedRequest {
  readonly method: string
  readonly url: string
  readonly body: unknown
}

/** Every request the page makes from now on (to count resumes and prove replay makes none). */
export function trackRequests(page: Page): RecordedRequest[] {
  const seen: RecordedRequest[] = []
  page.on('request', (request: Request) => {
    let body: unknown
    try {
      body = request.postDataJSON()
    } catch {
      body = request.postData()
    }
    seen.push({ method: request.method(), url: request.url(), body })
  })
  return seen
}

/** POST /runs requests that carry a `resume`. */
export function resumeRequests(requests: readonly RecordedRequest[]): RecordedRequest[] {
  return requests.filter(
    (r) =>
      r.method === 'POST' &&
      r.url.endsWith('/api/agent/runs') &&
      Array.isArray((r.body as { resume?: unknown } | null)?.resume),
  )
}

interface Fixtures {
  /** A fresh server (own SQLite file) for this test. */
  server: RunningServer
}

export const test = base.extend<Fixtures>({
  // eslint-disable-next-line no-empty-pattern
  server: async ({}, use, testInfo) => {
    const server = await startServer()
    try {
      await use(server)
    } finally {
      await server.stop()
      if (testInfo.status !== testInfo.expectedStatus)
        await testInfo.attach('server-output', { body: server.output(), contentType: 'text/plain' })
    }
  },
})

export { expect }
