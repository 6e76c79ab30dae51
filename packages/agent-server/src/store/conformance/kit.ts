import type { Interrupt, Message } from '@interlude/protocol'
import type { FinishRunRequest, NewBatch, NewToolCall, StartInputRunRequest, Store } from '../store.ts'

/** A fresh, empty database for one test, and a way to open a second connection to it. */
export interface ConformanceDatabase {
  readonly store: Store
  /** Another store instance (its own connection / pool) on the same database. */
  connect(): Promise<Store>
  /** Closes every store opened by this database and removes it. */
  dispose(): Promise<void>
}

/** What every group of conformance cases works with: a database per test and the fixtures below. */
export type ConformanceKit = ReturnType<typeof conformanceKit>

/** A first input run that creates `threadId` (alice's, empty, no input), at `now`. */
export function firstRunRequest(threadId: string, runId: string, now: number): StartInputRunRequest {
  return {
    threadId,
    ownerId: 'alice',
    runId,
    parentRunId: undefined,
    expectedRevision: null,
    initialState: {},
    messages: [],
    toolResults: [],
    now,
    executorId: 'exec-a',
    leaseUntil: now + 60_000,
  }
}

export function conformanceKit(open: () => Promise<ConformanceDatabase>) {
  const now = 1_900_000_000_000
  const lease = { executorId: 'exec-a', leaseUntil: now + 60_000 }
  /** What a claim adds to the lease: who decided, through which channel (the decision record). */
  const claimer = { ...lease, decidedBy: 'alice', via: 'run' as const }
  let n = 0
  const ids = () => {
    n += 1
    return { threadId: `t${n}-${Math.random().toString(36).slice(2)}`, runId: `r${n}` }
  }
  async function withDb(fn: (store: Store, db: ConformanceDatabase) => Promise<void>): Promise<void> {
    const db = await open()
    try {
      await fn(db.store, db)
    } finally {
      await db.dispose()
    }
  }
  const start = (
    store: Store,
    threadId: string,
    runId: string,
    expectedRevision: number | null = null,
    extra: Partial<StartInputRunRequest> = {},
  ) =>
    store.startInputRun({
      ...firstRunRequest(threadId, runId, now),
      expectedRevision,
      initialState: { n: 0 },
      messages: [{ id: `u-${runId}`, role: 'user', content: 'hi' }],
      ...lease,
      ...extra,
    })
  const finish = (store: Store, threadId: string, runId: string, extra: Partial<FinishRunRequest> = {}) =>
    store.finishRun({
      threadId,
      runId,
      status: 'succeeded',
      outcome: { type: 'success' },
      errorCode: undefined,
      events: [{ type: 'RUN_FINISHED', json: '{"type":"RUN_FINISHED"}' }],
      closeBatch: undefined,
      now,
      ...extra,
    })
  const interrupt = (id: string, toolCallId: string): Interrupt => ({ id, reason: 'tool_call', toolCallId })
  const batchFor = (threadId: string, runId: string, batchId: string, toolCallId = 'c1'): NewBatch => ({
    batchId,
    threadId,
    runId,
    interrupts: [
      { interrupt: interrupt(`${batchId}-i1`, toolCallId), kind: 'approval', toolCallId, toolName: 'deploy' },
    ],
    createdAt: now,
    expiresAt: now + 1000,
    onExpiry: 'deny',
  })
  const call = (
    threadId: string,
    runId: string,
    toolCallId: string,
    status: NewToolCall['status'] = 'pending',
    kind: NewToolCall['kind'] = 'server',
  ): NewToolCall => ({
    threadId,
    toolCallId,
    runId,
    messageId: 'a1',
    toolName: 'deploy',
    argsText: '{"v":1}',
    kind,
    status,
    now,
  })
  const toolMessage = (id: string, toolCallId: string, content = '"ok"'): Message => ({
    id,
    role: 'tool',
    toolCallId,
    content,
  })
  /** A thread paused with one open batch (its run finished as interrupted); `options` change the input or the batch. */
  const paused = async (
    store: Store,
    options: { readonly input?: Partial<StartInputRunRequest>; readonly batch?: Partial<NewBatch> } = {},
  ) => {
    const { threadId, runId } = ids()
    await start(store, threadId, runId, null, options.input)
    await store.insertToolCalls([call(threadId, runId, 'c1', 'awaiting_decision')])
    await store.createBatch({ ...batchFor(threadId, runId, `b-${threadId}`), ...options.batch })
    await finish(store, threadId, runId, { status: 'interrupted', outcome: { type: 'interrupt', interrupts: [] } })
    return { threadId, runId, batchId: `b-${threadId}` }
  }
  /** How much `write` moved the thread's revision. */
  const growth = async (store: Store, threadId: string, write: () => Promise<unknown>): Promise<number> => {
    const before = (await store.getThread(threadId))!.revision
    await write()
    return (await store.getThread(threadId))!.revision - before
  }
  return { now, lease, claimer, ids, withDb, start, finish, interrupt, batchFor, call, toolMessage, paused, growth }
}
