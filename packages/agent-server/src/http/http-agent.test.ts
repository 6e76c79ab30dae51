import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { HttpAgent } from '@ag-ui/client'
import type { AgentSubscriber } from '@ag-ui/client'
import Database from 'better-sqlite3'
import type { ReleaseState } from '../demo/release-assistant.ts'
import type { TestServer } from '../test-utils/harness.ts'
import { authHeader, newThreadId, startTestServer, userMessage } from '../test-utils/harness.ts'
import { threadKey } from '../store/thread-key.ts'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server.dispose()
})

/** Records every event and every failure HttpAgent reports (verifyEvents failures reject runAgent). */
function recorder() {
  const seen: string[] = []
  const errors: unknown[] = []
  const subscriber: AgentSubscriber = {
    onEvent: ({ event }) => {
      seen.push(event.type)
    },
    onRunErrorEvent: ({ event }) => {
      errors.push(event)
    },
    onRunFailed: ({ error }) => {
      errors.push(error)
    },
  }
  return { seen, errors, subscriber }
}

function storedMessageIds(dbPath: string, threadId: string): string[] {
  const db = new Database(dbPath, { readonly: true })
  try {
    return (
      db
        .prepare('SELECT message_id FROM messages WHERE thread_id = ? ORDER BY position')
        .all(threadKey('alice', threadId)) as {
        message_id: string
      }[]
    ).map((r) => r.message_id)
  } finally {
    db.close()
  }
}

describe('@ag-ui/client HttpAgent against the real server', () => {
  it('runs a full interrupt → resume cycle that passes verifyEvents, and history re-sends store no duplicates', async () => {
    const threadId = newThreadId()
    const agent = new HttpAgent({ url: `${server.baseUrl}/runs`, headers: authHeader('alice'), threadId })

    agent.addMessage(userMessage('deploy v3.0 to production'))
    const first = recorder()
    await agent.runAgent({}, first.subscriber)
    expect(first.errors).toEqual([])
    expect(first.seen[0]).toBe('RUN_STARTED')
    expect(first.seen[first.seen.length - 1]).toBe('RUN_FINISHED')
    expect(agent.pendingInterrupts).toHaveLength(2)
    expect(agent.pendingInterrupts.map((i) => i.reason)).toEqual(['tool_call', 'tool_call'])
    // STATE_SNAPSHOT came before the pause.
    expect(agent.state).toEqual({ releases: [], deployments: [] })

    const [publish, deploy] = agent.pendingInterrupts
    const second = recorder()
    await agent.runAgent(
      {
        resume: [
          { interruptId: publish!.id, status: 'resolved', payload: { approved: true } },
          {
            interruptId: deploy!.id,
            status: 'resolved',
            payload: { approved: true, editedArgs: { version: 'v3.0', environment: 'staging' } },
          },
        ],
      },
      second.subscriber,
    )
    expect(second.errors).toEqual([])
    expect(second.seen).not.toContain('TOOL_CALL_START')
    expect(agent.pendingInterrupts).toEqual([])
    const state = agent.state as ReleaseState
    expect(state.deployments).toEqual([{ operationId: deploy!.toolCallId, version: 'v3.0', environment: 'staging' }])
    const roles = agent.messages.map((m) => m.role)
    expect(roles).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant'])
    expect(agent.messages.map((m) => m.id)).toEqual(storedMessageIds(server.dbPath, threadId))

    // A third run: HttpAgent re-sends the whole history; only the new user message is stored.
    agent.addMessage(userMessage('thanks!'))
    const third = recorder()
    await agent.runAgent({}, third.subscriber)
    expect(third.errors).toEqual([])
    const ids = storedMessageIds(server.dbPath, threadId)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toHaveLength(7)
    expect(agent.messages.map((m) => m.id)).toEqual(ids)
  })

  it('an ask_user interrupt resolves through HttpAgent', async () => {
    const agent = new HttpAgent({
      url: `${server.baseUrl}/runs`,
      headers: authHeader('alice'),
      threadId: newThreadId(),
    })
    agent.addMessage(userMessage('ask me which environment'))
    await agent.runAgent()
    const [ask] = agent.pendingInterrupts
    expect(ask?.reason).toBe('input_required')
    const rec = recorder()
    await agent.runAgent(
      { resume: [{ interruptId: ask!.id, status: 'resolved', payload: { environment: 'staging' } }] },
      rec.subscriber,
    )
    expect(rec.errors).toEqual([])
    const last = agent.messages[agent.messages.length - 1]!
    expect(last).toMatchObject({ role: 'assistant', content: 'You chose staging. I will use staging from now on.' })
  })

  it('a subagent approval (auditor) and a question from inside a tool (rollback) pass verifyEvents and resume', async () => {
    const agent = new HttpAgent({
      url: `${server.baseUrl}/runs`,
      headers: authHeader('alice'),
      threadId: newThreadId(),
    })
    agent.addMessage(userMessage('audit v4.0'))
    const paused = recorder()
    await agent.runAgent({}, paused.subscriber)
    expect(paused.errors).toEqual([])
    // The subagent's events arrive as CUSTOM interlude.subagent, which HttpAgent passes through.
    expect(paused.seen).toContain('CUSTOM')
    const [signOff] = agent.pendingInterrupts
    expect(signOff).toMatchObject({
      reason: 'tool_call',
      message: 'Sign off the audit of v4.0?',
      subagentRunId: expect.stringMatching(/^subrun_/),
    })
    const resumed = recorder()
    await agent.runAgent(
      { resume: [{ interruptId: signOff!.id, status: 'resolved', payload: { approved: true } }] },
      resumed.subscriber,
    )
    expect(resumed.errors).toEqual([])
    expect(agent.pendingInterrupts).toEqual([])
    expect((agent.state as { audits?: unknown[] }).audits).toHaveLength(1)

    agent.addMessage(userMessage('rollback v4.0'))
    await agent.runAgent()
    const [confirm] = agent.pendingInterrupts
    expect(confirm).toMatchObject({ reason: 'confirmation', message: expect.stringMatching(/^Roll back v4\.0\?/) })
    const confirmed = recorder()
    await agent.runAgent(
      { resume: [{ interruptId: confirm!.id, status: 'resolved', payload: { confirm: true } }] },
      confirmed.subscriber,
    )
    expect(confirmed.errors).toEqual([])
    expect((agent.state as { rollbacks?: { version: string }[] }).rollbacks).toEqual([
      expect.objectContaining({ version: 'v4.0' }),
    ])
  })

  it('a refused resume rejects runAgent with the HTTP status and envelope', async () => {
    // HttpAgent logs the failure it rethrows; keep the test output clean.
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const agent = new HttpAgent({
      url: `${server.baseUrl}/runs`,
      headers: authHeader('alice'),
      threadId: newThreadId(),
    })
    agent.addMessage(userMessage('deploy v1'))
    await agent.runAgent()
    const [publish, deploy] = agent.pendingInterrupts
    const failure = await agent
      .runAgent({
        resume: [
          { interruptId: publish!.id, status: 'resolved', payload: { approved: 'yes' } },
          { interruptId: deploy!.id, status: 'cancelled' },
        ],
      })
      .then(
        () => undefined,
        (error: unknown) =>
          error as {
            status?: number
            payload?: { error: { code: string; details: { errors: Record<string, unknown> } } }
          },
      )
    expect(failure?.status).toBe(422)
    expect(failure?.payload?.error.code).toBe('RESUME_PAYLOAD_INVALID')
    expect(Object.keys(failure!.payload!.error.details.errors)).toEqual([publish!.id])
    quiet.mockRestore()
  })
})

