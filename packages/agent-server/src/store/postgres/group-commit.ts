/**
 * Group commit (docs/architecture.md, "Replicas on PostgreSQL"): a request goes out at once while fewer than
 * `concurrency` statements are in flight; the requests that arrive while they all are wait and then go out together,
 * as one statement and one commit. A burst is then a handful of statements instead of one commit per request queueing
 * for the pool. Resume claims (`claim-groups.ts`) and grant takes (`grant-takes.ts`) use it.
 *
 * Each request is decided exactly as alone. Two requests with one `key` never share a group nor are in flight at once
 * (the second waits, and is then decided knowing the first). A group statement that fails on one row — an integrity
 * or data error, a deadlock with another replica's group — wrote nothing and is retried request by request, so one
 * request's error never becomes another's. Any other error (the connection, the database) fails the requests of that
 * statement, as it would have failed each alone.
 */
export interface GroupCommitOptions<Req, Res> {
  /** Statements in flight at once (a positive integer). */
  readonly concurrency: number
  /** Requests in one statement at most (its parameters grow with it). */
  readonly maxGroup: number
  readonly key: (request: Req) => string
  /** One request, alone. */
  readonly one: (request: Req) => Promise<Res>
  /** Two or more requests as one statement: each one's outcome, in order. Throws when the statement failed. */
  readonly group: (requests: readonly Req[]) => Promise<Settled<Res>[]>
  /**
   * Send what arrived in the same tick together (after a microtask) instead of the first requests alone: for
   * requests that come in bursts from one place, such as the takes of calls that one event loop turn releases.
   */
  readonly gather?: boolean
  /** The name of the `concurrency` setting, for the error when it is not a positive integer. */
  readonly setting: string
}

export type Settled<Res> = { readonly ok: true; readonly value: Res } | { readonly ok: false; readonly error: unknown }

export class GroupCommit<Req, Res> {
  readonly #options: GroupCommitOptions<Req, Res>
  #queue: Waiting<Req, Res>[] = []
  /** Keys with a request in flight. */
  readonly #keys = new Set<string>()
  #inFlight = 0
  #scheduled = false

  constructor(options: GroupCommitOptions<Req, Res>) {
    // Anything else would never send a request (every caller would wait forever): refused where it is configured.
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1)
      throw new RangeError(`${options.setting} must be a positive integer.`)
    this.#options = options
  }

  send(request: Req): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      this.#queue.push({ request, resolve, reject })
      if (!this.#options.gather) this.#pump()
      else if (!this.#scheduled) {
        this.#scheduled = true
        queueMicrotask(() => {
          this.#scheduled = false
          this.#pump()
        })
      }
    })
  }

  #pump(): void {
    const { concurrency, maxGroup, key } = this.#options
    while (this.#inFlight < concurrency && this.#queue.length > 0) {
      const group: Waiting<Req, Res>[] = []
      const rest: Waiting<Req, Res>[] = []
      const keys = new Set<string>()
      for (const item of this.#queue) {
        const k = key(item.request)
        if (group.length >= maxGroup || this.#keys.has(k) || keys.has(k)) rest.push(item)
        else {
          keys.add(k)
          group.push(item)
        }
      }
      this.#queue = rest
      if (group.length === 0) return
      this.#inFlight += 1
      for (const k of keys) this.#keys.add(k)
      const requests = group.map((g) => g.request)
      void this.#send(requests).then((results) => {
        this.#inFlight -= 1
        for (const k of keys) this.#keys.delete(k)
        group.forEach((g, i) => {
          const r = results[i]
          if (r?.ok) g.resolve(r.value)
          else g.reject(r ? r.error : new Error('request not answered'))
        })
        this.#pump()
      })
    }
  }

  /** The outcome of each request, in order; never rejects. */
  async #send(requests: readonly Req[]): Promise<Settled<Res>[]> {
    const { one, group } = this.#options
    if (requests.length === 1) return [await settle(one(requests[0]!))]
    try {
      return await group(requests)
    } catch (error) {
      if (!failedOnOneRow(error)) return requests.map(() => ({ ok: false, error }))
      // The statement wrote nothing: each request is decided on its own, one after the other (the pool stays free).
      const each: Settled<Res>[] = []
      for (const request of requests) each.push(await settle(one(request)))
      return each
    }
  }
}

/** Errors of one row that fail a whole statement: data exceptions (22), integrity violations (23), deadlock. */
export function failedOnOneRow(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23') || code === '40P01')
}

export const settle = <Res>(result: Promise<Res>): Promise<Settled<Res>> =>
  result.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  )

interface Waiting<Req, Res> {
  readonly request: Req
  readonly resolve: (result: Res) => void
  readonly reject: (error: unknown) => void
}
