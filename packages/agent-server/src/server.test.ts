import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { newThreadId, postRun, runInput, startTestServer, tempDir, userMessage } from './test-utils/harness.ts'
import { threadKey } from './store/thread-key.ts'

const tmp = tempDir()
afterAll(() => tmp.cleanup())

describe('startServer', () => {
  it('serves a static directory (the built workbench) next to the API, which keeps priority', async () => {
    const site = path.join(tmp.dir, 'site')
    fs.mkdirSync(site)
    fs.writeFileSync(path.join(site, 'index.html'), '<!doctype html><title>workbench</title>')
    const server = await startTestServer({ staticDir: site })
    try {
      const page = await fetch(`${server.url}/`)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('<title>workbench</title>')
      expect((await fetch(`${server.baseUrl}/health`)).status).toBe(200)
      const missing = await fetch(`${server.url}/nope.js`)
      expect(missing.status).toBe(404)
      expect(await missing.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'No such route.' } })
    } finally {
      await server.dispose()
    }
  })

  it('gives its clock to the store, so the timestamps the store writes itself follow the injected clock', async () => {
    const at = Date.UTC(2030, 0, 2, 3, 4, 5)
    const server = await startTestServer({ now: () => at })
    try {
      const threadId = newThreadId()
      const run = await postRun(server, runInput(threadId, [userMessage('hello')]))
      expect(run.status).toBe(200)
      await server.app.runs.idle()
      // `setState` stamps `updatedAt` with the store's own clock (no request carries a time).
      await server.store.setState(threadKey('alice', threadId), { touched: true })
      expect((await server.store.getThread(threadKey('alice', threadId)))?.updatedAt).toBe(at)
    } finally {
      await server.dispose()
    }
  })
})
