/** Part 6 of the durability bench: PostgreSQL statements per admission and per run, counted. */
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { scriptedModel } from '../../src/models/scripted.ts'
import { countFrames, median } from '../bench-utils.ts'
import { startServer } from '../../src/server.ts'
import { NO_PRINCIPAL_QUOTAS } from '../../src/config/limits.ts'
import { PG_URL, TOKENS, AUTH, newSchema } from './setup.ts'

// ---- 6. PostgreSQL round trips -----------------------------------------------------------------------

export interface RoundTrips {
  /** Statements on the admission pool until the answer's headers (BEGIN/COMMIT included). */
  readonly admission: number
  /** Every statement of the request: admission, the run it started and its stream, until the stream ends. */
  readonly total: number
  /** Transactions (BEGIN) among `total`. */
  readonly transactions: number
}

/**
 * Counts the statements the PostgreSQL store sends (each one round trip) for one request at a time, in process:
 * a resume admission, a new-input admission and one durable run of TOKENS events. Deterministic, unlike the timings:
 * the figure to compare before/after a change. Lease renewals (a timer, not the request) are left out.
 */
export async function roundTrips(): Promise<{
  resume: RoundTrips
  input: RoundTrips
  run: RoundTrips & { events: number }
}> {
  const poolOf = new WeakMap<object, 'run' | 'admission'>()
  let mainPool: object | undefined
  const counts = { admission: 0, total: 0, transactions: 0 }
  const heartbeat = 'UPDATE runs SET lease_until'
  const clientQuery = pg.Client.prototype.query
  const poolConnect = pg.Pool.prototype.connect
  // Tag each pooled client with its pool on checkout (pg-pool's query() checks out through connect() too).
  const tag = (pool: object, client: object) => poolOf.set(client, pool === mainPool ? 'run' : 'admission')
  const connect = poolConnect as (this: pg.Pool, callback?: (...args: unknown[]) => void) => unknown
  pg.Pool.prototype.connect = function (this: pg.Pool, callback?: (...args: unknown[]) => void) {
    if (typeof callback === 'function')
      return connect.call(this, (error: unknown, client: unknown, done: unknown) => {
        if (typeof client === 'object' && client !== null) tag(this, client)
        callback(error, client, done)
      })
    return (connect.call(this) as Promise<pg.PoolClient>).then((client) => (tag(this, client), client))
  } as never
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string }
    const text = typeof config === 'string' ? config : (config.text ?? '')
    if (!text.startsWith(heartbeat) && !text.startsWith('LISTEN')) {
      counts.total += 1
      if (text === 'BEGIN') counts.transactions += 1
      if (poolOf.get(this) === 'admission') counts.admission += 1
    }
    return (clientQuery as (...a: unknown[]) => unknown).apply(this, args)
  } as never
  const text = 'tok '.repeat(TOKENS)
  const servers: Awaited<ReturnType<typeof startServer>>[] = []
  const start = async (agent?: Parameters<typeof startServer>[0]['agent']) => {
    const server = await startServer({
      dbUrl: PG_URL,
      dbSchema: await newSchema(),
      tokens: { bench: 'bench-secret' },
      limits: NO_PRINCIPAL_QUOTAS,
      logLevel: 'warn',
      pacingMs: 0,
      // No sweeps or polls during the count (runs here finish long before a lease could end).
      expirySweepMs: 3_600_000,
      pollMs: 3_600_000,
      runLeaseMs: 3_600_000,
      ...(agent ? { agent } : {}),
    })
    servers.push(server)
    mainPool = (server.store as unknown as { pool: object }).pool
    return server
  }
  const post = (server: { baseUrl: string }, body: unknown) =>
    fetch(`${server.baseUrl}/runs`, {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
  /** Counts of one request: the admission part at the headers, the rest once its stream ended. */
  const measure = async (
    send: () => Promise<Response>,
    read: (response: Response) => Promise<number> = countFrames,
  ) => {
    await new Promise((r) => setTimeout(r, 100))
    counts.admission = counts.total = counts.transactions = 0
    const response = await send()
    const admission = counts.admission
    if (response.status !== 200) throw new Error(`refused: ${response.status} ${await response.text()}`)
    const frames = await read(response)
    // The run's last writes (after its terminal event was appended) land just after the stream ends.
    await new Promise((r) => setTimeout(r, 200))
    return { admission, total: counts.total, transactions: counts.transactions, frames }
  }
  try {
    const demo = await start()
    const samples: { resume: RoundTrips[]; input: RoundTrips[] } = { resume: [], input: [] }
    for (let i = 0; i < 5; i++) {
      const threadId = `rt-${randomUUID()}`
      const paused = { interrupts: [] as { id: string }[] }
      samples.input.push(
        await measure(
          () =>
            post(demo, {
              threadId,
              runId: randomUUID(),
              messages: [{ id: randomUUID(), role: 'user', content: 'deploy v2.1 to production' }],
            }),
          async (response) => {
            const body = await response.text()
            const last = JSON.parse(body.trim().split('\n\n').pop()!.split('data: ')[1]!) as {
              outcome: { interrupts: { id: string }[] }
            }
            paused.interrupts = last.outcome.interrupts
            return body.split('\n\n').length - 1
          },
        ),
      )
      samples.resume.push(
        await measure(() =>
          post(demo, {
            threadId,
            runId: randomUUID(),
            messages: [],
            resume: paused.interrupts.map((i) => ({
              interruptId: i.id,
              status: 'resolved',
              payload: { approved: true },
            })),
          }),
        ),
      )
    }
    const long = await start({ model: scriptedModel(() => ({ text }), { pacingMs: 0 }) })
    const run = await measure(() =>
      post(long, {
        threadId: `rt-${randomUUID()}`,
        runId: randomUUID(),
        messages: [{ id: randomUUID(), role: 'user', content: 'go' }],
      }),
    )
    const typical = (xs: RoundTrips[]): RoundTrips => ({
      admission: median(xs.map((x) => x.admission)),
      total: median(xs.map((x) => x.total)),
      transactions: median(xs.map((x) => x.transactions)),
    })
    return { resume: typical(samples.resume), input: typical(samples.input), run: { ...run, events: run.frames } }
  } finally {
    pg.Client.prototype.query = clientQuery
    pg.Pool.prototype.connect = poolConnect
    for (const server of servers) await server.close()
  }
}
