import type { UnsettledEffect } from '@interlude/protocol'
import { useState } from 'react'
import type { ReconcileOutcome } from './reconcile.ts'
import { describeError } from './use-pending-batches.ts'

export interface UnknownEffectsProps {
  readonly effects: readonly UnsettledEffect[]
  readonly disabled?: boolean
  /** Records what the person found (the server's reconcile route); rejects with its typed error. */
  readonly onReconcile: (toolCallId: string, outcome: ReconcileOutcome) => Promise<unknown>
}

/**
 * Effects whose outcome is unknown (the process died while the tool ran; docs/architecture.md#unknown-effects).
 * They are shown as unknown — never as failed, never re-run — and a person who checked the system the tool acts on
 * records what happened. Used by the chat (`useChat().reconcileEffect`) and the Approvals view.
 */
export function UnknownEffects({ effects, disabled = false, onReconcile }: UnknownEffectsProps) {
  const [busy, setBusy] = useState<string | undefined>()
  const [problem, setProblem] = useState<string | undefined>()
  if (effects.length === 0) return null
  const settle = (toolCallId: string, outcome: ReconcileOutcome) => {
    setBusy(toolCallId)
    setProblem(undefined)
    onReconcile(toolCallId, outcome)
      .catch((reason: unknown) => setProblem(describeError(reason)))
      .finally(() => setBusy(undefined))
  }
  return (
    <section className="unknown-effects" aria-label="Effects with an unknown outcome">
      <h3>Outcome unknown</h3>
      <p className="muted">
        These steps started but their outcome was never recorded. They are not run again. Check the system they act on,
        then record what happened.
      </p>
      <ul>
        {effects.map((effect) => (
          <li key={effect.toolCallId} data-testid="unknown-effect" data-tool-call-id={effect.toolCallId}>
            <code>{effect.toolName}</code> <span className="muted">({effect.toolCallId})</span>{' '}
            <span className="tool-state-unknown">outcome unknown</span>
            <span className="batch-actions">
              <button
                type="button"
                disabled={disabled || busy !== undefined}
                onClick={() => settle(effect.toolCallId, 'succeeded')}
              >
                It happened
              </button>
              <button
                type="button"
                disabled={disabled || busy !== undefined}
                onClick={() => settle(effect.toolCallId, 'failed')}
              >
                It did not happen
              </button>
            </span>
          </li>
        ))}
      </ul>
      {problem !== undefined && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
    </section>
  )
}
