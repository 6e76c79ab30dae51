import type { AwaitingExternalCall } from '@interlude/protocol'

/**
 * Calls waiting for another system's result (docs/client-contract.md#external-calls): which tool, and who may post
 * its result — the thread's owner and the tool's `resultFrom` principals. The chat follows the thread meanwhile, so
 * the answer appears here without a reload.
 */
export function AwaitingExternal({ calls }: { readonly calls: readonly AwaitingExternalCall[] }) {
  if (calls.length === 0) return null
  return (
    <section
      className="banner awaiting-external"
      aria-label="Waiting for another system"
      data-testid="awaiting-external"
    >
      <ul>
        {calls.map((call) => (
          <li key={call.toolCallId} data-tool-call-id={call.toolCallId}>
            <strong>{call.toolName}</strong> waits for a result from{' '}
            <span data-testid="result-from">
              {call.resultFrom && call.resultFrom.length > 0
                ? `${call.resultFrom.join(', ')} (or you)`
                : 'the system it was sent to (posted by you or a listed principal)'}
            </span>
            .
          </li>
        ))}
      </ul>
    </section>
  )
}
