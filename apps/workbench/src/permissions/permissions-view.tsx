import type { DecisionsClient } from '@interlude/client'
import type { PermissionRule } from '@interlude/protocol'
import { useEffect, useRef, useState } from 'react'
import type { Recorder } from '../recording/recorder.ts'
import { toRecordedError } from '../recording/to-json.ts'
import { describeRuleError, usePermissionRules } from './use-permission-rules.ts'

export interface PermissionsViewProps {
  /** The principal's client (the session's token, else the cookie session). */
  readonly client: DecisionsClient
  /** The client that revokes (recorded, like every action of the live session); default `client`. */
  readonly actor?: DecisionsClient
  readonly recorder?: Recorder
  /** False while hidden (another tab, a replay): nothing is fetched then. */
  readonly active: boolean
}

const SCOPE_TEXT = { thread: 'this conversation', principal: 'all my conversations' } as const

function argumentsText(rule: PermissionRule): string {
  if (rule.argsMatch === undefined) return 'any arguments'
  return Object.entries(rule.argsMatch)
    .map(([name, value]) => `${name} = ${JSON.stringify(value)}`)
    .join(', ')
}

/**
 * "Remembered permissions" (docs/approvals.md#remembered-permissions): the approvals the signed-in principal said
 * "always" to — tool, argument match, scope, thread, who approved, when — each revocable after a confirmation. The
 * next matching call asks again. Errors are shown with their code; a failed revoke leaves the rule listed.
 */
export function PermissionsView({ client, actor = client, recorder, active }: PermissionsViewProps) {
  const list = usePermissionRules(client, active)
  const [confirming, setConfirming] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const [outcome, setOutcome] = useState<{ text: string; error: boolean } | undefined>()

  const revoke = (rule: PermissionRule) => {
    setBusy(true)
    recorder?.addAction('revoke-permission-rule', { ruleId: rule.ruleId })
    actor
      .revokePermissionRule(rule.ruleId)
      .then(() => {
        recorder?.addAction('revoke-permission-rule-done', { ruleId: rule.ruleId })
        setOutcome({ text: `Revoked: ${rule.toolName} will ask again.`, error: false })
      })
      .catch((reason: unknown) => {
        recorder?.addAction('revoke-permission-rule-refused', { ruleId: rule.ruleId }, toRecordedError(reason))
        setOutcome({ text: describeRuleError(reason), error: true })
      })
      .finally(() => {
        setBusy(false)
        setConfirming(undefined)
        list.refresh()
      })
  }

  return (
    <main className="permissions" aria-labelledby="permissions-title" data-testid="permissions-view">
      <div className="threads-head">
        <h2 id="permissions-title">Remembered permissions</h2>
        <button type="button" className="link" onClick={list.refresh} disabled={!active}>
          refresh
        </button>
      </div>
      <p className="muted">
        Approvals you chose to remember. A matching call runs without asking until you revoke its rule.
      </p>
      {list.error !== undefined && (
        <p className="error" role="alert" data-testid="permissions-error">
          {list.error}
        </p>
      )}
      {outcome !== undefined && (
        <p
          className={outcome.error ? 'error' : 'muted'}
          role={outcome.error ? 'alert' : 'status'}
          data-testid="permissions-outcome"
        >
          {outcome.text}
        </p>
      )}
      {list.rules.length === 0 ? (
        <p className="muted" data-testid="permissions-empty">
          {list.loaded ? 'No remembered permissions.' : 'Loading…'}
        </p>
      ) : (
        <table className="rules" aria-label="Your remembered permissions">
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Arguments</th>
              <th scope="col">Applies to</th>
              <th scope="col">Thread</th>
              <th scope="col">Approved by</th>
              <th scope="col">Since</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.rules.map((rule) => (
              <tr key={rule.ruleId} data-rule-id={rule.ruleId} data-tool={rule.toolName}>
                <td>
                  <code>{rule.toolName}</code>
                </td>
                <td>{argumentsText(rule)}</td>
                <td data-testid="rule-scope">{SCOPE_TEXT[rule.scope] ?? rule.scope}</td>
                <td>{rule.threadId === undefined ? '—' : <code>{rule.threadId}</code>}</td>
                <td>{rule.createdBy}</td>
                <td>
                  <time dateTime={rule.createdAt}>{new Date(rule.createdAt).toLocaleString()}</time>
                </td>
                <td>
                  {confirming === rule.ruleId ? (
                    <ConfirmRevoke
                      rule={rule}
                      busy={busy}
                      onConfirm={() => revoke(rule)}
                      onCancel={() => setConfirming(undefined)}
                    />
                  ) : (
                    <button
                      type="button"
                      disabled={busy || !active}
                      aria-label={`Revoke the rule for ${rule.toolName}`}
                      onClick={() => {
                        setOutcome(undefined)
                        setConfirming(rule.ruleId)
                      }}
                    >
                      Revoke…
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  )
}

interface ConfirmRevokeProps {
  readonly rule: PermissionRule
  readonly busy: boolean
  readonly onConfirm: () => void
  readonly onCancel: () => void
}

/** The confirmation step: focus moves to it, Escape keeps the rule. */
function ConfirmRevoke({ rule, busy, onConfirm, onCancel }: ConfirmRevokeProps) {
  const confirm = useRef<HTMLButtonElement>(null)
  useEffect(() => confirm.current?.focus(), [])
  return (
    <div
      role="group"
      aria-label={`Confirm revoking the rule for ${rule.toolName}`}
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
