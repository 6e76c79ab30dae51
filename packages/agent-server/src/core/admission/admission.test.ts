import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { ErrorCode, Interrupt } from '@interlude/protocol'
import type { RunResponse } from '../../test-utils/harness.ts'
import {
  interruptsOf,
  newThreadId,
  resumeInput,
  runInput,
  textOf,
  types,
  userMessage,
} from '../../test-utils/harness.ts'
import type { InProcessServer } from '../../test-utils/in-process.ts'
import { startInProcess } from '../../test-utils/in-process.ts'
import { cancelled, refusedUnchanged, resolved } from '../../test-utils/resume-entries.ts'
import { threadKey } from '../../store/thread-key.ts'

/**
 * Admission (`admitRun`) driven in-process: every refusal it makes, with its HTTP status, and
 * the proof that a refusal changed nothing in the store; then the first-touch retry. The HTTP
 * layer's own refusals (body, content type, schema) are in `src/http/admission.test.ts`.
 */
const clock = { now: Date.parse('2030-01-01T00:00:00.000Z') }
const LEASE_MS = 60_000
let s: InProcessServer

beforeAll(async () => {
  s = await startInProcess({
    now: () => clock.now,
    exclusive: false,
    // No sweep during the tests: abandoned runs are closed by first touch only.
    pollMs: 600_000,
    interruptTtlSeconds: 600,
    limits: { maxMessagesPerInput: 3, maxMessageBytes: 2048 },
  })
})
afterAll(async () => {
  await s.dispose()
})

interface Paused {
  readonly threadId: string
  readonly publish: Interrupt
  readonly deploy: Interrupt
}

async function paused(): Promise<Paused> {
  const threadId = newThreadId()
  const first = await s.postRun(runInput(threadId, [userMessage('deploy v7 to production')]))
  const [publish, deploy] = interruptsOf(first.events)
  return { threadId, publish: publish!, deploy: deploy! }
}

/** What a process that died mid-run leaves: the thread held by a `running` run with a lease. */
async function heldByDeadRun(threadId: string, leaseUntil: number): Promise<string> {
  const runId = `run-dead-${threadId}`
  await s.store.startInputRun({
    threadId: threadKey('alice', threadId),
    ownerId: 'alice',
    runId,
    parentRunId: undefined,
    expectedRevision: null,
    initialState: {},
    messages: [userMessage('hello', `u-${threadId}`)],
    toolResults: [],
    now: clock.now,
    executorId: 'exec-dead',
    leaseUntil,
  })
  return runId
}

const refused = (send: () => Promise<RunResponse>) => refusedUnchanged(s.dbPath, send)

type Send = () => Promise<RunResponse>

/** Each row sets up what it needs (changes allowed), then names the one request that must be refused. */
type Refusal = [name: string, prepare: (t: Paused) => Send | Promise<Send>, status: number, code: ErrorCode]

