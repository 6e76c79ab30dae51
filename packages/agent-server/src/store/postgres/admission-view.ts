import type { AdmissionView, AdmissionViewOptions } from '../store.ts'
import { byStatus } from '../admission-calls.ts'
import { toBatch, toRun, toThread, toToolCall } from '../rows.ts'
import { admissionView } from './admission-statements.ts'
import type { Queryable } from './query.ts'
import { rows } from './query.ts'

/**
 * What admission reads before it decides (`getAdmissionView`), one statement and so one snapshot: the thread, the run,
 * the open batch and, with `history`, which of the request's messages and calls the thread already has and the calls
 * awaiting a result.
 */
export async function getAdmissionView(
  q: Queryable,
  threadId: string,
  runId: string,
  options: AdmissionViewOptions,
): Promise<AdmissionView | undefined> {
  const row = (await rows(q, admissionView(threadId, runId, options)))[0]!
  if (!row.thread) return undefined
  return {
    thread: toThread(row.thread),
    run: row.run ? toRun(row.run) : undefined,
    openBatch: row.batch ? toBatch(row.batch, row.batch.interrupts) : undefined,
    knownMessageIds: new Set(row.known_messages ?? []),
    knownToolCallIds: new Set(row.known_calls ?? []),
    ...byStatus((row.awaiting ?? []).map(toToolCall)),
  }
}
