import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DecisionRecord, Grant, Interrupt, ResumeEntry } from '@interlude/protocol'
import { postDecision } from '../test-utils/decisions.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { decisionEvents, refusedUnchanged, resolved } from '../test-utils/resume-entries.ts'

/** Bounded grants with the demo agent (docs/demo-agent.md#bounded-grants): `deploy` to staging allows `grant`. */

const toolOf = (i: Interrupt) => (i.metadata as { toolName: string }).toolName
const approve = (i: Interrupt, extra: Record<string, unknown> = {}): ResumeEntry =>
  resolved(i, { approved: true, ...extra })

let clock = Date.parse('2026-12-02T12:00:00Z')
let server: InProcessServer
beforeAll(async () => {
  server = await startInProcess({ now: () => clock })
})
afterAll(async () => {
  await server.dispose()
})

async function send(threadId: string, text: string, principal: 'alice' | 'bob' = 'alice') {
  const run = await server.postRun(runInput(threadId, [userMessage(text)]), { principal })
  expect(run.status).toBe(200)
  return { run, interrupts: interruptsOf(run.events) }
}

/** A thread whose first "deploy vX to staging" was approved, publish and deploy, the deploy with `grant`. */
async function granted(grant: Record<string, unknown>, version = 'v2') {
  const threadId = newThreadId()
  const first = await send(threadId, `deploy ${version} to staging`)
  const publish = first.interrupts.find((i) => toolOf(i) === 'publish_release')!
  const deploy = first.interrupts.find((i) => toolOf(i) === 'deploy')!
  const answered = await server.postRun(resumeInput(threadId, [approve(publish), approve(deploy, { grant })]))
  expect(answered.status).toBe(200)
  return { threadId, deploy }
}

async function listGrants(query = '', principal: 'alice' | 'bob' = 'alice'): Promise<Grant[]> {
  const listed = await server.request(`/grants${query}`, { principal })
  expect(listed.status).toBe(200)
  return ((await listed.json()) as { items: Grant[] }).items
}