const refusals: Refusal[] = [
  [
    "another principal's thread",
    (t) => () =>
      s.postRun(resumeInput(t.threadId, [resolved(t.publish), resolved(t.deploy)]), {
        principal: 'bob',
        owner: 'alice',
      }),
    404,
    'THREAD_NOT_FOUND',
  ],
  [
    'resume of a thread that does not exist',
    (t) => () => s.postRun(resumeInput(newThreadId(), [resolved(t.publish)])),
    404,
    'THREAD_NOT_FOUND',
  ],
  [
    'more new messages than maxMessagesPerInput',
    () => () =>
      s.postRun(
        runInput(
          newThreadId(),
          ['a', 'b', 'c', 'd'].map((m) => userMessage(m)),
        ),
      ),
    413,
    'PAYLOAD_TOO_LARGE',
  ],
  [
    'a new message larger than maxMessageBytes',
    () => () => s.postRun(runInput(newThreadId(), [userMessage('x'.repeat(4096))])),
    413,
    'PAYLOAD_TOO_LARGE',
  ],
  [
    'duplicate message ids',
    () => () => s.postRun(runInput(newThreadId(), [userMessage('a', 'same'), userMessage('b', 'same')])),
    400,
    'INVALID_INPUT',
  ],
  [
    'a cancelled entry with a payload',
    (t) => () =>
      s.postRun(
        resumeInput(t.threadId, [{ ...cancelled(t.publish), payload: { approved: true } }, cancelled(t.deploy)]),
      ),
    400,
    'INVALID_INPUT',
  ],
  [
    'new input while a batch is open',
    (t) => () => s.postRun(runInput(t.threadId, [userMessage('and another')])),
    409,
    'INTERRUPTS_PENDING',
  ],
  [
    'new input while a live run holds the thread (its lease has not ended)',
    async () => {
      const threadId = newThreadId()
      await heldByDeadRun(threadId, clock.now + LEASE_MS)
      return () => s.postRun(runInput(threadId, [userMessage('hi')]))
    },
    409,
    'THREAD_BUSY',
  ],
  [
    'a tool message for a call the thread does not have',
    () => () =>
      s.postRun(runInput(newThreadId(), [{ id: 'tm', role: 'tool', toolCallId: 'call_nope', content: 'ok' }])),
    422,
    'UNKNOWN_TOOL_CALL',
  ],
  [
    'new input reusing the runId of a resume',
    async (t) => {
      const resume = resumeInput(t.threadId, [cancelled(t.publish), cancelled(t.deploy)])
      expect((await s.postRun(resume)).status).toBe(200)
      return () => s.postRun(runInput(t.threadId, [userMessage('hi')], { runId: resume.runId }))
    },
    409,
    'DECISION_CONFLICT',
  ],
  [
    'the same decision again under another runId',
    async (t) => {
      expect((await s.postRun(resumeInput(t.threadId, [resolved(t.publish), cancelled(t.deploy)]))).status).toBe(200)
      return () => s.postRun(resumeInput(t.threadId, [resolved(t.publish), cancelled(t.deploy)]))
    },
    409,
    'ALREADY_RESUMED',
  ],
  [
    'a resume covering part of the batch',
    (t) => () => s.postRun(resumeInput(t.threadId, [resolved(t.publish)])),
    422,
    'RESUME_INCOMPLETE',
  ],
  [
    'a resume naming an unknown interrupt',
    (t) => () =>
      s.postRun(
        resumeInput(t.threadId, [
          resolved(t.publish),
          resolved(t.deploy),
          { interruptId: 'int_nope', status: 'cancelled' },
        ]),
      ),
    422,
    'RESUME_UNKNOWN_INTERRUPT',
  ],
  [
    'a resume answering one interrupt twice',
    (t) => () => s.postRun(resumeInput(t.threadId, [resolved(t.publish), resolved(t.publish), resolved(t.deploy)])),
    422,
    'RESUME_DUPLICATE_ENTRY',
  ],
  [
    'a payload that breaks the responseSchema',
    (t) => () => s.postRun(resumeInput(t.threadId, [resolved(t.publish, { approved: 'yes' }), resolved(t.deploy)])),
    422,
    'RESUME_PAYLOAD_INVALID',
  ],
  [
    'a resume of an idle thread',
    async (t) => {
      const threadId = newThreadId()
      expect((await s.postRun(runInput(threadId, [userMessage('hello')]))).status).toBe(200)
      return () => s.postRun(resumeInput(threadId, [cancelled(t.publish)]))
    },
    409,
    'RESUME_NOTHING_PENDING',
  ],
  [
    'a resolved answer at expiresAt (server clock)',
    (t) => async () => {
      const start = clock.now
      clock.now = Date.parse(t.publish.expiresAt!)
      try {
        return await s.postRun(resumeInput(t.threadId, [resolved(t.publish), cancelled(t.deploy)]))
      } finally {
        clock.now = start
      }
    },
    410,
    'INTERRUPT_EXPIRED',
  ],
]

describe('admission refusals: the code, its HTTP status, nothing changed', () => {
  for (const [name, prepare, status, code] of refusals) {
    it(`${name} → ${status} ${code}`, async () => {
      const send = await prepare(await paused())
      const r = await refused(send)
      expect(r.error?.code).toBe(code)
      expect(r.status).toBe(status)
    })
  }
})

describe('first touch: a thread held by a run whose process died', () => {
  it('admission takes the abandoned run over once its lease ended; the input is admitted after its continuation', async () => {
    const threadId = newThreadId()
    const deadRunId = await heldByDeadRun(threadId, clock.now + LEASE_MS)
    const input = runInput(threadId, [userMessage('hello again')])
    expect((await refused(() => s.postRun(input))).error?.code).toBe('THREAD_BUSY')

    const start = clock.now
    clock.now = start + LEASE_MS + 1
    try {
      // The first touch continues the dead run here (docs/architecture.md, "Durable continuation"): still busy.
      expect((await s.postRun(input)).error?.code).toBe('THREAD_BUSY')
      const replay = await s.threadEvents(threadId)
      expect(replay.events[replay.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, runId: deadRunId })
      expect(replay.events.map((e) => e.type)).not.toContain(EventType.RUN_ERROR)
      const admitted = await s.postRun(input)
      expect(admitted.status).toBe(200)
      expect(types(admitted.events)[0]).toBe(EventType.RUN_STARTED)
      expect(admitted.events[admitted.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED })
      expect(textOf(admitted.events).length).toBeGreaterThan(0)
    } finally {
      clock.now = start
    }
    expect(await s.store.getRun(threadKey('alice', threadId), deadRunId)).toMatchObject({ status: 'succeeded' })
  })

  it("another principal's held thread is not touched: THREAD_NOT_FOUND, nothing changed", async () => {
    const threadId = newThreadId()
    const deadRunId = await heldByDeadRun(threadId, clock.now - 1)
    const r = await refused(() =>
      s.postRun(runInput(threadId, [userMessage('mine?')]), { principal: 'bob', owner: 'alice' }),
    )
    expect(r.error?.code).toBe('THREAD_NOT_FOUND')
    expect(await s.store.getRun(threadKey('alice', threadId), deadRunId)).toMatchObject({ status: 'running' })
  })
})
