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
  server = await startTestServer({ limits: { maxBodyBytes: 512 * 1024 } })
  const a = await postRun(server, runInput('t-alice-paused', [userMessage('deploy v1 to production')]))
  const b = await postRun(server, runInput('t-bob-paused', [userMessage('ask me to choose')]), { principal: 'bob' })
  interrupts = [...interruptsOf(a.events), ...interruptsOf(b.events)]
})
afterAll(async () => {
  await server.dispose()
})

/**
 * The property: a 4xx JSON envelope, or a well-formed stream with one terminal event last — never
 * a 5xx, never `INTERNAL` (in the envelope or as `RUN_ERROR`), never an unexpected error in the log.
 */
function wellFormed(r: RunResponse): void {
  expect(r.status).toBeLessThan(500)
  if (r.status === 200) {
    expect(r.events.length).toBeGreaterThanOrEqual(2)
    expect(r.events[0]!.type).toBe(EventType.RUN_STARTED)
    const terminal = r.events.filter((e) => e.type === EventType.RUN_FINISHED || e.type === EventType.RUN_ERROR)
    expect(terminal).toHaveLength(1)
    expect(r.events[r.events.length - 1]).toBe(terminal[0])
    // A crash inside a run is a failure, not a well-formed stream.
    expect(terminal[0]).not.toMatchObject({ type: EventType.RUN_ERROR, code: 'INTERNAL' })
    expect(r.raw).not.toContain('\r')
  } else {
    expect(r.status).toBeGreaterThanOrEqual(400)
    expect(isErrorEnvelope(JSON.parse(r.raw))).toBe(true)
    expect(r.error?.code).not.toBe('INTERNAL')
  }
  expect(server.logged).toEqual([])
}

/** JSON text nesting `depth` containers (arrays, or objects and arrays alternating). */
function nested(depth: number, objects: boolean): string {
  let open = ''
  let close = ''
  for (let i = 0; i < depth; i++) {
    const object = objects && i % 2 === 0
    open += object ? '{"k":' : '['
    close = (object ? '}' : ']') + close
  }
  return `${open}1${close}`
}

const id = fc.oneof(fc.constantFrom(...threads), fc.string({ maxLength: 12 }), fc.constant(''), fc.integer())
const content = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('deploy v2 to production', 'ask me to choose', 'hello'),
  fc.array(fc.record({ type: fc.constantFrom('text', 'image', 'bogus'), text: fc.string({ maxLength: 10 }) }), {
    maxLength: 2,
  }),
  fc.jsonValue({ maxDepth: 6 }),
)
const message = fc.record(
  {
    id: fc.oneof(fc.uuid(), fc.string({ maxLength: 6 })),
    role: fc.constantFrom('user', 'assistant', 'tool', 'system', 'developer', 'activity', 'reasoning', 'robot'),
    content,
    toolCallId: fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom(...(['call_x'] as string[]))),
    toolCalls: fc.array(
      fc.record({
        id: fc.string({ maxLength: 6 }),
        type: fc.constant('function'),
        function: fc.record({
          name: fc.constantFrom('deploy', 'publish_release', 'x'),
          arguments: fc.string({ maxLength: 20 }),
        }),
      }),
      { maxLength: 2 },
    ),
  },
  { requiredKeys: ['id', 'role'] },
)
const entry = fc.record(
  {
    interruptId: fc.oneof(
      fc.constantFrom('int_x', ''),
      fc.nat(3).map((i) => interrupts[i]?.id ?? 'int_none'),
    ),
    status: fc.constantFrom('resolved', 'cancelled', 'approved', 1),
    payload: fc.oneof(
      fc.record(
        {
          approved: fc.oneof(fc.boolean(), fc.string()),
          editedArgs: fc.jsonValue({ maxDepth: 6 }),
          reason: fc.string({ maxLength: 8 }),
        },
        { requiredKeys: [] },
      ),
      fc.record(
        { environment: fc.constantFrom('staging', 'production', 'moon'), notes: fc.string({ maxLength: 8 }) },
        { requiredKeys: [] },
      ),
      fc.jsonValue({ maxDepth: 6 }),
    ),
    metadata: fc.jsonValue({ maxDepth: 4 }),
  },
  { requiredKeys: ['interruptId', 'status'] },
)
const runInputLike = fc.record(
  {
    threadId: id,
    runId: fc.oneof(fc.uuid(), fc.constantFrom('r1', 'r2'), fc.integer()),
    messages: fc.array(message, { maxLength: 4 }),
    tools: fc.array(
      fc.record({
        name: fc.string({ maxLength: 8 }),
        description: fc.string({ maxLength: 8 }),
        parameters: fc.jsonValue({ maxDepth: 6 }),
      }),
      { maxLength: 2 },
    ),
    context: fc.array(fc.record({ description: fc.string({ maxLength: 8 }), value: fc.string({ maxLength: 8 }) }), {
      maxLength: 1,
    }),
    state: fc.jsonValue({ maxDepth: 6 }),
    resume: fc.oneof(fc.array(entry, { maxLength: 4 }), fc.jsonValue({ maxDepth: 4 })),
    forwardedProps: fc.jsonValue({ maxDepth: 6 }),
  },
  { requiredKeys: [] },
)

