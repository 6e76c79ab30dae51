import fs from 'node:fs'
import path from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { Interrupt, ResumeEntry, ThreadSnapshot } from '@interlude/protocol'
import { ThreadSnapshotSchema } from '@interlude/protocol/schemas'
import type { ReleaseState } from '../demo/release-assistant.ts'
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
  textOf,
  toolResults,
  types,
  userMessage,
} from '../test-utils/harness.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOL_ARGS } from '../test-utils/pg.ts'

/**
 * SIGKILL of a real server process (test/fixtures/crash-server.mjs on the built dist) at three
 * points of a release-assistant turn, then a restart on the same database:
 * (a) while paused, (b) while deploy executes, (c) after the tool results but before RUN_FINISHED.
 * The restart continues the dead run (docs/architecture.md, "Durable continuation").
 */
const tmp = tempDir()
afterEach(() => killChildren())
afterAll(() => tmp.cleanup())

const pg = await pgAvailable('crash recovery on PostgreSQL')

interface Backend {
  readonly name: string
  /** Database flags of the server process. */
  readonly args: readonly string[]
  dispose(): Promise<void>
}

let counter = 0
async function sqlite(): Promise<Backend> {
  const file = path.join(tmp.dir, `crash-${++counter}.db`)
  return { name: 'SQLite', args: ['--db', file], dispose: async () => undefined }
}
async function postgres(): Promise<Backend> {
  const { schema, drop } = await createTestSchema()
  // A short lease: the restarted process closes the dead run once it has ended (first touch).
  return {
    name: 'PostgreSQL',
    args: ['--db', PG_URL, ...TEST_POOL_ARGS, '--db-schema', schema, '--run-lease-ms', '800'],
    dispose: drop,
  }
}

const backends: [string, () => Promise<Backend>][] = [['SQLite', sqlite]]
if (pg) backends.push(['PostgreSQL', postgres])

function signalDir(): string {
  const dir = path.join(tmp.dir, `signals-${++counter}`)
  fs.mkdirSync(dir, { recursive: true })
  return dir
}
const executions = (dir: string) => {
  const log = path.join(dir, 'deploy-executions.log')
  return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : []
}
const approveBoth = (publish: Interrupt, deploy: Interrupt): ResumeEntry[] => [
  { interruptId: publish.id, status: 'resolved', payload: { approved: true } },
  { interruptId: deploy.id, status: 'resolved', payload: { approved: true } },
]

async function snapshot(server: ChildServer, threadId: string): Promise<ThreadSnapshot> {
  const res = await fetch(`${server.baseUrl}/threads/${threadId}`, { headers: authHeader('alice') })
  expect(res.status).toBe(200)
  return ThreadSnapshotSchema.parse(await res.json()) as ThreadSnapshot
}

/** The snapshot once the dead run has been closed (at startup, or on first touch after its lease). */
const settled = (server: ChildServer, threadId: string) =>
  until(async () => {
    const s = await snapshot(server, threadId)
    return s.status !== 'running' ? s : undefined
  }, 'the abandoned run to be closed')

async function pausedThread(server: ChildServer) {
  const threadId = newThreadId()
  const paused = await postRun(server, runInput(threadId, [userMessage('deploy v3 to production')]))
  const [publish, deploy] = interruptsOf(paused.events)
  expect(deploy?.toolCallId).toBeDefined()
  return { threadId, publish: publish!, deploy: deploy! }
}

