import { BUDGET_INTERRUPT_REASON } from '@interlude/protocol'
import type { BudgetMetadata, Interrupt } from '@interlude/protocol'

const UNITS: Readonly<Record<string, string>> = { iterations: 'model calls', tokens: 'tokens' }

/**
 * An `interlude:budget` interrupt (docs/guardrails.md#budgets): how much of which budget the run used, as a meter, and
 * what the answer does — extend by an amount to go on, cancel to end the run here.
 */
export function BudgetNotice({ interrupt, id }: { interrupt: Interrupt; id: string }) {
  if (interrupt.reason !== BUDGET_INTERRUPT_REASON) return null
  const { kind, used, limit } = (interrupt.metadata ?? {}) as Partial<BudgetMetadata>
  if (typeof used !== 'number' || typeof limit !== 'number') return null
  const unit = UNITS[kind ?? ''] ?? kind ?? 'units'
  return (
    <div className="interlude-budget" role="note" aria-labelledby={`${id}-budget-heading`}>
      <span id={`${id}-budget-heading`} className="interlude-call-heading">
        Budget used: {used} of {limit} {unit}
      </span>
      <meter min={0} max={Math.max(limit, used)} value={used} aria-labelledby={`${id}-budget-heading`} />
      <p className="interlude-budget-hint">Extend it to let the run go on, or cancel to stop the run here.</p>
    </div>
  )
}
