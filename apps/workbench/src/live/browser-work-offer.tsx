import type { PendingToolCall } from '@interlude/react'

export interface BrowserWorkOfferProps {
  /** `useChat().pendingToolCalls`: browser calls the server still waits for that this tab did not start. */
  readonly calls: readonly PendingToolCall[]
  readonly disabled: boolean
  /** `true`: run them here once; `false`: report them unavailable (docs/client-contract.md#browser-tools). */
  readonly onSettle: (run: boolean) => void
}

/** The offer of browser work a reload left waiting: run it here once, or report it unavailable. */
export function BrowserWorkOffer({ calls, disabled, onSettle }: BrowserWorkOfferProps) {
  return (
    <section className="banner settle" aria-label="Browser work waiting" data-testid="pending-tool-calls">
      <p>
        The assistant is waiting for this browser to run {calls.map((call) => call.toolName).join(', ')}. Run it here
        once (another open tab may do it instead; the server takes the first answer), or report it unavailable.
      </p>
      <div className="batch-actions">
        <button type="button" className="primary" disabled={disabled} onClick={() => onSettle(true)}>
          Run it here
        </button>
        <button type="button" disabled={disabled} onClick={() => onSettle(false)}>
          Report unavailable
        </button>
      </div>
    </section>
  )
}
