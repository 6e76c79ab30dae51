import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Interrupt } from '@interlude/protocol'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { threadKey } from '../store/thread-key.ts'
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts'
import type { RunResponse, TestServer } from '../test-utils/harness.ts'
import {
  authHeader,
  interruptsOf,
  lastState,
  newThreadId,
  resumeInput,
  runInput,
  startTestServer,
  tempDir,
  TOKENS,
  userMessage,
} from '../test-utils/harness.ts'
import { bearerTokens } from '../auth/authenticate.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { interceptStore } from '../test-utils/intercept-store.ts'
import { readRunResponse, startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable } from '../test-utils/pg.ts'
import { resolved } from '../test-utils/resume-entries.ts'

/**
 * Admission turns (src/core/runs/admission-turns.ts, docs/architecture.md "Admission under a burst"): a burst of requests
 * read together is admitted in slices, each admitted exactly once, its wait for a turn reported beside the
 * admission; runs admitted meanwhile start after the burst; a client that trickles its body holds no run back.
 */

const TIMING = /^turn;dur=(\d+\.\d{3}), admission;dur=(\d+\.\d{3})$/

async function paused(server: InProcessServer) {
  const threadId = newThreadId()
  const first = await server.postRun(runInput(threadId, [userMessage('deploy v7 to production')]))
  const [publish, deploy] = interruptsOf(first.events) as [Interrupt, Interrupt]
  expect(deploy).toBeDefined()
  return { threadId, publish, deploy }
}

/** Resumes every thread in one tick (one read, as a burst of sockets is), approving both calls. */
async function burst(server: InProcessServer, threads: readonly Awaited<ReturnType<typeof paused>>[]) {
  const inputs = threads.map((t) => resumeInput(t.threadId, [resolved(t.publish), resolved(t.deploy)]))
  return { inputs, answers: await Promise.all(inputs.map((input) => server.postRun(input))) }
}

function expectFinishedOnce(answer: RunResponse): void {
  expect(answer.status).toBe(200)
  expect(answer.events.at(-1)?.type).toBe('RUN_FINISHED')
  expect((lastState(answer.events) as ReleaseState).deployments).toHaveLength(1)
}

