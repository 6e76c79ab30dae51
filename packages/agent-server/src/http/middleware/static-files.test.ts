import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestServer } from '../../test-utils/harness.ts'
import { authHeader, startTestServer, tempDir } from '../../test-utils/harness.ts'

// Static files (docs/decisions.md#operating-it): `--static` once served /.env and /.git/config, followed a symlink to /etc/passwd and sent no
// nosniff / CSP / frame protection.
const tmp = tempDir()
const root = path.join(tmp.dir, 'www')
let server: TestServer

beforeAll(async () => {
  fs.mkdirSync(path.join(root, 'assets'), { recursive: true })
  fs.mkdirSync(path.join(root, '.git'))
  fs.mkdirSync(path.join(tmp.dir, 'outside'))
  fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>workbench</title>')
  fs.writeFileSync(path.join(root, 'assets', 'app.js'), 'console.log(1)')
  fs.writeFileSync(path.join(root, '.env'), 'OPENAI_API_KEY=sk-secret')
  fs.writeFileSync(path.join(root, '.git', 'config'), '[remote "origin"]')
  fs.writeFileSync(path.join(tmp.dir, 'outside', 'index.html'), 'outside')
  fs.symlinkSync('/etc/passwd', path.join(root, 'passwd'))
  fs.symlinkSync(path.join(tmp.dir, 'outside'), path.join(root, 'elsewhere'))
  fs.symlinkSync(path.join(root, 'assets', 'app.js'), path.join(root, 'inside.js'))
  server = await startTestServer({ staticDir: root })
})
afterAll(async () => {
  await server.dispose()
  tmp.cleanup()
})

const get = (p: string) => fetch(`${server.url}${p}`)

describe('--static', () => {
  it('serves no dotfiles, however the path is spelled', async () => {
    for (const p of ['/.env', '/.git/config', '/%2eenv', '/%2Egit/config', '/assets/../.env', '/.git/']) {
      const response = await get(p)
      expect(response.status, p).toBe(404)
      expect(await response.text(), p).not.toMatch(/sk-secret|remote/)
    }
  })

  it('follows no symlink out of its root (a file or a directory), but one inside it', async () => {
    for (const p of ['/passwd', '/elsewhere/', '/elsewhere/index.html']) {
      const response = await get(p)
      expect(response.status, p).toBe(404)
      expect(await response.text(), p).not.toMatch(/root:|outside/)
    }
    const inside = await get('/inside.js')
    expect(inside.status).toBe(200)
    expect(await inside.text()).toBe('console.log(1)')
  })

  it('answers with nosniff, a frame-ancestors CSP, X-Frame-Options and Referrer-Policy', async () => {
    for (const p of ['/', '/index.html', '/assets/app.js', '/.env']) {
      const response = await get(p)
      expect(response.headers.get('x-content-type-options'), p).toBe('nosniff')
      expect(response.headers.get('content-security-policy'), p).toContain("frame-ancestors 'none'")
      expect(response.headers.get('content-security-policy'), p).toContain("script-src 'self'")
      expect(response.headers.get('x-frame-options'), p).toBe('DENY')
      expect(response.headers.get('referrer-policy'), p).toBe('no-referrer')
    }
    expect(await (await get('/')).text()).toContain('workbench')
  })

  it('API answers carry nosniff (and no CSP meant for pages)', async () => {
    const response = await fetch(`${server.baseUrl}/threads`, { headers: authHeader('alice') })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    const refused = await fetch(`${server.baseUrl}/threads`)
    expect(refused.status).toBe(401)
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff')
  })
})
