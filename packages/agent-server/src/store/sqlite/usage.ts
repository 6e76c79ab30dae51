import type Database from 'better-sqlite3'
import type { UsageCounts, UsageScope } from '../store.ts'

/**
 * Token usage per run (docs/protocol.md#token-usage): one counter update per model call, and the sums the caps read.
 */
export function sqliteUsage(db: Database.Database) {
  const add = db.prepare<[number, number, string, string]>(
    'UPDATE runs SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ? WHERE thread_id = ? AND run_id = ?',
  )
  type Sum = { input: number | null; output: number | null }
  const byThread = db.prepare<[string], Sum>(
    'SELECT SUM(input_tokens) AS input, SUM(output_tokens) AS output FROM runs WHERE thread_id = ?',
  )
  const byOwner = db.prepare<[string], Sum>(
    `SELECT SUM(r.input_tokens) AS input, SUM(r.output_tokens) AS output
       FROM threads t JOIN runs r ON r.thread_id = t.thread_id WHERE t.owner_id = ?`,
  )
  return {
    add(threadId: string, runId: string, usage: { inputTokens: number; outputTokens: number }): void {
      add.run(usage.inputTokens, usage.outputTokens, threadId, runId)
    },
    sum(scope: UsageScope): UsageCounts {
      const row = 'threadId' in scope ? byThread.get(scope.threadId) : byOwner.get(scope.ownerId)
      const inputTokens = row?.input ?? 0
      const outputTokens = row?.output ?? 0
      return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }
    },
  }
}
