import { spawn } from 'node:child_process'
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Interrupt, ResumeEntry } from '@interlude/protocol'
import type { ReleaseState } from '../demo/release-assistant.ts'
import type { RunResponse } from '../test-utils/harness.ts'
import {
  interruptsOf,
  newThreadId,
  parsedState,
  postRun,
  resumeInput,
  runInput,
  tempDir,
  userMessage,
} from '../test-utils/harness.ts'

/**
 * Two server processes on one SQLite file: here the admission reads of one process really
 * interleave with the claim of the other, so only the conditional UPDATE in the database can
 * decide the race (in one process the event loop happens to serialise admissions).
 */
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/interlude-server.js')
const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli.js')
const tmp = tempDir()
const children: ChildProcessWithoutNullStreams[] = []
let servers: { baseUrl: string }[] = []

function launch(db: string): Promise<{ baseUrl: string }> {
  if (!fs.existsSync(DIST))
    throw new Error(`${DIST} is missing: run "pnpm --filter @interlude/agent-server build" first`)
  const child = spawn(
    process.execPath,
    [BIN, '--port', '0', '--pacing-ms', '0', '--db', db, '--shared', '--token', 'alice=alice-secret-token'],
    { stdio: 'pipe' },
  )
  children.push(child)
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out)
      if (match) resolve({ baseUrl: `${match[1]!}/api/agent` })
    })
    child.once('exit', (code) => reject(new Error(`CLI exited with ${code}`)))
  })
}

// Two fresh processes on a fresh file for each test: the demo's fleet (what `deploy` observes, docs/demo-agent.md) is
// per process, so a deploy an earlier test ran in one of them would make this test's approval stale there
// (docs/approvals.md#stale-approvals) depending on which process wins the race.
let tests = 0
let db = ''
beforeEach(async () => {
  db = path.join(tmp.dir, `shared-${++tests}.db`)
  // Start one first so the file and schema exist before the second opens it.
  const a = await launch(db)
  const b = await launch(db)
  servers = [a, b]
})
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
})
afterAll(() => tmp.cleanup())

const N = 50

async function paused(): Promise<{ threadId: string; publish: Interrupt; deploy: Interrupt }> {
  const threadId = newThreadId()
  const first = await postRun(servers[0]!, runInput(threadId, [userMessage('deploy v6 to production')]))
  const [publish, deploy] = interruptsOf(first.events)
  return { threadId, publish: publish!, deploy: deploy! }
}

const approve = (publish: Interrupt, deploy: Interrupt, deployPayload: unknown = { approved: true }): ResumeEntry[] => [
  { interruptId: publish.id, status: 'resolved', payload: { approved: true } },
  { interruptId: deploy.id, status: 'resolved', payload: deployPayload },
]
const frames = (r: RunResponse) => r.events.map((e, i) => `${r.ids[i]}:${JSON.stringify(e)}`)
const dbPath = () => db

describe('resume races across two server processes on one SQLite file', () => {
  it(`${N} distinct runIds: one claim wins, the rest get ALREADY_RESUMED, one deployment`, async () => {
    const { threadId, publish, deploy } = await paused()
    const inputs = Array.from({ length: N }, () => resumeInput(threadId, approve(publish, deploy)))
    const responses = await Promise.all(inputs.map((input, i) => postRun(servers[i % 2]!, input)))
    const winners = responses.filter((r) => r.status === 200)
    expect(winners).toHaveLength(1)
    const winnerRunId = inputs[responses.indexOf(winners[0]!)]!.runId
    for (const r of responses)
      if (r.status !== 200) expect(r.error).toMatchObject({ code: 'ALREADY_RESUMED', details: { runId: winnerRunId } })
    expect((parsedState(dbPath(), threadId) as ReleaseState).deployments).toHaveLength(1)
  })

  it(`${N} identical resumes with one runId: every request on either process gets the same events`, async () => {
    const { threadId, publish, deploy } = await paused()
    const input = resumeInput(threadId, approve(publish, deploy))
    const responses = await Promise.all(Array.from({ length: N }, (_, i) => postRun(servers[i % 2]!, input)))
    expect(responses.map((r) => r.status)).toEqual(Array(N).fill(200))
    const reference = frames(responses[0]!)
    expect(reference[reference.length - 1]).toContain('RUN_FINISHED')
    for (const r of responses) expect(frames(r)).toEqual(reference)
    expect((parsedState(dbPath(), threadId) as ReleaseState).deployments).toHaveLength(1)
  })

  it(`${N} conflicting decisions: one wins, the rest get DECISION_CONFLICT`, async () => {
    const { threadId, publish, deploy } = await paused()
    const inputs = Array.from({ length: N }, (_, i) =>
      resumeInput(
        threadId,
        approve(publish, deploy, { approved: true, editedArgs: { version: `v6.${i}`, environment: 'staging' } }),
      ),
    )
    const responses = await Promise.all(inputs.map((input, i) => postRun(servers[i % 2]!, input)))
    const winners = responses.filter((r) => r.status === 200)
    expect(winners).toHaveLength(1)
    for (const r of responses) if (r.status !== 200) expect(r.error?.code).toBe('DECISION_CONFLICT')
    const winner = responses.indexOf(winners[0]!)
    expect((parsedState(dbPath(), threadId) as ReleaseState).deployments).toEqual([
      { operationId: deploy.toolCallId, version: `v6.${winner}`, environment: 'staging' },
    ])
  })
})
