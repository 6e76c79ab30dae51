import { describe, expect, it } from 'vitest'
import type { PendingBatchPage } from '@interlude/protocol'
import { getJson, postDecision } from '../test-utils/decisions.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import { recordingModel } from '../test-utils/recording-model.ts'
import { defineTool } from '../agent/tool.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { call, rightsAgent } from '../test-utils/rights-agents.ts'

/**
 * Who may decide holds on every path (docs/approvals.md#who-may-decide): a tool's `approvers` inside a subagent,
 * and four eyes for the requester. Through the real routes over a SQLite file.
 */
const server = serversPerTest({ approvers: ['mgr'] })

async function paused(s: InProcessServer, owner: 'eng' | 'mgr', message: string) {
  const threadId = newThreadId()
  const run = await s.postRun(runInput(threadId, [userMessage(message)]), { principal: owner })
  expect(run.status).toBe(200)
  const interrupts = interruptsOf(run.events)
  expect(interrupts).toHaveLength(1)
  return { threadId, interrupt: interrupts[0]! }
}

describe("a tool's approvers hold inside a subagent", () => {
  it('the engineer cannot approve a deploy raised by a subagent without approvers; mgr can', async () => {
    const { agent, ran } = rightsAgent()
    const s = await server({ agent })
    const { threadId, interrupt } = await paused(s, 'eng', call('ops', { task: 'ship it' }))
    expect(interrupt).toMatchObject({ metadata: { toolName: 'deploy', subagent: { name: 'ops' } } })
    expect(interrupt.subagentRunId).toBeDefined()

    const own = await postDecision(s, threadId, { runId: 'run_self', resume: [resolved(interrupt)] }, 'eng')
    expect(own).toMatchObject({ status: 404, error: { code: 'THREAD_NOT_FOUND' } })
    // The engineer's inbox does not offer it; the manager's does, labelled as the deploy of the subagent ops.
    const engInbox = await getJson<PendingBatchPage>(s, '/interrupts?status=pending', 'eng')
    expect(engInbox.body.items).toEqual([])
    const mgrInbox = await getJson<PendingBatchPage>(s, '/interrupts?status=pending', 'mgr')
    expect(mgrInbox.body.items.map((b) => b.interrupts[0]?.metadata)).toMatchObject([
      { toolName: 'deploy', subagent: { name: 'ops' } },
    ])
    expect(ran).toEqual([])

    const decided = await postDecision(
      s,
      threadId,
      { runId: 'run_mgr', resume: [resolved(interrupt)] },
      { principal: 'mgr', owner: 'eng' },
    )
    expect(decided.status).toBe(202)
    // The deploy acts for the owner, approved by mgr.
    await expect.poll(() => ran).toEqual([{ principal: 'eng', env: 'production' }])
  })

  it("a subagent tool with its own approvers adds to the inner tool's: both must allow", async () => {
    const { agent } = rightsAgent()
    const tools = (agent.tools ?? []).map((t) => (t.name === 'ops' ? { ...t, approvers: ['alice'] } : t))
    const s = await server({ agent: { ...agent, tools }, approvers: ['mgr', 'alice'] })
    const { threadId, interrupt } = await paused(s, 'eng', call('ops', { task: 'ship it' }))
    for (const principal of ['mgr', 'alice'] as const) {
      const r = await postDecision(
        s,
        threadId,
        { runId: `run_${principal}`, resume: [resolved(interrupt)] },
        { principal, owner: 'eng' },
      )
      expect(r.status).toBe(404)
    }
  })
})

describe('four eyes: the requester never decides a call of a tool with approvers', () => {
  it('mgr owns the thread and is an approver: it cannot approve its own deploy', async () => {
    const { agent, ran } = rightsAgent()
    const s = await server({ agent, approvers: ['mgr', 'bob'] })
    const { threadId, interrupt } = await paused(s, 'mgr', call('deploy', { env: 'production' }))
    const own = await postDecision(s, threadId, { runId: 'run_self', resume: [resolved(interrupt)] }, 'mgr')
    expect(own).toMatchObject({ status: 404, error: { code: 'THREAD_NOT_FOUND' } })
    const inbox = await getJson<PendingBatchPage>(s, '/interrupts?status=pending', 'mgr')
    expect(inbox.body.items).toEqual([])
    expect(ran).toEqual([])
  })

  it('allowSelfApproval: true lets the listed requester decide its own call', async () => {
    const { agent, ran } = rightsAgent({ deploy: { allowSelfApproval: true } })
    const s = await server({ agent })
    const { threadId, interrupt } = await paused(s, 'mgr', call('deploy', { env: 'staging' }))
    const own = await postDecision(s, threadId, { runId: 'run_self', resume: [resolved(interrupt)] }, 'mgr')
    expect(own.status).toBe(202)
    await expect.poll(() => ran).toEqual([{ principal: 'mgr', env: 'staging' }])
  })
})

describe("a decider's resume run contributes its decisions only", () => {
  const browserTool = { name: 'mgr_clipboard', description: 'Reads the clipboard.', parameters: { type: 'object' } }
  const extra = { context: [{ description: 'notes', value: 'private' }], tools: [browserTool] }
  const publish = defineTool({
    name: 'publish',
    description: 'Publishes.',
    parameters: { type: 'object' },
    approval: 'always',
    execute: () => ({ published: true }),
  })

  async function resumedAs(principal: 'mgr' | 'eng', message: string) {
    const { agent } = rightsAgent({ extra: [publish] })
    const model = recordingModel(agent.model)
    const s = await server({ agent: { ...agent, model } })
    const { threadId, interrupt } = await paused(s, 'eng', message)
    model.requests.splice(0)
    const who = principal === 'mgr' ? { principal, owner: 'eng' } : { principal }
    const run = await s.postRun(resumeInput(threadId, [resolved(interrupt)], extra), who)
    expect(run.status).toBe(200)
    expect(model.requests.length).toBeGreaterThan(0)
    return model.requests
  }

  it("mgr's context and browser tools never reach the turn it resumes for eng", async () => {
    for (const request of await resumedAs('mgr', call('ops', { task: 'ship it' }))) {
      expect(request.context).toEqual([])
      expect(request.tools.map((t) => t.name)).not.toContain('mgr_clipboard')
    }
  })

  it("the owner's own resume keeps its context and browser tools", async () => {
    for (const request of await resumedAs('eng', call('publish', {}))) {
      expect(request.context).toHaveLength(1)
      expect(request.tools.map((t) => t.name)).toContain('mgr_clipboard')
    }
  })
})
