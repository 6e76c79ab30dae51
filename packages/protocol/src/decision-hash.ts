import type { ResumeEntry } from '@ag-ui/core'
import { canonicalJson } from './canonical-json.ts'

/**
 * The part of a resume entry that is the decision. `metadata` is excluded on purpose: AG-UI makes
 * resumes idempotent on (threadId, interruptId, status, payload), and client metadata (timestamps,
 * tab ids) must not turn an identical retry into a conflict.
 */
export function decisionOf(
  entries: readonly ResumeEntry[],
): { interruptId: string; status: string; payload?: unknown }[] {
  return [...entries]
    .map((e) =>
      e.payload === undefined
        ? { interruptId: e.interruptId, status: e.status }
        : { interruptId: e.interruptId, status: e.status, payload: e.payload as unknown },
    )
    .sort((a, b) => (a.interruptId < b.interruptId ? -1 : a.interruptId > b.interruptId ? 1 : 0))
}

/** Canonical JSON of the decision: entries sorted by interruptId, keys sorted. Stable under both orders. */
export function canonicalDecision(entries: readonly ResumeEntry[]): string {
  return canonicalJson(decisionOf(entries))
}

/**
 * SHA-256 (hex) of the canonical decision, via Web Crypto (Node >= 20 and browsers). A synchronous
 * implementation (e.g. `node:crypto` on a server's hot path) must hash `canonicalDecision(entries)`
 * as UTF-8 and produce the same hex digest; stores compare these strings.
 */
export async function decisionHash(entries: readonly ResumeEntry[]): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalDecision(entries))
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes)
  let hex = ''
  for (const b of new Uint8Array(digest)) hex += b.toString(16).padStart(2, '0')
  return hex
}