describe('bounded grants with the demo agent', () => {
  it('offers grant on a staging deploy only, with the tool’s scopes and at most 10 calls', async () => {
    const { interrupts } = await send(newThreadId(), 'deploy v2 to staging')
    const props = (i: Interrupt) => (i.responseSchema as { properties: Record<string, unknown> }).properties
    const grant = props(interrupts.find((i) => toolOf(i) === 'deploy')!).grant as {
      properties: { calls: unknown; scope: unknown }
    }
    expect(grant.properties.calls).toEqual({ type: 'integer', minimum: 1, maximum: 10, title: 'Calls' })
    expect(grant.properties.scope).toEqual({ type: 'string', enum: ['thread', 'principal'], title: 'Where' })
    expect(props(interrupts.find((i) => toolOf(i) === 'publish_release')!)).not.toHaveProperty('grant')
    const production = await send(newThreadId(), 'deploy v2 to production')
    expect(props(production.interrupts.find((i) => toolOf(i) === 'deploy')!)).not.toHaveProperty('grant')
  })

  it('a grant of 3 (thread): three staging deploys run without a pause, the fourth asks, another thread asks', async () => {
    const { threadId, deploy } = await granted({ calls: 3, scope: 'thread' })
    const [listed] = await listGrants(`?threadId=${threadId}`)
    expect(listed).toEqual({
      grantId: expect.stringMatching(/^grant_/),
      owner: 'alice',
      scope: 'thread',
      threadId,
      toolName: 'deploy',
      calls: 3,
      callsLeft: 3,
      createdBy: 'alice',
      createdAt: new Date(clock).toISOString(),
      sourceInterruptId: deploy.id,
      madeUnder: { role: 'owner' },
    })
    const grantId = listed!.grantId
    for (let n = 1; n <= 3; n++) {
      const again = await send(threadId, 'deploy v2 to staging')
      expect(again.interrupts).toEqual([])
      expect(decisionEvents(again.run.events)).toEqual([
        expect.objectContaining({ threadId, via: 'grant', grantId, decidedBy: 'alice', interruptIds: [] }),
      ])
      expect((await listGrants(`?threadId=${threadId}`))[0]?.callsLeft ?? 0).toBe(3 - n)
    }
    const snapshot = (await (await server.request(`/threads/${threadId}`)).json()) as {
      decisions: DecisionRecord[]
      state: { deployments: { environment: string }[] }
    }
    expect(snapshot.state.deployments).toHaveLength(4)
    expect(snapshot.decisions.map((d) => d.via)).toEqual(['run', 'grant', 'grant', 'grant'])
    expect(snapshot.decisions.map((d) => d.threadId)).toEqual([threadId, threadId, threadId, threadId])
    // Used up: the fourth asks, and the grant is listed no more.
    expect((await send(threadId, 'deploy v2 to staging')).interrupts.map(toolOf)).toEqual(['deploy'])
    expect(await listGrants()).not.toContainEqual(expect.objectContaining({ grantId }))
  })

  it('a thread grant asks in another thread; a principal grant does not; production always asks', async () => {
    const { threadId } = await granted({ calls: 2, scope: 'thread' }, 'v3')
    const other = newThreadId()
    await send(other, 'deploy v3 to staging').then(async ({ interrupts }) => {
      expect(interrupts.map(toolOf).sort()).toEqual(['deploy', 'publish_release'])
      // Answered with a principal grant: the first thread's own grant is still there.
      const [publish, deploy] = [...interrupts].sort((a, b) => toolOf(b).localeCompare(toolOf(a)))
      const answer = [approve(publish!), approve(deploy!, { grant: { calls: 1, scope: 'principal' } })]
      expect((await server.postRun(resumeInput(other, answer))).status).toBe(200)
    })
    // A third thread: publish asks (v3 is not published there), the deploy runs on the principal grant, used up.
    const third = await send(newThreadId(), 'deploy v3 to staging')
    expect(third.interrupts.map(toolOf)).toEqual(['publish_release'])
    expect(decisionEvents(third.run.events)).toEqual([expect.objectContaining({ via: 'grant' })])
    expect(await listGrants()).not.toContainEqual(expect.objectContaining({ scope: 'principal' }))
    expect((await send(threadId, 'deploy v3 to production')).interrupts.map(toolOf).sort()).toEqual([
      'deploy',
      'publish_release',
    ])
  })

  it('revoke: the next deploy asks; revoking again, or by another principal, is 404', async () => {
    const { threadId } = await granted({ calls: 3, scope: 'thread' }, 'v4')
    expect((await send(threadId, 'deploy v4 to staging')).interrupts).toEqual([])
    const [grant] = await listGrants(`?threadId=${threadId}`)
    expect(grant?.callsLeft).toBe(2)
    expect(await listGrants('', 'bob')).toEqual([])
    const path = `/grants/${grant!.grantId}`
    expect((await server.request(path, { method: 'DELETE', principal: 'bob' })).status).toBe(404)
    expect((await server.request(path, { method: 'DELETE' })).status).toBe(204)
    const again = await server.request(path, { method: 'DELETE' })
    expect(again.status).toBe(404)
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND')
    expect((await send(threadId, 'deploy v4 to staging')).interrupts.map(toolOf)).toEqual(['deploy'])
  })

  it('refuses a bad grant with a typed 422 and creates nothing; the batch stays open', async () => {
    const threadId = newThreadId()
    const { interrupts } = await send(threadId, 'deploy v5 to staging')
    const publish = interrupts.find((i) => toolOf(i) === 'publish_release')!
    const deploy = interrupts.find((i) => toolOf(i) === 'deploy')!
    const past = new Date(clock - 1000).toISOString()
    for (const extra of [
      { grant: { calls: 0, scope: 'thread' } },
      { grant: { calls: 11, scope: 'thread' } },
      { grant: { calls: 1.5, scope: 'thread' } },
      { grant: { calls: 2 } },
      { grant: { calls: 2, scope: 'everywhere' } },
      { grant: { calls: 2, scope: 'thread', until: past } },
      { grant: { calls: 2, scope: 'thread', until: 'tomorrow' } },
      { grant: { calls: 2, scope: 'thread', match: { version: 'v5' } } },
      { grant: { calls: 2, scope: 'thread', extra: true } },
      { approved: false, grant: { calls: 2, scope: 'thread' } },
    ]) {
      const refused = await refusedUnchanged(server.dbPath, () =>
        server.postRun(resumeInput(threadId, [approve(publish), approve(deploy, extra)])),
      )
      expect(refused.status, JSON.stringify(extra)).toBe(422)
      expect(refused.error?.code).toBe('RESUME_PAYLOAD_INVALID')
    }
    // A grant on publish_release (which offers none) is refused the same way.
    const onPublish = await server.postRun(
      resumeInput(threadId, [approve(publish, { grant: { calls: 1, scope: 'thread' } }), approve(deploy)]),
    )
    expect(onPublish.status).toBe(422)
    expect(await listGrants()).not.toContainEqual(expect.objectContaining({ threadId }))
    // The batch is still open: a good answer is admitted.
    const good = await server.postRun(
      resumeInput(threadId, [approve(publish), approve(deploy, { grant: { calls: 1, scope: 'thread' } })]),
    )
    expect(good.status).toBe(200)
    expect(await listGrants(`?threadId=${threadId}`)).toHaveLength(1)
  })

  it('a grant past its until does not apply (the server’s clock moved past it)', async () => {
    const until = new Date(clock + 60_000).toISOString()
    const { threadId } = await granted({ calls: 5, scope: 'thread', until }, 'v6')
    const [grant] = await listGrants(`?threadId=${threadId}`)
    expect(grant?.until).toBe(until)
    expect((await send(threadId, 'deploy v6 to staging')).interrupts).toEqual([])
    clock += 60_000
    try {
      expect((await send(threadId, 'deploy v6 to staging')).interrupts.map(toolOf)).toEqual(['deploy'])
      expect(await listGrants(`?threadId=${threadId}`)).toEqual([])
    } finally {
      clock += 1
    }
  })
})

