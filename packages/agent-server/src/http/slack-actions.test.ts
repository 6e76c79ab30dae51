import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { until } from '../test-utils/child-server.ts'
import type { FakeSlack } from '../test-utils/fake-slack.ts'
import { slackClick, startFakeSlack } from '../test-utils/fake-slack.ts'
import type { TestServer } from '../test-utils/harness.ts'
import { interruptsOf, newThreadId, postRun, runInput, startTestServer, userMessage } from '../test-utils/harness.ts'
import { call, rightsAgent } from '../test-utils/rights-agents.ts'
import { threadKey } from '../store/thread-key.ts'
import { buttonValue, parseButtonValue, slackButtonKey } from '../webhooks/slack-message.ts'
import type { ToolDefinition } from '../agent/tool.ts'

/**
 * Deciding in Slack (docs/approvals.md#slack) against a local fake Slack: the formatter posts Block Kit to the incoming
 * webhook; a signed click decides through the one admission (`via: "slack"`) and the message is replaced through the
 * click's `response_url`; a wrong signature, a stale timestamp or an unmapped user is 401 and changes nothing.
 */
const signingSecret = randomBytes(16).toString('hex')
const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

interface Setup {
  readonly server: TestServer
  readonly slack: FakeSlack
  readonly ran: { principal: string; env: unknown }[]
}

async function setup(deploy: Readonly<Record<string, unknown>> = {}): Promise<Setup> {
  const slack = await startFakeSlack()
  cleanups.push(() => slack.close())
  const { agent, ran } = rightsAgent({ deploy: deploy as Partial<ToolDefinition> })
  const server = await startTestServer({
    agent,
    approvers: deploy.policy === undefined ? ['mgr'] : ['mgr', 'bob'],
    slack: { signingSecret, users: { U_MGR: 'mgr', U_BOB: 'bob' }, webhookUrl: slack.webhookUrl },
    webhookDelivery: { pollMs: 20, retryBaseMs: 20, retryMaxMs: 200 },
  })
  cleanups.push(() => server.dispose())
  return { server, slack, ran }
}

/** eng's paused deploy and the Block Kit message the fake Slack received for it. */
async function pause(s: Setup, args: Record<string, unknown> = { env: 'production' }) {
  const threadId = newThreadId()
  const answer = await postRun(s.server, runInput(threadId, [userMessage(call('deploy', args))]), { principal: 'eng' })
  const interruptId = interruptsOf(answer.events)[0]!.id
  const post = await until(
    () => s.slack.postsTo('/services/').find((p) => JSON.stringify(p.body).includes(interruptId)),
    'the Block Kit message',
  )
  const blocks = post.body.blocks as Record<string, unknown>[]
  const actions = blocks.find((b) => b.type === 'actions')!.elements as Record<string, unknown>[]
  return { threadId, key: threadKey('eng', threadId), interruptId, post, blocks, buttons: actions }
}

/** The request Slack sends when `userId` clicks `button` of the message `blocks`. */
function clickOf(
  s: Setup,
  userId: string,
  button: Record<string, unknown>,
  blocks: readonly unknown[],
  options: { readonly secret?: string; readonly timestamp?: number } = {},
) {
  return slackClick(options.secret ?? signingSecret, {
    userId,
    actionId: button.action_id as string,
    value: button.value as string,
    responseUrl: s.slack.responseUrl,
    blocks,
    ...(options.timestamp !== undefined ? { timestamp: options.timestamp } : {}),
  })
}

