import { afterAll, afterEach, describe, expect, it, onTestFinished } from 'vitest'
import { EventType } from '@interlude/protocol'
import { ThreadSnapshotSchema } from '@interlude/protocol/schemas'
import type { Message, ThreadSnapshot } from '@interlude/protocol'
import type { AgentDefinition } from '../agent/agent.ts'
import { defineTool } from '../agent/tool.ts'
import { OMITTED_NOTE_ID } from '../core/turn/model-window.ts'
import { scriptedModel } from '../models/scripted.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts'
import type { SqliteStore } from '../store/sqlite/sqlite-store.ts'
import type { Store } from '../store/store.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, tempDir, types, userMessage } from '../test-utils/harness.ts'
import type { InProcessOptions, InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'
import { recordingModel } from '../test-utils/recording-model.ts'
import { commandAgent, commandScript } from '../test-utils/test-agents.ts'
import { threadKey } from '../store/thread-key.ts'

/** Bounded histories (docs/decisions.md#bounded-histories): every history read is bounded — thread cap, paged snapshot and replay, model window, pause snapshot. */

let server: InProcessServer | undefined
afterEach(async () => {
  await server?.dispose()
  server = undefined
})

async function serve(agent: AgentDefinition, extra: InProcessOptions = {}): Promise<InProcessServer> {
  server = await startInProcess({ agent, ...extra })
  return server
}

const command = (value: unknown) => userMessage(JSON.stringify(value))

/** A store whose whole-history read is counted: no request path may call it. */
function counting(store: Store): { store: Store; wholeReads: () => number } {
  let reads = 0
  const proxy = new Proxy(store, {
    get(target, key) {
      if (key === 'listMessages') reads += 1
      const value = Reflect.get(target, key, target) as unknown
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
  return { store: proxy, wholeReads: () => reads }
}

describe('thread cap', () => {
  it('refuses input that would cross the byte cap with 413 THREAD_TOO_LARGE, changing nothing; others go on', async () => {
    const s = await serve(commandAgent([]), {
      limits: { threadMaxBytes: 4 * 1024 * 1024, modelWindowBytes: 2 * 1024 * 1024 },
    })
    const threadId = newThreadId()
    const big = () => userMessage('x'.repeat(900 * 1024))
    let refused: Awaited<ReturnType<InProcessServer['postRun']>> | undefined
    // The attack of the issue as a bounded loop: large messages into one thread until it is refused.
    for (let i = 0; i < 20 && refused === undefined; i++) {
      const response = await s.postRun(runInput(threadId, [big()]))
      if (response.status !== 200) refused = response
      else expect(types(response.events).at(-1)).toBe(EventType.RUN_FINISHED)
    }
    expect(refused?.status).toBe(413)
    expect(refused?.error).toMatchObject({ code: 'THREAD_TOO_LARGE', details: { maxBytes: 4 * 1024 * 1024 } })
    const thread = (await s.store.getThread(threadKey('alice', threadId)))!
    expect(thread.messageBytes).toBeLessThanOrEqual(4 * 1024 * 1024)
    expect(thread.messageCount).toBe(8) // four user messages and four answers
    // Refused again, and nothing changed.
    const again = await s.postRun(runInput(threadId, [big()]))
    expect(again.error?.code).toBe('THREAD_TOO_LARGE')
    expect(await s.store.getThread(threadKey('alice', threadId))).toEqual(thread)
    // The same principal's other thread and another principal are not affected.
    expect((await s.postRun(runInput(newThreadId(), [big()]))).status).toBe(200)
    expect((await s.postRun(runInput(newThreadId(), [big()]), { principal: 'bob' })).status).toBe(200)
  })

  it('refuses input past the message cap; a re-sent history does not count', async () => {
    const s = await serve(commandAgent([]), { limits: { threadMaxMessages: 5 } })
    const threadId = newThreadId()
    const sent: Message[] = []
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      sent.push(userMessage(`hello ${i}`))
      const response = await s.postRun(runInput(threadId, sent))
      statuses.push(response.status)
      if (response.status !== 200) expect(response.error?.code).toBe('THREAD_TOO_LARGE')
    }
    // 2 messages per run: the third run would hold 5 + 1 answer, so it ends at the model call; the fourth is refused.
    expect(statuses).toEqual([200, 200, 200, 413])
    expect((await s.store.getThread(threadKey('alice', threadId)))!.messageCount).toBe(5)
  })

  it('a run whose own answer would cross the cap ends with RUN_ERROR THREAD_TOO_LARGE and stores no part of it', async () => {
    const model = scriptedModel(() => ({ text: 'y'.repeat(64 * 1024) }))
    const s = await serve({ model, tools: [] }, { limits: { threadMaxBytes: 32 * 1024 } })
    const threadId = newThreadId()
    const run = await s.postRun(runInput(threadId, [userMessage('write a lot')]))
    expect(run.status).toBe(200)
    const error = run.events.at(-1) as { type: string; code?: string }
    expect(error).toMatchObject({ type: EventType.RUN_ERROR, code: 'THREAD_TOO_LARGE' })
    const thread = (await s.store.getThread(threadKey('alice', threadId)))!
    expect(thread).toMatchObject({ status: 'idle', messageCount: 1 })
    expect((await s.store.listMessages(threadKey('alice', threadId))).map((m) => m.role)).toEqual(['user'])
    // The thread is not stuck: the next input is admitted (and ends the same typed way while the model insists).
    expect((await s.postRun(runInput(threadId, [userMessage('shorter please')]))).status).toBe(200)
  })
})

/** A thread of `runs` plain exchanges (user + answer), through real runs. */
async function exchanges(s: InProcessServer, threadId: string, runs: number, answerWords = 0): Promise<void> {
  for (let i = 0; i < runs; i++) {
    // With `answerWords`, the scripted answer streams that many text deltas (a longer event log).
    const content = answerWords > 0 ? JSON.stringify({ text: `word ${i} `.repeat(answerWords) }) : `question ${i}`
    const response = await s.postRun(runInput(threadId, [userMessage(content)]))
    expect(types(response.events).at(-1)).toBe(EventType.RUN_FINISHED)
  }
}

async function snapshot(s: InProcessServer, threadId: string, query = ''): Promise<ThreadSnapshot> {
  const response = await s.request(`/threads/${threadId}${query}`)
  expect(response.status).toBe(200)
  const body = (await response.json()) as ThreadSnapshot
  expect(ThreadSnapshotSchema.safeParse(body).success).toBe(true)
  return body
}

function pagingCases(open: () => Promise<InProcessOptions>) {
  it('pages snapshot messages newest first with a cursor; the pages add up to the history; replay pages the log', async () => {
    const s = await serve(commandAgent([]), await open())
    const threadId = newThreadId()
    await exchanges(s, threadId, 13, 6)
    const whole = await s.store.listMessages(threadKey('alice', threadId))
    expect(whole).toHaveLength(26)
    const first = await snapshot(s, threadId, '?limit=10')
    expect(first).toMatchObject({ hasMoreMessages: true, messageCount: 26 })
    expect(first.messages).toEqual(whole.slice(16))
    const second = await snapshot(s, threadId, `?limit=10&before=${first.messagesCursor}`)
    expect(second.messages).toEqual(whole.slice(6, 16))
    const third = await snapshot(s, threadId, `?limit=10&before=${second.messagesCursor}`)
    expect(third.messages).toEqual(whole.slice(0, 6))
    expect(third.hasMoreMessages).toBe(false)
    expect(third.messagesCursor).toBeUndefined()
    // The default page holds the whole of this short thread.
    expect((await snapshot(s, threadId)).messages).toEqual(whole)
    for (const bad of ['?before=nope', '?before=', '?limit=0', '?limit=1001', '?limit=2.5']) {
      const response = await s.request(`/threads/${threadId}${bad}`)
      expect(response.status).toBe(400)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('INVALID_INPUT')
    }
    // Replay (more than one page of the log: 13 runs of ~17 events) re-sends every event once, in order.
    const replay = await s.threadEvents(threadId)
    const ids = replay.ids.map(Number)
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1))
    expect(ids.length).toBe((await s.store.getThread(threadKey('alice', threadId)))!.lastSeq)
    expect(ids.length).toBeGreaterThan(128)
  })
}

describe('paged snapshot and replay: SQLite', () => {
  pagingCases(async () => ({}))
})

const pgReady = await pgAvailable('bounded-history')
const schemas: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const drop of schemas) await drop()
})
describe.runIf(pgReady)('paged snapshot and replay: PostgreSQL', () => {
  pagingCases(async () => {
    const { schema, drop } = await createTestSchema()
    schemas.push(drop)
    return { store: await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS }) }
  })
})