describe('a grant applies only while its maker could still decide the call', () => {
  it('a grant made by an approver stops applying once that principal may no longer decide', async () => {
    const withMgr = await startInProcess({ approvers: ['mgr'] })
    const threadId = newThreadId()
    try {
      const first = await withMgr.postRun(runInput(threadId, [userMessage('deploy v7 to staging')]))
      const answer = interruptsOf(first.events).map((i) =>
        toolOf(i) === 'deploy' ? approve(i, { grant: { calls: 3, scope: 'thread' } }) : approve(i),
      )
      const body = { runId: `r-${threadId}`, resume: answer }
      expect((await postDecision(withMgr, threadId, body, { principal: 'mgr', owner: 'alice' })).status).toBe(202)
      await waitIdle(withMgr, threadId)
      const grants = await withMgr.store.grants!.list('alice', { now: Date.now() })
      expect(grants).toEqual([expect.objectContaining({ createdBy: 'mgr', madeUnder: { role: 'decider' } })])
      // Its maker lists it on the owner's behalf (`?owner=`); another principal does not see it.
      const byMgr = await withMgr.request('/grants', { principal: 'mgr', owner: 'alice' })
      expect(((await byMgr.json()) as { items: Grant[] }).items.map((g) => g.grantId)).toEqual([grants[0]!.grantId])
      const byBob = await withMgr.request('/grants', { principal: 'bob', owner: 'alice' })
      expect(((await byBob.json()) as { items: Grant[] }).items).toEqual([])
    } finally {
      await withMgr.close()
    }
    // The same database without `--approver mgr`: mgr's grant no longer approves alice's deploy.
    const without = await startInProcess({ dbPath: withMgr.dbPath })
    try {
      const again = await without.postRun(runInput(threadId, [userMessage('deploy v7 to staging')]))
      expect(interruptsOf(again.events).map(toolOf)).toEqual(['deploy'])
      expect(decisionEvents(again.events)).toEqual([])
    } finally {
      await without.dispose()
    }
  })
})

/** Waits until the thread's decided run (continued in the background) has finished. */
async function waitIdle(on: InProcessServer, threadId: string): Promise<void> {
  for (;;) {
    const snapshot = (await (await on.request(`/threads/${threadId}`)).json()) as { status?: string }
    if (snapshot.status === 'idle') return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
