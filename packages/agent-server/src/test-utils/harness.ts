import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import Database from 'better-sqlite3'
import { EventType } from '@interlude/protocol'
import { decodeEvents } from '@interlude/protocol/sse'
import type {
  AgUiEvent,
  ErrorEnvelope,
  Interrupt,
  Message,
  ResumeEntry,
  RunAgentInput,
  UserMessage,
} from '@interlude/protocol'
import type { RunningServer, StartServerOptions } from '../server.ts'
import { startServer } from '../server.ts'
import { NO_PRINCIPAL_QUOTAS } from '../config/limits.ts'
import { threadKey } from '../store/thread-key.ts'
import { TEST_POOLS } from './pg.ts'

/** Bearer tokens of the test principals: `eng` owns threads a manager `mgr` approves in the approvals tests. */
export const TOKENS = {
  alice: 'alice-secret-token',
  bob: 'bob-secret-token',
  eng: 'eng-secret-token',
  mgr: 'mgr-secret-token',
} as const

/** A fresh directory for SQLite files, removed by `cleanup()`. */
export function tempDir(): { dir: string; dbPath: string; cleanup(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'interlude-agent-server-'))
  return { dir, dbPath: path.join(dir, 'agent.db'), cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

export interface TestServer extends RunningServer {
  readonly dbPath: string
  /** Every `logError` call of the server (empty when the test passed its own `logError`). */
  readonly logged: { message: string; error: unknown }[]
  /** Closes the server and removes its directory. */
  dispose(): Promise<void>
}

/** A real server on 127.0.0.1 with a real SQLite file and bearer tokens for alice and bob. */
export async function startTestServer(options: Partial<StartServerOptions> = {}): Promise<TestServer> {
  const tmp = tempDir()
  const logged: { message: string; error: unknown }[] = []
  const logError = (message: string, error: unknown) => {
    logged.push({ message, error })
  }
  // One principal here stands for many users: per-principal quotas only where a test sets them (quotas.test.ts).
  const limits = { ...NO_PRINCIPAL_QUOTAS, ...options.limits }
  // PostgreSQL replicas get small pools (`TEST_POOLS`) unless the test sets its own.
  const dbPool = options.dbUrl !== undefined ? (options.dbPool ?? TEST_POOLS) : options.dbPool
  const server = await startServer({
    dbPath: tmp.dbPath,
    tokens: TOKENS,
    pacingMs: 0,
    logError,
    ...options,
    limits,
    ...(dbPool !== undefined ? { dbPool } : {}),
  })
  return Object.assign(server, {
    dbPath: tmp.dbPath,
    logged,
    dispose: async () => {
      await server.close()
      tmp.cleanup()
    },
  })
}

export interface RunResponse {
  readonly status: number
  readonly headers: Headers
  /** Decoded events of an SSE answer (empty for a JSON error). */
  readonly events: AgUiEvent[]
  /** SSE `id:` of each event. */
  readonly ids: (string | undefined)[]
  /** The JSON body of an error answer. */
  readonly error: ErrorEnvelope['error'] | undefined
  /** The raw SSE text (for framing assertions). */
  readonly raw: string
}

export function authHeader(principal: keyof typeof TOKENS): Record<string, string> {
  return { Authorization: `Bearer ${TOKENS[principal]}` }
}

/** POST {base}/runs and read the whole answer. */
export async function postRun(
  server: Pick<RunningServer, 'baseUrl'>,
  body: unknown,
  options: {
    principal?: keyof typeof TOKENS | null
    headers?: Record<string, string>
    rawBody?: string | Uint8Array
    signal?: AbortSignal
  } = {},
): Promise<RunResponse> {
  const principal = options.principal === undefined ? 'alice' : options.principal
  const response = await fetch(`${server.baseUrl}/runs`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'text/event-stream',
      ...(principal ? authHeader(principal) : {}),
      ...options.headers,
    },
    body:
      options.rawBody === undefined
        ? JSON.stringify(body)
        : typeof options.rawBody === 'string'
          ? options.rawBody
          : new Blob([new Uint8Array(options.rawBody)]),
    ...(options.signal ? { signal: options.signal } : {}),
  })
  const raw = await response.text()
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    const events: AgUiEvent[] = []
    const ids: (string | undefined)[] = []
    const bytes = new TextEncoder().encode(raw)
    for await (const decoded of decodeEvents(
      (async function* () {
        yield bytes
      })(),
    )) {
      events.push(decoded.event)
      ids.push(decoded.id)
    }
    return { status: response.status, headers: response.headers, events, ids, error: undefined, raw }
  }
  let error: ErrorEnvelope['error'] | undefined
  try {
    error = (JSON.parse(raw) as ErrorEnvelope).error
  } catch {
    error = undefined
  }
  return { status: response.status, headers: response.headers, events: [], ids: [], error, raw }
}