describe('admission turns (SQLite, in process)', () => {
  let server: InProcessServer
  beforeAll(async () => {
    server = await startInProcess()
  })
  afterAll(async () => {
    await server.dispose()
  })

  it('a burst: each resume admitted and executed once; the queued ones report their wait for a turn', async () => {
    const threads = []
    for (let i = 0; i < 8; i++) threads.push(await paused(server))
    const inputs = threads.map((t) => resumeInput(t.threadId, [resolved(t.publish), resolved(t.deploy)]))
    const pending = inputs.map((input) => server.postRun(input))
    // Read in one go: the first took its turn at once, the seven others wait for theirs.
    expect(server.app.admissionTurns?.waiting).toBe(7)
    const answers = await Promise.all(pending)
    for (const answer of answers) expectFinishedOnce(answer)
    expect(answers.every((a) => TIMING.test(a.headers.get('server-timing') ?? ''))).toBe(true)
    expect(server.app.admissionTurns).toEqual(expect.objectContaining({ waiting: 0, admitting: 0 }))
    // A retry of each runId replays its run: nothing executes again.
    const retries = await Promise.all(inputs.map((input) => server.postRun(input)))
    for (const retry of retries) expectFinishedOnce(retry)
  })

  it('identical and conflicting resumes of one batch in one burst: one decision, one execution', async () => {
    const { threadId, publish, deploy } = await paused(server)
    const same = resumeInput(threadId, [resolved(publish), resolved(deploy)])
    const other = resumeInput(threadId, [resolved(publish), resolved(deploy, { approved: false })])
    const answers = await Promise.all(
      [...Array.from({ length: 5 }, () => same), ...Array.from({ length: 5 }, () => other)].map((i) =>
        server.postRun(i),
      ),
    )
    const admitted = answers.filter((a) => a.status === 200)
    // The five identical ones share a runId: the winner's run, replayed to the others; the five others are refused.
    const runIds = new Set(admitted.map((a) => (a.events[0] as { runId: string }).runId))
    expect(runIds.size).toBe(1)
    const refused = answers.filter((a) => a.status !== 200)
    expect(refused.length === 5 || refused.length === 9).toBe(true)
    for (const r of refused) expect(['ALREADY_RESUMED', 'DECISION_CONFLICT']).toContain(r.error?.code)
    const snapshot = (await (await server.request(`/threads/${threadId}`)).json()) as { state: ReleaseState }
    expect(snapshot.state.deployments.length).toBeLessThanOrEqual(1)
  })

  it('with `admissionTurns: false` the admission alone is reported, as before turns', async () => {
    const plain = await startInProcess({ admissionTurns: false })
    try {
      const answer = await plain.postRun(runInput(newThreadId(), [userMessage('hello')]))
      expect(answer.status).toBe(200)
      expect(answer.headers.get('server-timing')).toMatch(/^admission;dur=\d+\.\d{3}$/)
    } finally {
      await plain.dispose()
    }
  })

  it('a request refused after its turn holds nothing, even while its authentication is still deciding', async () => {
    // Held runs would wait a minute: the test's time runs out first if a refusal still counted as holding.
    const tokens = bearerTokens(TOKENS)
    let authenticating!: () => void
    const gate = new Promise<void>((resolve) => (authenticating = resolve))
    const strict = await startInProcess({
      admissionTurns: { maxRunDelayMs: 60_000 },
      // A slow identity provider for one caller: its request sits in authentication after its turn.
      authenticate: async (request) => {
        if (request.headers.get('authorization') === 'Bearer slow') {
          await gate
          return null
        }
        return tokens(request)
      },
    })
    try {
      const slow = strict.postRun(runInput(newThreadId(), [userMessage('hi')]), {
        principal: null,
        headers: { Authorization: 'Bearer slow' },
      })
      // The slow request took its turn and is authenticating: no turn is waited for and no admission decides.
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
      expect(strict.app.admissionTurns).toEqual(expect.objectContaining({ waiting: 0, admitting: 0 }))
      // A run admitted meanwhile starts at once and pauses for its approvals.
      const answer = await strict.postRun(runInput(newThreadId(), [userMessage('deploy v9 to staging')]))
      expect(answer.status).toBe(200)
      expect(interruptsOf(answer.events)).toHaveLength(2)
      authenticating()
      expect((await slow).status).toBe(401)
      // Refusals of every other kind hold nothing afterwards either.
      const refusals = await Promise.all([
        strict.postRun(undefined, { rawBody: '{"threadId":' }),
        strict.postRun(
          runInput(newThreadId(), [userMessage('hi')], { resume: [{ interruptId: 'nope', status: 'resolved' }] }),
        ),
      ])
      expect(refusals[0]!.status).toBe(400)
      expect(refusals[1]!.status).toBeGreaterThanOrEqual(400)
      expect(strict.app.admissionTurns).toEqual(expect.objectContaining({ waiting: 0, admitting: 0 }))
      const after = await strict.postRun(runInput(newThreadId(), [userMessage('deploy v9 to staging')]))
      expect(interruptsOf(after.events)).toHaveLength(2)
    } finally {
      await strict.dispose()
    }
  })

  it.each(['close', 'shutdown'] as const)(
    '%s() starts the runs held back by an admission that never answers, instead of waiting a minute',
    async (how) => {
      let unstick!: () => void
      const stuck = new Promise<void>((resolve) => (unstick = resolve))
      const stuckThread = newThreadId()
      const tmp = tempDir()
      const sqlite = createSqliteStore(tmp.dbPath)
      // The admission view of one thread never comes back (a stuck connection): its admission decides forever.
      const store = interceptStore(sqlite, {
        getAdmissionView: async (...args) => {
          if (args[0] === threadKey('alice', stuckThread)) await stuck
          return sqlite.getAdmissionView(...args)
        },
      })
      const held = await startInProcess({ store, admissionTurns: { maxRunDelayMs: 60_000 } })
      try {
        const stuckRequest = held.postRun(runInput(stuckThread, [userMessage('hi')]))
        for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
        expect(held.app.admissionTurns?.admitting).toBe(1)
        // Admitted, but held back for a minute behind the stuck admission.
        const threadId = newThreadId()
        const response = await held.request('/runs', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(runInput(threadId, [userMessage('deploy v9 to staging')])),
        })
        expect(response.status).toBe(200)
        for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
        expect((await sqlite.getThread(threadKey('alice', threadId)))?.status).toBe('running')
        // Without the release the run would wait out its minute: close() waits for it, shutdown() hands it over.
        if (how === 'close') await held.app.close()
        else expect(await held.app.shutdown(20_000)).toBe(0)
        void response.body?.cancel()
        unstick()
        await stuckRequest.catch(() => undefined)
      } finally {
        unstick()
        await held.app.close()
        tmp.cleanup()
      }
    },
  )

  it('refuses turns options out of range where the server is created', async () => {
    await expect(startInProcess({ admissionTurns: { sliceMs: 0 } })).rejects.toThrow(RangeError)
  })
})

