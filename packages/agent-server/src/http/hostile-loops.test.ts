import fs from 'node:fs'
import path from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { CliChild } from '../test-utils/cli-child.ts'
import { bearer, bobRuns, launchCli, request, stopChildren } from '../test-utils/cli-child.ts'
import { newThreadId, runInput, tempDir, userMessage } from '../test-utils/harness.ts'

// Hostile loops (docs/decisions.md#operating-it): each attack as a bounded loop on loopback against the real CLI in a child process (RSS
// read from /proc): every attempt gets a typed refusal and changes nothing, memory stays under a stated bound, and
// another principal is served meanwhile. (Item 5's loops are in limits-attacks.test.ts; the one-shot regressions of
// each hole are in the tests named beside each loop.)

/** RSS growth allowed across a loop of small hostile requests (measured: 8–23 MB from ~90 MB). */
const RSS_GROWTH_BOUND_MB = 120
/**
 * RSS growth while 20 inbox pages over one principal's 50 threads of ~1 MB are read at once (measured: under 1 MB).
 * Rows that loaded their thread's history instead of its stored title measured +293 MB here.
 */
const INBOX_RSS_GROWTH_BOUND_MB = 60

const tmp = tempDir()
afterEach(() => stopChildren())
afterAll(() => tmp.cleanup())

/** Runs `attempt(i)` for i < n, `width` at a time. */
async function loop(n: number, width: number, attempt: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await attempt(next++)
    }),
  )
}

