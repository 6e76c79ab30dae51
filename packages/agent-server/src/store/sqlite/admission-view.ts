import type Database from 'better-sqlite3'
import { byStatus } from '../admission-calls.ts'
import type { AdmissionView, AdmissionViewOptions } from '../store.ts'
import { toRun, toThread, toToolCall } from '../rows.ts'
import { batchOf } from './batches.ts'
import type { SqliteStatements } from './statements.ts'

/**
 * What admission reads before it decides (`getAdmissionView`): the thread, the run, the open batch and, with
 * `history`, which of the request's messages and calls the thread already has and the calls awaiting a result. A
 * deferred transaction is one WAL snapshot: the reads are mutually consistent.
 */
export function admissionView(
  db: Database.Database,
  s: SqliteStatements,
  threadId: string,
  runId: string,
  options: AdmissionViewOptions,
): AdmissionView | undefined {
  return db.transaction((): AdmissionView | undefined => {
    const row = s.getThread.get(threadId)
    if (!row) return undefined
    const run = s.getRun.get(threadId, runId)
    const batch = s.getOpenBatch.get(threadId)
    return {
      thread: toThread(row),
      run: run ? toRun(run) : undefined,
      openBatch: batch ? batchOf(s, batch) : undefined,
      knownMessageIds: new Set(
        options.history && options.messageIds?.length
          ? s.knownMessageIds.all({ threadId, idsJson: JSON.stringify(options.messageIds) }).map((r) => r.message_id)
          : [],
      ),
      knownToolCallIds: new Set(
        options.history && options.toolCallIds?.length
          ? s.knownToolCallIds
              .all({ threadId, idsJson: JSON.stringify(options.toolCallIds) })
              .map((r) => r.tool_call_id)
          : [],
      ),
      ...byStatus(
        options.history
          ? s.listToolCallsByStatus.all({ threadId, statusesJson: '["awaiting_result","pending"]' }).map(toToolCall)
          : [],
      ),
    }
  })()
}
