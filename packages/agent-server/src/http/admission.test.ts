import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Interrupt } from '@interlude/protocol'
import type { RunResponse, TestServer } from '../test-utils/harness.ts'
import {
  interruptsOf,
  newThreadId,
  postRun,
  resumeInput,
  runInput,
  startTestServer,
  threadRow,
  userMessage,
} from '../test-utils/harness.ts'
import { cancelled, refusedUnchanged, resolved } from '../test-utils/resume-entries.ts'

const clock = { now: Date.parse('2030-01-01T00:00:00.000Z') }
let server: TestServer

beforeAll(async () => {
  server = await startTestServer({
    now: () => clock.now,
    interruptTtlSeconds: 600,
    // Expiry is examined before the sweep reaches a batch (docs/approvals.md#deadlines); the sweep has its own tests.
    expirySweepMs: 0,
    limits: { maxBodyBytes: 64 * 1024, maxMessagesPerInput: 20, maxPayloadBytes: 1024, maxInterruptsPerBatch: 4 },
  })
})
afterAll(async () => {
  await server.dispose()
})

async function paused(
  principal: 'alice' | 'bob' = 'alice',
): Promise<{ threadId: string; publish: Interrupt; deploy: Interrupt }> {
  const threadId = newThreadId()
  const first = await postRun(server, runInput(threadId, [userMessage('deploy v7 to production')]), { principal })
  const [publish, deploy] = interruptsOf(first.events)
  return { threadId, publish: publish!, deploy: deploy! }
}

const refused = (send: () => Promise<RunResponse>) => refusedUnchanged(server.dbPath, send)

