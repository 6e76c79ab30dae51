import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DecisionRecord, Interrupt, PermissionRule, ResumeEntry } from '@interlude/protocol'
import { opsAgent } from '../test-utils/ops-agent.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { threadKey } from '../store/thread-key.ts'
import { decisionEvents } from '../test-utils/resume-entries.ts'

const toolOf = (i: Interrupt) => (i.metadata as { toolName: string }).toolName
const approve = (i: Interrupt, extra: Record<string, unknown> = {}): ResumeEntry => ({
  interruptId: i.id,
  status: 'resolved',
  payload: { approved: true, ...extra },
})

describe('remembered permissions with the demo agent (publish_release allows remember: "thread")', () => {
  let server: InProcessServer
  beforeAll(async () => {
    server = await startInProcess()
  })
  afterAll(async () => {
    await server.dispose()
  })

  /** Sends `text` and returns the interrupts of the pause, by tool name. */
  async function send(threadId: string, text: string, principal: 'alice' | 'bob' = 'alice') {
    const run = await server.postRun(runInput(threadId, [userMessage(text)]), { principal })
    expect(run.status).toBe(200)
    return { run, interrupts: interruptsOf(run.events) }
  }

  it('offers remember only where the tool allows it, and only the scopes it allows', async () => {
    const threadId = newThreadId()
    const { interrupts } = await send(threadId, 'deploy v2.1 to production')
    const publish = interrupts.find((i) => toolOf(i) === 'publish_release')!
    const deploy = interrupts.find((i) => toolOf(i) === 'deploy')!
    const props = (i: Interrupt) => (i.responseSchema as { properties: Record<string, { enum?: unknown }> }).properties
    expect(props(publish).remember?.enum).toEqual(['thread'])
    expect(props(deploy)).not.toHaveProperty('remember')
    // A scope the tool does not allow, or remember on a tool without it: refused by Ajv, nothing changes.
    for (const resume of [
      [approve(publish, { remember: 'principal' }), approve(deploy)],
      [approve(publish), approve(deploy, { remember: 'thread' })],
    ]) {
      const refused = await server.postRun(resumeInput(threadId, resume))
      expect(refused.status).toBe(422)
      expect(refused.error?.code).toBe('RESUME_PAYLOAD_INVALID')
    }
    expect(await server.store.listPermissionRules('alice', { threadId })).toEqual([])
  })

  it('remember "thread": the next release in the thread publishes without asking, with a via:"rule" record; revoking asks again', async () => {
    const threadId = newThreadId()
    const first = await send(threadId, 'deploy v2.1 to production')
    const publish = first.interrupts.find((i) => toolOf(i) === 'publish_release')!
    const deploy = first.interrupts.find((i) => toolOf(i) === 'deploy')!
    const resumed = await server.postRun(
      resumeInput(threadId, [approve(publish, { remember: 'thread' }), approve(deploy)]),
    )
    expect(resumed.status).toBe(200)

    const listed = await server.request(`/permission-rules?threadId=${threadId}`)
    expect(listed.status).toBe(200)
    const { items } = (await listed.json()) as { items: PermissionRule[] }
    expect(items).toEqual([
      {
        ruleId: expect.stringMatching(/^rule_/),
        owner: 'alice',
        scope: 'thread',
        threadId,
        toolName: 'publish_release',
        createdBy: 'alice',
        createdAt: expect.any(String),
        sourceInterruptId: publish.id,
        // publish_release names no approvers: the owner made it under the default rights.
        madeUnder: { role: 'owner' },
      },
    ])
    const ruleId = items[0]!.ruleId

    // Same thread: only deploy asks; publish ran, approved by the rule.
    const second = await send(threadId, 'release v2.2 to staging')
    expect(second.interrupts.map(toolOf)).toEqual(['deploy'])
    const ruled = decisionEvents(second.run.events)
    expect(ruled).toEqual([
      expect.objectContaining({
        via: 'rule',
        ruleId,
        decidedBy: 'alice',
        interruptIds: [],
        toolCallId: expect.any(String),
      }),
    ])
    const snapshot = (await (await server.request(`/threads/${threadId}`)).json()) as {
      decisions: DecisionRecord[]
      state: { releases: { version: string }[] }
    }
    // The rule approved publish, but it is held with its response until the deploy is decided
    // (docs/decisions.md#a-turn-keeps-its-promises); denying the deploy runs it.
    expect(snapshot.state.releases.map((r) => r.version)).toEqual(['v2.1'])
    expect(snapshot.decisions.map((d) => d.via)).toEqual(['run', 'rule'])
    expect(snapshot.decisions[1]).toEqual(ruled[0])
    await server.postRun(resumeInput(threadId, [approve(second.interrupts[0]!, { approved: false })]))
    const after = (await (await server.request(`/threads/${threadId}`)).json()) as typeof snapshot
    expect(after.state.releases.map((r) => r.version)).toEqual(['v2.1', 'v2.2'])

    // Another thread of the same owner still asks.
    const elsewhere = await send(newThreadId(), 'release v3.0')
    expect(elsewhere.interrupts.map(toolOf).sort()).toEqual(['deploy', 'publish_release'])

    // Another principal can neither see nor revoke it.
    expect(
      ((await (await server.request('/permission-rules', { principal: 'bob' })).json()) as { items: [] }).items,
    ).toEqual([])
    expect((await server.request(`/permission-rules/${ruleId}`, { method: 'DELETE', principal: 'bob' })).status).toBe(
      404,
    )

    const revoked = await server.request(`/permission-rules/${ruleId}`, { method: 'DELETE' })
    expect(revoked.status).toBe(204)
    const again = await server.request(`/permission-rules/${ruleId}`, { method: 'DELETE' })
    expect(again.status).toBe(404)
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND')
    const third = await send(threadId, 'release v2.3')
    expect(third.interrupts.map(toolOf).sort()).toEqual(['deploy', 'publish_release'])
  })
})