describe('@ag-ui/client HttpAgent when a pause sends no MESSAGES_SNAPSHOT (a thread above pauseSnapshotMaxBytes)', () => {
  let bounded: TestServer
  beforeAll(async () => {
    bounded = await startTestServer({ limits: { pauseSnapshotMaxBytes: 0 } })
  })
  afterAll(async () => {
    await bounded.dispose()
  })

  it('keeps the same messages as the server through pause, resume and a follow-up, from the message events alone', async () => {
    const threadId = newThreadId()
    const agent = new HttpAgent({ url: `${bounded.baseUrl}/runs`, headers: authHeader('alice'), threadId })
    agent.addMessage(userMessage('deploy v3.0 to production'))
    const first = recorder()
    await agent.runAgent({}, first.subscriber)
    expect(first.errors).toEqual([])
    expect(first.seen).not.toContain('MESSAGES_SNAPSHOT')
    expect(agent.pendingInterrupts).toHaveLength(2)
    expect(agent.messages.map((m) => m.id)).toEqual(storedMessageIds(bounded.dbPath, threadId))
    const [publish, deploy] = agent.pendingInterrupts
    const second = recorder()
    await agent.runAgent(
      {
        resume: [
          { interruptId: publish!.id, status: 'resolved', payload: { approved: true } },
          { interruptId: deploy!.id, status: 'resolved', payload: { approved: false } },
        ],
      },
      second.subscriber,
    )
    expect(second.errors).toEqual([])
    agent.addMessage(userMessage('thanks!'))
    await agent.runAgent({}, recorder().subscriber)
    const ids = storedMessageIds(bounded.dbPath, threadId)
    expect(agent.messages.map((m) => m.id)).toEqual(ids)
    expect(agent.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'user',
      'assistant',
    ])
  })
})
