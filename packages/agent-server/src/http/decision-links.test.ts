import { afterEach, describe, expect, it } from 'vitest'
import type { DecisionLink } from '@interlude/protocol'
import { until } from '../test-utils/child-server.ts'
import type { OutsideServer } from '../test-utils/outside-server.ts'
import { startOutsideServer } from '../test-utils/outside-server.ts'

/**
 * Signed decision links (docs/approvals.md#deciding-outside-the-app) on a real server over HTTP: `GET` shows, `POST`
 * decides once through the one admission (`via: "link"`, `decidedBy` the bound decider); replays, tampering, expiry
 * and a decider without the right are refused with plain pages and change nothing.
 */
let s: OutsideServer
afterEach(async () => {
  await s?.close()
})

const linkOf = (links: readonly DecisionLink[], action: 'approve' | 'deny') => links.find((l) => l.action === action)!

async function page(
  url: string,
  method: 'GET' | 'POST' = 'GET',
): Promise<{ status: number; html: string; headers: Headers }> {
  const response = await fetch(url, { method, redirect: 'manual' })
  return { status: response.status, html: await response.text(), headers: response.headers }
}

/** What a refusal must leave alone: the open batch, the thread's decisions, the deploys that ran. */
async function snapshot(threadKey: string) {
  const open = await s.server.store.getOpenBatch(threadKey)
  return { open: open?.batchId, decisions: await s.server.store.listDecisions(threadKey), ran: s.ran.length }
}

