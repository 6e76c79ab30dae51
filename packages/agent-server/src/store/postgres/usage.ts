import type { UsageCounts, UsageScope } from '../store.ts'
import type { Queryable } from './query.ts'
import { rows, statement } from './query.ts'

/**
 * Token usage per run (docs/protocol.md#token-usage): one counter update per model call, and the sums the caps read.
 */
export async function addRunUsage(
  q: Queryable,
  threadId: string,
  runId: string,
  usage: { inputTokens: number; outputTokens: number },
): Promise<void> {
  await q.query(
    statement(
      'UPDATE runs SET input_tokens = input_tokens + $1, output_tokens = output_tokens + $2 WHERE thread_id = $3 AND run_id = $4',
      [usage.inputTokens, usage.outputTokens, threadId, runId],
    ),
  )
}

export async function sumUsage(q: Queryable, scope: UsageScope): Promise<UsageCounts> {
  type Sum = { input: string | null; output: string | null }
  const query =
    'threadId' in scope
      ? statement<Sum>(
          'SELECT SUM(input_tokens) AS input, SUM(output_tokens) AS output FROM runs WHERE thread_id = $1',
          [scope.threadId],
        )
      : statement<Sum>(
          `SELECT SUM(r.input_tokens) AS input, SUM(r.output_tokens) AS output
             FROM threads t JOIN runs r ON r.thread_id = t.thread_id WHERE t.owner_id = $1`,
          [scope.ownerId],
        )
  const [row] = await rows(q, query)
  const inputTokens = Number(row?.input ?? 0)
  const outputTokens = Number(row?.output ?? 0)
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }
}
