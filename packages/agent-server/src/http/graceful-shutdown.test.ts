import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { AgUiEvent, RunAgentInput, ThreadSnapshot } from '@interlude/protocol'
import { ThreadSnapshotSchema } from '@interlude/protocol/schemas'
import type { ChildServer } from '../test-utils/child-server.ts'
import { killChildren, launchChild, until } from '../test-utils/child-server.ts'
import { authHeader, newThreadId, postRun, runInput, TOKENS, tempDir, userMessage } from '../test-utils/harness.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOL_ARGS } from '../test-utils/pg.ts'
import { tailSse } from '../test-utils/sse-tail.ts'
import type { SseTail } from '../test-utils/sse-tail.ts'

/**
 * SIGTERM of the real CLI (bin/interlude-server.js on the built dist) during a paced run (docs/architecture.md,
 * "Shutdown"): the server stops admitting (503 SERVER_SHUTTING_DOWN, readiness fails), a run that fits in the grace
 * period finishes, a longer one is handed over — its stream ends without a failure event and the restart (SQLite) or
 * the other replica (PostgreSQL) continues it for the client that reconnects with Last-Event-ID. A second SIGTERM
 * exits at once.
 */
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/interlude-server.js')
const tmp = tempDir()
afterEach(() => killChildren())
afterAll(() => tmp.cleanup())
const pg = await pgAvailable('graceful shutdown on PostgreSQL')

const tokenArgs = ['--token', `alice=${TOKENS.alice}`]
let counter = 0
const sqliteDb = () => path.join(tmp.dir, `shutdown-${++counter}.db`)
const cli = (args: readonly string[]) => launchChild(CLI, ['--port', '0', ...tokenArgs, ...args])