describe('admission: malformed input is refused before any stream byte and changes nothing', () => {
  it('rejects missing and wrong credentials with UNAUTHENTICATED 401', async () => {
    const { threadId, publish, deploy } = await paused()
    for (const headers of [{}, { Authorization: 'Bearer nope' }, { Authorization: 'Basic YWxpY2U6c2VjcmV0' }]) {
      const r = await refused(() =>
        postRun(server, resumeInput(threadId, [resolved(publish), resolved(deploy)]), { principal: null, headers }),
      )
      expect(r.status).toBe(401)
      expect(r.error?.code).toBe('UNAUTHENTICATED')
    }
  })

  it("another principal's thread is THREAD_NOT_FOUND for resume; new input with its id is the caller's own thread", async () => {
    const { threadId, publish, deploy } = await paused('alice')
    const resume = await refused(() =>
      postRun(server, resumeInput(threadId, [resolved(publish), resolved(deploy)]), { principal: 'bob' }),
    )
    expect(resume.status).toBe(404)
    expect(resume.error?.code).toBe('THREAD_NOT_FOUND')
    // Threads are per owner (docs/decisions.md#threads-keyed-per-owner): bob's input on the same id starts bob's thread and leaves alice's alone.
    const aliceBefore = threadRow(server.dbPath, threadId, 'alice')
    const input = await postRun(server, runInput(threadId, [userMessage('hi')]), { principal: 'bob' })
    expect(input.status).toBe(200)
    expect(input.events.find((e) => e.type === 'RUN_STARTED')).toMatchObject({ threadId })
    expect(threadRow(server.dbPath, threadId, 'alice')).toEqual(aliceBefore)
    expect(threadRow(server.dbPath, threadId, 'bob')).toMatchObject({ owner_id: 'bob' })
    const missing = await refused(() =>
      postRun(server, resumeInput(newThreadId(), [resolved(publish)]), { principal: 'bob' }),
    )
    expect(missing.error).toEqual(resume.error)
  })

  const cases: [
    string,
    (t: Awaited<ReturnType<typeof paused>>) => {
      body?: unknown
      rawBody?: string | Uint8Array
      headers?: Record<string, string>
    },
    number,
    string,
  ][] = [
    ['body is not JSON', () => ({ rawBody: '{"threadId":' }), 400, 'INVALID_INPUT'],
    ['body is not an object', () => ({ rawBody: '[1,2,3]' }), 400, 'INVALID_INPUT'],
    ['body is not UTF-8', () => ({ rawBody: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) }), 400, 'INVALID_INPUT'],
    [
      'content type is not JSON',
      ({ threadId }) => ({ body: runInput(threadId, []), headers: { 'Content-Type': 'text/plain' } }),
      400,
      'INVALID_INPUT',
    ],
    ['schema: missing runId', ({ threadId }) => ({ body: { threadId, messages: [] } }), 400, 'INVALID_INPUT'],
    [
      'schema: message without role',
      ({ threadId }) => ({ body: runInput(threadId, [{ id: 'x', content: 'hi' } as never]) }),
      400,
      'INVALID_INPUT',
    ],
    ['threadId with spaces', () => ({ body: runInput('a thread', [userMessage('hi')]) }), 400, 'INVALID_INPUT'],
    [
      'body larger than the limit',
      ({ threadId }) => ({ body: runInput(threadId, [userMessage('x'.repeat(70 * 1024))]) }),
      413,
      'PAYLOAD_TOO_LARGE',
    ],
    [
      'too many messages',
      ({ threadId }) => ({
        body: runInput(
          threadId,
          Array.from({ length: 21 }, (_, i) => userMessage(`m${i}`)),
        ),
      }),
      413,
      'PAYLOAD_TOO_LARGE',
    ],
    [
      'new input while a batch is open',
      ({ threadId }) => ({ body: runInput(threadId, [userMessage('deploy again')]) }),
      409,
      'INTERRUPTS_PENDING',
    ],
    [
      'resume is not an array',
      ({ threadId }) => ({ body: { ...resumeInput(threadId, []), resume: { a: 1 } } }),
      400,
      'INVALID_INPUT',
    ],
    [
      'resume entry with a bad status',
      ({ threadId, publish }) => ({
        body: resumeInput(threadId, [{ interruptId: publish.id, status: 'approved' as never }]),
      }),
      400,
      'INVALID_INPUT',
    ],
    [
      'cancelled entry with a payload',
      ({ threadId, publish, deploy }) => ({
        body: resumeInput(threadId, [{ ...cancelled(publish), payload: { approved: true } }, cancelled(deploy)]),
      }),
      400,
      'INVALID_INPUT',
    ],
    [
      'too many resume entries',
      ({ threadId, publish }) => ({
        body: resumeInput(
          threadId,
          Array.from({ length: 5 }, () => cancelled(publish)),
        ),
      }),
      400,
      'INVALID_INPUT',
    ],
    [
      'resume covers only part of the batch',
      ({ threadId, publish }) => ({ body: resumeInput(threadId, [resolved(publish)]) }),
      422,
      'RESUME_INCOMPLETE',
    ],
    ['resume with an empty array', ({ threadId }) => ({ body: resumeInput(threadId, []) }), 422, 'RESUME_INCOMPLETE'],
    [
      'duplicate entries',
      ({ threadId, publish, deploy }) => ({
        body: resumeInput(threadId, [resolved(publish), resolved(publish), resolved(deploy)]),
      }),
      422,
      'RESUME_DUPLICATE_ENTRY',
    ],
    [
      'unknown interrupt id',
      ({ threadId, publish, deploy }) => ({
        body: resumeInput(threadId, [
          resolved(publish),
          resolved(deploy),
          { interruptId: 'int_nope', status: 'cancelled' },
        ]),
      }),
      422,
      'RESUME_UNKNOWN_INTERRUPT',
    ],
    [
      'payload of the wrong type',
      ({ threadId, publish, deploy }) => ({
        body: resumeInput(threadId, [resolved(publish, { approved: 'yes' }), resolved(deploy)]),
      }),
      422,
      'RESUME_PAYLOAD_INVALID',
    ],
    [
      'payload with an extra property',
      ({ threadId, publish, deploy }) => ({
        body: resumeInput(threadId, [resolved(publish, { approved: true, sudo: true }), resolved(deploy)]),
      }),
      422,
      'RESUME_PAYLOAD_INVALID',
    ],
    [
      'resolved without a payload',
      ({ threadId, publish, deploy }) => ({
        body: resumeInput(threadId, [{ interruptId: publish.id, status: 'resolved' }, resolved(deploy)]),
      }),
      422,
      'RESUME_PAYLOAD_INVALID',
    ],
    [
      'editedArgs on a tool without allowEdits',
      ({ threadId, publish, deploy }) => ({
        body: resumeInput(threadId, [
          resolved(publish, { approved: true, editedArgs: { version: 'v9' } }),
          resolved(deploy),
        ]),
      }),
      422,
      'RESUME_PAYLOAD_INVALID',
    ],
    [
      'editedArgs that break the tool schema',
      ({ threadId, publish, deploy }) => ({
        body: resumeInput(threadId, [
          resolved(publish),
          resolved(deploy, { approved: true, editedArgs: { version: 'v9', environment: 'moon' } }),
        ]),
      }),
      422,
      'RESUME_PAYLOAD_INVALID',
    ],
    [
      'payload larger than the limit',
      ({ threadId, publish, deploy }) => ({
        body: resumeInput(threadId, [
          resolved(publish, { approved: false, reason: 'x'.repeat(2000) }),
          resolved(deploy),
        ]),
      }),
      413,
      'PAYLOAD_TOO_LARGE',
    ],
    [
      'tool message for an unknown call',
      ({ threadId }) => ({
        body: runInput(`${threadId}-other`, [{ id: 'tm', role: 'tool', toolCallId: 'call_nope', content: 'ok' }]),
      }),
      422,
      'UNKNOWN_TOOL_CALL',
    ],
  ]

  for (const [name, build, status, code] of cases) {
    it(`${name} → ${status} ${code}`, async () => {
      const t = await paused()
      const { body, rawBody, headers } = build(t)
      const r = await refused(() =>
        postRun(server, body, { ...(rawBody !== undefined ? { rawBody } : {}), ...(headers ? { headers } : {}) }),
      )
      expect(r.status).toBe(status)
      expect(r.error?.code).toBe(code)
      // The batch stays answerable.
      expect(threadRow(server.dbPath, t.threadId)).toMatchObject({ status: 'interrupted', active_run_id: null })
    })
  }

  it('RESUME_PAYLOAD_INVALID details carry the Ajv errors per interrupt', async () => {
    const { threadId, publish, deploy } = await paused()
    const r = await refused(() =>
      postRun(
        server,
        resumeInput(threadId, [
          resolved(publish, { approved: 1 }),
          resolved(deploy, { approved: true, editedArgs: { version: '' } }),
        ]),
      ),
    )
    const errors = (r.error?.details as { errors: Record<string, { path: string; keyword: string }[]> }).errors
    expect(Object.keys(errors).sort()).toEqual([publish.id, deploy.id].sort())
    expect(errors[publish.id]).toEqual([expect.objectContaining({ path: '/approved', keyword: 'type' })])
    expect(errors[deploy.id]!.map((e) => e.keyword).sort()).toEqual(['minLength', 'required'])
  })

  it('INTERRUPTS_PENDING details carry the pending interrupts', async () => {
    const { threadId, publish, deploy } = await paused()
    const r = await refused(() => postRun(server, runInput(threadId, [userMessage('and another thing')])))
    expect((r.error?.details as { interrupts: Interrupt[] }).interrupts.map((i) => i.id)).toEqual([
      publish.id,
      deploy.id,
    ])
  })

  it('resume with nothing pending → RESUME_NOTHING_PENDING', async () => {
    const threadId = newThreadId()
    await postRun(server, runInput(threadId, [userMessage('hello')]))
    const r = await refused(() =>
      postRun(server, resumeInput(threadId, [{ interruptId: 'int_x', status: 'cancelled' }])),
    )
    expect(r.status).toBe(409)
    expect(r.error?.code).toBe('RESUME_NOTHING_PENDING')
  })
})

