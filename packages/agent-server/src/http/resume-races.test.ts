import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Interrupt, ResumeEntry } from '@interlude/protocol'
import type { ReleaseState } from '../demo/release-assistant.ts'
import type { RunResponse, TestServer } from '../test-utils/harness.ts'
import {
  interruptsOf,
  newThreadId,
  parsedState,
  postRun,
  resumeInput,
  runInput,
  startTestServer,
  userMessage,
} from '../test-utils/harness.ts'
import Database from 'better-sqlite3'
import { threadKey } from '../store/thread-key.ts'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server.dispose()
})

const N = 50

async function pausedThread(): Promise<{ threadId: string; publish: Interrupt; deploy: Interrupt }> {
  const threadId = newThreadId()
  const first = await postRun(server, runInput(threadId, [userMessage('deploy v5 to production')]))
  const [publish, deploy] = interruptsOf(first.events)
  return { threadId, publish: publish!, deploy: deploy! }
}

function approveBoth(
  publish: Interrupt,
  deploy: Interrupt,
  deployPayload: Record<string, unknown> = { approved: true },
): ResumeEntry[] {
  return [
    { interruptId: publish.id, status: 'resolved', payload: { approved: true } },
    { interruptId: deploy.id, status: 'resolved', payload: deployPayload },
  ]
}

function effects(threadId: string): { tool_name: string; status: string; attempt_run_id: string | null }[] {
  const db = new Database(server.dbPath, { readonly: true })
  try {
    return db
      .prepare('SELECT tool_name, status, attempt_run_id FROM tool_calls WHERE thread_id = ? ORDER BY tool_name')
      .all(threadKey('alice', threadId)) as never
  } finally {
    db.close()
  }
}

function frames(r: RunResponse): string[] {
  return r.events.map((e, i) => `${r.ids[i]}:${JSON.stringify(e)}`)
}

describe('concurrent resumes of one batch (real HTTP requests, one SQLite file)', () => {
  it(`${N} identical resumes with the same runId: one execution, every request gets the first run's events`, async () => {
    const { threadId, publish, deploy } = await pausedThread()
    const input = resumeInput(threadId, approveBoth(publish, deploy))
    const responses = await Promise.all(Array.from({ length: N }, () => postRun(server, input)))
    expect(responses.map((r) => r.status)).toEqual(Array(N).fill(200))
    const reference = frames(responses[0]!)
    expect(reference[0]).toContain(`"runId":"${input.runId}"`)
    expect(reference[reference.length - 1]).toContain('RUN_FINISHED')
    for (const r of responses) expect(frames(r)).toEqual(reference)
    const state = parsedState(server.dbPath, threadId) as ReleaseState
    expect(state.deployments).toEqual([{ operationId: deploy.toolCallId, version: 'v5', environment: 'production' }])
    expect(state.releases).toHaveLength(1)
    expect(effects(threadId).map((e) => [e.tool_name, e.status, e.attempt_run_id])).toEqual([
      ['deploy', 'succeeded', input.runId],
      ['publish_release', 'succeeded', input.runId],
    ])
  })

  it(`${N} identical decisions under distinct runIds: one runs, the rest get ALREADY_RESUMED with its runId`, async () => {
    const { threadId, publish, deploy } = await pausedThread()
    const entries = approveBoth(publish, deploy)
    const inputs = Array.from({ length: N }, () => resumeInput(threadId, entries))
    const responses = await Promise.all(inputs.map((input) => postRun(server, input)))
    const winners = responses.filter((r) => r.status === 200)
    expect(winners).toHaveLength(1)
    const winnerRunId = inputs[responses.indexOf(winners[0]!)]!.runId
    for (const r of responses) {
      if (r.status === 200) continue
      expect(r.status).toBe(409)
      expect(r.error).toMatchObject({ code: 'ALREADY_RESUMED', details: { runId: winnerRunId } })
    }
    const state = parsedState(server.dbPath, threadId) as ReleaseState
    expect(state.deployments).toHaveLength(1)
    // A loser can join the winner's events with the runId it was given (same decision, same runId).
    const joined = await postRun(server, { ...inputs[0]!, runId: winnerRunId })
    expect(frames(joined)).toEqual(frames(winners[0]!))
  })

  it(`${N} conflicting decisions: one wins, the rest get DECISION_CONFLICT, nothing runs twice`, async () => {
    const { threadId, publish, deploy } = await pausedThread()
    const inputs = Array.from({ length: N }, (_, i) =>
      resumeInput(
        threadId,
        approveBoth(publish, deploy, { approved: true, editedArgs: { version: `v5.${i}`, environment: 'staging' } }),
      ),
    )
    const responses = await Promise.all(inputs.map((input) => postRun(server, input)))
    const winners = responses.filter((r) => r.status === 200)
    expect(winners).toHaveLength(1)
    const winner = responses.indexOf(winners[0]!)
    for (const r of responses) if (r.status !== 200) expect(r.error?.code).toBe('DECISION_CONFLICT')
    const state = parsedState(server.dbPath, threadId) as ReleaseState
    expect(state.deployments).toEqual([
      { operationId: deploy.toolCallId, version: `v5.${winner}`, environment: 'staging' },
    ])
    expect(effects(threadId).every((e) => e.attempt_run_id === inputs[winner]!.runId)).toBe(true)
  })

  it('same runId with a different decision is a DECISION_CONFLICT, even after the run finished', async () => {
    const { threadId, publish, deploy } = await pausedThread()
    const input = resumeInput(threadId, approveBoth(publish, deploy))
    expect((await postRun(server, input)).status).toBe(200)
    const other = await postRun(server, { ...input, resume: approveBoth(publish, deploy, { approved: false }) })
    expect(other.status).toBe(409)
    expect(other.error).toMatchObject({ code: 'DECISION_CONFLICT', details: { runId: input.runId } })
    // metadata is not part of the decision: a retry that differs only there is the same request.
    const retry = await postRun(server, {
      ...input,
      resume: input.resume!.map((e) => ({ ...e, metadata: { tab: randomUUID() } })),
    })
    expect(retry.status).toBe(200)
  })
})