describe.each(backends)('SIGKILL and restart on %s', (_name, makeBackend) => {
  let backend: Backend | undefined
  afterEach(async () => {
    killChildren()
    await backend?.dispose()
    backend = undefined
  })
  const launch = async (dir: string, ...flags: string[]) =>
    launchChild(CRASH_SERVER, [...backend!.args, '--dir', dir, ...flags])

  it('(a) while paused: the batch survives untouched and resumes normally on the new process', async () => {
    backend = await makeBackend()
    const dir = signalDir()
    const first = await launch(dir)
    const { threadId, publish, deploy } = await pausedThread(first)
    await first.kill()

    const second = await launch(dir)
    const before = await snapshot(second, threadId)
    expect(before).toMatchObject({ status: 'interrupted' })
    expect(before.interrupts?.map((i) => i.id)).toEqual([publish.id, deploy.id])
    const resumed = await postRun(second, resumeInput(threadId, approveBoth(publish, deploy)))
    expect(resumed.status).toBe(200)
    expect(textOf(resumed.events)).toMatch(/^All steps ran\./)
    const after = await snapshot(second, threadId)
    expect((after.state as ReleaseState).deployments).toEqual([
      { operationId: deploy.toolCallId, version: 'v3', environment: 'production' },
    ])
    expect(executions(dir)).toEqual([deploy.toolCallId])
  })

  it('(b) while deploy executes: the turn continues with an unknown effect, deploy never runs twice', async () => {
    backend = await makeBackend()
    const dir = signalDir()
    const first = await launch(dir, '--block-deploy')
    const { threadId, publish, deploy } = await pausedThread(first)
    const input = resumeInput(threadId, approveBoth(publish, deploy))
    const inFlight = postRun(first, input).catch((error: unknown) => error)
    await until(() => fs.existsSync(path.join(dir, 'deploy-started')), 'deploy to start')
    await first.kill()
    await inFlight

    const second = await launch(dir)
    const snap = await settled(second, threadId)
    expect(snap.status).toBe('idle')
    expect(snap.interrupts).toBeUndefined()
    expect(snap.unsettledEffects).toEqual([{ toolCallId: deploy.toolCallId, toolName: 'deploy', status: 'unknown' }])
    // The thread says so to the model (and the user): the deploy result is "unknown".
    const results = snap.messages.filter((m) => m.role === 'tool') as { toolCallId: string; content: string }[]
    expect(JSON.parse(results.find((r) => r.toolCallId === deploy.toolCallId)!.content)).toMatchObject({
      status: 'unknown',
    })
    expect(JSON.parse(results.find((r) => r.toolCallId === publish.toolCallId)!.content)).toEqual({ published: 'v3' })
    expect((snap.state as ReleaseState).releases).toHaveLength(1)
    expect((snap.state as ReleaseState).deployments).toEqual([])

    // The resume's own stream (retry with the same runId) shows the continuation: the unknown effect, then the
    // model's answer, then RUN_FINISHED (docs/architecture.md, "Durable continuation").
    const retry = await postRun(second, input)
    expect(retry.status).toBe(200)
    expect(types(retry.events).filter((t) => t === EventType.RUN_STARTED)).toHaveLength(1)
    expect(retry.events[retry.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED })
    expect(textOf(retry.events).length).toBeGreaterThan(0)
    expect(toolResults(retry.events).find((r) => r.toolCallId === deploy.toolCallId)?.content).toMatchObject({
      status: 'unknown',
    })
    // Another attempt is not another deploy.
    const again = await postRun(second, resumeInput(threadId, approveBoth(publish, deploy)))
    expect(again.error).toMatchObject({ code: 'ALREADY_RESUMED', details: { runId: input.runId } })
    const next = await postRun(second, runInput(threadId, [userMessage('thanks')]))
    expect(next.status).toBe(200)
    expect(executions(dir)).toEqual([deploy.toolCallId])
  })

  it('(c) after the tool results, before RUN_FINISHED: the model is called again and the turn finishes', async () => {
    backend = await makeBackend()
    const dir = signalDir()
    const first = await launch(dir, '--block-summary')
    const { threadId, publish, deploy } = await pausedThread(first)
    const input = resumeInput(threadId, approveBoth(publish, deploy))
    // Kill once the summary text has reached the client (a frame is sent only after its commit).
    const response = await fetch(`${first.baseUrl}/runs`, {
      method: 'POST',
      headers: { ...authHeader('alice'), 'Content-Type': 'application/json' },
      body: JSON.stringify(input),
    })
    const reader = response.body!.getReader()
    let received = ''
    while (!received.includes('"TEXT_MESSAGE_CONTENT"')) {
      const { done, value } = await reader.read()
      if (done) throw new Error(`the stream ended before the summary: ${received}`)
      received += new TextDecoder().decode(value)
    }
    expect(fs.existsSync(path.join(dir, 'summary-started'))).toBe(true)
    await first.kill()
    await reader.cancel().catch(() => undefined)

    const second = await launch(dir)
    const snap = await settled(second, threadId)
    expect(snap).toMatchObject({ status: 'idle' })
    expect(snap.interrupts).toBeUndefined()
    expect(snap.unsettledEffects).toBeUndefined()
    // The model was called again for the summary the dead attempt did not finish.
    expect(snap.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant'])
    expect(snap.state).toEqual({
      releases: [{ version: 'v3', toolCallId: publish.toolCallId }],
      deployments: [{ operationId: deploy.toolCallId, version: 'v3', environment: 'production' }],
    })
    const retry = await postRun(second, input)
    const kinds = types(retry.events)
    // The open summary text is closed, then the continuation's summary follows; both tool results are in the stream.
    const firstEnd = kinds.indexOf(EventType.TEXT_MESSAGE_END)
    expect(kinds.slice(firstEnd + 1)).toContain(EventType.TEXT_MESSAGE_START)
    expect(kinds[kinds.length - 1]).toBe(EventType.RUN_FINISHED)
    expect(kinds).not.toContain(EventType.RUN_ERROR)
    expect(toolResults(retry.events)).toHaveLength(2)
    // The batch was closed with the run: a new request pauses with a fresh batch.
    const next = await postRun(second, runInput(threadId, [userMessage('deploy v4')]))
    expect(interruptsOf(next.events)).toHaveLength(2)
    expect(executions(dir)).toEqual([deploy.toolCallId])
  })
})

describe('SIGKILL while deploy executes, restart with reconcile (SQLite)', () => {
  it("the tool's reconcile(toolCallId) settles the effect: no unknown effect, the operation is recorded once", async () => {
    const dir = signalDir()
    const db = path.join(tmp.dir, `reconcile-${++counter}.db`)
    const first = await launchChild(CRASH_SERVER, ['--db', db, '--dir', dir, '--block-deploy'])
    const { threadId, publish, deploy } = await pausedThread(first)
    const inFlight = postRun(first, resumeInput(threadId, approveBoth(publish, deploy))).catch(
      (error: unknown) => error,
    )
    await until(() => fs.existsSync(path.join(dir, 'deploy-started')), 'deploy to start')
    await first.kill()
    await inFlight
    const second = await launchChild(CRASH_SERVER, ['--db', db, '--dir', dir, '--reconcile'])
    const snap = await snapshot(second, threadId)
    expect(snap.unsettledEffects).toBeUndefined()
    expect((snap.state as ReleaseState).deployments).toEqual([
      { operationId: deploy.toolCallId, version: 'v3', environment: 'production' },
    ])
    const result = snap.messages.find((m) => m.role === 'tool' && m.toolCallId === deploy.toolCallId) as {
      content: string
    }
    expect(JSON.parse(result.content)).toMatchObject({ deployed: true, reconciled: true })
    expect(executions(dir)).toEqual([deploy.toolCallId])
  })
})
