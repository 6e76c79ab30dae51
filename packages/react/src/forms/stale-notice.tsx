import { STALE_INTERRUPT_REASON } from '@interlude/protocol'
import type { Interrupt } from '@interlude/protocol'

/** A compact JSON value (strings as they are). */
function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/**
 * An `interlude:stale` re-ask (docs/approvals.md#stale-approvals): what the first approval was about (`before`) and
 * what the server found before running it (`after`), so the person decides again on the world as it is now.
 */
export function StaleNotice({ interrupt, id }: { interrupt: Interrupt; id: string }) {
  if (interrupt.reason !== STALE_INTERRUPT_REASON) return null
  const metadata = (interrupt.metadata ?? {}) as { before?: unknown; after?: unknown }
  return (
    <div className="interlude-stale" role="note" aria-labelledby={`${id}-stale-heading`}>
      <span id={`${id}-stale-heading`} className="interlude-call-heading">
        Changed while you decided
      </span>
      <dl className="interlude-stale-change">
        <div>
          <dt>Before</dt>
          <dd>
            <code>{show(metadata.before)}</code>
          </dd>
        </div>
        <div>
          <dt>Now</dt>
          <dd>
            <code>{show(metadata.after)}</code>
          </dd>
        </div>
      </dl>
    </div>
  )
}
