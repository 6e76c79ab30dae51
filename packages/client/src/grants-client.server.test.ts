/**
 * Bounded grants through the client (docs/approvals.md#bounded-grants), against the real agent server on 127.0.0.1
 * (SQLite in a temporary directory, the scripted release assistant, whose `deploy` to staging allows `grant`). Nothing
 * is mocked.
 */
import {
  interruptsOf,
  newThreadId,
  postRun,
  resumeInput,
  runInput,
  startTestServer,
  TOKENS,
  userMessage,
} from '@interlude/agent-server/testing'
import type { TestServer } from '@interlude/agent-server/testing'
import type { Interrupt } from '@interlude/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDecisionsClient } from './decisions-client.ts'
import { failure } from './test-utils/failure.ts'
import { scriptedServers, sendJson } from './test-utils/scripted-server.ts'

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server.dispose()
})

const as = (principal: keyof typeof TOKENS) =>
  createDecisionsClient({ baseUrl: server.baseUrl, token: TOKENS[principal] })
const toolOf = (i: Interrupt) => (i.metadata as { toolName: string }).toolName

/** alice deploys v2 to staging and approves the deploy with a thread grant of `calls`. */
async function grantedDeploy(calls: number): Promise<string> {
  const threadId = newThreadId()
  const first = await postRun(server, runInput(threadId, [userMessage('deploy v2 to staging')]), { principal: 'alice' })
  const resume = interruptsOf(first.events).map((i) => ({
    interruptId: i.id,
    status: 'resolved' as const,
    payload: toolOf(i) === 'deploy' ? { approved: true, grant: { calls, scope: 'thread' } } : { approved: true },
  }))
  await postRun(server, resumeInput(threadId, resume), { principal: 'alice' })
  return threadId
}

async function deployAgain(threadId: string): Promise<string[]> {
  const run = await postRun(server, runInput(threadId, [userMessage('deploy v2 to staging')]), { principal: 'alice' })
  return interruptsOf(run.events).map(toolOf)
}

describe('listGrants / revokeGrant', () => {
  it('lists the grant with its calls left, narrows by thread, revokes it, and the next deploy asks again', async () => {
    const threadId = await grantedDeploy(3)
    const alice = as('alice')
    const [grant] = await alice.listGrants({ threadId })
    expect(grant).toMatchObject({
      owner: 'alice',
      scope: 'thread',
      threadId,
      toolName: 'deploy',
      calls: 3,
      callsLeft: 3,
    })
    expect(await deployAgain(threadId)).toEqual([])
    expect((await alice.listGrants({ threadId }))[0]?.callsLeft).toBe(2)
    expect(await alice.listGrants({ threadId: newThreadId() })).toEqual([])
    expect((await as('bob').listGrants()).map((g) => g.grantId)).not.toContain(grant!.grantId)

    const foreign = await failure(as('bob').revokeGrant(grant!.grantId))
    expect(foreign.code).toBe('NOT_FOUND')
    await alice.revokeGrant(grant!.grantId)
    expect(await alice.listGrants({ threadId })).toEqual([])
    expect((await failure(alice.revokeGrant(grant!.grantId))).code).toBe('NOT_FOUND')
    expect(await deployAgain(threadId)).toEqual(['deploy'])
  })
})

describe('answers that are not a grant list', () => {
  const serve = scriptedServers()

  it('a malformed list is PROTOCOL_ERROR (invalid_answer); revoke sends DELETE to the encoded id', async () => {
    const fake = await serve((req, res) =>
      req.method === 'GET'
        ? sendJson(res, 200, { items: [{ grantId: 'g1', toolName: 'deploy', scope: 'thread', callsLeft: 'many' }] })
        : res.writeHead(204).end(),
    )
    const client = createDecisionsClient({ baseUrl: fake.baseUrl })
    const error = await failure(client.listGrants())
    expect(error.code).toBe('PROTOCOL_ERROR')
    expect(error.details).toMatchObject({ reason: 'invalid_answer' })
    await client.revokeGrant('g/1')
    expect(fake.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /api/agent/grants',
      'DELETE /api/agent/grants/g%2F1',
    ])
  })
})
