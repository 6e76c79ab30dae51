import { InterludeError } from '@interlude/protocol'
import type { PendingBatch, PendingBatchPage, VoteTally } from '@interlude/protocol'
import type { PendingBatchQuery, PendingBatchRecord, Store } from '../../store/store.ts'
import type { DecisionRights } from './decision-rights.ts'
import { clientThreadId } from '../../store/thread-key.ts'
import { defined } from '../../defined.ts'

export interface PendingInboxDeps {
  readonly store: Pick<Store, 'listPendingBatches'>
  readonly rights: DecisionRights
}

type Position = NonNullable<PendingBatchQuery['before']>

/** Rows read from the store per round trip while filling a page. */
const CHUNK = 100
/**
 * The most rows one request reads. A caller who may decide few of many open batches gets a short page (possibly
 * empty) with a `nextCursor` instead of a scan of every open batch of every owner.
 */
const SCAN_BUDGET = 1000

export function encodePendingCursor(position: Position): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.batchId]), 'utf8').toString('base64url')
}

export function decodePendingCursor(cursor: string): Position {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown
    if (Array.isArray(value) && value.length === 2) {
      const [createdAt, batchId] = value as unknown[]
      if (Number.isSafeInteger(createdAt) && (createdAt as number) >= 0 && typeof batchId === 'string' && batchId) {
        return { createdAt: createdAt as number, batchId }
      }
    }
  } catch {
    // fall through
  }
  throw new InterludeError('INVALID_INPUT', 'Invalid cursor.')
}

function pendingBatch(batch: PendingBatchRecord, votes: readonly VoteTally[] | undefined): PendingBatch {
  return {
    threadId: clientThreadId(batch.threadId),
    // The batch's public id: the run that paused with it (a fork point, docs/time-travel.md).
    batchId: batch.runId,
    owner: batch.ownerId,
    ...defined({ title: batch.title }),
    openedAt: new Date(batch.createdAt).toISOString(),
    expiresAt: new Date(batch.expiresAt).toISOString(),
    onExpiry: batch.onExpiry,
    interrupts: batch.interrupts.map((i) => i.interrupt),
    ...defined({ votes }),
  }
}

/**
 * `GET {base}/interrupts?status=pending` (docs/approvals.md): the open batches `principal` may decide, newest first —
 * under an organisation policy, only while they await its vote (not once it voted, not in a later stage), with what each
 * still open interrupt needs (`votes`).
 * Pages through every owner's open batches and keeps the decidable ones; a batch past its deadline is listed only
 * while its policy keeps it open (`keep`): any other policy is about to decide it.
 */
export async function pendingInbox(
  deps: PendingInboxDeps,
  principal: string,
  query: { readonly limit: number; readonly before?: Position | undefined; readonly now: number },
): Promise<PendingBatchPage & { readonly scanned: number }> {
  const { limit, now } = query
  // A principal who may decide only its own batches reads only those: the cost is what it may see.
  const owner = deps.rights.decidesOnlyOwn(principal) ? principal : undefined
  const items: PendingBatch[] = []
  let before = query.before
  let scanned = 0
  let exhausted = false
  while (items.length < limit && !exhausted && scanned < SCAN_BUDGET) {
    const chunk = await deps.store.listPendingBatches({ limit: CHUNK, ...defined({ before, owner }) })
    exhausted = chunk.length < CHUNK
    for (const [index, batch] of chunk.entries()) {
      scanned += 1
      before = { createdAt: batch.createdAt, batchId: batch.batchId }
      const open = now < batch.expiresAt || batch.onExpiry === 'keep'
      const view = open ? await deps.rights.inboxView(principal, batch.ownerId, batch) : undefined
      if (view !== undefined) items.push(pendingBatch(batch, view.votes))
      if (items.length === limit) {
        // Rows left unread: another page may follow (it can turn out empty: they are filtered only then).
        if (index < chunk.length - 1) exhausted = false
        break
      }
    }
  }
  const more = !exhausted && before !== undefined
  return { items, ...(more ? { nextCursor: encodePendingCursor(before!) } : {}), scanned }
}