/** Starts a run and resolves once it is admitted, its stream read in the background. */
async function startRun(server: ChildServer, input: RunAgentInput): Promise<SseTail> {
  const response = await fetch(`${server.baseUrl}/runs`, {
    method: 'POST',
    headers: { ...authHeader('alice'), 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(input),
  })
  expect(response.status).toBe(200)
  const tail = tailSse(response)
  await tail.waitFor(
    (t) => t.frames.some((f) => f.event.type === EventType.TEXT_MESSAGE_CONTENT),
    'the model to stream',
  )
  return tail
}

const exitOf = (server: ChildServer) =>
  new Promise<number | null>((resolve) => {
    if (server.child.exitCode !== null) resolve(server.child.exitCode)
    else server.child.once('exit', (code) => resolve(code))
  })

async function snapshot(server: ChildServer, threadId: string): Promise<ThreadSnapshot> {
  const res = await fetch(`${server.baseUrl}/threads/${threadId}`, { headers: authHeader('alice') })
  expect(res.status).toBe(200)
  return ThreadSnapshotSchema.parse(await res.json()) as ThreadSnapshot
}

/** The client's reconnect path: the thread's events after the last id it received. */
async function reconnect(server: ChildServer, threadId: string, lastEventId: number): Promise<AgUiEvent[]> {
  const res = await fetch(`${server.baseUrl}/threads/${threadId}/events`, {
    headers: { ...authHeader('alice'), 'Last-Event-ID': String(lastEventId) },
  })
  expect(res.status).toBe(200)
  const tail = tailSse(res)
  await until(() => tail.ended(), 'the reconnected stream to end')
  return tail.frames.map((f) => f.event)
}

const lastId = (tail: SseTail) => tail.frames[tail.frames.length - 1]!.id

/** A paced turn: the release assistant's plan, streamed token by token, then its pause for two approvals. */
const pacedInput = () => runInput(newThreadId(), [userMessage('deploy v3 to production')])

describe('SIGTERM: graceful shutdown of the CLI (SQLite)', () => {
  it('a run that fits in the grace period finishes; new requests and readiness get 503 SERVER_SHUTTING_DOWN; exit 0', async () => {
    const server = await cli(['--db', sqliteDb(), '--pacing-ms', '40', '--shutdown-grace-ms', '20000'])
    const input = pacedInput()
    const tail = await startRun(server, input)
    const exited = exitOf(server)
    server.child.kill('SIGTERM')

    // Readiness fails while draining, and nothing new is admitted.
    const health = await until(async () => {
      const res = await fetch(`${server.baseUrl}/health`).catch(() => undefined)
      return res?.status === 503 ? res : undefined
    }, 'readiness to fail')
    expect(((await health.json()) as { error: { code: string } }).error.code).toBe('SERVER_SHUTTING_DOWN')
    const refused = await postRun(server, pacedInput())
    expect(refused.status).toBe(503)
    expect(refused.error).toMatchObject({ code: 'SERVER_SHUTTING_DOWN' })
    expect(refused.headers.get('content-type')).toMatch(/^application\/json/)

    // The running turn is not cancelled: it finishes (here with its pause) before the process exits.
    await tail.waitFor((t) => t.ended(), 'the stream to end')
    const last = tail.frames[tail.frames.length - 1]!.event as { type: string; outcome?: { type: string } }
    expect(last).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'interrupt' } })
    expect(await exited).toBe(0)
  })

  it('a run longer than the grace period is handed over: its stream ends cleanly and the restart continues it', async () => {
    const db = sqliteDb()
    const first = await cli(['--db', db, '--pacing-ms', '40', '--shutdown-grace-ms', '50'])
    const input = pacedInput()
    const tail = await startRun(first, input)
    const exited = exitOf(first)
    first.child.kill('SIGTERM')
    await tail.waitFor((t) => t.ended(), 'the stream to end')
    expect(await exited).toBe(0)
    // Ended so the client reconnects: no terminal event, no failure.
    const seen = tail.frames.map((f) => f.event.type)
    expect(seen).not.toContain(EventType.RUN_ERROR)
    expect(seen).not.toContain(EventType.RUN_FINISHED)

    const second = await cli(['--db', db, '--pacing-ms', '0'])
    const rest = await reconnect(second, input.threadId, lastId(tail))
    expect(rest.map((e) => e.type)).not.toContain(EventType.RUN_ERROR)
    expect(rest[rest.length - 1]).toMatchObject({
      type: EventType.RUN_FINISHED,
      runId: input.runId,
      outcome: { type: 'interrupt' },
    })
    const snap = await snapshot(second, input.threadId)
    expect(snap.status).toBe('interrupted')
    expect(snap.interrupts).toHaveLength(2)
    expect(snap.messages.filter((m) => m.role === 'assistant')).toHaveLength(1)
  })

  it('a second SIGTERM exits at once, without waiting for the grace period', async () => {
    const db = sqliteDb()
    const server = await cli(['--db', db, '--pacing-ms', '40', '--shutdown-grace-ms', '600000'])
    const input = pacedInput()
    const tail = await startRun(server, input)
    const exited = exitOf(server)
    server.child.kill('SIGTERM')
    await until(
      async () => (await fetch(`${server.baseUrl}/health`).catch(() => undefined))?.status === 503,
      'draining',
    )
    server.child.kill('SIGTERM')
    // Exit code 1 is the second signal's; the turn was still running (no terminal event reached the client).
    expect(await exited).toBe(1)
    await tail.waitFor((t) => t.ended(), 'the stream to break')
    expect(tail.frames.map((f) => f.event.type)).not.toContain(EventType.RUN_FINISHED)
    // Nothing was cancelled: the restart continues the turn.
    const next = await cli(['--db', db, '--pacing-ms', '0'])
    const rest = await reconnect(next, input.threadId, lastId(tail))
    expect(rest[rest.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'interrupt' } })
  })
})

describe.skipIf(!pg)('SIGTERM: graceful shutdown with two replicas (PostgreSQL)', () => {
  let drop: (() => Promise<void>) | undefined
  afterEach(async () => {
    killChildren()
    await drop?.()
    drop = undefined
  })

  it('a run longer than the grace period is continued by the other replica', async () => {
    const test = await createTestSchema()
    drop = test.drop
    const db = [
      '--db',
      PG_URL,
      ...TEST_POOL_ARGS,
      '--db-schema',
      test.schema,
      '--run-lease-ms',
      '1000',
      '--poll-ms',
      '100',
    ]
    const [a, b] = await Promise.all([
      cli([...db, '--pacing-ms', '40', '--shutdown-grace-ms', '50']),
      cli([...db, '--pacing-ms', '0']),
    ])
    const input = pacedInput()
    const tail = await startRun(a, input)
    const exited = exitOf(a)
    a.child.kill('SIGTERM')
    await tail.waitFor((t) => t.ended(), 'the stream to end')
    expect(await exited).toBe(0)
    expect(tail.frames.map((f) => f.event.type)).not.toContain(EventType.RUN_ERROR)

    const rest = await reconnect(b, input.threadId, lastId(tail))
    expect(rest.map((e) => e.type)).not.toContain(EventType.RUN_ERROR)
    expect(rest[rest.length - 1]).toMatchObject({
      type: EventType.RUN_FINISHED,
      runId: input.runId,
      outcome: { type: 'interrupt' },
    })
    const snap = await snapshot(b, input.threadId)
    expect(snap.status).toBe('interrupted')
    expect(snap.interrupts).toHaveLength(2)
  })
})
