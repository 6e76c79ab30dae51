import type { Message } from '@ag-ui/core'

/**
 * What new input does while its thread is busy (docs/protocol.md#multitask): `forwardedProps.interlude.multitask`
 * of a `RunAgentInput`, or the server's default when it names none.
 *
 * - `reject`: `409 THREAD_BUSY` (`INTERRUPTS_PENDING` while a batch is pending).
 * - `enqueue`: stored at the end of the thread's queue; starts by itself when the runs before it have ended.
 * - `interrupt`: the running run is cancelled; the input is stored first in the queue and starts once it has ended.
 * - `steer`: the input's new user message joins the running turn before its next model request; no new run.
 */
export const MULTITASK_STRATEGIES = ['reject', 'enqueue', 'interrupt', 'steer'] as const

export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number]

/** `202` answer of `POST {base}/runs` to input stored in the thread's queue (`enqueue`, `interrupt`, `steer`). */
export interface RunQueued {
  readonly threadId: string
  /** The input's own runId: the run it starts as, later (`GET …/runs/:runId/events` attaches to it). */
  readonly runId: string
  /** The input's position in the queue: 1 = the next to start. */
  readonly queued: number
}

/** `202` answer of `POST {base}/runs` to a `steer` that joins the running run (docs/protocol.md#multitask). */
export interface RunSteered {
  readonly threadId: string
  /** The running run the message joins (not the input's runId). */
  readonly runId: string
  readonly steered: true
}

/** What a `202` answer of `POST {base}/runs` carries: the input was accepted without a stream of its own. */
export type RunAccepted = RunQueued | RunSteered

/** A light check (no zod) of a `202` answer's body; `RunAcceptedSchema` in `@interlude/protocol/schemas` is strict. */
export function isRunAccepted(value: unknown): value is RunAccepted {
  if (typeof value !== 'object' || value === null) return false
  const body = value as Record<string, unknown>
  if (typeof body['threadId'] !== 'string' || typeof body['runId'] !== 'string') return false
  const queued = body['queued']
  if (typeof queued === 'number') return Number.isInteger(queued) && queued >= 1
  return body['steered'] === true
}

/**
 * One input waiting in the thread's queue, as `ThreadSnapshot.queued` lists it (docs/protocol.md#threadsnapshot):
 * its runId, its place (1 = next), whether it is a steer no run took yet, and its last user message.
 */
export interface QueuedInputView {
  readonly runId: string
  readonly position: number
  readonly steer: boolean
  readonly message: Message
}
