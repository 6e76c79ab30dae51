import type { batchPolicy } from './expiry.ts'

export interface BatchDeadlineProps {
  readonly expired: boolean
  /** The earliest deadline of the batch's questions (epoch ms), if any. */
  readonly expiresAt: number | undefined
  readonly policy: ReturnType<typeof batchPolicy>
  readonly disabled: boolean
  /** Closes an expired `keep` batch (every answer cancelled). */
  readonly onClose: () => void
}

/**
 * The pending batch's deadline (docs/approvals.md#deadlines): "answer before …" while it runs, and once it passed what
 * the server does by the batch's expiry policy — with "Close the batch" for a `keep` batch, the one answer it admits.
 */
export function BatchDeadline({ expired, expiresAt, policy, disabled, onClose }: BatchDeadlineProps) {
  if (!expired) {
    return expiresAt === undefined ? null : (
      <p className="muted">Answer before {new Date(expiresAt).toLocaleTimeString()}.</p>
    )
  }
  return (
    <div className="error" role="alert" data-testid="batch-expired" data-policy={policy}>
      <p>
        This request expired at {new Date(expiresAt ?? 0).toLocaleTimeString()} and can no longer be answered.{' '}
        {policy === 'keep'
          ? 'It stays open until it is closed: closing cancels every answer (nothing runs) and the conversation continues.'
          : policy === 'cancel'
            ? 'The server cancels every answer and the turn ends; the conversation then continues.'
            : 'The server denies it (the assistant is told it expired) and the conversation continues.'}
      </p>
      {policy === 'keep' && (
        <button type="button" className="primary" disabled={disabled} onClick={onClose}>
          Close the batch
        </button>
      )}
    </div>
  )
}
