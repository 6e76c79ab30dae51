/**
 * What the turn's promises cost (docs/approvals.md#stale-approvals, docs/approvals.md#memoised-steps), on SQLite, in
 * one run, each measured next to the same call without it:
 *
 *   A. 100 concurrent resumes, half approving a call without `observe` and half a call with `observe` (the
 *      fingerprint is taken at the pause and again before execute), alternating in one burst, over ROUNDS rounds;
 *   A'. the same resumes one at a time, alternating, CYCLES of each;
 *   B. a call without steps, with one `ctx.step` and with ten, each a whole run (no approval), interleaved.
 *
 *   node --import tsx bench/turn-promises-bench.ts     # env: BENCH_ROUNDS (5), BENCH_CYCLES (300)
 */
import { randomUUID } from 'node:crypto'
import type { ToolDefinition } from '../src/agent/tool.ts'
import { median, percentile } from './bench-utils.ts'
import { startCommandBenchApp } from './command-bench-app.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const CYCLES = Number(process.env.BENCH_CYCLES ?? 300)
const CONCURRENT = 100
const NO_ARGS = { type: 'object', properties: {}, additionalProperties: false }
const fleet = { version: 'v2.0' }

/** Each `ctx.step` call's own duration (its durable write included), measured inside the tool. */
const stepTimes: number[] = []
const steps = (n: number): ToolDefinition => ({
  name: `steps_${n}`,
  description: `${n} steps`,
  parameters: NO_ARGS,
  execute: async (_args, ctx) => {
    for (let i = 0; i < n; i++) {
      const t = performance.now()
      await ctx.step(`s${i}`, () => ({ i }))
      stepTimes.push(performance.now() - t)
    }
    return { ran: n }
  },
})
const tools: ToolDefinition[] = [
  { name: 'plain', description: 'approval', parameters: NO_ARGS, approval: 'always', execute: () => ({ ran: 1 }) },
  {
    name: 'observed',
    description: 'approval with observe',
    parameters: NO_ARGS,
    approval: 'always',
    observe: () => ({ running: fleet.version }),
    execute: () => ({ ran: 1 }),
  },
  steps(0),
  steps(1),
  steps(10),
]
const { post, input, ask, close } = await startCommandBenchApp('promises', tools)

/** A paused thread waiting for the approval of one call of `tool`. */
async function paused(tool: string): Promise<{ tool: string; threadId: string; interruptId: string }> {
  const threadId = `t_${randomUUID()}`
  const text = await ask(threadId, tool)
  const interruptId = /"interrupts":\[\{"id":"([^"]+)"/.exec(text)?.[1]
  if (!interruptId) throw new Error('no interrupt')
  return { tool, threadId, interruptId }
}

/** One resume approving the call: its latency to the end of its stream. */
async function resume({ threadId, interruptId }: { threadId: string; interruptId: string }): Promise<number> {
  const t = performance.now()
  const done = await post(
    input(threadId, { resume: [{ interruptId, status: 'resolved', payload: { approved: true } }] }),
  )
  if (!done.includes('ran') || !done.includes('"type":"success"')) throw new Error('the approved call did not run')
  return performance.now() - t
}

/**
 * 100 paused threads, half of each tool (alternating), then all their resumes at once: both kinds queue behind the same
 * writer in the same burst, so the difference between them is the feature's cost, not the machine's mood.
 */
async function concurrentResumes(): Promise<Record<'plain' | 'observed', number[]>> {
  const threads = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) => paused(i % 2 === 0 ? 'plain' : 'observed')),
  )
  const latencies = await Promise.all(threads.map(resume))
  return {
    plain: latencies.filter((_, i) => threads[i]!.tool === 'plain'),
    observed: latencies.filter((_, i) => threads[i]!.tool === 'observed'),
  }
}

async function run(tool: string): Promise<number> {
  const t = performance.now()
  const done = await ask(`t_${randomUUID()}`, tool)
  if (!done.includes('"type":"success"')) throw new Error('the run did not finish')
  return performance.now() - t
}

const ms = (x: number) => `${x.toFixed(2)} ms`
const line = (name: string, xs: number[]) => `${name}: p50 ${ms(median(xs))} p99 ${ms(percentile(xs, 99))}`

// Warm-up.
await concurrentResumes()
const resumes: Record<'plain' | 'observed', number[]> = { plain: [], observed: [] }
for (let r = 0; r < ROUNDS; r++) {
  const round = await concurrentResumes()
  resumes.plain.push(...round.plain)
  resumes.observed.push(...round.observed)
}
// One resume at a time, alternating: the latency of a resume with nothing queued in front of it.
const alone: Record<'plain' | 'observed', number[]> = { plain: [], observed: [] }
for (let i = 0; i < CYCLES; i++)
  for (const tool of ['plain', 'observed'] as const) alone[tool].push(await resume(await paused(tool)))
const adds = (xs: Record<'plain' | 'observed', number[]>) =>
  `observe adds: p50 ${ms(median(xs.observed) - median(xs.plain))}, ` +
  `p99 ${ms(percentile(xs.observed, 99) - percentile(xs.plain, 99))}`
console.log(`turn-promises bench: SQLite, in process (app.request)`)
console.log(`A. ${ROUNDS} rounds of ${CONCURRENT} concurrent resumes approving one call, half of them with observe`)
console.log(`   ${line('without observe', resumes.plain)}`)
console.log(`   ${line('with observe   ', resumes.observed)}`)
console.log(`   ${adds(resumes)}`)
console.log(`A'. ${CYCLES} resumes one at a time, alternating`)
console.log(`   ${line('without observe', alone.plain)}`)
console.log(`   ${line('with observe   ', alone.observed)}`)
console.log(`   ${adds(alone)}`)

for (let i = 0; i < 20; i++) for (const n of [0, 1, 10]) await run(`steps_${n}`)
stepTimes.length = 0
const runs: Record<number, number[]> = { 0: [], 1: [], 10: [] }
for (let i = 0; i < CYCLES; i++) for (const n of [0, 1, 10]) runs[n]!.push(await run(`steps_${n}`))
console.log(`B. ${CYCLES} runs each of one call (no approval), interleaved`)
for (const n of [0, 1, 10]) console.log(`   ${line(`${String(n).padStart(2)} steps`, runs[n]!)}`)
const per = (n: number, q: (xs: number[]) => number) => (q(runs[n]!) - q(runs[0]!)) / n
const p99 = (xs: number[]) => percentile(xs, 99)
console.log(
  `   per step: 1 step p50 ${ms(per(1, median))} p99 ${ms(per(1, p99))}; ` +
    `10 steps p50 ${ms(per(10, median))} p99 ${ms(per(10, p99))}`,
)
console.log(`   ${line(`each ctx.step call, timed in the tool (${stepTimes.length})`, stepTimes)}`)
await close()
