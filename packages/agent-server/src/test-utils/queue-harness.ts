import { afterAll } from 'vitest'
import { EventType } from '@interlude/protocol'
import { defineTool } from '../agent/tool.ts'
import type { MultitaskStrategy, RunAgentInput } from '@interlude/protocol'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts'
import type { Store } from '../store/store.ts'
import { threadKey } from '../store/thread-key.ts'
import { until } from './child-server.ts'
import { runInput, tempDir, userMessage } from './harness.ts'
import type { RunResponse } from './harness.ts'
import type { InProcessOptions, InProcessServer } from './in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from './pg.ts'

/** Helpers of the run queue and steer tests (docs/protocol.md#multitask), on SQLite and on PostgreSQL. */

/** A tool every call of which asks a person first: a run that calls it pauses on a batch. */
export const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy',
  parameters: { type: 'object' },
  approval: 'always',
  execute: () => 'deployed',
})

/** `forwardedProps` naming a strategy (or any value, to test the refusal). */
export const multitask = (strategy: MultitaskStrategy | string) => ({
  forwardedProps: { interlude: { multitask: strategy } },
})

/** An input of one user message with a strategy. */
export const inputWith = (strategy: MultitaskStrategy, text: string, threadId: string): RunAgentInput =>
  runInput(threadId, [userMessage(text)], multitask(strategy))

/** Starts a run whose model holds (`hold …`, `queue-model.ts`) on `s` and waits until it streams. */
export async function holdRun(
  s: InProcessServer,
  q: { readonly started: readonly string[] },
  threadId: string,
  text = 'hold A',
): Promise<{ input: RunAgentInput; streaming: Promise<RunResponse> }> {
  const input = runInput(threadId, [userMessage(text)])
  const streaming = s.postRun(input)
  await until(() => q.started.includes(text), `${text} streams`)
  return { input, streaming }
}

/** `POST /runs` answered as status and JSON (or the text of a stream). */
export async function post(s: InProcessServer, input: RunAgentInput): Promise<{ status: number; body: unknown }> {
  const response = await s.request('/runs', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(input),
  })
  const text = await response.text()
  return {
    status: response.status,
    body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text,
  }
}

/** The run ids of alice's thread's log in the order their RUN_STARTED and RUN_FINISHED were written. */
export async function lifecycle(s: InProcessServer, threadId: string): Promise<string[]> {
  const events = await s.store.readEvents(threadKey('alice', threadId), {})
  return events
    .filter((e) => e.type === EventType.RUN_STARTED || e.type === EventType.RUN_FINISHED)
    .map((e) => `${e.type === EventType.RUN_STARTED ? 'start' : 'end'} ${e.runId}`)
}

/** The outcome of alice's run once it ended (`undefined` while it runs or before it exists). */
export async function outcomeOf(s: InProcessServer, threadId: string, runId: string): Promise<string | undefined> {
  const run = await s.store.getRun(threadKey('alice', threadId), runId)
  return run?.status === 'running' ? undefined : run?.outcome?.type
}

/** Alice's thread's history as `role: text` lines. */
export async function historyOf(s: InProcessServer, threadId: string): Promise<string[]> {
  const history = await s.store.listMessages(threadKey('alice', threadId))
  return history.map((m) => `${m.role}: ${String(m.content)}`)
}

/** A store for a queue test: `options()` hands it to the server; `store()` opens a store of its own (to wrap it). */
export interface QueueStore {
  readonly name: string
  readonly options: () => Promise<InProcessOptions>
  readonly store: () => Promise<Store>
}

/**
 * The stores a test file runs on: SQLite (a temporary file), and PostgreSQL (a fresh schema each) when it answers;
 * both removed after the file. Call at the top level of the file.
 */
export async function queueStores(suite: string): Promise<QueueStore[]> {
  const pg = await pgAvailable(suite)
  const cleanups: (() => Promise<void> | void)[] = []
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup()
  })
  const sqliteStore = async (): Promise<Store> => {
    const tmp = tempDir()
    cleanups.push(() => tmp.cleanup())
    return createSqliteStore(tmp.dbPath)
  }
  const pgStore = async (): Promise<Store> => {
    const { schema, drop } = await createTestSchema()
    cleanups.push(drop)
    return createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS })
  }
  return [
    { name: 'SQLite', options: async () => ({}), store: sqliteStore },
    ...(pg ? [{ name: 'PostgreSQL', options: async () => ({ store: await pgStore() }), store: pgStore }] : []),
  ]
}

/** A tool that runs until `open()`: a steer arrives while it runs. */
export function slowTool() {
  let open!: () => void
  const gate = new Promise<void>((resolve) => (open = resolve))
  let running = false
  const tool = defineTool({
    name: 'slow',
    description: 'Slow',
    parameters: { type: 'object' },
    execute: async () => {
      running = true
      await gate
      return 'slow done'
    },
  })
  return { tool, open: () => open(), running: () => running }
}
