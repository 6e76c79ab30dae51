import { useEffect, useRef } from 'react'

export interface RevokeCellProps {
  /** What is revoked, as read out: `the rule for deploy`, `the grant for deploy`. */
  readonly what: string
  /** This row's confirmation is open. */
  readonly confirming: boolean
  readonly disabled: boolean
  readonly busy: boolean
  readonly onAsk: () => void
  readonly onConfirm: () => void
  readonly onCancel: () => void
}

/**
 * The revoke action of a rule or a grant (docs/approvals.md#remembered-permissions): a button, then a confirmation in
 * place that takes the focus; Escape keeps it.
 */
export function RevokeCell({ what, confirming, disabled, busy, onAsk, onConfirm, onCancel }: RevokeCellProps) {
  if (!confirming) {
    return (
      <button type="button" disabled={disabled} aria-label={`Revoke ${what}`} onClick={onAsk}>
        Revoke…
      </button>
    )
  }
  return <ConfirmRevoke what={what} busy={busy} onConfirm={onConfirm} onCancel={onCancel} />
}

function ConfirmRevoke({
  what,
  busy,
  onConfirm,
  onCancel,
}: Omit<RevokeCellProps, 'confirming' | 'disabled' | 'onAsk'>) {
  const confirm = useRef<HTMLButtonElement>(null)
  useEffect(() => confirm.current?.focus(), [])
  return (
    <div
      role="group"
      aria-label={`Confirm revoking ${what}`}
      className="confirm-revoke"
      onKeyDown={(e) => {
        if (e.key === 'Escape') onCancel()
      }}
    >
      <span>Ask again next time?</span>{' '}
      <button ref={confirm} type="button" className="primary" disabled={busy} onClick={onConfirm}>
        Revoke
      </button>{' '}
      <button type="button" disabled={busy} onClick={onCancel}>
        Keep
      </button>
    </div>
  )
}