describe('no request path reads a whole history', () => {
  it('snapshots, inbox, pending interrupts, admission and runs never call listMessages', async () => {
    const tmp = tempDir()
    onTestFinished(() => tmp.cleanup())
    const counted = counting(createSqliteStore(tmp.dbPath))
    const approve = defineTool({
      name: 'deploy',
      description: 'Deploy',
      parameters: { type: 'object' },
      approval: 'always',
      execute: () => 'deployed',
    })
    const s = await serve(commandAgent([approve]), { store: counted.store })
    const threadId = newThreadId()
    await exchanges(s, threadId, 3)
    const paused = await s.postRun(runInput(threadId, [command({ toolCalls: [{ name: 'deploy', args: {} }] })]))
    expect(interruptsOf(paused.events)).toHaveLength(1)
    expect((await s.request('/threads?status=interrupted')).status).toBe(200)
    expect((await s.request('/interrupts?status=pending')).status).toBe(200)
    await snapshot(s, threadId)
    const [interrupt] = interruptsOf(paused.events)
    const resumed = await s.postRun(
      resumeInput(threadId, [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: false } }]),
    )
    expect(types(resumed.events).at(-1)).toBe(EventType.RUN_FINISHED)
    expect(counted.wholeReads()).toBe(0)
  })

  it('stores the title from the first user message for the inbox', async () => {
    const s = await serve(commandAgent([]))
    const threadId = newThreadId()
    await exchanges(s, threadId, 2)
    const page = (await (await s.request('/threads')).json()) as { threads: { threadId: string; title?: string }[] }
    expect(page.threads.find((t) => t.threadId === threadId)?.title).toBe('question 0')
  })
})