describe('expiry on the server clock', () => {
  it('expiresAt = server clock + ttl; after it, resolved answers are INTERRUPT_EXPIRED and nothing changes', async () => {
    const { threadId, publish, deploy } = await paused()
    expect(publish.expiresAt).toBe(new Date(clock.now + 600_000).toISOString())
    const start = clock.now
    try {
      clock.now = start + 600_000
      const r = await refused(() => postRun(server, resumeInput(threadId, [resolved(publish), cancelled(deploy)])))
      expect(r.status).toBe(410)
      expect(r.error?.code).toBe('INTERRUPT_EXPIRED')
      // An all-cancelled resume still closes the expired batch, and the thread continues.
      const closed = await postRun(server, resumeInput(threadId, [cancelled(publish), cancelled(deploy)]))
      expect(closed.status).toBe(200)
      expect(threadRow(server.dbPath, threadId)).toMatchObject({ status: 'idle' })
      const next = await postRun(server, runInput(threadId, [userMessage('hello again')]))
      expect(next.status).toBe(200)
    } finally {
      clock.now = start
    }
  })

  it('one millisecond before expiresAt the batch is still answerable', async () => {
    const { threadId, publish, deploy } = await paused()
    const start = clock.now
    try {
      clock.now = start + 599_999
      expect((await postRun(server, resumeInput(threadId, [resolved(publish), cancelled(deploy)]))).status).toBe(200)
    } finally {
      clock.now = start
    }
  })
})

describe('stale and concurrent requests', () => {
  it('a stale resume of the first batch after a second batch was issued: ALREADY_RESUMED or DECISION_CONFLICT, nothing changes', async () => {
    const { threadId, publish, deploy } = await paused()
    const firstResume = resumeInput(threadId, [resolved(publish), cancelled(deploy)])
    expect((await postRun(server, firstResume)).status).toBe(200)
    const second = await postRun(server, runInput(threadId, [userMessage('deploy v8 to staging')]))
    expect(interruptsOf(second.events)).toHaveLength(2)

    const same = await refused(() => postRun(server, resumeInput(threadId, [resolved(publish), cancelled(deploy)])))
    expect(same.status).toBe(409)
    expect(same.error).toMatchObject({ code: 'ALREADY_RESUMED', details: { runId: firstResume.runId } })
    const different = await refused(() => postRun(server, resumeInput(threadId, [resolved(publish), resolved(deploy)])))
    expect(different.error).toMatchObject({ code: 'DECISION_CONFLICT', details: { runId: firstResume.runId } })
    // Mixing ids of the old and the open batch is an unknown interrupt for the open batch.
    const [p2, d2] = interruptsOf(second.events)
    const mixed = await refused(() =>
      postRun(server, resumeInput(threadId, [resolved(p2!), resolved(d2!), cancelled(publish)])),
    )
    expect(mixed.error?.code).toBe('RESUME_UNKNOWN_INTERRUPT')
  })
})