export function userMessage(content: string, id = `user_${randomUUID()}`): UserMessage {
  return { id, role: 'user', content }
}

export function runInput(threadId: string, messages: Message[], extra: Partial<RunAgentInput> = {}): RunAgentInput {
  return {
    threadId,
    runId: `run_${randomUUID()}`,
    messages,
    tools: [],
    context: [],
    state: {},
    forwardedProps: {},
    ...extra,
  }
}

export function resumeInput(
  threadId: string,
  resume: ResumeEntry[],
  extra: Partial<RunAgentInput> = {},
): RunAgentInput {
  return runInput(threadId, [], { resume, ...extra })
}

export function newThreadId(): string {
  return `thread_${randomUUID()}`
}

export function types(events: readonly AgUiEvent[]): string[] {
  return events.map((e) => e.type)
}

export function interruptsOf(events: readonly AgUiEvent[]): Interrupt[] {
  const last = events[events.length - 1] as
    { type: string; outcome?: { type: string; interrupts?: Interrupt[] } } | undefined
  if (!last || last.type !== EventType.RUN_FINISHED || last.outcome?.type !== 'interrupt') return []
  return last.outcome.interrupts ?? []
}

export function textOf(events: readonly AgUiEvent[]): string {
  return events
    .filter((e) => e.type === EventType.TEXT_MESSAGE_CONTENT)
    .map((e) => (e as { delta: string }).delta)
    .join('')
}

export function toolResults(events: readonly AgUiEvent[]): { toolCallId: string; content: unknown }[] {
  return events
    .filter((e) => e.type === EventType.TOOL_CALL_RESULT)
    .map((e) => {
      const r = e as { toolCallId: string; content: string }
      let content: unknown = r.content
      try {
        content = JSON.parse(r.content) as unknown
      } catch {
        // keep text
      }
      return { toolCallId: r.toolCallId, content }
    })
}

export function lastState(events: readonly AgUiEvent[]): unknown {
  const snapshots = events.filter((e) => e.type === EventType.STATE_SNAPSHOT)
  return (snapshots[snapshots.length - 1] as { snapshot?: unknown } | undefined)?.snapshot
}

/** Every row of every table, in a stable order: compare before/after to prove "nothing changed". */
export function dumpStore(dbPath: string): Record<string, unknown[]> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true })
  try {
    const tables = db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
      .all() as { name: string }[]
    const dump: Record<string, unknown[]> = {}
    for (const { name } of tables) {
      const columns = (db.prepare(`PRAGMA table_info(${JSON.stringify(name)})`).all() as { name: string }[]).map((c) =>
        JSON.stringify(c.name),
      )
      dump[name] = db.prepare(`SELECT * FROM ${JSON.stringify(name)} ORDER BY ${columns.join(', ')}`).all()
    }
    return dump
  } finally {
    db.close()
  }
}

/** The thread row straight from the database. */
/**
 * The row of the thread `threadId` (the client's id) of `owner`, or — without `owner` — of the one principal who has
 * a thread with that id (threads are keyed per owner, src/store/thread-key.ts; two owners of one id need `owner`).
 */
export function threadRow(dbPath: string, threadId: string, owner?: string): Record<string, unknown> | undefined {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true })
  try {
    if (owner !== undefined) {
      return db.prepare('SELECT * FROM threads WHERE thread_id = ?').get(threadKey(owner, threadId)) as
        Record<string, unknown> | undefined
    }
    const rows = db
      .prepare('SELECT * FROM threads WHERE thread_id = ? OR thread_id = owner_id || char(31) || ?')
      .all(threadId, threadId) as Record<string, unknown>[]
    if (rows.length > 1) throw new Error(`threadRow: several owners have a thread "${threadId}"; name the owner.`)
    return rows[0]
  } finally {
    db.close()
  }
}

export function parsedState(dbPath: string, threadId: string, owner?: string): unknown {
  const row = threadRow(dbPath, threadId, owner)
  return row ? (JSON.parse(String(row.state_json)) as unknown) : undefined
}
