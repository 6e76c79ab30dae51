import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startTestServer, tempDir } from './test-utils/harness.ts'

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
})
