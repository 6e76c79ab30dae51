import { expect } from 'vitest'
import { DECISION_EVENT_NAME, EventType } from '@interlude/protocol'
import type { AgUiEvent, DecisionRecord, Interrupt, ResumeEntry } from '@interlude/protocol'
import type { RunResponse } from './harness.ts'
import { dumpStore } from './harness.ts'

/** A resolved resume entry; the payload approves by default. */
export const resolved = (interrupt: Interrupt, payload: unknown = { approved: true }): ResumeEntry => ({
  interruptId: interrupt.id,
  status: 'resolved',
  payload,
})

/** A cancelled resume entry. */
export const cancelled = (interrupt: Interrupt): ResumeEntry => ({ interruptId: interrupt.id, status: 'cancelled' })

/** Sends a request that must be refused: a JSON answer, and not one row of the SQLite file changed. */
export async function refusedUnchanged(dbPath: string, send: () => Promise<RunResponse>): Promise<RunResponse> {
  const before = dumpStore(dbPath)
  const response = await send()
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  expect(dumpStore(dbPath)).toEqual(before)
  return response
}

/** The decision records among a run's events (`CUSTOM interlude.decision`), in order. */
export const decisionEvents = (events: readonly AgUiEvent[]): DecisionRecord[] =>
  events
    .filter((e) => e.type === EventType.CUSTOM && (e as { name: string }).name === DECISION_EVENT_NAME)
    .map((e) => (e as unknown as { value: DecisionRecord }).value)
