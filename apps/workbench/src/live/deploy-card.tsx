import type { InterruptRendererProps } from '@interlude/react'

/** The release assistant's `deploy` arguments. */
export interface DeployArgs {
  readonly version: string
  readonly environment: 'staging' | 'production'
}

const DECISION = {
  approved: 'Approved',
  denied: 'Denied',
  answered: 'Answered',
  cancelled: 'Cancelled',
} as const

/**
 * The deploy approval as the workbench's own card (a custom renderer, docs/client-contract.md#custom-renderers):
 * shown at the deploy call in the conversation, answered into the batch form's drafts. "Deploy and continue"
 * approves and submits the batch in one click; it sends nothing while another answer of the batch is missing.
 */
export function DeployCard(props: InterruptRendererProps<DeployArgs>) {
  const { args, effectiveArgs, decision, approve, deny, editArgs, submit, disabled, id } = props
  const target = effectiveArgs?.environment
  const other = target === 'production' ? 'staging' : 'production'
  return (
    <div className="deploy-card" data-testid="deploy-card">
      <p id={`${id}-what`}>
        Deploy <strong>{effectiveArgs?.version ?? 'this version'}</strong> to{' '}
        <strong>{target ?? 'an environment'}</strong>
        {args !== undefined && target !== args.environment && ` (the assistant asked for ${args.environment})`}
      </p>
      <div className="batch-actions">
        <button
          type="button"
          className="primary"
          disabled={disabled}
          aria-describedby={`${id}-what`}
          onClick={() => {
            approve()
            submit()
          }}
        >
          Deploy and continue
        </button>
        <button type="button" disabled={disabled} onClick={() => editArgs((a) => ({ ...a!, environment: other }))}>
          Switch to {other}
        </button>
        <button type="button" disabled={disabled} onClick={() => deny('Denied at the deploy card')}>
          Deny
        </button>
      </div>
      <p className="muted" role="status">
        {decision === undefined
          ? ''
          : `Your answer: ${DECISION[decision]}${decision === 'approved' && target ? ` (${target})` : ''}.`}
      </p>
    </div>
  )
}
