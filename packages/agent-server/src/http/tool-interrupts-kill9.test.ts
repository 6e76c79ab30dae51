import fs from 'node:fs'
import path from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { Interrupt, RunAgentInput, ThreadSnapshot } from '@interlude/protocol'
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
import { createTestSchema, PG_URL, pgAvailable, TEST_POOL_ARGS } from '../test-utils/pg.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { tailSse } from '../test-utils/sse-tail.ts'

/**
 * kill -9 around a tool that asks twice from inside `execute` (docs/approvals.md#asking-from-inside-a-tool), in a real
 * process (test/fixtures/crash-server.mjs --ask-tool) on SQLite (restart) and PostgreSQL (another process). The
 * answers are durable, a call that died while replaying its answers runs again, its effect exactly once; a call that
 * died after its last answer is `unknown` and never runs again.
 */
const tmp = tempDir()
afterEach(() => killChildren())
afterAll(() => tmp.cleanup())
const pg = await pgAvailable('ctx.interrupt kill -9 on PostgreSQL')

let counter = 0
function signalDir(): { dir: string; file(name: string): string; lines(name: string): string[] } {
  const dir = path.join(tmp.dir, `ask-${++counter}`)
  fs.mkdirSync(dir, { recursive: true })
  const file = (name: string) => path.join(dir, name)
  const lines = (name: string) =>
    fs.existsSync(file(name)) ? fs.readFileSync(file(name), 'utf8').trim().split('\n').filter(Boolean) : []
  return { dir, file, lines }
}

async function snapshot(server: ChildServer, threadId: string): Promise<ThreadSnapshot> {
  const res = await fetch(`${server.baseUrl}/threads/${threadId}`, { headers: authHeader('alice') })
  expect(res.status).toBe(200)
  return (await res.json()) as ThreadSnapshot
}

/** Asks twice: answers the first question and returns the second, pending (the resume run finished). */
async function atSecondQuestion(server: ChildServer): Promise<{ threadId: string; second: Interrupt }> {
  const threadId = newThreadId()
  const run = await postRun(server, runInput(threadId, [userMessage('ask twice')]))
  const [first] = interruptsOf(run.events)
  expect(first?.message).toBe('First?')
  const next = await postRun(server, resumeInput(threadId, [resolved(first!, { pick: 'a' })]))
  const [second] = interruptsOf(next.events)
  expect(second?.message).toBe('Second, after a?')
  return { threadId, second: second! }
}

