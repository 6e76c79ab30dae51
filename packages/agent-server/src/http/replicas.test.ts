import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { Interrupt, ResumeEntry } from '@interlude/protocol'
import type { ReleaseState } from '../demo/release-assistant.ts'
import type { ChildServer } from '../test-utils/child-server.ts'
import { CRASH_SERVER, killChildren, launchChild, until } from '../test-utils/child-server.ts'
import type { RunResponse } from '../test-utils/harness.ts'
import {
  authHeader,
  interruptsOf,
  newThreadId,
  postRun,
  resumeInput,
  runInput,
  tempDir,
  textOf,
  userMessage,
} from '../test-utils/harness.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOL_ARGS } from '../test-utils/pg.ts'

/**
 * Two server processes (replicas) on one PostgreSQL database: resumes admitted on either are
 * claimed exactly once, a client attached to B sees the live events of a run executing on A
 * (LISTEN/NOTIFY, with the log poll as fallback), and a cancel sent to B stops a run on A.
 */
const available = await pgAvailable('replicas on PostgreSQL')
const tmp = tempDir()
const dir = path.join(tmp.dir, 'signals')
let replicas: ChildServer[] = []
let dropSchema: (() => Promise<void>) | undefined

beforeAll(async () => {
  if (!available) return
  fs.mkdirSync(dir, { recursive: true })
  const { schema, drop } = await createTestSchema()
  dropSchema = drop
  const args = ['--db', PG_URL, ...TEST_POOL_ARGS, '--db-schema', schema, '--dir', dir]
  // Start one first so schema migrations are not part of the race.
  const a = await launchChild(CRASH_SERVER, args)
  const b = await launchChild(CRASH_SERVER, args)
  replicas = [a, b]
})
afterAll(async () => {
  killChildren()
  await dropSchema?.()
  tmp.cleanup()
})
beforeEach(() => {
  for (const name of ['deploy-executions.log', 'text-started', 'text-release'])
    fs.rmSync(path.join(dir, name), { force: true })
})

const N = 50
const executions = () => {
  const log = path.join(dir, 'deploy-executions.log')
  return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : []
}
const approve = (publish: Interrupt, deploy: Interrupt, deployPayload: unknown = { approved: true }): ResumeEntry[] => [
  { interruptId: publish.id, status: 'resolved', payload: { approved: true } },
  { interruptId: deploy.id, status: 'resolved', payload: deployPayload },
]
const frames = (r: RunResponse) => r.events.map((e, i) => `${r.ids[i]}:${JSON.stringify(e)}`)

async function paused(): Promise<{ threadId: string; publish: Interrupt; deploy: Interrupt }> {
  const threadId = newThreadId()
  const first = await postRun(replicas[0]!, runInput(threadId, [userMessage('deploy v6 to production')]))
  const [publish, deploy] = interruptsOf(first.events)
  return { threadId, publish: publish!, deploy: deploy! }
}

async function state(threadId: string): Promise<ReleaseState> {
  const res = await fetch(`${replicas[1]!.baseUrl}/threads/${threadId}`, { headers: authHeader('alice') })
  return ((await res.json()) as { state: ReleaseState }).state
}

