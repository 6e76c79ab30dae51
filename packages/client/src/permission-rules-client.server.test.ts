/**
 * Remembered permissions through the client (docs/approvals.md#remembered-permissions), against the real agent server on
 * 127.0.0.1 (SQLite in a temporary directory, the scripted release assistant, whose `publish_release` allows
 * `remember: "thread"`). Nothing is mocked.
 */
import {
  interruptsOf,
  newThreadId,
  postRun,
  resumeInput,
  runInput,
  startTestServer,
  TOKENS,
} from '@interlude/agent-server/testing'
import type { TestServer } from '@interlude/agent-server/testing'
import { userMessage } from '@interlude/agent-server/testing'
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

/** alice asks for a release and approves publish_release with "remember in this thread" (and the deploy once). */
async function rememberedRelease(): Promise<string> {
  const threadId = newThreadId()
  const first = await postRun(server, runInput(threadId, [userMessage('deploy v2.1 to staging')]), {
    principal: 'alice',
  })
  const resume = interruptsOf(first.events).map((i) => ({
    interruptId: i.id,
    status: 'resolved' as const,
    payload: toolOf(i) === 'publish_release' ? { approved: true, remember: 'thread' } : { approved: true },
  }))
  await postRun(server, resumeInput(threadId, resume), { principal: 'alice' })
  return threadId
}

/** The tools the next "release" in the thread asks about. */
async function askedAgain(threadId: string): Promise<string[]> {
  const run = await postRun(server, runInput(threadId, [userMessage('release v2.2 to staging')]), {
    principal: 'alice',
  })
  return interruptsOf(run.events).map(toolOf)
}

describe('listPermissionRules / revokePermissionRule', () => {
  it('lists the rule an approval with remember made, narrows by thread, revokes it, and the next release asks again', async () => {
    const threadId = await rememberedRelease()
    const other = await rememberedRelease()
    const alice = as('alice')

    const inThread = await alice.listPermissionRules({ threadId })
    expect(inThread).toHaveLength(1)
    const rule = inThread[0]!
    expect(rule).toMatchObject({
      owner: 'alice',
      scope: 'thread',
      threadId,
      toolName: 'publish_release',
      createdBy: 'alice',
    })
    expect(Number.isNaN(Date.parse(rule.createdAt))).toBe(false)
    const all = await alice.listPermissionRules()
    expect(all.map((r) => r.threadId)).toEqual(expect.arrayContaining([threadId, other]))
    // Another principal sees none of them.
    expect((await as('bob').listPermissionRules()).map((r) => r.ruleId)).not.toContain(rule.ruleId)

    // With the rule, only deploy asks.
    expect(await askedAgain(threadId)).toEqual(['deploy'])
    await alice.revokePermissionRule(rule.ruleId)
    expect((await alice.listPermissionRules({ threadId })).map((r) => r.ruleId)).toEqual([])
    // The other thread's rule is untouched.
    expect(await alice.listPermissionRules({ threadId: other })).toHaveLength(1)
  })

  it('revoking twice, an unknown rule or another principal’s rule is NOT_FOUND (404) and changes nothing', async () => {
    const threadId = await rememberedRelease()
    const [rule] = await as('alice').listPermissionRules({ threadId })
    const foreign = await failure(as('bob').revokePermissionRule(rule!.ruleId))
    expect(foreign.code).toBe('NOT_FOUND')
    expect(foreign.status).toBe(404)
    expect(await as('alice').listPermissionRules({ threadId })).toHaveLength(1)

    await as('alice').revokePermissionRule(rule!.ruleId)
    expect((await failure(as('alice').revokePermissionRule(rule!.ruleId))).code).toBe('NOT_FOUND')
    expect((await failure(as('alice').revokePermissionRule('rule_that_never_was'))).code).toBe('NOT_FOUND')
  })

  it('a bad threadId is INVALID_INPUT, a missing token UNAUTHENTICATED', async () => {
    expect((await failure(as('alice').listPermissionRules({ threadId: 'a b' }))).code).toBe('INVALID_INPUT')
    const anonymous = createDecisionsClient({ baseUrl: server.baseUrl, token: 'not-a-token' })
    expect((await failure(anonymous.listPermissionRules())).code).toBe('UNAUTHENTICATED')
  })
})

describe('answers that are not a rule list', () => {
  const serve = scriptedServers()

  it('a malformed list is PROTOCOL_ERROR (invalid_answer), not a crash later', async () => {
    const fake = await serve((_req, res) => sendJson(res, 200, { items: [{ ruleId: 'r1', scope: 'forever' }] }))
    const error = await failure(createDecisionsClient({ baseUrl: fake.baseUrl }).listPermissionRules())
    expect(error.code).toBe('PROTOCOL_ERROR')
    expect(error.details).toMatchObject({ reason: 'invalid_answer' })
  })

  it('revoke sends DELETE to the encoded rule id; a 500 page without envelope is NETWORK_ERROR', async () => {
    const fake = await serve((_req, res) => res.writeHead(500, { 'Content-Type': 'text/html' }).end('<h1>oops</h1>'))
    const error = await failure(createDecisionsClient({ baseUrl: fake.baseUrl }).revokePermissionRule('r/1'))
    expect(error.code).toBe('NETWORK_ERROR')
    expect(error.message).not.toContain('oops')
    expect(fake.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['DELETE /api/agent/permission-rules/r%2F1'])
  })
})
