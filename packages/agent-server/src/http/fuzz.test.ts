import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { EventType, isErrorEnvelope } from '@interlude/protocol'
import type { Interrupt } from '@interlude/protocol'
import type { RunResponse, TestServer } from '../test-utils/harness.ts'
import { interruptsOf, postRun, runInput, startTestServer, userMessage } from '../test-utils/harness.ts'

let server: TestServer
const threads = ['t-alice-paused', 't-bob-paused', 't-fresh-1', 't-fresh-2']
let interrupts: Interrupt[] = []

beforeAll(async () => {
  server = await startTestServer({ limits: { maxBodyBytes: 32 * 1024 } })
  const a = await postRun(server, runInput('t-alice-paused', [userMessage('deploy v1 to production')]))
  const b = await postRun(server, runInput('t-bob-paused', [userMessage('ask me to choose')]), { principal: 'bob' })
  interrupts = [...interruptsOf(a.events), ...interruptsOf(b.events)]
})
afterAll(async () => {
  await server.dispose()
})

/** The property: a 4xx JSON envelope, or a well-formed stream with one terminal event last — never a 5xx. */
function wellFormed(r: RunResponse): void {
  expect(r.status).toBeLessThan(500)
  if (r.status === 200) {
    expect(r.events.length).toBeGreaterThanOrEqual(2)
    expect(r.events[0]!.type).toBe(EventType.RUN_STARTED)
    const terminal = r.events.filter((e) => e.type === EventType.RUN_FINISHED || e.type === EventType.RUN_ERROR)
    expect(terminal).toHaveLength(1)
    expect(r.events[r.events.length - 1]).toBe(terminal[0])
    expect(r.raw).not.toContain('\r')
  } else {
    expect(r.status).toBeGreaterThanOrEqual(400)
    expect(isErrorEnvelope(JSON.parse(r.raw))).toBe(true)
  }
}

const id = fc.oneof(fc.constantFrom(...threads), fc.string({ maxLength: 12 }), fc.constant(''), fc.integer())
const content = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('deploy v2 to production', 'ask me to choose', 'hello'),
  fc.array(fc.record({ type: fc.constantFrom('text', 'image', 'bogus'), text: fc.string({ maxLength: 10 }) }), { maxLength: 2 }),
  fc.jsonValue({ maxDepth: 2 }),
)
const message = fc.record(
  {
    id: fc.oneof(fc.uuid(), fc.string({ maxLength: 6 })),
    role: fc.constantFrom('user', 'assistant', 'tool', 'system', 'developer', 'activity', 'reasoning', 'robot'),
    content,
    toolCallId: fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom(...(['call_x'] as string[]))),
    toolCalls: fc.array(fc.record({ id: fc.string({ maxLength: 6 }), type: fc.constant('function'), function: fc.record({ name: fc.constantFrom('deploy', 'publish_release', 'x'), arguments: fc.string({ maxLength: 20 }) }) }), { maxLength: 2 }),
  },
  { requiredKeys: ['id', 'role'] },
)
const entry = fc.record(
  {
    interruptId: fc.oneof(fc.constantFrom('int_x', ''), fc.nat(3).map((i) => interrupts[i]?.id ?? 'int_none')),
    status: fc.constantFrom('resolved', 'cancelled', 'approved', 1),
    payload: fc.oneof(
      fc.record({ approved: fc.oneof(fc.boolean(), fc.string()), editedArgs: fc.jsonValue({ maxDepth: 2 }), reason: fc.string({ maxLength: 8 }) }, { requiredKeys: [] }),
      fc.record({ environment: fc.constantFrom('staging', 'production', 'moon'), notes: fc.string({ maxLength: 8 }) }, { requiredKeys: [] }),
      fc.jsonValue({ maxDepth: 2 }),
    ),
    metadata: fc.jsonValue({ maxDepth: 1 }),
  },
  { requiredKeys: ['interruptId', 'status'] },
)
const runInputLike = fc.record(
  {
    threadId: id,
    runId: fc.oneof(fc.uuid(), fc.constantFrom('r1', 'r2'), fc.integer()),
    messages: fc.array(message, { maxLength: 4 }),
    tools: fc.array(fc.record({ name: fc.string({ maxLength: 8 }), description: fc.string({ maxLength: 8 }), parameters: fc.jsonValue({ maxDepth: 2 }) }), { maxLength: 2 }),
    context: fc.array(fc.record({ description: fc.string({ maxLength: 8 }), value: fc.string({ maxLength: 8 }) }), { maxLength: 1 }),
    state: fc.jsonValue({ maxDepth: 2 }),
    resume: fc.oneof(fc.array(entry, { maxLength: 4 }), fc.jsonValue({ maxDepth: 1 })),
    forwardedProps: fc.jsonValue({ maxDepth: 1 }),
  },
  { requiredKeys: [] },
)

