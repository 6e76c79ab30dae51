import type { ClaimBatchRequest, ClaimBatchResult } from '../store.ts'
import type { ThreadRow } from '../rows.ts'
import { toThread } from '../rows.ts'
import { claimRefusal } from '../refusals.ts'
import * as sql from './admission-statements.ts'
import { claimBatch } from './admission.ts'
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
 * Group commit of resume claims. A claim goes out at once while fewer than `concurrency` claim statements are in
 * flight; the claims that arrive while they all are wait and then go out together, as one statement and one commit
 * (`claimBatchGroup`). A burst of 100 resumes is then a handful of statements instead of 100 commits queueing for
 * the pool (docs/architecture.md, "Replicas on PostgreSQL"); a lone claim is never delayed.
 *
 * Each claim is decided exactly as alone: same conditions, per row. Two claims of one thread never share a group
 * (the second waits, and is then refused or admitted knowing the first). A statement that fails on one row — a
 * taken run id (unique violation), another data or integrity error, a deadlock with another replica's group — wrote
 * nothing and is retried claim by claim, so one claim's refusal never becomes another's. Any other error (the
 * connection, the database) fails the claims of that statement, as it would have failed each alone.
 */
export class ClaimGroups {
  readonly #q: Queryable
  readonly #concurrency: number
  #queue: Waiting[] = []
  /** Threads with a claim in flight. */
  readonly #threads = new Set<string>()
  #inFlight = 0

  constructor(q: Queryable, concurrency: number) {
    this.#q = q
    // Anything else would never send a claim (every admission would wait forever): refused where it is configured.
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError('claimConcurrency must be a positive integer.')
    this.#concurrency = concurrency
  }

  claim(request: ClaimBatchRequest): Promise<ClaimBatchResult> {
    return new Promise<ClaimBatchResult>((resolve, reject) => {
      this.#queue.push({ request, resolve, reject })
      this.#pump()
    })
  }

  #pump(): void {
    while (this.#inFlight < this.#concurrency && this.#queue.length > 0) {
      const group: Waiting[] = []
      const rest: Waiting[] = []
      const threads = new Set<string>()
      for (const item of this.#queue) {
        const { threadId } = item.request
        if (group.length >= MAX_CLAIM_GROUP || this.#threads.has(threadId) || threads.has(threadId)) rest.push(item)
        else {
          threads.add(threadId)
          group.push(item)
        }
      }
      this.#queue = rest
      if (group.length === 0) return
      this.#inFlight += 1
      for (const t of threads) this.#threads.add(t)
      const requests = group.map((g) => g.request)
      void this.#send(requests)
        .catch((error: unknown) => requests.map((): Settled => ({ ok: false, error })))
        .then((results) => {
          this.#inFlight -= 1
          for (const t of threads) this.#threads.delete(t)
          group.forEach((g, i) => {
            const r = results[i]
            if (r?.ok) g.resolve(r.value)
            else g.reject(r ? r.error : new Error('claim not answered'))
          })
          this.#pump()
        })
    }
  }

  /** The outcome of each request, in order. */
  async #send(requests: readonly ClaimBatchRequest[]): Promise<Settled[]> {
    if (requests.length === 1) return [await settle(claimBatch(this.#q, requests[0]!))]
    let found: { ord: string; thread: ThreadRow }[]
    try {
      found = await rows(this.#q, sql.claimBatchGroup(requests))
    } catch (error) {
      if (!failedOnOneRow(error)) return requests.map(() => ({ ok: false, error }))
      // A taken run id, another row-level violation, or a deadlock with another replica's group: the statement wrote
      // nothing; each claim is decided on its own, one after the other (the admission pool stays free for others).
      const each: Settled[] = []
      for (const request of requests) each.push(await settle(claimBatch(this.#q, request)))
      return each
    }
    const results: (Settled | undefined)[] = requests.map(() => undefined)
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
    return results as Settled[]
  }
}

const keyOf = (threadId: string, batchId: string) => `${threadId}\u001f${batchId}`

/** Errors of one row that fail a whole statement: data exceptions (22), integrity violations (23), deadlock. */
function failedOnOneRow(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23') || code === '40P01')
}

interface Waiting {
  readonly request: ClaimBatchRequest
  readonly resolve: (result: ClaimBatchResult) => void
  readonly reject: (error: unknown) => void
}

type Settled = { readonly ok: true; readonly value: ClaimBatchResult } | { readonly ok: false; readonly error: unknown }

const settle = (result: Promise<ClaimBatchResult>): Promise<Settled> =>
  result.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  )
