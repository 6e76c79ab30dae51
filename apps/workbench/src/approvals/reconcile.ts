import { errorFromFetch, errorFromResponse } from '@interlude/protocol'
import { authHeaders } from '../auth/session-token.ts'

/** What a person found when they checked the effect's system. */
export type ReconcileOutcome = 'succeeded' | 'failed'

/**
 * Settles an effect whose outcome is unknown, by hand: `POST {base}/threads/:threadId/effects/:toolCallId/reconcile`
 * with `{ outcome }` (the same route `useChat().reconcileEffect` calls). The route belongs to the
 * server; this is the workbench's thin call of it.
 */
export async function reconcileEffect(
  threadId: string,
  toolCallId: string,
  outcome: ReconcileOutcome,
  fetchImpl: typeof fetch = (...args) => globalThis.fetch(...args),
  /** The thread's owner when it is not the caller (thread ids are per owner, docs/protocol.md#thread-ids). */
  owner?: string,
): Promise<void> {
  const query = owner === undefined ? '' : `?owner=${encodeURIComponent(owner)}`
  let response: Response
  try {
    response = await fetchImpl(
      `/api/agent/threads/${encodeURIComponent(threadId)}/effects/${encodeURIComponent(toolCallId)}/reconcile${query}`,
      {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', ...authHeaders() },
        body: JSON.stringify({ outcome }),
      },
    )
  } catch (error) {
    throw errorFromFetch(error)
  }
  // The protocol's one mapping of an HTTP answer (docs/decisions.md#one-http-error-mapping-owned-by-the-protocol).
  if (!response.ok) throw await errorFromResponse(response)
}
