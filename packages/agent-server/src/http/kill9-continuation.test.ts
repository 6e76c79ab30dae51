import fs from 'node:fs'
import path from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { AgUiEvent, Interrupt, RunAgentInput, ThreadSnapshot } from '@interlude/protocol'
import { ThreadSnapshotSchema } from '@interlude/protocol/schemas'
import type { ChildServer } from '../test-utils/child-server.ts'
import { CRASH_SERVER, killChildren, launchChild, until } from '../test-utils/child-server.ts'
import {
  authHeader,
  interruptsOf,
  newThreadId,
  postRun,
  resumeInput,
  runInput,
  tempDir,
  userMessage,
} from '../test-utils/harness.ts'
import { killDelayMs, trialTally } from '../test-utils/kill-trials.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOL_ARGS } from '../test-utils/pg.ts'
import { tailSse } from '../test-utils/sse-tail.ts'
import type { TailFrame } from '../test-utils/sse-tail.ts'

/**
 * kill -9 at random moments after admission (docs/architecture.md, "Durable continuation"): the process running a
 * turn dies 0–20 ms (mostly 3–8 ms) after a resume, or a run with new input, was admitted; the restart (SQLite) or
 * the other replica (PostgreSQL) continues the turn. Every approved call executes exactly once (counted in the
 * fixture's `tool-executions.log`), none is recorded cancelled, and the retrying client — same runId, or the events
 * route with `Last-Event-ID` — sees the continuation end with RUN_FINISHED.
 */
const RESUME_TRIALS = 30
const INPUT_TRIALS = 5
const LEASE_MS = 600

const tmp = tempDir()
afterEach(() => killChildren())
afterAll(() => tmp.cleanup())
const pg = await pgAvailable('kill -9 continuation on PostgreSQL')

let counter = 0
const signalDir = () => {
  const dir = path.join(tmp.dir, `kill9-${++counter}`)
  fs.mkdirSync(dir, { recursive: true })
  return dir
}
const executions = (dir: string): string[] => {
  const log = path.join(dir, 'tool-executions.log')
  return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : []
}

async function snapshot(server: ChildServer, threadId: string): Promise<ThreadSnapshot> {
  const res = await fetch(`${server.baseUrl}/threads/${threadId}`, { headers: authHeader('alice') })
  expect(res.status).toBe(200)
  return ThreadSnapshotSchema.parse(await res.json()) as ThreadSnapshot
}

async function pausedThread(server: ChildServer): Promise<{ threadId: string; interrupts: Interrupt[] }> {
  const threadId = newThreadId()
  const paused = await postRun(server, runInput(threadId, [userMessage('deploy v3 to production')]))
  const interrupts = interruptsOf(paused.events)
  expect(interrupts).toHaveLength(2)
  return { threadId, interrupts }
}

