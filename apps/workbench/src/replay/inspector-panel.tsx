import { GuardrailTrail } from '../ui/guardrail-trail.tsx'
import { JsonView } from '../ui/json-view.tsx'
import type { InspectorView } from './replay-index.ts'

/**
 * The paired inspector for the selected frame: the SDK batch | the form choices captured at that
 * moment | the request outcome | the raw observation.
 */
export function InspectorPanel({ view }: { readonly view: InspectorView }) {
  const { batch, batchState, form, request, frame, guardrails } = view
  return (
    <div className="inspector" aria-label="Inspector">
      <section className="inspector-cell" aria-labelledby="inspector-batch">
        <h3 id="inspector-batch">SDK batch</h3>
        {batch ? (
          <>
            <p className="muted">
              {batchState === 'pending'
                ? 'pendingInterrupts at this frame'
                : 'last batch (no longer pending at this frame)'}
            </p>
            <JsonView value={batch} label="SDK batch (JSON)" testId="inspector-batch" />
          </>
        ) : (
          <p className="muted">No batch at this frame.</p>
        )}
      </section>
      <section className="inspector-cell" aria-labelledby="inspector-form">
        <h3 id="inspector-form">Form choices at that moment</h3>
        {form ? (
          <>
            <p className="muted">
              {form.phase === 'submit' ? 'submitted' : 'draft'} at t = {formatT(form.t)} (frame {form.seq})
            </p>
            <JsonView
              value={
                form.entries === undefined
                  ? { choices: form.choices }
                  : { choices: form.choices, entries: form.entries }
              }
              label="Form choices (JSON)"
              testId="inspector-form"
            />
          </>
        ) : (
          <p className="muted">{batch ? 'No choice made yet.' : 'No form.'}</p>
        )}
      </section>
      <section className="inspector-cell" aria-labelledby="inspector-request">
        <h3 id="inspector-request">Request outcome</h3>
        {request ? (
          <>
            <p className="request-line">
              <code>
                {request.start?.method ?? '?'} {request.start?.path ?? '?'}
              </code>{' '}
              <span className="badge">{request.start?.purpose ?? 'request'}</span>
            </p>
            <p className="request-line" data-testid="request-outcome">
              {request.response
                ? request.response.ok
                  ? `HTTP ${request.response.status}`
                  : `HTTP ${request.response.status}${request.response.error ? ` · ${request.response.error.code}: ${request.response.error.message}` : ''}`
                : request.end
                  ? 'no response'
                  : 'waiting for response'}
              {request.end
                ? ` · ended: ${request.end.outcome}${request.end.error && !request.response?.error ? ` (${request.end.error.code}: ${request.end.error.message})` : ''}`
                : request.response
                  ? ' · streaming'
                  : ''}
              {` · ${request.eventsSoFar} event${request.eventsSoFar === 1 ? '' : 's'} so far`}
            </p>
            {request.start?.input !== undefined && (
              <JsonView value={request.start.input} label="Request input summary" />
            )}
          </>
        ) : (
          <p className="muted">No request yet.</p>
        )}
      </section>
      <section className="inspector-cell" aria-labelledby="inspector-guardrails">
        <h3 id="inspector-guardrails">Guardrails</h3>
        {guardrails.length > 0 ? (
          <GuardrailTrail events={guardrails} />
        ) : (
          <p className="muted">No guardrail checked yet.</p>
        )}
      </section>
      <section className="inspector-cell" aria-labelledby="inspector-raw">
        <h3 id="inspector-raw">Raw observation</h3>
        <p className="muted">
          frame {frame.seq} · {frame.kind} · t = {formatT(frame.t)}
        </p>
        <JsonView value={frame} label="Raw frame (JSON)" testId="inspector-raw" />
      </section>
    </div>
  )
}

export function formatT(ms: number): string {
  return `${(ms / 1000).toFixed(3)} s`
}
