import type { Hono } from 'hono'
import { verifyLink } from '../../auth/decision-link-token.ts'
import type { LinkClaims } from '../../auth/decision-link-token.ts'
import type { DecisionLinkConfig } from '../../config/outside-options.ts'
import type { OutsideDecisions, OutsideOutcome, OutsideTarget } from '../../core/admission/outside-decisions.ts'
import type { ServerEnv } from '../env.ts'
import { confirmationPage, decidedPage, PAGE_HEADERS, refusalPage, votedPage } from '../decision-pages.ts'

/** The status of each answer (docs/protocol.md#decision-links). */
const STATUS = { decided: 200, used: 409, decided_elsewhere: 410, expired: 410, not_found: 404 } as const

function target(claims: LinkClaims): OutsideTarget {
  return { threadId: claims.threadId, interruptId: claims.interruptId, decider: claims.decider, action: claims.action }
}

function refusal(outcome: Exclude<OutsideOutcome, { kind: 'decided' | 'voted' }>): {
  status: 404 | 409 | 410
  html: string
} {
  switch (outcome.kind) {
    case 'used':
      return { status: STATUS.used, html: refusalPage('used') }
    case 'already_voted':
      return { status: STATUS.used, html: refusalPage('already_voted') }
    case 'gone':
      return outcome.why === 'expired'
        ? { status: STATUS.expired, html: refusalPage('expired') }
        : { status: STATUS.decided_elsewhere, html: refusalPage('decided', outcome.record) }
    case 'not_found':
      return { status: STATUS.not_found, html: refusalPage('not_found') }
  }
}

/**
 * Signed decision links (docs/approvals.md#deciding-outside-the-app): `GET {base}/decide/<token>` shows what the link
 * would decide and a form — it never decides, since mail scanners fetch links — and `POST` decides through the one
 * admission (`via: 'link'`, `decidedBy` the bound decider). The token is the credential: no session or bearer token.
 */
export function registerDecisionLinkRoutes(
  app: Hono<ServerEnv>,
  basePath: string,
  deps: { readonly links: DecisionLinkConfig; readonly outside: OutsideDecisions },
): void {
  const { links, outside } = deps
  const path = `${basePath}/decide/:token`

  app.get(path, async (c) => {
    const claims = verifyLink(links.key, c.req.param('token') ?? '')
    if (claims === undefined) return c.html(refusalPage('not_found'), STATUS.not_found, PAGE_HEADERS)
    const state = await outside.state(target(claims), claims)
    if (state.kind !== 'open') {
      const { status, html } = refusal(state)
      return c.html(html, status, PAGE_HEADERS)
    }
    return c.html(confirmationPage(state.batch, state.owner, claims.decider, claims.action), 200, PAGE_HEADERS)
  })

  app.post(path, async (c) => {
    const claims = verifyLink(links.key, c.req.param('token') ?? '')
    if (claims === undefined) return c.html(refusalPage('not_found'), STATUS.not_found, PAGE_HEADERS)
    const outcome = await outside.decide(target(claims), 'link', claims)
    if (outcome.kind === 'decided') return c.html(decidedPage(outcome.action), STATUS.decided, PAGE_HEADERS)
    if (outcome.kind === 'voted')
      return c.html(votedPage(outcome.action, outcome.pending), STATUS.decided, PAGE_HEADERS)
    const { status, html } = refusal(outcome)
    return c.html(html, status, PAGE_HEADERS)
  })
}
