import type { FormFrame, Json, RecordedBatch } from '../recording/recording-types.ts'
import { JsonView } from '../ui/json-view.tsx'

/**
 * The batch as it was shown at the selected frame, with the form choices captured at that moment.
 * Every control is disabled: replay never submits a decision.
 */
export function BatchReadonly({
  batch,
  form,
  state,
  resuming,
}: {
  readonly batch: RecordedBatch
  readonly form: FormFrame | undefined
  readonly state: 'pending' | 'answered'
  readonly resuming: boolean
}) {
  return (
    <section className="batch batch-readonly" aria-label="Approval batch (replay)">
      <header className="batch-head">
        <h3>
          {state === 'answered'
            ? 'Answered batch'
            : resuming
              ? 'Submitted: waiting for the server to acknowledge'
              : 'Waiting for answers'}
        </h3>
        <span className="muted">
          {batch.interrupts.length} interrupt{batch.interrupts.length === 1 ? '' : 's'} · batch{' '}
          <code>{batch.id.slice(0, 8)}</code>
        </span>
      </header>
      <ol className="interrupts">
        {batch.interrupts.map((interrupt, index) => {
          const record = asRecord(interrupt)
          const id = typeof record.id === 'string' ? record.id : `#${index}`
          const choice = form?.choices[id]
          return (
            <li key={id} className="interrupt">
              <div className="interrupt-head">
                <span className="badge">{String(record.reason ?? 'unknown')}</span>
                <span className="interrupt-title">{titleOf(record)}</span>
              </div>
              {typeof record.message === 'string' && <p className="interrupt-message">{record.message}</p>}
              <div className="recorded-choice">
                <span className="muted">Form choice at this moment:</span>{' '}
                {choice === undefined ? (
                  <em>none yet</em>
                ) : (
                  <JsonView value={choice} label={`Recorded choice for ${id}`} />
                )}
              </div>
            </li>
          )
        })}
      </ol>
      <div className="batch-actions">
        <button type="button" disabled>
          Submit answers
        </button>
        <button type="button" disabled>
          Cancel all
        </button>
        {form?.phase === 'submit' && <span className="muted">submitted at this point</span>}
      </div>
    </section>
  )
}

function asRecord(value: Json): { readonly [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as { readonly [key: string]: Json })
    : {}
}

export function titleOf(interrupt: { readonly [key: string]: unknown }): string {
  const metadata = interrupt.metadata
  if (typeof metadata === 'object' && metadata !== null) {
    const m = metadata as Record<string, unknown>
    const name = m.toolName ?? m.toolCallName ?? m.tool
    if (typeof name === 'string') return name
  }
  return typeof interrupt.toolCallId === 'string'
    ? `tool call ${interrupt.toolCallId.slice(0, 8)}`
    : String(interrupt.reason ?? 'question')
}
