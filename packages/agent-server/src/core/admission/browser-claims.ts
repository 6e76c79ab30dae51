import { InterludeError } from '@interlude/protocol'
import type { ToolCallRecord } from '../../store/store.ts'
import { EXTERNAL_UNKNOWN_RESULT } from './external-results.ts'

/**
 * Browser work claimed before it runs (docs/client-contract.md#browser-tools): a tab claims a browser call (the claim
 * route) before its handler runs, and names that claim in `forwardedProps.interlude.claimId` of the result set. The
 * claim is the ledger's attempt (`attemptRunId`), read with the calls admission already has.
 */

/** The claim a RunAgentInput's browser results were produced under, if it names one. */
export function claimIdOf(forwardedProps: unknown): string | undefined {
  if (typeof forwardedProps !== 'object' || forwardedProps === null) return undefined
  const interlude = (forwardedProps as { interlude?: unknown }).interlude
  if (typeof interlude !== 'object' || interlude === null) return undefined
  const claimId = (interlude as { claimId?: unknown }).claimId
  return typeof claimId === 'string' ? claimId : undefined
}

/**
 * Results for browser calls are admitted only from the claim that holds them: a call another claim holds is
 * `TOOL_CALL_CLAIMED`; a result set that names a claim the call does not have is `TOOL_CALL_NOT_CLAIMED`. A result
 * set that names no claim for a call nobody claimed is admitted, so a plain AG-UI client keeps working.
 */
export function checkBrowserClaims(calls: readonly ToolCallRecord[], claimId: string | undefined): void {
  const foreign = calls.filter((c) => c.kind === 'client' && c.attemptRunId !== undefined && c.attemptRunId !== claimId)
  if (foreign.length > 0)
    throw new InterludeError('TOOL_CALL_CLAIMED', 'Another client claimed these browser tool calls.', {
      details: { toolCallIds: foreign.map((c) => c.toolCallId) },
    })
  const unclaimed =
    claimId === undefined ? [] : calls.filter((c) => c.kind === 'client' && c.attemptRunId === undefined)
  if (unclaimed.length > 0)
    throw new InterludeError('TOOL_CALL_NOT_CLAIMED', 'Claim these browser tool calls before sending their results.', {
      details: { toolCallIds: unclaimed.map((c) => c.toolCallId) },
    })
}

/**
 * What closes a call still waiting for its result when a new user message arrives. A dispatched external call or a
 * claimed browser call may have happened: `unknown` (an unsettled effect the owner reconciles). A browser call nobody
 * claimed never ran, nor did a free call the response held: `cancelled`.
 */
export function closingResult(call: ToolCallRecord): { status: 'unknown' | 'cancelled'; result: string } {
  if (call.status === 'pending') return { status: 'cancelled', result: HELD_CLOSED }
  if (call.kind === 'external' || call.attemptRunId !== undefined)
    return { status: 'unknown', result: EXTERNAL_UNKNOWN_RESULT }
  return {
    status: 'cancelled',
    result: JSON.stringify({ status: 'cancelled', message: 'No result arrived before the next message.' }),
  }
}

/** What the model reads for a held call a new message overtook (docs/decisions.md#a-turn-keeps-its-promises). */
const HELD_CLOSED = JSON.stringify({
  status: 'cancelled',
  message: 'This call waited for another call of the same response; a new message came first. It did not run.',
})
