import type { InteractionConfig } from './interaction-plan.ts'
import type { ServerFeatures } from './server-features.ts'
import type { Transport } from './transport.ts'

/**
 * Browser work claimed before it runs (docs/client-contract.md#browser-tools): before this client runs (or reports
 * unavailable) browser calls, it claims each on the server with its claim id, one per runtime (one per tab). One
 * claim wins; a call another tab holds rejects with `TOOL_CALL_CLAIMED` (one already answered with
 * `TOOL_RESULTS_ALREADY_SUBMITTED`) and nothing runs here. The results then name the claim
 * (`forwardedProps.interlude.claimId`), so the server admits them only from the tab that holds the calls.
 */
export async function claimCalls(
  transport: Transport,
  features: ServerFeatures,
  threadId: string,
  toolCallIds: readonly string[],
  claimId: string,
): Promise<string | undefined> {
  if (!transport.claim || !features.available || toolCallIds.length === 0) return undefined
  try {
    for (const toolCallId of toolCallIds) await transport.claim(threadId, toolCallId, claimId)
  } catch (error) {
    // A plain AG-UI server has no claim route: its results go without a claim, as before.
    if (features.observe(error)) return undefined
    throw error
  }
  return claimId
}

/** The interaction's config with the claim its browser results were produced under. */
export function withClaim(config: InteractionConfig, claimId: string | undefined): InteractionConfig {
  if (claimId === undefined) return config
  return { ...config, forwardedProps: { ...config.forwardedProps, interlude: { claimId } } }
}
