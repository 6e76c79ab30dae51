import { randomBytes, randomUUID } from 'node:crypto'
import { spawn } from 'node:child_process'
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { WebhookPayload } from '@interlude/protocol'
import { parseCliArgs } from './cli-args.ts'
import { until } from './test-utils/child-server.ts'
import { listening } from './test-utils/cli-child.ts'
import { overHttp, postDecision } from './test-utils/decisions.ts'
import {
  interruptsOf,
  newThreadId,
  postRun,
  resumeInput,
  runInput,
  tempDir,
  textOf,
  userMessage,
} from './test-utils/harness.ts'
import { createTestSchema, PG_URL, pgAvailable } from './test-utils/pg.ts'
import { startWebhookReceiver } from './test-utils/webhook-receiver.ts'

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/interlude-server.js')
const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/cli.js')
const tmp = tempDir()
const children: ChildProcessWithoutNullStreams[] = []
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})
afterAll(() => tmp.cleanup())

/** Starts the real CLI as a child process and resolves with its URL once it prints the ready line. */
function launch(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ child: ChildProcessWithoutNullStreams; url: string; baseUrl: string }> {
  if (!fs.existsSync(DIST))
    throw new Error(`${DIST} is missing: run "pnpm --filter @interlude/agent-server build" first`)
  const child = spawn(process.execPath, [BIN, '--port', '0', '--pacing-ms', '0', ...args], {
    stdio: 'pipe',
    env: { ...process.env, ...env },
  })
  children.push(child)
  return listening(child).then(({ url }) => ({ child, url, baseUrl: `${url}/api/agent` }))
}

function exited(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode)
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}

