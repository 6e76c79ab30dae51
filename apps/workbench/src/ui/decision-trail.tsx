import type { DecisionRecord } from '@interlude/protocol'
import { decisionSummary, decisionVerdict, entryVerdict } from '../approvals/decision-summary.ts'

export interface DecisionTrailProps {
  readonly decisions: readonly DecisionRecord[]
  /** Accessible name of the list. */
  readonly label?: string
  /** Labels of the interrupts by id (their message), when known, for the per-answer lines. */
  readonly interruptLabels?: ReadonlyMap<string, string>
}

/**
 * The audit trail of a thread (docs/approvals.md#decision-records): one line per answered batch, "Approved by mgr
 * via api at 10:32", with each answer under it. Rendered as text, from the records alone (live: the snapshot and
 * the `interlude.decision` events; replay: the recording).
 */
export function DecisionTrail({ decisions, label = 'Decisions', interruptLabels }: DecisionTrailProps) {
  if (decisions.length === 0) return null
  return (
    <ul className="decision-trail" aria-label={label}>
      {decisions.map((record) => (
        <li
          key={record.runId}
          className={`decision decision-${decisionVerdict(record)}`}
          data-testid="decision"
          data-decided-by={record.decidedBy}
          data-via={record.via}
          title={`${record.at} · run ${record.runId}`}
        >
          <span className="decision-summary">{decisionSummary(record)}</span>
          {record.entries.length > 1 && (
            <ul className="decision-entries">
              {record.entries.map((entry) => (
                <li key={entry.interruptId} data-verdict={entryVerdict(entry)}>
                  {interruptLabels?.get(entry.interruptId) ?? entry.interruptId}: {entryVerdict(entry)}
                  {reasonOf(entry.payload)}
                </li>
              ))}
            </ul>
          )}
        </li>
      ))}
    </ul>
  )
}

function reasonOf(payload: unknown): string {
  if (typeof payload !== 'object' || payload === null) return ''
  const reason = (payload as { reason?: unknown }).reason
  return typeof reason === 'string' && reason !== '' ? ` (${reason})` : ''
}
