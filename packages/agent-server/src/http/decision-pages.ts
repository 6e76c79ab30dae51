import type { DecisionLinkAction, DecisionRecord, VoteTally } from '@interlude/protocol'
import type { BatchRecord } from '../store/store.ts'
import { clientThreadId } from '../store/thread-key.ts'

/**
 * The plain HTML pages of decision links (docs/approvals.md#deciding-outside-the-app): no script, no external
 * resource, every value escaped — they must work in a mail client's browser and show nothing a reader could run.
 */

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)
}

/** The headers of every page: never cached or framed, no referrer (the token is in the URL), no script at all. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}
pre{background:#f4f4f4;padding:.75rem;overflow:auto;white-space:pre-wrap;word-break:break-word}
button{font-size:1rem;padding:.5rem 1.25rem}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>
`
}

const VERB: Readonly<Record<DecisionLinkAction, string>> = { approve: 'Approve', deny: 'Deny' }

function calls(batch: BatchRecord): string {
  return batch.interrupts
    .map(({ toolName, interrupt }) => {
      const args = interrupt.metadata?.arguments
      const shown = args === undefined ? '' : `<pre>${escapeHtml(JSON.stringify(args, null, 2))}</pre>`
      return `<h2>${escapeHtml(toolName)}</h2>\n<p>${escapeHtml(interrupt.message ?? '')}</p>\n${shown}`
    })
    .join('\n')
}

/** `GET`: what the link would do, and the form that does it. */
export function confirmationPage(
  batch: BatchRecord,
  owner: string,
  decider: string,
  action: DecisionLinkAction,
): string {
  const verb = VERB[action]
  const count = batch.interrupts.length
  const what = count === 1 ? 'this call' : `these ${count} calls`
  return page(
    `${verb} ${what}?`,
    `<p>Thread <strong>${escapeHtml(clientThreadId(batch.threadId))}</strong> of <strong>${escapeHtml(owner)}</strong>.
You decide as <strong>${escapeHtml(decider)}</strong>; the request expires ${escapeHtml(new Date(batch.expiresAt).toISOString())}.</p>
${calls(batch)}
<form method="post"><button type="submit">${verb}</button></form>
<p>Nothing is decided until you press the button. The link works once.</p>`,
  )
}

/** After a `POST` that decided. */
export function decidedPage(action: DecisionLinkAction): string {
  const done = action === 'approve' ? 'Approved' : 'Denied'
  return page(done, `<p>${done}. The agent continues; you can close this page.</p>`)
}

/** After a `POST` that cast a vote which settles nothing yet (docs/approvals.md#organisation-policies). */
export function votedPage(action: DecisionLinkAction, pending: readonly VoteTally[]): string {
  const done = action === 'approve' ? 'Approval recorded' : 'Denial recorded'
  const missing = pending.map((p) => `${p.approvals} of ${p.quorum} approvals`).join(', ')
  return page(done, `<p>Your vote is recorded. The request still waits for others (${escapeHtml(missing)}).</p>`)
}

/** A refusal: the link was used, the batch is gone, or the link is not valid (for this person, or any more). */
export function refusalPage(
  kind: 'used' | 'already_voted' | 'decided' | 'expired' | 'not_found',
  record?: DecisionRecord,
): string {
  switch (kind) {
    case 'used':
      return page('Link already used', '<p>This link was already used; a link decides once.</p>')
    case 'already_voted':
      return page('Already voted', '<p>You already voted on this request.</p>')
    case 'decided': {
      const by =
        record === undefined ? '' : ` by <strong>${escapeHtml(record.decidedBy)}</strong> (${escapeHtml(record.via)})`
      return page('Already decided', `<p>This request was already decided${by}.</p>`)
    }
    case 'expired':
      return page('Expired', '<p>This request or this link has expired.</p>')
    case 'not_found':
      return page('Not found', '<p>This link is not valid.</p>')
  }
}