describe('interlude-server CLI', () => {
  it('parses the flags of docs/architecture.md', () => {
    expect(
      parseCliArgs([
        '--port',
        '9000',
        '--host',
        '0.0.0.0',
        '--db',
        'x.db',
        '--model',
        'openai',
        '--interrupt-ttl',
        '60',
        '--token',
        'alice=s1',
        '--token',
        'bob=s=2',
        '--static',
        'dist',
      ]),
    ).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      db: 'x.db',
      model: 'openai',
      interruptTtlSeconds: 60,
      tokens: { alice: 's1', bob: 's=2' },
      staticDir: 'dist',
    })
    expect(() => parseCliArgs(['--model', 'gpt'])).toThrow(/scripted or openai/)
    expect(() => parseCliArgs(['--token', 'nosecret'])).toThrow(/name=secret/)
    expect(() => parseCliArgs(['--interrupt-ttl', '0'])).toThrow(/positive/)
    // Cookie mode on PostgreSQL needs the shared session secret (README "Sessions and secrets").
    const pgEnv = { INTERLUDE_SESSION_SECRET: 'one-secret-for-every-replica' }
    expect(parseCliArgs(['--db', 'postgres://u@h:5432/d', '--db-schema', 's1'], pgEnv)).toMatchObject({
      db: 'postgres://u@h:5432/d',
      dbSchema: 's1',
      exclusive: false,
    })
    expect(parseCliArgs(['--db', 'x.db'])).toMatchObject({ exclusive: true })
    expect(parseCliArgs(['--db', 'x.db', '--shared', '--run-lease-ms', '500', '--poll-ms', '20'])).toMatchObject({
      exclusive: false,
      runLeaseMs: 500,
      pollMs: 20,
    })
    expect(() => parseCliArgs(['--db', 'x.db', '--db-schema', 's'])).toThrow(/postgres/)
    expect(() => parseCliArgs(['--db', 'postgres://h/d', '--db-schema', 'a;b'])).toThrow(/identifier/)
    expect(() => parseCliArgs(['--bogus'])).toThrow()
  })

  it('parses the model bounds and token caps (docs/decisions.md#the-model-boundary)', () => {
    expect(
      parseCliArgs([
        '--model',
        'openai',
        '--model-timeout-ms',
        '5000',
        '--model-idle-timeout-ms',
        '0',
        '--model-total-timeout-ms',
        '90000',
        '--model-max-retries',
        '0',
        '--model-max-retry-delay-ms',
        '2000',
        '--model-max-output-tokens',
        '1024',
        '--max-tool-argument-bytes',
        '4096',
        '--max-tokens-per-thread',
        '100000',
        '--max-tokens-per-principal',
        '2000000',
      ]),
    ).toMatchObject({
      openai: {
        timeoutMs: 5000,
        idleTimeoutMs: 0,
        totalTimeoutMs: 90000,
        maxRetries: 0,
        maxRetryDelayMs: 2000,
        maxCompletionTokens: 1024,
      },
      limits: { maxToolArgumentBytes: 4096 },
      usage: { maxTokensPerThread: 100000, maxTokensPerPrincipal: 2000000 },
    })
    expect(parseCliArgs([])).toMatchObject({ openai: {}, limits: {}, usage: {} })
    expect(() => parseCliArgs(['--model-idle-timeout-ms', '100'])).toThrow(/needs --model openai/)
    expect(() => parseCliArgs(['--model', 'openai', '--model-max-retries', '1.5'])).toThrow(/integer/)
    expect(() => parseCliArgs(['--model', 'openai', '--model-timeout-ms=-1'])).toThrow(/non-negative/)
    expect(() => parseCliArgs(['--max-tokens-per-thread', '0'])).toThrow(/positive/)
  })

  it('serves anonymous-session cookies, survives SIGKILL while paused, and resumes after a restart', async () => {
    const db = path.join(tmp.dir, 'cli.db')
    const first = await launch(['--db', db])
    expect((await fetch(`${first.baseUrl}/health`)).status).toBe(200)

    const threadId = newThreadId()
    const paused = await postRun(first, runInput(threadId, [userMessage('deploy v2.1')]), { principal: null })
    expect(paused.status).toBe(200)
    const cookie = paused.headers.get('set-cookie')!.split(';')[0]!
    const [publish, deploy] = interruptsOf(paused.events)
    // Without the cookie the caller is a new anonymous principal: the thread does not exist for it.
    const stranger = await postRun(
      first,
      resumeInput(threadId, [
        { interruptId: publish!.id, status: 'cancelled' },
        { interruptId: deploy!.id, status: 'cancelled' },
      ]),
      { principal: null },
    )
    expect(stranger.error?.code).toBe('THREAD_NOT_FOUND')

    first.child.kill('SIGKILL')
    await exited(first.child)
    const second = await launch(['--db', db])
    const resumed = await postRun(
      second,
      resumeInput(threadId, [
        { interruptId: publish!.id, status: 'resolved', payload: { approved: true } },
        { interruptId: deploy!.id, status: 'resolved', payload: { approved: true } },
      ]),
      { principal: null, headers: { Cookie: cookie } },
    )
    expect(resumed.status).toBe(200)
    expect(textOf(resumed.events)).toMatch(/^All steps ran\./)
    second.child.kill('SIGTERM')
    expect(await exited(second.child)).toBe(0)
  })

  it('--db postgres://… serves from PostgreSQL (schema created on first start)', async (ctx) => {
    if (!(await pgAvailable('CLI on PostgreSQL'))) return ctx.skip()
    const { schema, drop } = await createTestSchema()
    try {
      const server = await launch(['--db', PG_URL, '--db-schema', schema, '--token', 'alice=alice-secret-token'])
      expect(await (await fetch(`${server.baseUrl}/health`)).json()).toEqual({ status: 'ok' })
      const paused = await postRun(server, runInput(newThreadId(), [userMessage('deploy v2')]), { principal: 'alice' })
      expect(interruptsOf(paused.events)).toHaveLength(2)
      server.child.kill('SIGTERM')
      expect(await exited(server.child)).toBe(0)
    } finally {
      await drop()
    }
  })

  it('requires a bearer token when --token is given', async () => {
    const server = await launch(['--db', path.join(tmp.dir, 'tokens.db'), '--token', 'alice=alice-secret-token'])
    const anonymous = await postRun(server, runInput(newThreadId(), [userMessage('hi')]), { principal: null })
    expect(anonymous.status).toBe(401)
    expect((await postRun(server, runInput(newThreadId(), [userMessage('hi')]), { principal: 'alice' })).status).toBe(
      200,
    )
  })

  it('takes admission turns by default and not with --no-admission-turns (Server-Timing says which)', async () => {
    const token = ['--token', 'alice=alice-secret-token']
    const on = await launch(['--db', path.join(tmp.dir, 'turns-on.db'), ...token])
    const off = await launch(['--db', path.join(tmp.dir, 'turns-off.db'), ...token, '--no-admission-turns'])
    const timing = async (server: { baseUrl: string }) => {
      const answer = await postRun(server, runInput(newThreadId(), [userMessage('hi')]))
      expect(answer.status).toBe(200)
      return answer.headers.get('server-timing')
    }
    expect(await timing(on)).toMatch(/^turn;dur=\d+\.\d{3}, admission;dur=\d+\.\d{3}$/)
    expect(await timing(off)).toMatch(/^admission;dur=\d+\.\d{3}$/)
  })

  it('parses --approver and --webhook (signed with INTERLUDE_WEBHOOK_SECRET), refusing bad values', () => {
    const env = { INTERLUDE_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}` }
    expect(parseCliArgs([], env)).toMatchObject({ approvers: [], webhooks: [] })
    expect(
      parseCliArgs(
        ['--approver', 'mgr', '--approver', 'ops', '--approver', 'mgr', '--webhook', 'https://hooks.example/a'],
        env,
      ),
    ).toMatchObject({ approvers: ['mgr', 'ops'], webhooks: ['https://hooks.example/a'] })
    expect(() => parseCliArgs(['--approver', ''], env)).toThrow(/--approver/)
    expect(() => parseCliArgs(['--approver', ' mgr'], env)).toThrow(/--approver/)
    expect(() => parseCliArgs(['--webhook', 'https://hooks.example/a'], {})).toThrow(
      /--webhook #0 has no signing secret.*INTERLUDE_WEBHOOK_SECRET/,
    )
    expect(() =>
      parseCliArgs(['--webhook', 'https://hooks.example/a'], { INTERLUDE_WEBHOOK_SECRET: 'whsec_c2hvcnQ=' }),
    ).toThrow(/at least 24 bytes/)
    expect(() => parseCliArgs(['--webhook', 'ftp://hooks.example/a'], env)).toThrow(/absolute http\(s\) URL/)
    expect(() =>
      parseCliArgs(['--webhook', 'https://hooks.example/a', '--webhook', 'https://HOOKS.example/a'], env),
    ).toThrow(/repeats/)
  })

  it('--approver and --webhook: a manager decides through the API and the receiver gets verified deliveries', async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`
    const receiver = await startWebhookReceiver(secret)
    try {
      const server = await launch(
        [
          '--db',
          path.join(tmp.dir, 'approvals.db'),
          '--token',
          'eng=eng-secret-token',
          '--token',
          'mgr=mgr-secret-token',
          '--approver',
          'mgr',
          '--webhook',
          receiver.url,
        ],
        { INTERLUDE_WEBHOOK_SECRET: secret },
      )
      const threadId = newThreadId()
      const paused = await postRun(server, runInput(threadId, [userMessage('deploy v2')]), { principal: 'eng' })
      const resume = interruptsOf(paused.events).map((i) => ({
        interruptId: i.id,
        status: 'resolved' as const,
        payload: { approved: true },
      }))
      const runId = `run_${randomUUID()}`
      // Thread ids are per owner: the manager names the engineer's thread.
      const accepted = await postDecision(
        overHttp(server),
        threadId,
        { runId, resume },
        { principal: 'mgr', owner: 'eng' },
      )
      expect(accepted).toMatchObject({ status: 202, body: { threadId, runId } })
      await until(() => receiver.received.length >= 2, 'two deliveries')
      expect(receiver.received.map((r) => (r.payload as WebhookPayload).type)).toEqual([
        'interrupt.opened',
        'interrupt.decided',
      ])
      expect(receiver.received.every((r) => r.verifyError === undefined)).toBe(true)
      server.child.kill('SIGTERM')
      expect(await exited(server.child)).toBe(0)
    } finally {
      await receiver.close()
    }
  })

  it('exits with status 2 and the usage on bad flags', async () => {
    const child = spawn(process.execPath, [BIN, '--model', 'nope'], { stdio: 'pipe' })
    let err = ''
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')))
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(2)
    expect(err).toMatch(/Usage: interlude-server/)
  })

  it('--model openai without a key exits 1 with a sentence instead of serving runs that all fail', async () => {
    const env: Record<string, string | undefined> = { ...process.env }
    delete env.OPENAI_API_KEY
    delete env.OPENAI_BASE_URL
    const db = path.join(tmp.dir, 'no-key.db')
    const child = spawn(process.execPath, [BIN, '--port', '0', '--db', db, '--model', 'openai'], { stdio: 'pipe', env })
    children.push(child)
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')))
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')))
    expect(await exited(child)).toBe(1)
    expect(err).toContain('interlude-server: The OpenAI model needs an API key: set OPENAI_API_KEY')
    expect(err).not.toMatch(/\n\s+at /) // a sentence, not a stack
    expect(out).not.toContain('listening on')
  })

  it('parses --cors-origin and --agent, refusing bad values', () => {
    const ok = parseCliArgs(['--cors-origin', 'https://app.example.com', '--cors-origin', 'http://localhost:5173'], {})
    expect(ok).toMatchObject({
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      agentModule: undefined,
    })
    expect(parseCliArgs(['--agent', './my-agent.mjs'], {})).toMatchObject({ agentModule: './my-agent.mjs' })
    expect(() => parseCliArgs(['--cors-origin', 'https://app.example.com/'], {})).toThrow(
      /--cors-origin: .*\(no path\)/,
    )
    expect(() => parseCliArgs(['--cors-origin', 'app.example.com'], {})).toThrow(/--cors-origin/)
    expect(() => parseCliArgs(['--cors-origin', '*', '--cors-origin', 'https://a.example'], {})).toThrow(/alone/)
    expect(() => parseCliArgs(['--agent', 'a.mjs', '--model', 'openai'], {})).toThrow(/leave out --model/)
  })

  it('--agent serves the agent a module default-exports; a module without one exits with status 2', async () => {
    const module = path.join(tmp.dir, 'echo-agent.mjs')
    // A plain ES module with no imports: the default export is a function returning the agent.
    fs.writeFileSync(
      module,
      `export default async () => ({
        systemPrompt: 'Echo.',
        model: { name: 'echo', async *stream() { yield { type: 'text', delta: 'echo from a custom agent' } } },
      })\n`,
    )
    const server = await launch([
      '--db',
      path.join(tmp.dir, 'agent.db'),
      '--agent',
      module,
      '--token',
      'alice=alice-secret-token',
    ])
    const run = await postRun(server, runInput(newThreadId(), [userMessage('hi')]))
    expect(run.status).toBe(200)
    expect(textOf(run.events)).toBe('echo from a custom agent')

    const broken = path.join(tmp.dir, 'not-an-agent.mjs')
    fs.writeFileSync(broken, 'export default { tools: [] }\n')
    const child = spawn(
      process.execPath,
      [BIN, '--port', '0', '--db', path.join(tmp.dir, 'broken.db'), '--agent', broken],
      {
        stdio: 'pipe',
      },
    )
    let err = ''
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')))
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(2)
    expect(err).toMatch(/the default export must be an agent/)
  })

  it('--cors-origin answers preflights for that origin only', async () => {
    const server = await launch(['--db', path.join(tmp.dir, 'cors.db'), '--cors-origin', 'https://app.example.com'])
    const preflight = (origin: string) =>
      fetch(`${server.baseUrl}/runs`, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'content-type',
        },
      })
    const allowed = await preflight('https://app.example.com')
    expect(allowed.status).toBe(204)
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    expect((await preflight('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull()
  })
})