// Mostly schema-valid inputs so that admission, the claim and the execution core are exercised.
const toolCallIdPool = fc.oneof(
  fc.constantFrom('call_x', 'c1'),
  fc.nat(3).map((i) => interrupts[i]?.toolCallId ?? 'call_none'),
)
const validMessage = fc.oneof(
  fc.record({
    id: fc.uuid(),
    role: fc.constant('user'),
    content: fc.oneof(
      fc.constantFrom('deploy v2 to production', 'ask me to choose', 'hello', 'release v3'),
      fc.string({ maxLength: 20 }),
    ),
  }),
  fc.record({
    id: fc.oneof(fc.uuid(), fc.constantFrom('m1', 'm2')),
    role: fc.constant('tool'),
    toolCallId: toolCallIdPool,
    content: fc.string({ maxLength: 20 }),
  }),
  fc.record({ id: fc.uuid(), role: fc.constant('assistant'), content: fc.string({ maxLength: 20 }) }),
  fc.record({ id: fc.uuid(), role: fc.constantFrom('system', 'developer'), content: fc.string({ maxLength: 20 }) }),
)
const validEntry = fc.record(
  {
    interruptId: fc.oneof(
      fc.nat(3).map((i) => interrupts[i]?.id ?? 'int_none'),
      fc.constant('int_x'),
    ),
    status: fc.constantFrom('resolved', 'cancelled'),
    payload: fc.oneof(
      fc.record({ approved: fc.boolean(), reason: fc.string({ maxLength: 8 }) }, { requiredKeys: ['approved'] }),
      fc.record({
        approved: fc.boolean(),
        editedArgs: fc.record({
          version: fc.string({ maxLength: 6 }),
          environment: fc.constantFrom('staging', 'production', 'moon'),
        }),
      }),
      fc.record(
        { environment: fc.constantFrom('staging', 'production', 'moon'), notes: fc.string({ maxLength: 8 }) },
        { requiredKeys: ['environment'] },
      ),
      fc.jsonValue({ maxDepth: 6 }),
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
      fc.asyncProperty(
        fc.jsonValue({ maxDepth: 10 }),
        fc.constantFrom('alice', 'bob' as const),
        async (body, principal) => {
          wellFormed(await postRun(server, body, { principal }))
        },
      ),
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

  it('very deep values in any field (raw JSON up to 100,000 levels): refused as too deep, or handled — never INTERNAL', async () => {
    const DEEP = '__deep__'
    const deep = fc.record({
      depth: fc.constantFrom(2, 20, 55, 58, 60, 61, 62, 63, 64, 65, 100, 2000, 100_000),
      objects: fc.boolean(),
    })
    const interrupt = fc.nat(3).map((i) => interrupts[i])
    const place = fc.oneof(
      interrupt.map((i) => ({
        threadId: 't-alice-paused',
        runId: 'r-deep',
        messages: [],
        resume: [{ interruptId: i?.id ?? 'int_x', status: 'resolved', payload: DEEP }],
      })),
      interrupt.map((i) => ({
        threadId: 't-alice-paused',
        runId: 'r-deep',
        messages: [],
        resume: [{ interruptId: i?.id ?? 'int_x', status: 'resolved', payload: { approved: true, editedArgs: DEEP } }],
      })),
      interrupt.map((i) => ({
        threadId: 't-alice-paused',
        runId: 'r-deep',
        messages: [],
        resume: [{ interruptId: i?.id ?? 'int_x', status: 'cancelled', metadata: { m: DEEP } }],
      })),
      fc.uuid().map((id) => ({
        threadId: `t-deep-${id}`,
        runId: 'r1',
        messages: [{ id, role: 'user', content: 'hello', extra: DEEP }],
      })),
      fc.uuid().map((id) => ({
        threadId: `t-deep-${id}`,
        runId: 'r1',
        messages: [{ id, role: 'user', content: 'hello', metadata: { x: DEEP } }],
      })),
      fc.uuid().map((id) => ({
        threadId: `t-deep-${id}`,
        runId: 'r1',
        messages: [{ id, role: 'user', content: [{ type: 'text', text: 'hi', metadata: DEEP }] }],
      })),
      fc.uuid().map((id) => ({
        threadId: `t-deep-${id}`,
        runId: 'r1',
        messages: [{ id, role: 'user', content: 'deploy v9 to staging' }],
        state: DEEP,
      })),
      fc.uuid().map((id) => ({
        threadId: `t-deep-${id}`,
        runId: 'r1',
        messages: [{ id, role: 'user', content: 'hello' }],
        forwardedProps: DEEP,
      })),
      fc.uuid().map((id) => ({
        threadId: `t-deep-${id}`,
        runId: 'r1',
        messages: [{ id, role: 'user', content: 'hello' }],
        tools: [{ name: 'x', description: 'd', parameters: DEEP }],
      })),
      fc.uuid().map((id) => ({
        threadId: `t-deep-${id}`,
        runId: 'r1',
        messages: [{ id, role: 'user', content: 'hello' }],
        context: [{ description: 'd', value: DEEP }],
      })),
    )
    await fc.assert(
      fc.asyncProperty(place, deep, async (body, { depth, objects }) => {
        const rawBody = JSON.stringify(body).replace(`"${DEEP}"`, nested(depth, objects))
        const r = await postRun(server, undefined, { rawBody })
        wellFormed(r)
        // The body is depth 1; anything deeper than 64 levels in total is refused before admission.
        if (depth > 64)
          expect(r.error).toMatchObject({ code: 'INVALID_INPUT', details: { reason: 'too_deep', maxDepth: 64 } })
      }),
      { numRuns: 200 },
    )
    await server.app.runs.idle()
    expect(server.logged).toEqual([])
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
