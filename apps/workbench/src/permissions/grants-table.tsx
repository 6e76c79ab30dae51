import type { Grant } from '@interlude/protocol'
import type { ReactNode } from 'react'

const SCOPE_TEXT = { thread: 'this conversation', principal: 'all my conversations' } as const

/** `name = value, …` of an argument match, or "any arguments". */
function matchText(match: Readonly<Record<string, unknown>> | undefined): string {
  if (match === undefined) return 'any arguments'
  return Object.entries(match)
    .map(([name, value]) => `${name} = ${JSON.stringify(value)}`)
    .join(', ')
}

/** The column heads a rule and a grant share. */
export function StandingHeads() {
  return (
    <>
      <th scope="col">Tool</th>
      <th scope="col">Arguments</th>
      <th scope="col">Applies to</th>
      <th scope="col">Thread</th>
    </>
  )
}

/** The cells a rule and a grant share: the tool, the argument match, where it applies and the thread. */
export function StandingCells(props: {
  readonly toolName: string
  readonly match: Readonly<Record<string, unknown>> | undefined
  readonly scope: 'thread' | 'principal'
  readonly threadId: string | undefined
}) {
  return (
    <>
      <td>
        <code>{props.toolName}</code>
      </td>
      <td>{matchText(props.match)}</td>
      <td data-testid="rule-scope">{SCOPE_TEXT[props.scope] ?? props.scope}</td>
      <td>{props.threadId === undefined ? '—' : <code>{props.threadId}</code>}</td>
    </>
  )
}

export interface GrantsTableProps {
  readonly grants: readonly Grant[]
  /** The revoke cell of one grant. */
  readonly revoke: (grant: Grant) => ReactNode
}

/**
 * The principal's bounded grants (docs/approvals.md#bounded-grants): tool, argument match, scope, thread, calls left of
 * those granted, the deadline, who granted it and when.
 */
export function GrantsTable({ grants, revoke }: GrantsTableProps) {
  return (
    <table className="rules" aria-label="Your bounded grants">
      <thead>
        <tr>
          <StandingHeads />
          <th scope="col">Calls left</th>
          <th scope="col">Until</th>
          <th scope="col">Granted by</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {grants.map((grant) => (
          <tr key={grant.grantId} data-grant-id={grant.grantId} data-tool={grant.toolName}>
            <StandingCells
              toolName={grant.toolName}
              match={grant.match}
              scope={grant.scope}
              threadId={grant.threadId}
            />
            <td data-testid="grant-calls-left">
              {grant.callsLeft} of {grant.calls}
            </td>
            <td>
              {grant.until === undefined ? (
                'until used'
              ) : (
                <time dateTime={grant.until}>{new Date(grant.until).toLocaleString()}</time>
              )}
            </td>
            <td>{grant.createdBy}</td>
            <td>{revoke(grant)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
