import { afterEach, describe, expect, it } from 'vitest'
import type { DecisionLink, WebhookPayload } from '@interlude/protocol'
import { until } from '../test-utils/child-server.ts'
import type { OutsideServer } from '../test-utils/outside-server.ts'
import { startOutsideServer } from '../test-utils/outside-server.ts'

/**
 * Decision links under an organisation policy (docs/approvals.md#organisation-policies): each voter gets links, a
 * link is a vote through the one admission, the vote that reaches the quorum decides, and a voter votes once.
 */
let s: OutsideServer
afterEach(async () => {
  await s?.close()
})

const linkOf = (links: readonly DecisionLink[], decider: string, action: 'approve' | 'deny') =>
  links.find((l) => l.decider === decider && l.action === action)!.url

const post = async (url: string) => {
  const response = await fetch(url, { method: 'POST' })
  return { status: response.status, html: await response.text() }
}

describe('decision links and votes', () => {
  it('a quorum of two: the first link is a vote, the second decides; a voter cannot vote again', async () => {
    s = await startOutsideServer(
      { approvers: ['mgr', 'alice'] },
      { approvers: undefined, policy: { quorum: 2, of: ['mgr', 'alice'], notRequester: true } },
    )
    const { key, links } = await s.pause()
    expect(links.map((l) => `${l.decider}:${l.action}`)).toEqual([
      'alice:approve',
      'alice:deny',
      'mgr:approve',
      'mgr:deny',
    ])
    const first = await post(linkOf(links, 'mgr', 'approve'))
    expect(first.status).toBe(200)
    expect(first.html).toContain('Approval recorded')
    expect(first.html).toContain('1 of 2 approvals')
    expect((await s.server.store.getOpenBatch(key))?.batchId).toBeDefined()
    expect(s.ran).toEqual([])

    // mgr's other link: mgr already voted (a vote per voter, whatever the channel).
    const again = await post(linkOf(links, 'mgr', 'deny'))
    expect(again.status).toBe(409)
    expect(again.html).toContain('already voted')

    const second = await post(linkOf(links, 'alice', 'approve'))
    expect(second.status).toBe(200)
    expect(second.html).toContain('Approved')
    await until(() => s.ran.length === 1, 'the deploy')
    const records = await s.server.store.listDecisions(key)
    expect(records.every((r) => r.via === 'link')).toBe(true)
    expect(records.map((r) => r.decidedBy).sort()).toEqual(['alice', 'mgr'])
    // alice's deny link now meets a decided batch.
    expect((await post(linkOf(links, 'alice', 'deny'))).status).toBe(410)
  })

  it('reminders and escalations carry links for whoever decides then; the earlier decider gets 404', async () => {
    const policy = { of: ['bob'], escalate: { after: 0.05, to: ['mgr'] }, remind: { before: 3599.99 } }
    s = await startOutsideServer(
      { approvers: ['bob', 'mgr'], expirySweepMs: 20 },
      { approvers: undefined, timeout: 3600, policy },
    )
    const { threadId, key, links } = await s.pause()
    expect(links.map((l) => `${l.decider}:${l.action}`)).toEqual(['bob:approve', 'bob:deny'])
    const delivered = (type: WebhookPayload['type']) =>
      until(
        () =>
          s.receiver.received
            .map((r) => r.payload as WebhookPayload)
            .find((p) => p?.type === type && p.data.threadId === threadId),
        type,
      )
    // The reminder comes before the escalation (same sweep or earlier): bob still decides.
    const reminder = await delivered('interrupt.reminder')
    expect(reminder.data.links?.map((l) => `${l.decider}:${l.action}`)).toEqual(['bob:approve', 'bob:deny'])
    const escalated = await delivered('interrupt.escalated')
    expect(escalated.data.links?.map((l) => `${l.decider}:${l.action}`)).toEqual(['mgr:approve', 'mgr:deny'])

    expect((await post(linkOf(links, 'bob', 'approve'))).status).toBe(404)
    expect((await post(linkOf(escalated.data.links!, 'mgr', 'approve'))).status).toBe(200)
    await until(() => s.ran.length === 1, 'the deploy')
    const decided = (await s.server.store.listDecisions(key)).filter((r) => r.decidedBy === 'mgr')
    expect(decided.map((r) => r.via)).toEqual(['link'])
  })
})
