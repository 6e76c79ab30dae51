import type { ClaimBatchRequest, ClaimBatchResult } from '../store.ts'
import { toThread } from '../rows.ts'
import { claimRefusal } from '../refusals.ts'
import * as sql from './admission-statements.ts'
import { claimBatch } from './admission.ts'
import type { Settled } from './group-commit.ts'
import { GroupCommit } from './group-commit.ts'
import type { Queryable } from './query.ts'
import { rows } from './query.ts'

/**
 * Claim statements in flight at once per store. Measured (bench/README.md, part 2): 100 claims at once through one
 * store took p99 32 ms one by one, 21 / 16 / 22 / 19 ms grouped with 1 / 2 / 4 / 10 statements in flight. Through the
 * server, where admission turns (core/runs/admission-turns.ts) let a burst's claims arrive slice by slice, 4 measured an
 * admission p99 of 13 ms against 23 ms with 2 (bench/README.md, "Admission turns").
 */
export const DEFAULT_CLAIM_CONCURRENCY = 4

/** Claims in one statement at most (a statement's parameters grow with it; 64 keeps it small). */
export const MAX_CLAIM_GROUP = 64

/**
 * Group commit of resume claims (`group-commit.ts`): the claims that arrive while `concurrency` claim statements are
 * in flight go out together, as one statement and one commit (`claimBatchGroup`); a lone claim is never delayed. Each
 * claim is decided exactly as alone: same conditions, per row. Two claims of one thread never share a group (the
 * second waits, and is then refused or admitted knowing the first). A group that fails on one row (a taken run id)
 * is retried claim by claim.
 */
export class ClaimGroups {
  readonly #q: Queryable
  readonly #groups: GroupCommit<ClaimBatchRequest, ClaimBatchResult>

  constructor(q: Queryable, concurrency: number) {
    this.#q = q
    this.#groups = new GroupCommit({
      concurrency,
      maxGroup: MAX_CLAIM_GROUP,
      key: (request) => request.threadId,
      one: (request) => claimBatch(q, request),
      group: (requests) => this.#group(requests),
      setting: 'claimConcurrency',
    })
  }

  claim(request: ClaimBatchRequest): Promise<ClaimBatchResult> {
    return this.#groups.send(request)
  }

  /** Two or more claims as one statement: the outcome of each, in order. */
  async #group(requests: readonly ClaimBatchRequest[]): Promise<Settled<ClaimBatchResult>[]> {
    const found = await rows(this.#q, sql.claimBatchGroup(requests))
    const results: (Settled<ClaimBatchResult> | undefined)[] = requests.map(() => undefined)
    for (const row of found) {
      try {
        results[Number(row.ord) - 1] = { ok: true, value: { ok: true, thread: toThread(row.thread) } }
      } catch (error) {
        results[Number(row.ord) - 1] = { ok: false, error }
      }
    }
    // The refused claims are explained from their batches (as `claimBatch` does), in one read.
    const refused = requests.flatMap((_, i) => (results[i] === undefined ? [i] : []))
    if (refused.length > 0) {
      const asked = refused.map((i) => requests[i]!)
      try {
        const batches = await rows(this.#q, sql.getBatches(asked))
        const byKey = new Map(batches.map((b) => [keyOf(b.thread_id, b.batch_id), b]))
        for (const i of refused) {
          const { threadId, batchId } = requests[i]!
          results[i] = { ok: true, value: claimRefusal(byKey.get(keyOf(threadId, batchId))) }
        }
      } catch (error) {
        for (const i of refused) results[i] = { ok: false, error }
      }
    }
    return results as Settled<ClaimBatchResult>[]
  }
}

const keyOf = (threadId: string, batchId: string) => `${threadId}\u001f${batchId}`