/** Starts the resume and SIGKILLs the server once `signal` exists (the tool is blocked there). */
async function resumeThenKill(server: ChildServer, input: RunAgentInput, signal: string): Promise<void> {
  const response = await fetch(`${server.baseUrl}/runs`, {
    method: 'POST',
    headers: { ...authHeader('alice'), 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(input),
  })
  expect(response.status).toBe(200)
  const tail = tailSse(response)
  await until(() => fs.existsSync(signal), 'the tool to block')
  await server.kill()
  await until(() => tail.ended(), 'the stream to break')
}

async function idle(server: ChildServer, threadId: string): Promise<ThreadSnapshot> {
  return until(async () => {
    const s = await snapshot(server, threadId)
    return s.status === 'idle' ? s : undefined
  }, 'the continued turn to finish')
}

const resultOf = (snap: ThreadSnapshot, toolCallId: string) =>
  snap.messages.find((m) => m.role === 'tool' && m.toolCallId === toolCallId) as { content: string } | undefined

interface Store {
  readonly name: string
  args(dir: string): Promise<{ args: string[]; dispose(): Promise<void> }>
}
const stores: Store[] = [
  {
    name: 'SQLite, restart',
    args: async (dir) => ({ args: ['--db', path.join(dir, 'ask.db')], dispose: async () => undefined }),
  },
]
if (pg) {
  stores.push({
    name: 'PostgreSQL, another process',
    args: async () => {
      const { schema, drop } = await createTestSchema()
      return {
        args: ['--db', PG_URL, ...TEST_POOL_ARGS, '--db-schema', schema, '--run-lease-ms', '600', '--poll-ms', '50'],
        dispose: drop,
      }
    },
  })
}

/** One scenario: a signal directory, a fresh store and `launch` of the crash server on them; afterwards the children
 * are killed and the store dropped, whatever happened. */
async function crashScenario(
  storeArgs: Store['args'],
  extra: readonly string[],
  scenario: (s: { signals: ReturnType<typeof signalDir>; launch: () => Promise<ChildServer> }) => Promise<void>,
): Promise<void> {
  const signals = signalDir()
  const db = await storeArgs(signals.dir)
  try {
    await scenario({ signals, launch: () => launchChild(CRASH_SERVER, [...db.args, '--dir', signals.dir, ...extra]) })
  } finally {
    killChildren()
    await db.dispose()
  }
}

describe.each(stores)('kill -9 around ctx.interrupt ($name)', ({ args: storeArgs }) => {
  it('paused between the two questions: after the restart the second answer resumes it and the effect runs once', async () => {
    await crashScenario(storeArgs, ['--ask-tool'], async ({ signals, launch }) => {
      let server = await launch()
      const { threadId, second } = await atSecondQuestion(server)
      await server.kill()
      server = await launch()
      const done = await postRun(server, resumeInput(threadId, [resolved(second, { pick: 'b' })]))
      expect(done.status).toBe(200)
      const snap = await idle(server, threadId)
      expect(JSON.parse(resultOf(snap, second.toolCallId!)!.content)).toEqual({ first: 'a', second: 'b' })
      expect(signals.lines('ask-effects.log')).toEqual([`${second.toolCallId} a b`])
      expect(signals.lines('ask-tops.log')).toHaveLength(3)
      await server.kill()
    })
  })

  it('died while replaying its answers: the continuation runs it again, the effect exactly once', async () => {
    await crashScenario(storeArgs, ['--ask-tool'], async ({ signals, launch }) => {
      let server = await launch()
      const { threadId, second } = await atSecondQuestion(server)
      fs.writeFileSync(signals.file('ask-block-top'), '1')
      await resumeThenKill(
        server,
        resumeInput(threadId, [resolved(second, { pick: 'c' })]),
        signals.file('ask-blocked'),
      )
      // Not started: the claim comes with the last answer, which the dead attempt never reached.
      expect(signals.lines('ask-effects.log')).toEqual([])
      fs.rmSync(signals.file('ask-block-top'))
      server = await launch()
      const snap = await idle(server, threadId)
      expect(JSON.parse(resultOf(snap, second.toolCallId!)!.content)).toEqual({ first: 'a', second: 'c' })
      expect(snap.unsettledEffects ?? []).toEqual([])
      expect(signals.lines('ask-effects.log')).toEqual([`${second.toolCallId} a c`])
      await server.kill()
    })
  })

  it('died after its last answer (in its effect): the call is unknown and never runs again', async () => {
    await crashScenario(storeArgs, ['--ask-tool'], async ({ signals, launch }) => {
      let server = await launch()
      const { threadId, second } = await atSecondQuestion(server)
      fs.writeFileSync(signals.file('ask-block-effect'), '1')
      await resumeThenKill(
        server,
        resumeInput(threadId, [resolved(second, { pick: 'd' })]),
        signals.file('ask-effect-blocked'),
      )
      fs.rmSync(signals.file('ask-block-effect'))
      server = await launch()
      const snap = await idle(server, threadId)
      expect(snap.unsettledEffects).toEqual([
        { toolCallId: second.toolCallId, toolName: 'two_questions', status: 'unknown' },
      ])
      expect(signals.lines('ask-effects.log')).toEqual([`${second.toolCallId} a d`])
      await server.kill()
    })
  })

  it('a subagent paused on its approval survives kill -9: the approval resumes it from its checkpoint, once', async () => {
    await crashScenario(storeArgs, [], async ({ signals, launch }) => {
      let server = await launch()
      const threadId = newThreadId()
      const run = await postRun(server, runInput(threadId, [userMessage('audit v7')]))
      const [signOff] = interruptsOf(run.events)
      expect(signOff).toMatchObject({ message: 'Sign off the audit of v7?', subagentRunId: expect.any(String) })
      await server.kill()
      server = await launch()
      const done = await postRun(server, resumeInput(threadId, [resolved(signOff!)]))
      expect(done.status).toBe(200)
      const snap = await idle(server, threadId)
      const auditorCall = (signOff!.metadata as { subagent: { toolCallId: string } }).subagent.toolCallId
      expect(JSON.parse(resultOf(snap, auditorCall)!.content)).toEqual({
        report: 'Audit of v7 passed and is signed off.',
      })
      expect((snap.state as { audits?: unknown[] }).audits).toHaveLength(1)
      // Ran twice from the top (the pause, the resume); the sign-off once.
      expect(signals.lines('tool-executions.log')).toEqual([`auditor ${auditorCall}`, `auditor ${auditorCall}`])
      await server.kill()
    })
  })

  it('a subagent that died while replaying its checkpoint runs again on continuation; the sign-off runs once', async () => {
    await crashScenario(storeArgs, [], async ({ signals, launch }) => {
      let server = await launch()
      const threadId = newThreadId()
      const run = await postRun(server, runInput(threadId, [userMessage('audit v8')]))
      const [signOff] = interruptsOf(run.events)
      fs.writeFileSync(signals.file('subagent-block'), '1')
      await resumeThenKill(server, resumeInput(threadId, [resolved(signOff!)]), signals.file('subagent-blocked'))
      fs.rmSync(signals.file('subagent-block'))
      server = await launch()
      const snap = await idle(server, threadId)
      const auditorCall = (signOff!.metadata as { subagent: { toolCallId: string } }).subagent.toolCallId
      expect(snap.unsettledEffects ?? []).toEqual([])
      expect(JSON.parse(resultOf(snap, auditorCall)!.content)).toEqual({
        report: 'Audit of v8 passed and is signed off.',
      })
      expect((snap.state as { audits?: unknown[] }).audits).toHaveLength(1)
      // The pause, the dead attempt, the continuation.
      expect(signals.lines('tool-executions.log')).toHaveLength(3)
      await server.kill()
    })
  })
})
