import { describe, expect, it } from 'vitest'
import type { Interrupt } from '@interlude/protocol'
import type { DecideContext } from '../../agent/decider.ts'
import { defineTool } from '../../agent/tool.ts'
import { releaseAssistant } from '../../demo/release-assistant.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../../test-utils/harness.ts'
import type { InProcessServer } from '../../test-utils/in-process.ts'
import { serversPerTest, startInProcess } from '../../test-utils/in-process.ts'
import { refusedUnchanged, resolved } from '../../test-utils/resume-entries.ts'
import { commandAgent } from '../../test-utils/test-agents.ts'
import { threadKey } from '../../store/thread-key.ts'

/**
 * Who may decide (docs/approvals.md): the server's `canDecide` (default: the owner or a listed approver), a tool's
 * `approvers` narrowing it, "every interrupt of the batch", and the one admission path a decider's resume run takes.
 */
const server = serversPerTest()

async function pausedDeploy(s: InProcessServer): Promise<{ threadId: string; interrupts: Interrupt[] }> {
  const threadId = newThreadId()
  const first = await s.postRun(runInput(threadId, [userMessage('deploy v3 to production')]), { principal: 'eng' })
  return { threadId, interrupts: interruptsOf(first.events) }
}

describe('decider rights on resume runs (POST /runs with resume, via "run")', () => {
  it('a listed approver resumes another owner\'s batch; the record names it with via "run"; others get 404', async () => {
    const s = await server({ approvers: ['mgr'] })
    const { threadId, interrupts } = await pausedDeploy(s)
    const refused = await refusedUnchanged(s.dbPath, () =>
      s.postRun(
        resumeInput(
          threadId,
          interrupts.map((i) => resolved(i)),
        ),
        { principal: 'bob', owner: 'eng' },
      ),
    )
    expect(refused).toMatchObject({ status: 404, error: { code: 'THREAD_NOT_FOUND' } })

    const input = resumeInput(
      threadId,
      interrupts.map((i) => resolved(i)),
    )
    const run = await s.postRun(input, { principal: 'mgr', owner: 'eng' })
    expect(run.status).toBe(200)
    expect(run.events[run.events.length - 1]).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } })
    expect(await s.store.getDecision(threadKey('eng', threadId), input.runId)).toMatchObject({
      decidedBy: 'mgr',
      via: 'run',
      interruptIds: interrupts.map((i) => i.id),
    })
    // Tools act for the owner, whoever decided.
    expect((await s.store.getThread(threadKey('eng', threadId)))?.state).toMatchObject({
      deployments: [{ version: 'v3' }],
    })
  })

  it('new input stays owner-only, also for an approver', async () => {
    const s = await server({ approvers: ['mgr'] })
    const { threadId } = await pausedDeploy(s)
    const r = await refusedUnchanged(s.dbPath, () =>
      s.postRun(runInput(threadId, [userMessage('hi')]), { principal: 'mgr', owner: 'eng' }),
    )
    expect(r).toMatchObject({ status: 404, error: { code: 'THREAD_NOT_FOUND' } })
  })

  it('without approvers only the owner decides', async () => {
    const s = await server()
    const { threadId, interrupts } = await pausedDeploy(s)
    const entries = interrupts.map((i) => resolved(i))
    const r = await refusedUnchanged(s.dbPath, () =>
      s.postRun(resumeInput(threadId, entries), { principal: 'mgr', owner: 'eng' }),
    )
    expect(r.status).toBe(404)
    expect((await s.postRun(resumeInput(threadId, entries), { principal: 'eng' })).status).toBe(200)
  })

  it('a tool with approvers: ["mgr"] refuses the owner (404, nothing changed) and admits mgr', async () => {
    const base = releaseAssistant()
    const tools = (base.tools ?? []).map((tool) => (tool.name === 'deploy' ? { ...tool, approvers: ['mgr'] } : tool))
    const s = await server({ agent: { ...base, tools }, approvers: ['mgr'] })
    const { threadId, interrupts } = await pausedDeploy(s)
    const entries = interrupts.map((i) => resolved(i))
    const r = await refusedUnchanged(s.dbPath, () => s.postRun(resumeInput(threadId, entries), { principal: 'eng' }))
    expect(r).toMatchObject({ status: 404, error: { code: 'THREAD_NOT_FOUND' } })
    expect((await s.postRun(resumeInput(threadId, entries), { principal: 'mgr', owner: 'eng' })).status).toBe(200)
  })

  it('a principal must be allowed for every interrupt of the batch; a custom canDecide sees each one', async () => {
    const seen: DecideContext[] = []
    const approve = (name: string) =>
      defineTool({ name, description: name, parameters: { type: 'object' }, approval: 'always', execute: () => 'ok' })
    const agent = commandAgent([approve('a'), { ...approve('b'), approvers: (principal) => principal === 'bob' }])
    const s = await server({
      agent,
      canDecide: async (principal, ctx) => {
        seen.push(ctx)
        return principal === ctx.owner || principal === 'mgr' || principal === 'bob'
      },
    })
    const threadId = newThreadId()
    const script = JSON.stringify({
      toolCalls: [
        { name: 'a', args: {} },
        { name: 'b', args: {} },
      ],
    })
    const interrupts = interruptsOf(
      (await s.postRun(runInput(threadId, [userMessage(script)]), { principal: 'eng' })).events,
    )
    expect(interrupts).toHaveLength(2)
    const entries = interrupts.map((i) => resolved(i))
    // mgr may decide "a" but not "b": the batch is not its to decide.
    expect(
      (
        await refusedUnchanged(s.dbPath, () =>
          s.postRun(resumeInput(threadId, entries), { principal: 'mgr', owner: 'eng' }),
        )
      ).status,
    ).toBe(404)
    expect(
      seen.some((ctx) => ctx.owner === 'eng' && ctx.threadId === threadId && ctx.interrupt.id === interrupts[0]!.id),
    ).toBe(true)
    expect((await s.postRun(resumeInput(threadId, entries), { principal: 'bob', owner: 'eng' })).status).toBe(200)
  })

  it('a throwing canDecide denies (fail closed) and is logged', async () => {
    const s = await server({
      canDecide: (principal, ctx) => {
        if (principal !== ctx.owner) throw new Error('directory down')
        return true
      },
    })
    const { threadId, interrupts } = await pausedDeploy(s)
    const entries = interrupts.map((i) => resolved(i))
    expect(
      (
        await refusedUnchanged(s.dbPath, () =>
          s.postRun(resumeInput(threadId, entries), { principal: 'mgr', owner: 'eng' }),
        )
      ).status,
    ).toBe(404)
    expect(s.logged.map((l) => l.message).some((m) => m.startsWith('decider check'))).toBe(true)
  })

  it('refuses options that would make batches undecidable', async () => {
    const base = releaseAssistant()
    const tools = (base.tools ?? []).map((tool) => (tool.name === 'deploy' ? { ...tool, approvers: [] } : tool))
    await expect(startInProcess({ agent: { ...base, tools } })).rejects.toThrow(/Tool "deploy": approvers is empty/)
    await expect(startInProcess({ approvers: [''] })).rejects.toThrow(RangeError)
  })
})