// Mostly schema-valid inputs so that admission, the claim and the execution core are exercised.
const toolCallIdPool = fc.oneof(fc.constantFrom('call_x', 'c1'), fc.nat(3).map((i) => interrupts[i]?.toolCallId ?? 'call_none'))
const validMessage = fc.oneof(
  fc.record({ id: fc.uuid(), role: fc.constant('user'), content: fc.oneof(fc.constantFrom('deploy v2 to production', 'ask me to choose', 'hello', 'release v3'), fc.string({ maxLength: 20 })) }),
  fc.record({ id: fc.oneof(fc.uuid(), fc.constantFrom('m1', 'm2')), role: fc.constant('tool'), toolCallId: toolCallIdPool, content: fc.string({ maxLength: 20 }) }),
  fc.record({ id: fc.uuid(), role: fc.constant('assistant'), content: fc.string({ maxLength: 20 }) }),
  fc.record({ id: fc.uuid(), role: fc.constantFrom('system', 'developer'), content: fc.string({ maxLength: 20 }) }),
)
const validEntry = fc.record(
  {
    interruptId: fc.oneof(fc.nat(3).map((i) => interrupts[i]?.id ?? 'int_none'), fc.constant('int_x')),
    status: fc.constantFrom('resolved', 'cancelled'),
    payload: fc.oneof(
      fc.record({ approved: fc.boolean(), reason: fc.string({ maxLength: 8 }) }, { requiredKeys: ['approved'] }),
      fc.record({ approved: fc.boolean(), editedArgs: fc.record({ version: fc.string({ maxLength: 6 }), environment: fc.constantFrom('staging', 'production', 'moon') }) }),
      fc.record({ environment: fc.constantFrom('staging', 'production', 'moon'), notes: fc.string({ maxLength: 8 }) }, { requiredKeys: ['environment'] }),
      fc.jsonValue({ maxDepth: 1 }),
    ),
  },
  { requiredKeys: ['interruptId', 'status'] },
)
const validInput = fc.record(
  {
    threadId: fc.oneof(fc.constantFrom(...threads), fc.uuid(), fc.uuid()),
    runId: fc.oneof(fc.uuid(), fc.constantFrom('r1', 'r2')),
    messages: fc.array(validMessage, { maxLength: 4 }),
    tools: fc.constant([]),
    context: fc.constant([]),
    resume: fc.array(validEntry, { maxLength: 3 }),
  },
  { requiredKeys: ['threadId', 'runId', 'messages'] },
)

describe('POST /runs under random input (fast-check)', () => {
  it('arbitrary JSON bodies: only 4xx admissions or well-formed streams', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), fc.constantFrom('alice', 'bob' as const), async (body, principal) => {
        wellFormed(await postRun(server, body, { principal }))
      }),
      { numRuns: 150 },
    )
  })

  it('RunAgentInput-shaped bodies, including real thread and interrupt ids', async () => {
    await fc.assert(
      fc.asyncProperty(runInputLike, fc.constantFrom('alice', 'bob' as const), async (body, principal) => {
        wellFormed(await postRun(server, body, { principal }))
      }),
      { numRuns: 250 },
    )
    await server.app.runs.idle()
  })

  it('schema-valid inputs against real threads and interrupts', async () => {
    await fc.assert(
      fc.asyncProperty(validInput, fc.constantFrom('alice', 'alice', 'bob' as const), async (body, principal) => {
        wellFormed(await postRun(server, body, { principal }))
      }),
      { numRuns: 300 },
    )
    await server.app.runs.idle()
    const health = await fetch(`${server.baseUrl}/health`)
    expect(health.status).toBe(200)
  })
})