describe('admission turns over a real socket', () => {
  let server: TestServer
  beforeAll(async () => {
    // Runs would wait a minute for admissions in progress, and the slow body is given a minute too: only the
    // slow-body rule lets the run below start within the test's time.
    server = await startTestServer({
      admissionTurns: { maxRunDelayMs: 60_000 },
      limits: { bodyIdleTimeoutMs: 60_000 },
    })
  })
  afterAll(async () => {
    await server.dispose()
  })

  it('a client that trickles its body holds no run back', async () => {
    const url = new URL(`${server.baseUrl}/runs`)
    const slow = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      agent: false,
      headers: { ...authHeader('alice'), 'Content-Type': 'application/json', 'Content-Length': '4096' },
    })
    slow.on('error', () => undefined)
    slow.write('{"threadId":')
    // The slow request has been read and took its turn (its headers are in) before the other one is sent.
    await new Promise((resolve) => setTimeout(resolve, 100))
    try {
      const response = await fetch(`${server.baseUrl}/runs`, {
        method: 'POST',
        headers: { ...authHeader('alice'), 'Content-Type': 'application/json' },
        body: JSON.stringify(runInput(newThreadId(), [userMessage('deploy v8 to staging')])),
      })
      const answer = await readRunResponse(response)
      expect(answer.status).toBe(200)
      // The run started and paused for its approvals (it would have waited a minute without the rule).
      expect(interruptsOf(answer.events)).toHaveLength(2)
      expect(answer.events.at(-1)?.type).toBe('RUN_FINISHED')
    } finally {
      slow.destroy()
    }
  })
})

const available = await pgAvailable('admission turns on PostgreSQL')

describe.skipIf(!available)('admission turns on PostgreSQL (claim groups)', () => {
  let server: InProcessServer
  let drop: () => Promise<void>
  beforeAll(async () => {
    const schema = await createTestSchema()
    drop = schema.drop
    server = await startInProcess({
      store: await createPostgresStore({ connectionString: PG_URL, schema: schema.schema }),
    })
  })
  afterAll(async () => {
    await server?.close()
    await drop?.()
  })

  it('a burst of 30 resumes: each admitted once, every approved call runs once, then the retries replay', async () => {
    const threads = []
    for (let i = 0; i < 30; i++) threads.push(await paused(server))
    const { inputs, answers } = await burst(server, threads)
    for (const answer of answers) {
      expectFinishedOnce(answer)
      expect(answer.headers.get('server-timing')).toMatch(TIMING)
    }
    const retries = await Promise.all(inputs.map((input) => server.postRun(input)))
    for (const retry of retries) expectFinishedOnce(retry)
  })
})