describe('pause snapshot', () => {
  it('MESSAGES_SNAPSHOT carries the whole history of a small thread and none above the bound: the log grows linearly', async () => {
    const deploy = defineTool({
      name: 'deploy',
      description: 'Deploy',
      parameters: { type: 'object', properties: { note: { type: 'string' } } },
      approval: 'always',
      execute: () => 'deployed',
    })
    const bound = 64 * 1024
    const s = await serve(commandAgent([deploy]), { limits: { pauseSnapshotMaxBytes: bound } })
    const db = (s.store as SqliteStore).database
    const logBytes = (threadId: string) =>
      (
        db
          .prepare('SELECT COALESCE(SUM(length(CAST(json AS BLOB))), 0) AS n FROM events WHERE thread_id = ?')
          .get(threadKey('alice', threadId)) as {
          n: number
        }
      ).n
    const threadId = newThreadId()
    const note = 'n'.repeat(4 * 1024)
    const perPause: number[] = []
    const snapshots: (number | undefined)[] = []
    for (let i = 0; i < 40; i++) {
      const before = logBytes(threadId)
      const paused = await s.postRun(
        runInput(threadId, [command({ text: note, toolCalls: [{ name: 'deploy', args: { note } }] })]),
      )
      const [interrupt] = interruptsOf(paused.events)
      expect(interrupt).toBeDefined()
      const pauseSnapshot = paused.events.find((e) => e.type === EventType.MESSAGES_SNAPSHOT) as
        { messages: Message[] } | undefined
      snapshots.push(pauseSnapshot?.messages.length)
      if (pauseSnapshot)
        expect(pauseSnapshot.messages).toEqual(await s.store.listMessages(threadKey('alice', threadId)))
      const resumed = await s.postRun(
        resumeInput(threadId, [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: false } }]),
      )
      expect(types(resumed.events).at(-1)).toBe(EventType.RUN_FINISHED)
      perPause.push(logBytes(threadId) - before)
    }
    const history = (await s.store.getThread(threadKey('alice', threadId)))!.messageBytes
    expect(history).toBeGreaterThan(5 * bound)
    // Early pauses carry the whole (small) history; once the thread passes the bound, none.
    expect(snapshots[0]).toBe(2)
    expect(snapshots.at(-1)).toBeUndefined()
    // Bytes per pause stay bounded by the snapshot bound plus one cycle's own events, whatever the history.
    const cycle = Math.max(...perPause.slice(-10))
    for (const bytes of perPause) expect(bytes).toBeLessThanOrEqual(bound + cycle + 1024)
    // Linear: the last ten cycles cost what the ten before them cost, give or take a little.
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
    expect(sum(perPause.slice(-10))).toBeLessThanOrEqual(1.05 * sum(perPause.slice(-20, -10)))
  })
})

