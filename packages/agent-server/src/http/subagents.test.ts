import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EventType, SUBAGENT_EVENT_NAME } from '@interlude/protocol'
import type { AgUiEvent, PendingBatchPage, SubagentEventValue, ThreadSnapshot } from '@interlude/protocol'
import type { AgentDefinition } from '../agent/agent.ts'
import { defineSubagentTool } from '../agent/subagent-tool.ts'
import { askUser } from '../agent/ask-user.ts'
import { defineTool } from '../agent/tool.ts'
import { scriptedModel } from '../models/scripted.ts'
import type { ToolDefinition } from '../agent/tool.ts'
import { auditorAgent } from '../demo/auditor.ts'
import type { AuditRecord } from '../demo/auditor.ts'
import type { ModelProvider } from '../models/model.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, toolResults, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { commandAgent } from '../test-utils/test-agents.ts'
import { threadKey } from '../store/thread-key.ts'

/** Subagents (docs/approvals.md#subagents, docs/protocol.md#subagents) over a real server and store. */

/** Model calls of the subagent, by its first user message. */
const subModelCalls = new Map<string, number>()
function counted(model: ModelProvider): ModelProvider {
  return {
    name: model.name,
    stream(request) {
      const first = request.messages[0]
      const key = first && typeof first.content === 'string' ? first.content : ''
      subModelCalls.set(key, (subModelCalls.get(key) ?? 0) + 1)
      return model.stream(request)
    },
  }
}

const parentRan: string[] = []
const approveMe = defineTool({
  name: 'approve_me',
  description: 'A parent tool that needs approval.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  approval: 'always',
  execute: (_args, ctx) => {
    parentRan.push(ctx.toolCallId)
    return { parent: 'ran' }
  },
})
const base = auditorAgent()
const auditor = defineSubagentTool<{ version: string }>({
  name: 'auditor',
  description: 'Audits a version.',
  parameters: {
    type: 'object',
    properties: { version: { type: 'string' } },
    required: ['version'],
    additionalProperties: false,
  },
  agent: { ...base, model: counted(base.model) } as AgentDefinition,
  input: (args) => `Audit release ${args.version}.`,
  result: (answer) => ({ report: answer }),
})
/** A subagent that pauses twice: an approval, then a question (a human tool), then answers. */
const effects: string[] = []
const stepOne = defineTool({
  name: 'step_one',
  description: 'Needs approval.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  approval: 'always',
  execute: (_args, ctx) => {
    effects.push(ctx.idempotencyKey)
    return { one: 'done' }
  },
})
const note = defineTool<Record<string, never>, { log: string[] }>({
  name: 'note',
  description: 'Needs no approval; writes the state.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  execute: (_args, ctx) => {
    ctx.updateState((state) => ({ ...state, log: [...state.log, `note ${ctx.idempotencyKey}`] }))
    return { noted: true }
  },
})
const pick = askUser({
  name: 'pick',
  responseSchema: {
    type: 'object',
    properties: { colour: { type: 'string' } },
    required: ['colour'],
    additionalProperties: false,
  },
})
const twoRounds: AgentDefinition = {
  name: 'two-rounds',
  model: counted(
    scriptedModel((request) => {
      const tools = request.messages.filter((m) => m.role === 'tool')
      if (tools.length === 0)
        return {
          toolCalls: [
            { name: 'note', args: {} },
            { name: 'step_one', args: {} },
          ],
        }
      if (tools.length === 2) return { toolCalls: [{ name: 'pick', args: { question: 'Which colour?' } }] }
      return { text: `finished with ${tools.map((t) => String(t.content)).join(' and ')}` }
    }),
  ),
  tools: [note, stepOne, pick] as ToolDefinition[],
}
const rounds = defineSubagentTool<{ n: number }>({
  name: 'rounds',
  description: 'A subagent that asks twice.',
  parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
  agent: twoRounds,
  input: (args) => `rounds ${args.n}`,
})
const TOOLS = [approveMe, auditor, rounds] as ToolDefinition[]
/**
 * The subagent runs in the same response as a parent approval, so its approval joins the parent's batch: the
 * opt-in `pausePolicy` (docs/decisions.md#a-turn-keeps-its-promises); under `'hold'` it would run after the decision.
 */
const AGENT_OPTIONS = { pausePolicy: 'run-free-calls' } as const
const both = (version: string) =>
  JSON.stringify({
    toolCalls: [
      { name: 'approve_me', args: {} },
      { name: 'auditor', args: { version } },
    ],
  })

const subagentEvents = (events: readonly AgUiEvent[]): SubagentEventValue[] =>
  events
    .filter((e) => e.type === EventType.CUSTOM && (e as { name: string }).name === SUBAGENT_EVENT_NAME)
    .map((e) => (e as unknown as { value: SubagentEventValue }).value)

