/**
 * Asking from inside a tool (docs/approvals.md#asking-from-inside-a-tool) next to a plain approval, on SQLite, in one
 * run: the pause (a run whose tool call pauses) and the resume that carries the answer out (for `ctx.interrupt`: store
 * the answer, run `execute` again from the top, claim, settle), each through `app.request` to the end of the stream.
 *
 *   A. a tool with `approval: 'always'`: pause on its approval, resume approving it;
 *   B. a tool with `approval: 'never'` that asks once with `ctx.interrupt`: pause on its question, resume answering it.
 *
 *   node --import tsx bench/ask-inside-tool-bench.ts     # env: BENCH_CYCLES (300)
 */
import { randomUUID } from 'node:crypto'
import type { ToolDefinition } from '../src/agent/tool.ts'
import { median, percentile } from './bench-utils.ts'
import { startCommandBenchApp } from './command-bench-app.ts'

const CYCLES = Number(process.env.BENCH_CYCLES ?? 300)
const SCHEMA = {
  type: 'object',
  properties: { ok: { type: 'boolean' } },
  required: ['ok'],
  additionalProperties: false,
}
const NO_ARGS = { type: 'object', properties: {}, additionalProperties: false }

const tools: ToolDefinition[] = [
  {
    name: 'approved',
    description: 'Needs approval.',
    parameters: NO_ARGS,
    approval: 'always',
    execute: () => ({ ran: 1 }),
  },
  {
    name: 'asking',
    description: 'Asks once from inside execute.',
    parameters: NO_ARGS,
    execute: async (_args, ctx) => ({ answer: await ctx.interrupt({ message: 'OK?', responseSchema: SCHEMA }) }),
  },
]
const { post, input, ask, close } = await startCommandBenchApp('ask', tools)

async function cycle(tool: string, payload: unknown): Promise<{ pause: number; resume: number }> {
  const threadId = `t_${randomUUID()}`
  let t = performance.now()
  const paused = await ask(threadId, tool)
  const pause = performance.now() - t
  const interruptId = /"interrupts":\[\{"id":"([^"]+)"/.exec(paused)?.[1]
  if (!interruptId) throw new Error('no interrupt')
  t = performance.now()
  const done = await post(input(threadId, { resume: [{ interruptId, status: 'resolved', payload }] }))
  const resume = performance.now() - t
  if (!done.includes('"type":"success"')) throw new Error('the resume did not finish')
  return { pause, resume }
}

const results: Record<string, { pause: number[]; resume: number[] }> = {
  'A. approval (approval: always)': { pause: [], resume: [] },
  'B. ctx.interrupt inside execute': { pause: [], resume: [] },
}
// Warm-up, then interleaved so both see the same machine.
for (let i = 0; i < 20; i++) {
  await cycle('approved', { approved: true })
  await cycle('asking', { ok: true })
}
for (let i = 0; i < CYCLES; i++) {
  const a = await cycle('approved', { approved: true })
  const b = await cycle('asking', { ok: true })
  results['A. approval (approval: always)']!.pause.push(a.pause)
  results['A. approval (approval: always)']!.resume.push(a.resume)
  results['B. ctx.interrupt inside execute']!.pause.push(b.pause)
  results['B. ctx.interrupt inside execute']!.resume.push(b.resume)
}
const ms = (x: number) => `${x.toFixed(2)} ms`
console.log(`ask-inside-tool bench: ${CYCLES} cycles each, SQLite, in process (app.request)`)
for (const [name, r] of Object.entries(results)) {
  console.log(
    `${name}: pause p50 ${ms(median(r.pause))} p99 ${ms(percentile(r.pause, 99))}; ` +
      `resume p50 ${ms(median(r.resume))} p99 ${ms(percentile(r.resume, 99))}`,
  )
}
await close()
