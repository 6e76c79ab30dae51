/**
 * The run queue (docs/protocol.md#multitask), on SQLite in one process (`app.request`), in one run:
 *
 * A. Enqueue admission: 100 threads, each with a run whose model holds; `BENCH_PER_THREAD` (5) inputs per thread are
 *    queued one after the other (`202 { queued }`), timed from the request to the answer.
 * B. The gap from one queued run's end to the next one's start, timed between the commit of a run's end (`finishRun`)
 *    and the commit of the next run's `RUN_STARTED` on that thread: half the threads drain their queue one thread at a
 *    time (the gap itself), then the other half all at once (the gap under 50 queues draining together).
 *
 *   node --import tsx bench/queue-bench.ts     # env: BENCH_THREADS (100), BENCH_PER_THREAD (5)
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Message } from '@interlude/protocol'
import { bearerTokens } from '../src/auth/authenticate.ts'
import { NO_PRINCIPAL_QUOTAS } from '../src/config/limits.ts'
import { createAgentServer } from '../src/http/app.ts'
import type { ModelChunk, ModelProvider, ModelRequest } from '../src/models/model.ts'
import { createLogger } from '../src/observability/logger.ts'
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts'
import { threadKey } from '../src/store/thread-key.ts'
import { interceptStore } from '../src/test-utils/intercept-store.ts'
import { fmt, median, percentile } from './bench-utils.ts'

const THREADS = Number(process.env.BENCH_THREADS ?? 100)
const PER_THREAD = Number(process.env.BENCH_PER_THREAD ?? 5)

/** Answers at once, except `hold <n>`, which waits until `release(n)`. */
function holdingModel(): { model: ModelProvider; holding(): number; release(n: number): void } {
  const gates = new Map<string, () => void>()
  const model: ModelProvider = {
    name: 'queue-bench',
    async *stream(request: ModelRequest): AsyncGenerator<ModelChunk> {
      const text = String([...request.messages].reverse().find((m: Message) => m.role === 'user')?.content)
      if (text.startsWith('hold')) await new Promise<void>((resolve) => gates.set(text, resolve))
      yield { type: 'text', delta: 'ok' }
    },
  }
  return { model, holding: () => gates.size, release: (n) => gates.get(`hold ${n}`)?.() }
}

const dir = mkdtempSync(join(tmpdir(), 'interlude-queue-bench-'))
const base = createSqliteStore(join(dir, 'bench.db'))
const ended = new Map<string, number>()
let gaps: number[] = []
/** Runs each thread has still to end, and who waits for it to reach 0. */
const left = new Map<string, { runs: number; done: () => void; drained: Promise<void> }>()
const store = interceptStore(base, {
  finishRun: async (request) => {
    const stored = await base.finishRun(request)
    ended.set(request.threadId, performance.now())
    const thread = left.get(request.threadId)!
    if (--thread.runs === 0) thread.done()
    return stored
  },
  appendEvents: async (threadId, runId, events) => {
    const stored = await base.appendEvents(threadId, runId, events)
    const end = ended.get(threadId)
    if (end !== undefined && events.some((e) => e.type === 'RUN_STARTED')) {
      gaps.push(performance.now() - end)
      ended.delete(threadId)
    }
    return stored
  },
})
const hold = holdingModel()
const app = createAgentServer({
  agent: { model: hold.model, tools: [] },
  store,
  authenticate: bearerTokens({ alice: 'alice-bench-token' }),
  limits: NO_PRINCIPAL_QUOTAS,
  logError: (message, error) => console.error(message, error),
  logger: createLogger({ level: 'silent' }),
})
await app.ready()

const post = (threadId: string, text: string, multitask?: string) =>
  app.request(`http://localhost${app.basePath}/runs`, {
    method: 'POST',
    headers: { Authorization: 'Bearer alice-bench-token', 'Content-Type': 'application/json' },
    body: JSON.stringify({
      threadId,
      runId: `run_${randomUUID()}`,
      messages: [{ id: `u_${randomUUID()}`, role: 'user', content: text }],
      tools: [],
      context: [],
      state: {},
      forwardedProps: multitask === undefined ? {} : { interlude: { multitask } },
    }),
  })

const threads = Array.from({ length: THREADS }, () => `thread_${randomUUID()}`)
for (const threadId of threads) {
  let done!: () => void
  const drained = new Promise<void>((resolve) => (done = resolve))
  left.set(threadKey('alice', threadId), { runs: PER_THREAD + 1, done, drained })
}
// Each thread's first run holds: its stream is left open (the run executes in the background either way).
threads.forEach((threadId, i) => {
  void (async () => (await post(threadId, `hold ${i}`)).body?.cancel())()
})
while (hold.holding() < THREADS) await new Promise((resolve) => setTimeout(resolve, 5))

const admissions: number[] = []
for (let round = 0; round < PER_THREAD; round++) {
  for (const threadId of threads) {
    const start = performance.now()
    const response = await post(threadId, `queued ${round}`, 'enqueue')
    const took = performance.now() - start
    if (response.status !== 202) throw new Error(`${response.status}: ${await response.text()}`)
    await response.body?.cancel()
    admissions.push(took)
  }
}
const half = Math.floor(THREADS / 2)
for (let i = 0; i < half; i++) {
  hold.release(i)
  await left.get(threadKey('alice', threads[i]!))!.drained
}
const oneAtATime = gaps
gaps = []
const drainStart = performance.now()
for (let i = half; i < THREADS; i++) hold.release(i)
await Promise.all(threads.slice(half).map((threadId) => left.get(threadKey('alice', threadId))!.drained))
const drainMs = performance.now() - drainStart

const ms = (n: number) => `${n.toFixed(2)} ms`
console.log(`queue bench: SQLite, one process, ${THREADS} threads × ${PER_THREAD} queued inputs`)
console.log(
  `A. enqueue admission (${fmt(admissions.length)}, each thread running): p50 ${ms(median(admissions))}, p99 ${ms(percentile(admissions, 99))} (target ≤ 10 ms)`,
)
console.log(
  `B. end → next RUN_STARTED, one queue draining at a time (${fmt(oneAtATime.length)} gaps): p50 ${ms(median(oneAtATime))}, p99 ${ms(percentile(oneAtATime, 99))} (target ≤ 50 ms)`,
)
console.log(
  `   ${THREADS - half} queues draining at once (${fmt(gaps.length)} gaps): p50 ${ms(median(gaps))}, p99 ${ms(percentile(gaps, 99))}; drained in ${fmt(drainMs)} ms`,
)
await app.close()
rmSync(dir, { recursive: true, force: true })