async function click(s: Setup, body: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${s.server.baseUrl}/integrations/slack/actions`, { method: 'POST', headers, body })
}

async function snapshot(s: Setup, key: string) {
  return {
    open: (await s.server.store.getOpenBatch(key))?.batchId,
    decisions: await s.server.store.listDecisions(key),
    ran: s.ran.length,
    responses: s.slack.postsTo('/actions/').length,
  }
}

describe('Slack', () => {
  it('the formatter posts Block Kit with the call and its arguments, and two buttons naming the batch', async () => {
    const s = await setup()
    const { key, interruptId, post, blocks, buttons } = await pause(s, { env: 'prod <&> "eu"' })
    // An incoming webhook reads no Standard Webhooks signature: none is sent. The post is an outbox delivery.
    expect(post.headers['webhook-signature']).toBeUndefined()
    const rows = await s.server.store.listOutbox()
    expect(rows.map((r) => [r.endpoint, r.eventType])).toEqual([[s.slack.webhookUrl, 'interrupt.opened']])
    expect(JSON.parse(rows[0]!.payload)).toEqual(post.body)
    expect(post.body.text).toBe('Approval needed: deploy (asked by eng)')
    expect(blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Approval needed', emoji: false } })
    const text = JSON.stringify(blocks)
    expect(text).toContain('*deploy*')
    // Arguments in a code block, Slack's reserved characters escaped.
    expect(text).toContain('\\"env\\": \\"prod &lt;&amp;&gt; \\\\\\"eu\\\\\\"\\"')
    expect(buttons.map((b) => [b.action_id, b.style])).toEqual([
      ['interlude_approve', 'primary'],
      ['interlude_deny', 'danger'],
    ])
    expect(buttons.map((b) => parseButtonValue(slackButtonKey(signingSecret), b.value))).toEqual([
      { threadId: key, interruptId, action: 'approve' },
      { threadId: key, interruptId, action: 'deny' },
    ])
  })

  it('a signed click decides as the mapped principal (via "slack"); the message loses its buttons', async () => {
    const s = await setup()
    const { key, blocks, buttons } = await pause(s)
    const signed = clickOf(s, 'U_MGR', buttons[0]!, blocks)
    expect((await click(s, signed.body, signed.headers)).status).toBe(200)
    const record = await until(async () => (await s.server.store.listDecisions(key))[0], 'the decision record')
    expect(record).toMatchObject({ decidedBy: 'mgr', via: 'slack' })
    expect(record.entries.map((e) => e.payload)).toEqual([{ approved: true }])
    await until(async () => (await s.server.store.getRun(key, record.runId))?.status === 'succeeded', 'the turn')
    expect(s.ran).toEqual([{ principal: 'eng', env: 'production' }])

    const update = await until(() => s.slack.postsTo('/actions/')[0], 'the response_url update')
    expect(update.body.replace_original).toBe(true)
    expect(update.body.text).toBe('Approved by mgr.')
    const updated = update.body.blocks as Record<string, unknown>[]
    expect(updated.some((b) => b.type === 'actions')).toBe(false)
    expect(updated.slice(0, -1)).toEqual(blocks.filter((b) => b.type !== 'actions'))

    // A second click (Deny, by the same person) finds the batch decided: the message says by whom.
    const again = clickOf(s, 'U_MGR', buttons[1]!, blocks)
    expect((await click(s, again.body, again.headers)).status).toBe(200)
    const second = await until(() => s.slack.postsTo('/actions/')[1], 'the second update')
    expect(second.body.text).toBe('Already decided by mgr (slack).')
    expect(await s.server.store.listDecisions(key)).toHaveLength(1)
  })

  it('a wrong signature, a stale timestamp or an unmapped user is 401 and changes nothing', async () => {
    const s = await setup()
    const { key, blocks, buttons } = await pause(s)
    const before = await snapshot(s, key)
    const approve = buttons[0]!
    const seconds = Math.floor(Date.now() / 1000)
    const good = clickOf(s, 'U_MGR', approve, blocks)
    const wrongSecret = clickOf(s, 'U_MGR', approve, blocks, { secret: 'not-the-signing-secret' })
    const tamperedBody = good.body.replace('U_MGR', 'U_BOB')
    // Just past the window behind (time only moves on, so it stays stale), and well past it ahead: a second boundary
    // passing before that request is checked must not bring it back inside the window.
    const stale = clickOf(s, 'U_MGR', approve, blocks, { timestamp: seconds - 301 })
    const future = clickOf(s, 'U_MGR', approve, blocks, { timestamp: seconds + 360 })
    const unmapped = clickOf(s, 'U_STRANGER', approve, blocks)
    const { 'x-slack-signature': _, ...unsigned } = good.headers
    for (const [body, headers] of [
      [wrongSecret.body, wrongSecret.headers],
      [tamperedBody, good.headers],
      [stale.body, stale.headers],
      [future.body, future.headers],
      [unmapped.body, unmapped.headers],
      [good.body, unsigned],
    ] as const) {
      const answer = await click(s, body, headers)
      expect(answer.status).toBe(401)
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED')
    }
    expect(await snapshot(s, key)).toEqual(before)
  })

  it('a button this server did not post (its value forged or unsigned) is 400 and changes nothing', async () => {
    const s = await setup()
    const { key, interruptId, blocks, buttons } = await pause(s)
    const before = await snapshot(s, key)
    const approve = buttons[0]!
    const named = { threadId: key, interruptId, action: 'approve' } as const
    const wire = JSON.parse(approve.value as string) as Record<string, string>
    for (const value of [
      // Names the batch, as someone posting to the incoming webhook could, but signed with another key or not at all.
      buttonValue(slackButtonKey('a guess'), named),
      JSON.stringify({ t: wire.t, i: wire.i, a: wire.a }),
      // This server's deny button's mac on an approve value.
      JSON.stringify({ ...wire, m: (JSON.parse(buttons[1]!.value as string) as Record<string, string>).m }),
    ]) {
      const signed = clickOf(s, 'U_MGR', { ...approve, value }, blocks)
      const answer = await click(s, signed.body, signed.headers)
      expect(answer.status).toBe(400)
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('INVALID_INPUT')
    }
    expect(await snapshot(s, key)).toEqual(before)
  })

  it('a mapped user who may not decide is told so, privately; nothing changes', async () => {
    const s = await setup()
    const { key, blocks, buttons } = await pause(s)
    const before = await snapshot(s, key)
    const signed = clickOf(s, 'U_BOB', buttons[0]!, blocks)
    expect((await click(s, signed.body, signed.headers)).status).toBe(200)
    const update = await until(() => s.slack.postsTo('/actions/')[0], 'the ephemeral answer')
    expect(update.body).toMatchObject({ response_type: 'ephemeral', replace_original: false })
    expect(await snapshot(s, key)).toEqual({ ...before, responses: 1 })
  })

  it('under a quorum a click is a vote: the buttons stay until the quorum; a second vote is refused', async () => {
    const s = await setup({ approvers: undefined, policy: { quorum: 2, of: ['mgr', 'bob'] } })
    const { key, blocks, buttons } = await pause(s)
    const first = clickOf(s, 'U_MGR', buttons[0]!, blocks)
    expect((await click(s, first.body, first.headers)).status).toBe(200)
    const voted = await until(() => s.slack.postsTo('/actions/')[0], 'the vote message')
    expect(voted.body).toMatchObject({ replace_original: false, text: 'mgr approved; waiting (1 of 2 approvals).' })
    expect((await s.server.store.getOpenBatch(key))?.batchId).toBeDefined()

    const again = clickOf(s, 'U_MGR', buttons[1]!, blocks)
    expect((await click(s, again.body, again.headers)).status).toBe(200)
    const refused = await until(() => s.slack.postsTo('/actions/')[1], 'the refusal')
    expect(refused.body).toMatchObject({ response_type: 'ephemeral', text: 'You already voted on this request.' })

    const second = clickOf(s, 'U_BOB', buttons[0]!, blocks)
    expect((await click(s, second.body, second.headers)).status).toBe(200)
    const decided = await until(() => s.slack.postsTo('/actions/')[2], 'the outcome')
    expect(decided.body).toMatchObject({ replace_original: true, text: 'Approved by bob.' })
    await until(() => s.ran.length === 1, 'the deploy')
    const records = await s.server.store.listDecisions(key)
    expect(records.map((r) => [r.decidedBy, r.via]).sort()).toEqual([
      ['bob', 'slack'],
      ['mgr', 'slack'],
    ])
  })
})