describe('model window', () => {
  it('the model receives the first user message, a note and the newest messages, never a tool result without its call', async () => {
    const lookup = defineTool({
      name: 'lookup',
      description: 'Look something up',
      parameters: { type: 'object' },
      execute: () => 'found',
    })
    const model = recordingModel(scriptedModel(commandScript))
    const s = await serve({ model, tools: [lookup] }, { limits: { modelWindowMessages: 5 } })
    const threadId = newThreadId()
    const first = userMessage('the task: keep looking')
    await s.postRun(runInput(threadId, [first]))
    for (let i = 0; i < 3; i++) {
      const run = await s.postRun(runInput(threadId, [command({ toolCalls: [{ name: 'lookup', args: { i } }] })]))
      expect(types(run.events).at(-1)).toBe(EventType.RUN_FINISHED)
    }
    // Each tool run stores: user, assistant(tool_calls), tool, assistant("done: …"): 2 + 3 × 4 = 14 messages.
    const whole = await s.store.listMessages(threadKey('alice', threadId))
    expect(whole).toHaveLength(14)
    const last = model.requests.at(-1)!.messages
    // The last call read 13 messages; its newest 5 (positions 8–12) start with the tool result of the second round,
    // which is dropped with its call: positions 9–12 remain, after the first user message and a note for the other 8.
    expect(whole[8]!.role).toBe('tool')
    expect(last[0]).toEqual(first)
    expect(last[1]).toMatchObject({ id: OMITTED_NOTE_ID, role: 'system', content: expect.stringMatching(/^8 earlier/) })
    expect(last.slice(2)).toEqual(whole.slice(9, 13))
    // No tool message without its call anywhere in what the model read.
    const calls = new Set(last.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : [])))
    for (const m of last) if (m.role === 'tool') expect(calls.has(m.toolCallId)).toBe(true)
  })

  it('a newest message larger than the window ends the run with RUN_ERROR THREAD_TOO_LARGE; a new message continues', async () => {
    const model = recordingModel(scriptedModel(() => ({ text: 'ok' })))
    const s = await serve({ model, tools: [] }, { limits: { modelWindowBytes: 4 * 1024 } })
    const threadId = newThreadId()
    const huge = await s.postRun(runInput(threadId, [userMessage('z'.repeat(16 * 1024))]))
    expect(huge.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: 'THREAD_TOO_LARGE' })
    expect(model.requests).toHaveLength(0)
    const next = await s.postRun(runInput(threadId, [userMessage('short')]))
    expect(types(next.events).at(-1)).toBe(EventType.RUN_FINISHED)
    // The big message is not in the window (nor, too large for a quarter of it, as the first user message): a note.
    const seen = model.requests.at(-1)!.messages
    expect(seen.map((m) => m.role)).toEqual(['system', 'user'])
    expect(seen[0]).toMatchObject({ id: OMITTED_NOTE_ID, content: expect.stringMatching(/^1 earlier message/) })
    expect(seen[1]!.content).toBe('short')
  })
})
