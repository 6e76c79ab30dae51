import { randomUUID } from 'node:crypto'
import type { NewOutboxDelivery, Store } from '../store/store.ts'
import { firstRunRequest } from '../store/conformance/kit.ts'
import type { ResolvedWebhookEndpoint } from '../webhooks/webhook-config.ts'
import { outboxEntries } from '../webhooks/outbox-entries.ts'

/**
 * Commits one failed run with its `run.failed` deliveries the way the core does (docs/approvals.md, "Webhooks"):
 * `outboxEntries(...)` passed as `outbox` to the `finishRun` that records the failure, so the rows commit with it.
 * Returns the rows written.
 */
export async function commitFailedRun(
  store: Store,
  endpoints: readonly Pick<ResolvedWebhookEndpoint, 'url' | 'events'>[],
  now = Date.now(),
): Promise<NewOutboxDelivery[]> {
  const threadId = `thread_${randomUUID()}`
  const runId = `run_${randomUUID()}`
  const started = await store.startInputRun(firstRunRequest(threadId, runId, now))
  if (!started.ok) throw new Error(`startInputRun refused: ${started.reason}`)
  const outbox = outboxEntries(
    endpoints,
    'run.failed',
    { threadId, owner: 'alice', runId, errorCode: 'RUN_FAILED' },
    now,
  )
  const finished = await store.finishRun({
    threadId,
    runId,
    status: 'failed',
    outcome: undefined,
    errorCode: 'RUN_FAILED',
    events: [{ type: 'RUN_ERROR', json: '{"type":"RUN_ERROR","code":"RUN_FAILED","message":"failed"}' }],
    closeBatch: undefined,
    now,
    outbox,
  })
  if (finished === undefined) throw new Error('finishRun wrote nothing')
  return outbox
}