/** POSTs the run, waits until it is admitted (the SSE answer began), waits `ms`, then SIGKILLs the server. */
async function admitThenKill(server: ChildServer, input: RunAgentInput, ms: number): Promise<TailFrame[]> {
  const response = await fetch(`${server.baseUrl}/runs`, {
    method: 'POST',
    headers: { ...authHeader('alice'), 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(input),
  })
  expect(response.status).toBe(200)
  const tail = tailSse(response)
  await new Promise((resolve) => setTimeout(resolve, ms))
  await server.kill()
  await until(() => tail.ended(), 'the stream to break')
  return tail.frames
}

/**
 * The client reconnects: the same runId again (the run's whole stream), or the thread's events after the last id it
 * saw (appended to what it had).
 */
async function reconnect(
  server: ChildServer,
  input: RunAgentInput,
  received: readonly TailFrame[],
  viaEvents: boolean,
): Promise<AgUiEvent[]> {
  const lastEventId = received.length > 0 ? received[received.length - 1]!.id : 0
  if (!viaEvents) {
    const retry = await postRun(server, input)
    expect(retry.status).toBe(200)
    return retry.events
  }
  const res = await fetch(`${server.baseUrl}/threads/${input.threadId}/events`, {
    headers: { ...authHeader('alice'), ...(lastEventId > 0 ? { 'Last-Event-ID': String(lastEventId) } : {}) },
  })
  expect(res.status).toBe(200)
  const tail = tailSse(res)
  await until(() => tail.ended(), 'the replay to end')
  return [...received, ...tail.frames].map((f) => f.event)
}

/** Where the trials run: `afterKill()` is the server that continues after the kill (a restart, or another process). */
interface Topology {
  first(): Promise<ChildServer>
  afterKill(): Promise<ChildServer>
  dispose(): Promise<void>
}

/** SQLite, one process: the restart on the same file continues the turn at startup. */
function restartTopology(dir: string): Topology {
  const db = path.join(dir, 'kill9.db')
  const launch = () => launchChild(CRASH_SERVER, ['--db', db, '--dir', dir, '--pacing-ms', '1'])
  return { first: launch, afterKill: launch, dispose: async () => undefined }
}

/**
 * Two processes on one database: the survivor continues once the lease ends; a replacement for the dead one starts
 * in the background (spawning is the slow part) and is the survivor of the next kill.
 */
function replicaTopology(args: readonly string[], dispose: () => Promise<void>): Topology {
  const launch = () => launchChild(CRASH_SERVER, [...args, '--run-lease-ms', String(LEASE_MS), '--poll-ms', '50'])
  let spare: Promise<ChildServer> | undefined
  return {
    first: async () => {
      // One after the other: the first creates the tables.
      const a = await launch()
      spare = launch()
      await spare
      return a
    },
    afterKill: async () => {
      const survivor = await spare!
      spare = launch()
      spare.catch(() => undefined)
      return survivor
    },
    dispose: async () => {
      await spare?.catch(() => undefined)
      killChildren()
      await dispose()
    },
  }
}

async function postgresTopology(dir: string): Promise<Topology> {
  const { schema, drop } = await createTestSchema()
  return replicaTopology(
    ['--db', PG_URL, ...TEST_POOL_ARGS, '--db-schema', schema, '--dir', dir, '--pacing-ms', '1'],
    drop,
  )
}

function sharedSqliteTopology(dir: string): Topology {
  const args = ['--db', path.join(dir, 'kill9-shared.db'), '--shared', '--dir', dir, '--pacing-ms', '1']
  return replicaTopology(args, async () => undefined)
}

/** Each store gets at least 30 resume kills: SQLite split between a restart and a --shared second process. */
const stores: [string, (dir: string) => Promise<Topology>, number][] = [
  ['SQLite, restart', async (dir) => restartTopology(dir), RESUME_TRIALS / 2],
  ['SQLite --shared, the other process', async (dir) => sharedSqliteTopology(dir), RESUME_TRIALS / 2],
]
if (pg) stores.push(['PostgreSQL, the other replica', postgresTopology, RESUME_TRIALS])

describe.each(stores)('kill -9 after admission (%s): the turn is continued', (name, makeTopology, trials) => {
  let topology: Topology | undefined
  afterEach(async () => {
    killChildren()
    await topology?.dispose()
    topology = undefined
  })

  it(`${trials} resumes: every approved call runs exactly once, none is cancelled, the client sees RUN_FINISHED`, async () => {
    const dir = signalDir()
    topology = await makeTopology(dir)
    const tally = trialTally()
    let server = await topology.first()
    for (let trial = 0; trial < trials; trial++) {
      const { threadId, interrupts } = await pausedThread(server)
      const input = resumeInput(
        threadId,
        interrupts.map((i) => ({ interruptId: i.id, status: 'resolved' as const, payload: { approved: true } })),
      )
      const ms = killDelayMs()
      const received = await admitThenKill(server, input, ms)
      server = await topology.afterKill()
      const events = await reconnect(server, input, received, trial % 2 === 1)
      // The continuation reached the client: the resume run ends with RUN_FINISHED, never RUN_ERROR.
      expect(events.map((e) => e.type)).not.toContain(EventType.RUN_ERROR)
      expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, runId: input.runId })

      const snap = await until(async () => {
        const s = await snapshot(server, threadId)
        return s.status === 'idle' ? s : undefined
      }, 'the continued turn to finish')
      expect(snap.interrupts).toBeUndefined()
      const ran = executions(dir)
      for (const interrupt of interrupts) {
        const toolCallId = interrupt.toolCallId!
        const result = snap.messages.find((m) => m.role === 'tool' && m.toolCallId === toolCallId) as
          { content: string } | undefined
        const content = JSON.parse(result!.content) as { status?: string }
        // An admitted approval is never recorded as cancelled because a process died.
        expect(content.status).not.toBe('cancelled')
        const times = ran.filter((line) => line.endsWith(` ${toolCallId}`)).length
        if (content.status === 'unknown') {
          // Killed between the ledger's claim and the tool's result: reported, never re-run.
          expect(times).toBeLessThanOrEqual(1)
          tally.unknown++
          tally.unknownRan += times
        } else {
          expect(times, `${toolCallId} after a kill at ${ms.toFixed(1)} ms`).toBe(1)
          tally.once++
        }
      }
      tally.trials++
    }
    // Every admitted decision was carried out: at most the odd call caught mid-effect is unknown.
    expect(tally.trials).toBe(trials)
    expect(tally.once + tally.unknown).toBe(trials * 2)
    console.info(
      `${name}: ${tally.trials} kills after resume admission; calls run once ${tally.once}, unknown ${tally.unknown} (of which the tool had run: ${tally.unknownRan})`,
    )
  }, 600_000)

  it(`${INPUT_TRIALS} runs with new input: the continuation calls the model again and pauses once`, async () => {
    const dir = signalDir()
    topology = await makeTopology(dir)
    let server = await topology.first()
    for (let trial = 0; trial < INPUT_TRIALS; trial++) {
      const threadId = newThreadId()
      const input = runInput(threadId, [userMessage('deploy v4 to staging')])
      const received = await admitThenKill(server, input, killDelayMs())
      server = await topology.afterKill()
      const events = await reconnect(server, input, received, trial % 2 === 1)
      expect(events.map((e) => e.type)).not.toContain(EventType.RUN_ERROR)
      const last = events[events.length - 1] as { type: string; runId?: string; outcome?: { type: string } }
      expect(last).toMatchObject({ type: EventType.RUN_FINISHED, runId: input.runId, outcome: { type: 'interrupt' } })
      const snap = await snapshot(server, threadId)
      expect(snap.status).toBe('interrupted')
      // One pause with both calls; the model's answer is in the history once.
      expect(snap.interrupts).toHaveLength(2)
      expect(snap.messages.filter((m) => m.role === 'assistant')).toHaveLength(1)
    }
    expect(executions(dir)).toEqual([])
  }, 300_000)
})