/** A typed error envelope with `code`, never a raw exception text. */
function expectCode(answer: { status: number; text: string }, status: number, code: string): void {
  expect(answer.status).toBe(status)
  const body = JSON.parse(answer.text) as { error?: { code?: string; message?: string } }
  expect(body.error?.code).toBe(code)
  expect(body.error?.message).not.toMatch(/SQLITE|at \w+ \(|TypeError|stack/i)
}

const post = (server: CliChild, who: string, body: unknown) =>
  request(
    server,
    'POST',
    '/api/agent/runs',
    { 'Content-Type': 'application/json', ...bearer(who) },
    JSON.stringify(body),
  )

describe('hostile loops (real CLI, child process)', () => {
  it('item 6, sessions: 300 forged, tampered, replayed-with-another and doubled cookies never reach the victim’s threads', async () => {
    // Cookie mode (no tokens): the signing secret is a 0600 file beside the database (auth/session-secret.test.ts).
    // The per-address budgets of new sessions and failed logins are off: this loop is one attacker's 300 forgeries,
    // each starting a session or failing (the budgets have their own tests, address-budgets.test.ts).
    const server = await launchCli(
      tmp.dir,
      ['--max-anonymous-sessions-per-minute', '0', '--max-failed-auth-per-minute', '0'],
      { tokens: false },
    )
    const first = await request(server, 'GET', '/api/agent/threads', {})
    const victim = /^(interlude_session=[^;]+)/.exec(String(first.headers['set-cookie']))![1]!
    const threadId = newThreadId()
    const run = await request(
      server,
      'POST',
      '/api/agent/runs',
      { 'Content-Type': 'application/json', Cookie: victim },
      JSON.stringify(runInput(threadId, [userMessage('hello')])),
    )
    expect(run.status).toBe(200)
    const [, id, issued, mac] = /^interlude_session=([^.]+)\.(\d+)\.(.+)$/.exec(victim)!
    const before = server.rssMb()
    const forgeries = [
      (i: number) => `interlude_session=${id}.${issued}.${mac!.slice(0, -2)}${i % 10}x`, // tampered signature
      (i: number) => `interlude_session=${id}.${Number(issued) + 1 + i}.${mac}`, // a later issue time, same mac
      () => `interlude_session=${id}`, // the bare id
      (i: number) => `interlude_session=00000000-0000-4000-8000-${String(i).padStart(12, '0')}.${issued}.${mac}`,
    ]
    let doubled = 0
    await loop(300, 16, async (i) => {
      // Every fourth attempt puts the victim's real cookie beside a forged one (fixation): refused outright. The
      // forgeries take turns over all attempts, so each kind is sent alone and doubled.
      const twice = i % 4 === 3
      const forged = forgeries[Math.floor(i / 4) % forgeries.length]!(i)
      const cookie = twice ? `${forged}; ${victim}` : forged
      const answer = await request(server, 'GET', '/api/agent/threads', { Cookie: cookie })
      if (twice) {
        expectCode(answer, 401, 'UNAUTHENTICATED')
        doubled += 1
        return
      }
      // A forged cookie starts a new, empty session of its own; it never sees the victim's thread.
      expect(answer.status).toBe(200)
      expect(answer.text).not.toContain(threadId)
      expect(String(answer.headers['set-cookie'])).toMatch(/^interlude_session=/)
      const snapshot = await request(server, 'GET', `/api/agent/threads/${threadId}`, { Cookie: cookie })
      expectCode(snapshot, 404, 'THREAD_NOT_FOUND')
    })
    expect(doubled).toBe(75)
    expect(server.rssMb() - before).toBeLessThan(RSS_GROWTH_BOUND_MB)
    // The victim is still served, with the thread intact.
    const own = await request(server, 'GET', `/api/agent/threads/${threadId}`, { Cookie: victim })
    expect(own.status).toBe(200)
  }, 120_000)

  it('item 7, static files: 300 traversal, dotfile and symlink attempts are refused (404, or 400 for an undecodable path) and leak nothing; pages cannot be framed', async () => {
    const root = path.join(tmp.dir, `static-${newThreadId()}`)
    fs.mkdirSync(path.join(root, '.git'), { recursive: true })
    fs.mkdirSync(path.join(root, 'assets'))
    fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>workbench</title>')
    fs.writeFileSync(path.join(root, 'assets', 'app.js'), 'console.log(1)')
    fs.writeFileSync(path.join(root, '.env'), 'OPENAI_API_KEY=sk-do-not-leak')
    fs.writeFileSync(path.join(root, '.git', 'config'), '[remote "do-not-leak"]')
    fs.symlinkSync('/etc/passwd', path.join(root, 'passwd'))
    fs.symlinkSync('/etc', path.join(root, 'etc'))
    const server = await launchCli(tmp.dir, ['--static', root])
    const paths = [
      '/.env',
      '/%2eenv',
      '/%2Eenv',
      '/./.env',
      '//.env',
      '/assets/../.env',
      '/assets/%2e%2e/.env',
      '/.git/config',
      '/.git%2fconfig',
      '/%2egit/config',
      '/passwd',
      '/etc/passwd',
      '/etc/hostname',
      '/../../../../etc/passwd',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/assets/..%2f..%2f..%2fetc/passwd',
      '/.env%00.js',
      '/.ENV',
    ]
    const before = server.rssMb()
    await loop(300, 16, async (i) => {
      const answer = await request(server, 'GET', paths[i % paths.length]!, {})
      // Refused (the router may also answer 400 for a path it cannot decode); the secret files never come back.
      expect([400, 404]).toContain(answer.status)
      expect(answer.text).not.toMatch(/do-not-leak|root:x:0:0/)
    })
    expect(server.rssMb() - before).toBeLessThan(RSS_GROWTH_BOUND_MB)
    const page = await request(server, 'GET', '/', {})
    expect(page.status).toBe(200)
    expect(page.headers['x-content-type-options']).toBe('nosniff')
    expect(page.headers['x-frame-options']).toBe('DENY')
    expect(String(page.headers['content-security-policy'])).toContain("frame-ancestors 'none'")
    await bobRuns(server)
  }, 120_000)

  it('item 7, ids and logs: 300 NUL, newline and control-character ids are 400 INVALID_INPUT and forge no log line; /health tells nothing', async () => {
    // Without quotas: every attempt reaches the id checks (a 429 for the burst would hide them).
    const server = await launchCli(tmp.dir, ['--no-quotas'])
    const before = server.rssMb()
    const lines = server.stdout().split('\n').length
    await loop(300, 16, async (i) => {
      switch (i % 3) {
        case 0: {
          const answer = await request(server, 'GET', `/api/agent/threads/a%00b${i}`, bearer('alice'))
          return expectCode(answer, 400, 'INVALID_INPUT')
        }
        case 1: {
          const forged = encodeURIComponent(`x\n{"level":30,"msg":"forged ${i}"}`)
          const answer = await request(server, 'GET', `/api/agent/threads/${forged}/events`, bearer('alice'))
          return expectCode(answer, 400, 'INVALID_INPUT')
        }
        default: {
          const answer = await post(server, 'alice', runInput(`t\u0000${i}`, [userMessage('hi')]))
          return expectCode(answer, 400, 'INVALID_INPUT')
        }
      }
    })
    expect(server.rssMb() - before).toBeLessThan(RSS_GROWTH_BOUND_MB)
    // Every line the server wrote is one JSON object: no attempt started a line of its own. (The request log reaches
    // the pipe after the answers: wait for its 300 lines, a bounded while.)
    for (let i = 0; i < 100 && server.stdout().split('\n').length - lines < 300; i++)
      await new Promise((resolve) => setTimeout(resolve, 20))
    const written = server
      .stdout()
      .split('\n')
      .slice(lines - 1, -1)
    expect(written.length).toBeGreaterThanOrEqual(300)
    for (const line of written) expect(() => JSON.parse(line) as unknown).not.toThrow()
    expect(written.some((line) => line.startsWith('{"level":30,"msg":"forged'))).toBe(false)
    // The public health check says only that the process lives: no counts of runs or threads.
    const health = await request(server, 'GET', '/api/agent/health', {})
    expect(JSON.parse(health.text)).toEqual({ status: 'ok' })
    await bobRuns(server)
  }, 120_000)

  it('item 7, thread ids: 300 probes and squats by bob on alice’s ids read nothing of hers and change nothing', async () => {
    // Without quotas: bob's 100 new threads in a second would otherwise be refused (429) before they could squat.
    const server = await launchCli(tmp.dir, ['--no-quotas'])
    const ids = Array.from({ length: 10 }, () => newThreadId())
    for (const id of ids) expect((await post(server, 'alice', runInput(id, [userMessage('hello')]))).status).toBe(200)
    const sizes = async () =>
      Promise.all(
        ids.map(async (id) => {
          const answer = await request(server, 'GET', `/api/agent/threads/${id}`, bearer('alice'))
          return (JSON.parse(answer.text) as { messageCount: number }).messageCount
        }),
      )
    const aliceBefore = await sizes()
    const before = server.rssMb()
    await loop(300, 16, async (i) => {
      const id = ids[i % ids.length]!
      if (i % 3 === 2) {
        // A squat: bob's input naming alice's id makes a thread of bob's own.
        const answer = await post(server, 'bob', runInput(id, [userMessage(`squat ${i}`)]))
        expect(answer.status).toBe(200)
        return
      }
      // A probe: answered exactly like an id nobody uses.
      const taken = await request(server, 'GET', `/api/agent/threads/${id}${i % 3 ? '/events' : ''}`, bearer('bob'))
      const free = await request(
        server,
        'GET',
        `/api/agent/threads/${newThreadId()}${i % 3 ? '/events' : ''}`,
        bearer('bob'),
      )
      if (i % 3 === 0) {
        // Bob's own thread of that id may exist by now (a squat above): then it is his, never alice's.
        if (taken.status === 200) expect(taken.text).not.toContain('hello')
        else
          expect([taken.status, taken.text.replace(id, 'ID')]).toEqual([
            free.status,
            free.text.replace(/t_[\w-]+/, 'ID'),
          ])
      } else expect(taken.text).not.toContain('hello')
    })
    expect(server.rssMb() - before).toBeLessThan(RSS_GROWTH_BOUND_MB)
    expect(await sizes()).toEqual(aliceBefore)
    await bobRuns(server)
  }, 120_000)

  it(`item 4, one principal's inbox over 50 threads of ~1 MB: 20 pages of all 50 read at once grow RSS < ${INBOX_RSS_GROWTH_BOUND_MB} MB; bob is served`, async () => {
    const server = await launchCli(tmp.dir, ['--thread-max-bytes', String(4 * 1024 * 1024), '--no-quotas'])
    const big = 'x'.repeat(900 * 1024)
    for (let i = 0; i < 50; i++) {
      const answer = await post(server, 'p0', runInput(newThreadId(), [userMessage(`${i}: ${big}`)]))
      expect(answer.status).toBe(200)
    }
    const before = server.rssMb()
    const peak = { rss: before }
    const sample = setInterval(() => (peak.rss = Math.max(peak.rss, server.rssMb())), 5)
    try {
      await loop(20, 20, async () => {
        const answer = await request(server, 'GET', '/api/agent/threads?limit=50', bearer('p0'))
        expect(answer.status).toBe(200)
        const page = JSON.parse(answer.text) as { threads: { title?: string }[] }
        expect(page.threads.length).toBe(50)
        // Titles are stored and short, never the 900 KB message.
        for (const thread of page.threads) expect((thread.title ?? '').length).toBeLessThan(200)
      })
      await bobRuns(server)
    } finally {
      clearInterval(sample)
    }
    expect(peak.rss - before).toBeLessThan(INBOX_RSS_GROWTH_BOUND_MB)
  }, 180_000)
})
