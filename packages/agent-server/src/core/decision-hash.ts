import { createHash } from 'node:crypto'
import { canonicalDecision } from '@interlude/protocol'
import type { ResumeEntry } from '@interlude/protocol'

/**
 * The protocol's `decisionHash` (SHA-256 hex of the canonical decision), computed synchronously
 * with node:crypto: WebCrypto's digest resolves on the thread pool, and that extra event-loop hop
 * in the middle of admission let queued work run between the checks and the claim.
 */
export function decisionHashSync(entries: readonly ResumeEntry[]): string {
  return createHash('sha256').update(canonicalDecision(entries), 'utf8').digest('hex')
}
