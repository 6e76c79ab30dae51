import net from 'node:net'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { bearer, bobRuns, launchCli, request, SECRETS, stopChildren } from '../test-utils/cli-child.ts'
import { tempDir } from '../test-utils/harness.ts'

// Quotas and limits (docs/decisions.md#operating-it): each attack as a bounded loop on loopback against the real CLI in a child process (its RSS is
// read from /proc): 1,050 slow-header connections locked everyone out (at `ulimit -n 1024`); 200 held 8 MB bodies took
// RSS from 105 MB to 1.65 GB; 8 MB deeply nested bodies cost seconds of blocking parse each.

/** The bound on RSS growth while 100 clients hold 8 MB bodies (chosen from measurement, see the test). */
const RSS_GROWTH_BOUND_MB = 200

const tmp = tempDir()
const sockets: net.Socket[] = []
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy()
  stopChildren()
})
afterAll(() => tmp.cleanup())

const launch = (args: string[], nofile?: number) => launchCli(tmp.dir, args, nofile === undefined ? {} : { nofile })

/** Opens a socket (from `localAddress`) and writes `head`; resolves once connected. */
function openSocket(port: number, head: string | Buffer, localAddress = '127.0.0.1'): Promise<net.Socket> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress })
    sockets.push(socket)
    socket.on('error', () => undefined)
    // Flowing, so that the server's answer and close are seen even when nobody reads the data.
    socket.resume()
    socket.once('connect', () => {
      socket.write(head)
      resolve(socket)
    })
    socket.once('close', () => resolve(socket))
  })
}

/** The first response line a socket receives (or 'closed'). */
function statusLine(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = ''
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1')
      const end = text.indexOf('\r\n')
      if (end >= 0) resolve(text.slice(0, end))
    })
    socket.once('close', () => resolve(text.split('\r\n')[0] || 'closed'))
  })
}

describe('attacks on the limits (real CLI, child process)', () => {
  it('600 slow-header sockets from one address at ulimit -n 512: the rest are still served; the server reaps them', async () => {
    const server = await launch(
      ['--max-connections', '400', '--max-connections-per-ip', '100', '--headers-timeout-ms', '2000'],
      512,
    )
    // The attacker's address is 127.0.0.2 (loopback too); bob comes from 127.0.0.1.
    const held = await Promise.all(
      Array.from({ length: 600 }, () =>
        openSocket(server.port, 'GET /api/agent/threads HTTP/1.1\r\nHost: x\r\n', '127.0.0.2'),
      ),
    )
    await bobRuns(server)
    expect((await request(server, 'GET', '/api/agent/threads', bearer('bob'))).status).toBe(200)
    // Beyond the per-address cap sockets were closed at once; the others by the headers timeout (bounded wait).
    for (let i = 0; i < 200 && held.some((s) => !s.destroyed && s.readyState !== 'closed'); i++)
      await new Promise((r) => setTimeout(r, 100))
    expect(held.filter((s) => !s.destroyed && s.readyState !== 'closed')).toHaveLength(0)
    await bobRuns(server)
  }, 120_000)

  it(`100 held 8 MB bodies by 10 principals: every one refused with a typed answer, none run, bob is served, RSS grows < ${RSS_GROWTH_BOUND_MB} MB`, async () => {
    const server = await launch(['--body-idle-timeout-ms', '4000'])
    await bobRuns(server)
    const before = server.rssMb()
    const length = 8 * 1024 * 1024
    // Each attacker sends all but the last byte of its body and holds it.
    const payload = Buffer.alloc(length - 1, 0x20)
    const attacks = Array.from({ length: 100 }, async (_, i) => {
      const head =
        `POST /api/agent/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `Authorization: Bearer ${SECRETS[`p${i % 10}`]!}\r\nContent-Length: ${length}\r\n\r\n`
      const socket = await openSocket(server.port, head)
      const line = statusLine(socket)
      socket.write(payload)
      return line
    })
    // While the bodies are held: bob's small request passes (small bodies are not charged to the budget).
    await new Promise((r) => setTimeout(r, 1000))
    await bobRuns(server)
    const during = server.rssMb()
    const lines = await Promise.all(attacks)
    const count = (re: RegExp) => lines.filter((l) => re.test(l)).length
    // The budget (64 MiB) holds 8 bodies at once, a principal's share (16 MiB) 2: the rest is refused unread (how many
    // depends on how fast the 100 arrive against the idle timeout that frees held reservations, so only "some" here).
    expect(count(/ 503 /) + count(/ 429 /)).toBeGreaterThan(0)
    // Every one is answered with a typed refusal: the held ones by the idle timeout (400 body_timeout); none is run.
    expect(count(/ 503 | 429 | 400 /)).toBe(100)
    // Refused bodies are never read (unread-body.ts): their bytes stay in the kernel's socket buffers, so RSS grows by
    // about the accepted share only (the 64 MiB budget, buffered and parsed). Measured 84–90 → 172–188 MB; before
    // (a drain read every refused body) 85 → 836 → 909 MB. The bound leaves 2× margin over the measured growth.
    await new Promise((r) => setTimeout(r, 3000))
    const after = server.rssMb()
    process.stdout.write(
      `[limits] held bodies: RSS ${before.toFixed(0)} → ${during.toFixed(0)} → ${after.toFixed(0)} MB\n`,
    )
    expect(Math.max(during, after) - before).toBeLessThan(RSS_GROWTH_BOUND_MB)
    await bobRuns(server)
  }, 120_000)

  it('deeply nested 8 MB bodies are refused before parsing (INVALID_INPUT too_deep); bob is served meanwhile', async () => {
    const server = await launch([])
    const depth = 4 * 1024 * 1024 - 8
    const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`
    const answers = Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const headers = { 'Content-Type': 'application/json', ...bearer(`p${i}`) }
        const answer = await request(server, 'POST', '/api/agent/runs', headers, nested)
        return { status: answer.status, body: JSON.parse(answer.text) as unknown }
      }),
    )
    await bobRuns(server)
    const done = await answers
    // Each is refused before any parse: too deep, or (beyond the 64 MiB body budget, 8 at once) not read at all.
    for (const answer of done) {
      if (answer.status === 503) expect(answer.body).toMatchObject({ error: { code: 'SERVER_BUSY' } })
      else {
        expect(answer.status).toBe(400)
        expect(answer.body).toMatchObject({ error: { code: 'INVALID_INPUT', details: { reason: 'too_deep' } } })
      }
    }
    expect(done.filter((a) => a.status === 400).length).toBeGreaterThanOrEqual(2)
    await bobRuns(server)
  }, 120_000)
})
