import type { DecisionsClient } from '@interlude/client'
import { useState } from 'react'
import type { Recorder } from '../recording/recorder.ts'
import { toRecordedError } from '../recording/to-json.ts'
import { GrantsTable, StandingCells, StandingHeads } from './grants-table.tsx'
import { RevokeCell } from './revoke-cell.tsx'
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

/** What a revoke is about: a rule or a grant, by its id. */
interface Revocable {
  readonly kind: 'rule' | 'grant'
  readonly id: string
  readonly toolName: string
}

/**
 * "Remembered permissions" (docs/approvals.md#remembered-permissions): the approvals the signed-in principal said
 * "always" to — tool, argument match, scope, thread, who approved, when — and the bounded grants with their calls left
 * and deadline (docs/approvals.md#bounded-grants), each revocable after a confirmation. The next matching call asks
 * again. Errors are shown with their code; a failed revoke leaves the rule or grant listed.
 */
export function PermissionsView({ client, actor = client, recorder, active }: PermissionsViewProps) {
  const list = usePermissionRules(client, active)
  const [confirming, setConfirming] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const [outcome, setOutcome] = useState<{ text: string; error: boolean } | undefined>()

  const revoke = ({ kind, id, toolName }: Revocable) => {
    setBusy(true)
    const action = kind === 'rule' ? 'revoke-permission-rule' : 'revoke-grant'
    const key = kind === 'rule' ? { ruleId: id } : { grantId: id }
    recorder?.addAction(action, key)
    ;(kind === 'rule' ? actor.revokePermissionRule(id) : actor.revokeGrant(id))
      .then(() => {
        recorder?.addAction(`${action}-done`, key)
        setOutcome({ text: `Revoked: ${toolName} will ask again.`, error: false })
      })
      .catch((reason: unknown) => {
        recorder?.addAction(`${action}-refused`, key, toRecordedError(reason))
        setOutcome({ text: describeRuleError(reason), error: true })
      })
      .finally(() => {
        setBusy(false)
        setConfirming(undefined)
        list.refresh()
      })
  }
  /** The revoke cell of one rule or grant. */
  const revokeCell = (target: Revocable) => (
    <RevokeCell
      what={`the ${target.kind} for ${target.toolName}`}
      confirming={confirming === `${target.kind}:${target.id}`}
      disabled={busy || !active}
      busy={busy}
      onAsk={() => {
        setOutcome(undefined)
        setConfirming(`${target.kind}:${target.id}`)
      }}
      onConfirm={() => revoke(target)}
      onCancel={() => setConfirming(undefined)}
    />
  )

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
              <StandingHeads />
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
                <StandingCells
                  toolName={rule.toolName}
                  match={rule.argsMatch}
                  scope={rule.scope}
                  threadId={rule.threadId}
                />
                <td>{rule.createdBy}</td>
                <td>
                  <time dateTime={rule.createdAt}>{new Date(rule.createdAt).toLocaleString()}</time>
                </td>
                <td>{revokeCell({ kind: 'rule', id: rule.ruleId, toolName: rule.toolName })}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3 id="grants-title">Bounded grants</h3>
      <p className="muted">Approvals that also let a number of later matching calls run, until used up or expired.</p>
      {list.grants.length === 0 ? (
        <p className="muted" data-testid="grants-empty">
          {list.loaded ? 'No bounded grants.' : 'Loading…'}
        </p>
      ) : (
        <GrantsTable
          grants={list.grants}
          revoke={(grant) => revokeCell({ kind: 'grant', id: grant.grantId, toolName: grant.toolName })}
        />
      )}
    </main>
  )
}