describe('remembered permissions by principal, bound to arguments', () => {
  let server: InProcessServer
  beforeAll(async () => {
    server = await startInProcess({
      agent: opsAgent({ remember: ['thread', 'principal'], rememberMatch: (args) => ({ service: args.service }) }),
    })
  })
  afterAll(async () => {
    await server.dispose()
  })

  async function restartIn(threadId: string, service: string, principal: 'alice' | 'bob' = 'alice') {
    const run = await server.postRun(runInput(threadId, [userMessage(`restart ${service}`)]), { principal })
    expect(run.status).toBe(200)
    return interruptsOf(run.events)
  }

  it('applies in every thread of the owner for the same arguments, and never to another principal', async () => {
    const thread = newThreadId()
    const [question] = await restartIn(thread, 'web')
    const answered = await server.postRun(resumeInput(thread, [approve(question!, { remember: 'principal' })]))
    expect(answered.status).toBe(200)

    // Another thread of alice: web restarts at once; db (other arguments) still asks.
    const other = newThreadId()
    expect(await restartIn(other, 'web')).toEqual([])
    expect((await restartIn(newThreadId(), 'db')).length).toBe(1)
    // bob's thread: the same call asks (the rule is alice's).
    expect((await restartIn(newThreadId(), 'web', 'bob')).length).toBe(1)

    const rules = await server.store.listPermissionRules('alice')
    expect(rules).toEqual([
      expect.objectContaining({ scope: 'principal', toolName: 'restart', argsMatch: { service: 'web' } }),
    ])
    expect(rules[0]).not.toHaveProperty('threadId')
    expect(await server.store.listPermissionRules('bob')).toEqual([])
    const decisions = await server.store.listDecisions(threadKey('alice', other))
    expect(decisions).toEqual([expect.objectContaining({ via: 'rule', ruleId: rules[0]!.ruleId })])
  })
})