function suite(name: string, tag: number, open: () => Promise<{ server: InProcessServer; dispose(): Promise<void> }>) {
  describe(name, () => {
    let server: InProcessServer
    let dispose: () => Promise<void>
    beforeAll(async () => {
      ;({ server, dispose } = await open())
    })
    afterAll(async () => {
      await dispose()
    })

    async function paused(threadId: string, version: string) {
      const run = await server.postRun(runInput(threadId, [userMessage(both(version))]))
      expect(run.status).toBe(200)
      const interrupts = interruptsOf(run.events)
      expect(interrupts).toHaveLength(2)
      const parent = interrupts.find((i) => i.subagentRunId === undefined)!
      const sub = interrupts.find((i) => i.subagentRunId !== undefined)!
      return { run, parent, sub }
    }

    const auditsOf = async (threadId: string) =>
      ((await server.store.getThread(threadKey('alice', threadId)))?.state as { audits?: AuditRecord[] }).audits ?? []

    it("a subagent's approval surfaces in the parent's batch with subagentRunId; its events are attributed", async () => {
      const threadId = newThreadId()
      const { run, parent, sub } = await paused(threadId, `v${tag}.9`)
      const auditorCall = sub.metadata?.subagent as { name: string; toolCallId: string }
      expect(auditorCall.name).toBe('auditor')
      expect(sub).toMatchObject({
        reason: 'tool_call',
        message: `Sign off the audit of v${tag}.9?`,
        subagentRunId: `subrun_${auditorCall.toolCallId}`,
        metadata: { toolName: 'sign_off', arguments: { version: `v${tag}.9` }, subagent: auditorCall },
      })
      // The interrupt names the subagent's own call (as its TOOL_CALL_START does), not the parent's.
      expect(sub.toolCallId).not.toBe(auditorCall.toolCallId)
      expect(parent).toMatchObject({ reason: 'tool_call', metadata: { toolName: 'approve_me' } })

      const values = subagentEvents(run.events)
      expect(values.length).toBeGreaterThan(4)
      for (const v of values) {
        expect(v).toMatchObject({
          subagentRunId: sub.subagentRunId,
          agent: 'auditor',
          parentToolCallId: auditorCall.toolCallId,
        })
      }
      const types = values.map((v) => v.event.type)
      expect(types[0]).toBe(EventType.RUN_STARTED)
      expect(types).toContain(EventType.TEXT_MESSAGE_CONTENT)
      expect(values.find((v) => v.event.type === EventType.TOOL_CALL_START)?.event).toMatchObject({
        toolCallId: sub.toolCallId,
        toolCallName: 'sign_off',
      })
      expect(values.at(-1)?.event).toMatchObject({
        type: EventType.RUN_FINISHED,
        runId: sub.subagentRunId,
        outcome: { type: 'interrupt', interrupts: [expect.objectContaining({ id: sub.id })] },
      })
      // Attributed only inside CUSTOM: no top-level event of the subagent's call.
      expect(run.events.some((e) => (e as { toolCallId?: string }).toolCallId === sub.toolCallId)).toBe(false)

      // Snapshot and pending inbox show both, with subagentRunId.
      const snapshot = (await (await server.request(`/threads/${threadId}`)).json()) as ThreadSnapshot
      expect(snapshot.interrupts?.map((i) => i.id).sort()).toEqual([parent.id, sub.id].sort())
      expect(snapshot.interrupts?.find((i) => i.id === sub.id)?.subagentRunId).toBe(sub.subagentRunId)
      // The subagent's private messages stay out of the parent's history.
      expect(JSON.stringify(snapshot.messages)).not.toContain('changelog, tests and deployments')
      const inbox = (await (await server.request('/interrupts?status=pending')).json()) as PendingBatchPage
      const item = inbox.items.find((b) => b.threadId === threadId)
      expect(item?.interrupts.find((i) => i.id === sub.id)?.subagentRunId).toBe(sub.subagentRunId)
    })

    it('one resume answers a parent approval and a subagent approval; each reaches its owner, the model is not re-asked', async () => {
      const threadId = newThreadId()
      const { parent, sub } = await paused(threadId, `v${tag}.10`)
      const auditorCallId = (sub.metadata?.subagent as { toolCallId: string }).toolCallId
      const parentCallId = parent.toolCallId!
      expect(subModelCalls.get(`Audit release v${tag}.10.`)).toBe(1)
      const done = await server.postRun(resumeInput(threadId, [resolved(parent), resolved(sub)]))
      expect(done.status).toBe(200)
      expect(toolResults(done.events)).toEqual(
        expect.arrayContaining([
          { toolCallId: parentCallId, content: { parent: 'ran' } },
          { toolCallId: auditorCallId, content: { report: `Audit of v${tag}.10 passed and is signed off.` } },
        ]),
      )
      expect(parentRan.filter((id) => id === parentCallId)).toHaveLength(1)
      expect(await auditsOf(threadId)).toEqual([
        { version: `v${tag}.10`, toolCallId: `${sub.subagentRunId}:${sub.toolCallId}`, signedOffFor: 'alice' },
      ])
      // The subagent continued from its checkpoint: one model call before the pause, one for its answer.
      expect(subModelCalls.get(`Audit release v${tag}.10.`)).toBe(2)
      const values = subagentEvents(done.events)
      expect(values.find((v) => v.event.type === EventType.TOOL_CALL_RESULT)?.event).toMatchObject({
        toolCallId: sub.toolCallId,
      })
      expect(values.at(-1)?.event).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success' } })
    })

    it('a denied subagent approval reaches the subagent only; the parent approval still runs its tool', async () => {
      const threadId = newThreadId()
      const { parent, sub } = await paused(threadId, `v${tag}.11`)
      const auditorCallId = (sub.metadata?.subagent as { toolCallId: string }).toolCallId
      const done = await server.postRun(
        resumeInput(threadId, [resolved(parent), resolved(sub, { approved: false, reason: 'not yet' })]),
      )
      expect(toolResults(done.events)).toEqual(
        expect.arrayContaining([
          { toolCallId: parent.toolCallId, content: { parent: 'ran' } },
          {
            toolCallId: auditorCallId,
            content: { report: `Audit of v${tag}.11 passed, but the sign-off was denied.` },
          },
        ]),
      )
      expect(await auditsOf(threadId)).toEqual([])
    })

    it('a subagent pauses twice (an approval, then a question); each answer reaches it, finished steps never re-run', async () => {
      const threadId = newThreadId()
      const key = `rounds ${tag}`
      const call = JSON.stringify({ toolCalls: [{ name: 'rounds', args: { n: tag } }] })
      const first = await server.postRun(runInput(threadId, [userMessage(call)]))
      const [approval] = interruptsOf(first.events)
      expect(approval).toMatchObject({ reason: 'tool_call', metadata: { toolName: 'step_one' } })
      const runId = approval!.subagentRunId
      // The state change of the subagent's tool that ran before the pause is committed with the pause.
      const logOf = async () =>
        ((await server.store.getThread(threadKey('alice', threadId)))?.state as { log: string[] }).log
      expect(await logOf()).toEqual([expect.stringMatching(/^note subrun_/)])
      const second = await server.postRun(resumeInput(threadId, [resolved(approval!)]))
      const [question] = interruptsOf(second.events)
      expect(question).toMatchObject({
        reason: 'input_required',
        message: 'Which colour?',
        subagentRunId: runId,
        metadata: { toolName: 'pick', subagent: { name: 'rounds' } },
      })
      expect(subModelCalls.get(key)).toBe(2)
      const done = await server.postRun(resumeInput(threadId, [resolved(question!, { colour: 'teal' })]))
      const parentCall = (question!.metadata as { subagent: { toolCallId: string } }).subagent.toolCallId
      expect(toolResults(done.events)).toEqual([
        { toolCallId: parentCall, content: 'finished with {"noted":true} and {"one":"done"} and {"colour":"teal"}' },
      ])
      // Three model calls in all, step_one once, although the tool ran from the top three times.
      expect(subModelCalls.get(key)).toBe(3)
      expect(effects.filter((e) => e === `${runId}:${approval!.toolCallId}`)).toHaveLength(1)
      expect(await logOf()).toHaveLength(1)
    })

    it('concurrent resumes of a batch with a subagent approval admit once; the sign-off runs once', async () => {
      const threadId = newThreadId()
      const { parent, sub } = await paused(threadId, `v${tag}.12`)
      const same = Array.from({ length: 4 }, () => resumeInput(threadId, [resolved(parent), resolved(sub)]))
      const conflicting = ['a', 'b'].map((reason) =>
        resumeInput(threadId, [resolved(parent), resolved(sub, { approved: true, reason })]),
      )
      const responses = await Promise.all([...same, ...conflicting].map((input) => server.postRun(input)))
      expect(responses.filter((r) => r.status === 200)).toHaveLength(1)
      for (const r of responses)
        if (r.status !== 200) expect(['ALREADY_RESUMED', 'DECISION_CONFLICT']).toContain(r.error?.code)
      expect(await auditsOf(threadId)).toHaveLength(1)
      expect(parentRan.filter((id) => id === parent.toolCallId)).toHaveLength(1)
    })
  })
}

suite('subagents (SQLite)', 1, async () => {
  const server = await startInProcess({ agent: commandAgent(TOOLS, AGENT_OPTIONS) })
  return { server, dispose: () => server.dispose() }
})

const pg = await pgAvailable('subagents on PostgreSQL')
if (pg) {
  suite('subagents (PostgreSQL)', 2, async () => {
    const { schema, drop } = await createTestSchema()
    const store = await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS })
    const server = await startInProcess({ agent: commandAgent(TOOLS, AGENT_OPTIONS), store })
    return {
      server,
      dispose: async () => {
        await server.dispose()
        await drop()
      },
    }
  })
}