describe.skipIf(!available)('two replicas on one PostgreSQL database', () => {
  it(`${N} concurrent resumes with distinct runIds split across both: one claim, one execution`, async () => {
    const { threadId, publish, deploy } = await paused()
    const inputs = Array.from({ length: N }, () => resumeInput(threadId, approve(publish, deploy)))
    const responses = await Promise.all(inputs.map((input, i) => postRun(replicas[i % 2]!, input)))
    const winners = responses.filter((r) => r.status === 200)
    expect(winners).toHaveLength(1)
    const winnerRunId = inputs[responses.indexOf(winners[0]!)]!.runId
    for (const r of responses)
      if (r.status !== 200) expect(r.error).toMatchObject({ code: 'ALREADY_RESUMED', details: { runId: winnerRunId } })
    expect(textOf(winners[0]!.events)).toMatch(/^All steps ran\./)
    expect((await state(threadId)).deployments).toHaveLength(1)
    expect(executions()).toEqual([deploy.toolCallId])
  })

  it(`${N} identical resumes (one runId) across both: every request gets the same events, one execution`, async () => {
    const { threadId, publish, deploy } = await paused()
    const input = resumeInput(threadId, approve(publish, deploy))
    const responses = await Promise.all(Array.from({ length: N }, (_, i) => postRun(replicas[i % 2]!, input)))
    expect(responses.map((r) => r.status)).toEqual(Array(N).fill(200))
    const reference = frames(responses[0]!)
    expect(reference[reference.length - 1]).toContain('RUN_FINISHED')
    for (const r of responses) expect(frames(r)).toEqual(reference)
    expect(executions()).toEqual([deploy.toolCallId])
  })

  it(`${N} conflicting decisions across both: one wins, the rest get DECISION_CONFLICT`, async () => {
    const { threadId, publish, deploy } = await paused()
    const inputs = Array.from({ length: N }, (_, i) =>
      resumeInput(
        threadId,
        approve(publish, deploy, { approved: true, editedArgs: { version: `v6.${i}`, environment: 'staging' } }),
      ),
    )
    const responses = await Promise.all(inputs.map((input, i) => postRun(replicas[i % 2]!, input)))
    const winners = responses.filter((r) => r.status === 200)
    expect(winners).toHaveLength(1)
    for (const r of responses) if (r.status !== 200) expect(r.error?.code).toBe('DECISION_CONFLICT')
    const winner = responses.indexOf(winners[0]!)
    expect((await state(threadId)).deployments).toEqual([
      { operationId: deploy.toolCallId, version: `v6.${winner}`, environment: 'staging' },
    ])
    expect(executions()).toEqual([deploy.toolCallId])
  })

  it("live tail across replicas: a client on B's events route sees the run executing on A, identical frames", async () => {
    const [a, b] = replicas as [ChildServer, ChildServer]
    const threadId = newThreadId()
    const running = postRun(a, runInput(threadId, [userMessage('please block here')]))
    await until(() => fs.existsSync(path.join(dir, 'text-started')), 'the run on A to start streaming')
    const tail = await fetch(`${b.baseUrl}/threads/${threadId}/events`, { headers: authHeader('alice') })
    const reader = tail.body!.getReader()
    let seen = ''
    // Frames already in the log arrive first (the replay part)…
    while (!seen.includes('"TEXT_MESSAGE_CONTENT"')) {
      const { done, value } = await reader.read()
      if (done) throw new Error(`B's stream ended early: ${seen}`)
      seen += new TextDecoder().decode(value)
    }
    // …then the rest live, until A's run ends.
    fs.writeFileSync(path.join(dir, 'text-release'), '1')
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      seen += new TextDecoder().decode(value)
    }
    const { raw, events } = await running
    expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success' } })
    expect(seen).toBe(raw)
  })

  it('a cancel sent to B stops the run executing on A at its next stop point', async () => {
    const [a, b] = replicas as [ChildServer, ChildServer]
    const threadId = newThreadId()
    const input = runInput(threadId, [userMessage('please block here')])
    const running = postRun(a, input)
    await until(() => fs.existsSync(path.join(dir, 'text-started')), 'the run on A to start streaming')
    const res = await fetch(`${b.baseUrl}/threads/${threadId}/runs/${input.runId}/cancel`, {
      method: 'POST',
      headers: { ...authHeader('alice'), 'Content-Type': 'application/json' },
      body: '{}',
    })
    expect(res.status).toBe(202)
    const { events } = await running
    expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } })
    const run = await fetch(`${b.baseUrl}/threads/${threadId}/runs/${input.runId}/cancel`, {
      method: 'POST',
      headers: { ...authHeader('alice'), 'Content-Type': 'application/json' },
      body: '{}',
    })
    expect(await run.json()).toEqual({ runId: input.runId, status: 'cancelled' })
  })
})
