import { EventType, GUARDRAIL_EVENT_NAME } from '@interlude/protocol'
import type { AgUiEvent, GuardrailEvent } from '@interlude/protocol'

/** The `interlude.guardrail` events of a run, in order (docs/guardrails.md#events). */
export const guardrailEvents = (events: readonly AgUiEvent[]): GuardrailEvent[] =>
  events
    .filter((e) => e.type === EventType.CUSTOM && (e as { name?: string }).name === GUARDRAIL_EVENT_NAME)
    .map((e) => (e as unknown as { value: GuardrailEvent }).value)

/** The run id of a run's events (its `RUN_STARTED`). */
export const runIdOf = (events: readonly AgUiEvent[]): string => (events[0] as { runId: string }).runId
