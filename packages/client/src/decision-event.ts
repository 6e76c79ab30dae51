import type { AgUiEvent, DecisionRecord } from '@interlude/protocol'
import { DECISION_EVENT_NAME, EventType } from '@interlude/protocol'

/**
 * The decision record a resumed run announces right after its `RUN_STARTED`
 * (`CUSTOM { name: "interlude.decision", value }`, docs/approvals.md, "Decision records"), or `undefined`
 * for any other event.
 */
export function decisionOf(event: AgUiEvent): DecisionRecord | undefined {
  if (event.type !== EventType.CUSTOM) return undefined
  const custom = event as { readonly name?: unknown; readonly value?: unknown }
  if (custom.name !== DECISION_EVENT_NAME) return undefined
  const value = custom.value
  if (typeof value !== 'object' || value === null) return undefined
  const record = value as Partial<DecisionRecord>
  return typeof record.runId === 'string' && typeof record.decidedBy === 'string'
    ? (value as DecisionRecord)
    : undefined
}