describe('decision links', () => {
  it('interrupt.opened carries one approve and one deny link per decider, until the batch expires', async () => {
    s = await startOutsideServer()
    const { key, interruptId, links } = await s.pause()
    const batch = (await s.server.store.getOpenBatch(key))!
    // deploy names approvers ['mgr'], so its requester eng never decides: mgr is the only decider.
    expect(links.map((l) => [l.decider, l.action, l.interruptId])).toEqual([
      ['mgr', 'approve', interruptId],
      ['mgr', 'deny', interruptId],
    ])
    for (const link of links) {
      expect(link.url.startsWith(`${s.server.url}/api/agent/decide/`)).toBe(true)
      expect(link.expiresAt).toBe(new Date(batch.expiresAt).toISOString())
    }
    expect(new Set(links.map((l) => l.url)).size).toBe(2)
  })

  it('GET shows the call and a form, escaped, and decides nothing', async () => {
    s = await startOutsideServer()
    const { key, links } = await s.pause({ env: '<script>alert(1)</script>' })
    const before = await snapshot(key)
    const shown = await page(linkOf(links, 'approve').url)
    expect(shown.status).toBe(200)
    expect(shown.headers.get('content-type')).toMatch(/^text\/html/)
    expect(shown.headers.get('cache-control')).toBe('no-store')
    expect(shown.headers.get('referrer-policy')).toBe('no-referrer')
    expect(shown.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(shown.html).toContain('<form method="post">')
    expect(shown.html).toContain('<h2>deploy</h2>')
    expect(shown.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(shown.html).not.toContain('<script')
    expect(shown.html).toContain('<strong>mgr</strong>')
    // Fetched twice (a mail scanner, then the person): still nothing decided.
    expect((await page(linkOf(links, 'approve').url)).status).toBe(200)
    expect(await snapshot(key)).toEqual(before)
  })

  it('POST approves once as the bound decider (via "link"); the turn continues; a replay is 409', async () => {
    s = await startOutsideServer()
    const { key, links } = await s.pause()
    const approve = linkOf(links, 'approve')
    const decided = await page(approve.url, 'POST')
    expect(decided.status).toBe(200)
    expect(decided.html).toContain('Approved')
    const record = await until(async () => (await s.server.store.listDecisions(key))[0], 'the decision record')
    expect(record).toMatchObject({ decidedBy: 'mgr', via: 'link' })
    expect(record.entries.map((e) => e.payload)).toEqual([{ approved: true }])
    const run = await until(async () => {
      const r = await s.server.store.getRun(key, record.runId)
      return r?.status === 'succeeded' ? r : undefined
    }, 'the continued turn')
    expect(run.kind).toBe('resume')
    expect(s.ran).toEqual([{ principal: 'eng', env: 'production' }])

    const after = await snapshot(key)
    const replay = await page(approve.url, 'POST')
    expect(replay.status).toBe(409)
    expect(replay.html).toContain('already used')
    expect((await page(approve.url)).status).toBe(409)
    // The other link of the batch: decided by someone (here, mgr's approve link) → 410, naming who decided.
    const deny = await page(linkOf(links, 'deny').url, 'POST')
    expect(deny.status).toBe(410)
    expect(deny.html).toContain('<strong>mgr</strong> (link)')
    expect(await snapshot(key)).toEqual(after)
  })

  it('two POSTs of one link at once: one decides, the other is refused', async () => {
    s = await startOutsideServer()
    const { key, links } = await s.pause()
    const url = linkOf(links, 'deny').url
    const answers = await Promise.all([page(url, 'POST'), page(url, 'POST')])
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409])
    const decisions = await s.server.store.listDecisions(key)
    expect(decisions).toHaveLength(1)
    expect(decisions[0]!.entries[0]!.payload).toEqual({ approved: false })
  })

  it('a link spent by another request between the reads of a POST is 409 (used), not 410', async () => {
    s = await startOutsideServer()
    const { key, links } = await s.pause()
    const url = linkOf(links, 'approve').url
    const store = s.server.store
    const read = store.getBatchOfInterrupt.bind(store)
    let other: Promise<{ status: number }> | undefined
    // The first POST is held at its read of the batch until a second POST of the same link has decided (a replica that
    // was faster): a link's use read before that hold saw the link unused, and the batch then decided — 410. Read after
    // the batch, the use is seen: 409. Every later read goes straight to the store.
    store.getBatchOfInterrupt = async (threadId, interruptId) => {
      if (other === undefined) {
        other = page(url, 'POST')
        await other
      }
      return read(threadId, interruptId)
    }
    const first = await page(url, 'POST')
    expect((await other!).status).toBe(200)
    expect(first.status).toBe(409)
    expect(first.html).toContain('already used')
    expect(await s.server.store.listDecisions(key)).toHaveLength(1)
  })

  it('a tampered link is 404; an expired one 410; a decider without the right 404 — nothing changes', async () => {
    s = await startOutsideServer()
    const { key, interruptId, links } = await s.pause()
    const before = await snapshot(key)
    const url = linkOf(links, 'approve').url
    const token = url.slice(url.lastIndexOf('/') + 1)
    const [payload, mac] = token.split('.') as [string, string]
    const base = url.slice(0, url.lastIndexOf('/') + 1)
    const flipped = (text: string) => `${text.slice(0, 5)}${text[5] === 'A' ? 'B' : 'A'}${text.slice(6)}`
    for (const bad of [`${flipped(payload)}.${mac}`, `${payload}.${flipped(mac)}`, payload, `${payload}.`, 'x']) {
      expect((await page(`${base}${bad}`, 'POST')).status).toBe(404)
      expect((await page(`${base}${bad}`)).status).toBe(404)
    }
    const claims = { linkId: 'lnk_forged', threadId: key, interruptId, action: 'approve' as const }
    const expired = s.forge({ ...claims, decider: 'mgr', expiresAt: Date.now() - 1 })
    expect((await page(`${base}${expired}`, 'POST')).status).toBe(410)
    expect((await page(`${base}${expired}`)).status).toBe(410)
    // Signed, but for principals who may not decide this batch: eng (four eyes) and bob (no right at all).
    for (const decider of ['eng', 'bob']) {
      const noRight = s.forge({ ...claims, decider, expiresAt: Date.now() + 60_000 })
      expect((await page(`${base}${noRight}`)).status).toBe(404)
      expect((await page(`${base}${noRight}`, 'POST')).status).toBe(404)
    }
    expect(await snapshot(key)).toEqual(before)
    expect(await s.server.store.decisionLinks.used('lnk_forged')).toBeUndefined()
  })

  it('a decider who lost the right gets 404 for its own link, and nothing changes', async () => {
    s = await startOutsideServer()
    const { key, links } = await s.pause()
    // The same database and secret; mgr is no longer an approver of the server.
    await s.restart({ approvers: [] })
    const before = await snapshot(key)
    const url = `${s.server.url}${new URL(linkOf(links, 'approve').url).pathname}`
    expect((await page(url)).status).toBe(404)
    expect((await page(url, 'POST')).status).toBe(404)
    expect(await snapshot(key)).toEqual(before)
    expect(before.open).toBeDefined()
  })
})
