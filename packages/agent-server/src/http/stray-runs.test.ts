import { afterEach, describe, expect, it } from 'vitest'
import { describeThread, threadKey } from '../store/thread-key.ts'
import { until } from '../test-utils/child-server.ts'
import { newThreadId, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { gatedModel } from '../test-utils/test-agents.ts'

/**
 * A run the store lists as this process's but that does not execute here — its admission committed but the answer
 * was lost (a connection that dropped after the commit), or its end could not be written — must not be renewed
 * forever by the lease renewal of the runs that do execute here: it is handed to recovery and continued.
 */
describe('a stray run of this executor (admitted in the store, never started here)', () => {
  let server: InProcessServer | undefined
  afterEach(async () => {
    await server?.close()
  })

  /** A server whose every model call waits at a gate: its first run stays active, so leases are renewed every 30 ms. */
  async function busyServer() {
    const gate = gatedModel()
    server = await startInProcess({
      agent: { model: gate.model, tools: [], initialState: () => ({}) },
      heartbeatMs: 30,
      runLeaseMs: 600,
      pollMs: 50,
      exclusive: false,
    })
    const busy = newThreadId()
    const response = server.request('/runs', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(runInput(busy, [userMessage('hello')])),
    })
    await gate.started
    return { gate, busy, response, server }
  }

  it('is continued by recovery while another run keeps this process renewing its leases', async () => {
    const { gate, busy, response } = await busyServer()
    // The stray: admitted under this process's executor id, never handed to its run manager.
    const stray = threadKey('alice', newThreadId())
    const started = await server!.store.startInputRun({
      threadId: stray,
      ownerId: 'alice',
      runId: 'lost-answer',
      parentRunId: undefined,
      expectedRevision: null,
      initialState: {},
      messages: [userMessage('are you there?')],
      toolResults: [],
      now: Date.now(),
      ...server!.app.runs.lease(),
    })
    expect(started.ok).toBe(true)
    // Continued (its model call reached the gate) while the first run still holds the gate.
    await until(async () => {
      const events = await server!.store.readEvents(stray, { afterSeq: 0 })
      return events.some((e) => e.type === 'TEXT_MESSAGE_CONTENT') || undefined
    }, 'the stray run to be continued')
    // The first run is still at the gate: this was not the renewal stopping because the process went idle.
    expect((await server!.store.getThread(threadKey('alice', busy)))?.activeRunId).toBeDefined()
    gate.release()
    expect((await response).status).toBe(200)
    await until(
      async () => (await server!.store.getRun(stray, 'lost-answer'))?.status === 'succeeded' || undefined,
      'the stray run to finish',
    )
    expect(server!.logged.map((l) => l.message)).toContain(
      `run ${describeThread(stray)}/lost-answer was not executing here; handed to recovery`,
    )
  })

  it('a held run (a queued continuation, one being planned) is renewed and never let go; unheld, it is', async () => {
    const { gate, response } = await busyServer()
    const queued = threadKey('alice', newThreadId())
    const { runs } = server!.app
    runs.hold(queued, 'queued')
    const started = await server!.store.startInputRun({
      threadId: queued,
      ownerId: 'alice',
      runId: 'queued',
      parentRunId: undefined,
      expectedRevision: null,
      initialState: {},
      messages: [userMessage('later')],
      toolResults: [],
      now: Date.now(),
      ...runs.lease(),
    })
    expect(started.ok).toBe(true)
    // Three half-leases: long enough for a stray to be let go and continued twice over.
    await new Promise((resolve) => setTimeout(resolve, 900))
    expect(await server!.store.getRun(queued, 'queued')).toMatchObject({
      status: 'running',
      executorId: runs.executorId,
    })
    expect(await server!.store.readEvents(queued, { afterSeq: 0 })).toEqual([])
    runs.unhold(queued, 'queued')
    await until(
      async () => (await server!.store.getRun(queued, 'queued'))?.executorId !== runs.executorId || undefined,
      'the unheld run to be let go',
    )
    gate.release()
    expect((await response).status).toBe(200)
    await until(
      async () => (await server!.store.getRun(queued, 'queued'))?.status === 'succeeded' || undefined,
      'the let-go run to be continued to its end',
    )
  })
})
