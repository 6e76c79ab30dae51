/**
 * What a passing guardrail costs (docs/guardrails.md), on SQLite, in one process, measured next to the same run
 * without guardrails: a run of one tool call and a final answer, so each guarded run makes two synchronous checks
 * (one `args`, one `output`). The two servers (same scripted model, same tool) run interleaved.
 *
 * B. The check step alone (`runChecks`, what a guarded call or answer adds on the hot path: the check and its event),
 *    10,000 times, so a loaded machine's noise in whole runs does not hide its own cost.
 *
 *   node --import tsx bench/guardrails-bench.ts     # env: BENCH_CYCLES (400)
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AgentDefinition } from '../src/agent/agent.ts'
import type { GuardrailDefinition } from '../src/agent/guardrail.ts'
import { bearerTokens } from '../src/auth/authenticate.ts'
import { NO_PRINCIPAL_QUOTAS } from '../src/config/limits.ts'
import { createAgentServer } from '../src/http/app.ts'
import { createLogger } from '../src/observability/logger.ts'
import { scriptedModel } from '../src/models/scripted.ts'
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts'
import { median, percentile } from './bench-utils.ts'
import { resolveGuardrail } from '../src/agent/guardrail.ts'
import { runChecks } from '../src/core/guardrails/guardrail-checks.ts'

const CYCLES = Number(process.env.BENCH_CYCLES ?? 400)
const CHECKS_PER_RUN = 2
const semver: GuardrailDefinition<{ version: string }> = {
  name: 'semver',
  on: 'args',
  check: ({ version }) => (/^v\d+(\.\d+){0,2}$/.test(version) ? { pass: true } : { pass: false, reason: 'no' }),
}
const noSecrets: GuardrailDefinition<string> = {
  name: 'no-secrets',
  on: 'output',
  check: (text) => (/\bpassword\s*:/i.test(text) ? { pass: false, reason: 'no' } : { pass: true }),
}

function agent(guarded: boolean): AgentDefinition {
  return {
    model: scriptedModel((request) =>
      request.messages.at(-1)?.role === 'tool'
        ? { text: 'Released v2.1.0 to staging.' }
        : { toolCalls: [{ name: 'release', args: { version: 'v2.1.0' } }] },
    ),
    tools: [
      {
        name: 'release',
        description: 'release',
        parameters: { type: 'object', properties: { version: { type: 'string' } }, required: ['version'] },
        execute: (args) => ({ released: (args as { version: string }).version }),
      },
    ],
    ...(guarded ? { guardrails: [semver as GuardrailDefinition, noSecrets as GuardrailDefinition] } : {}),
  }
}

const dir = mkdtempSync(join(tmpdir(), 'interlude-guardrails-bench-'))
async function server(guarded: boolean) {
  const store = createSqliteStore(join(dir, `${guarded ? 'guarded' : 'plain'}.db`))
  const app = createAgentServer({
    agent: agent(guarded),
    store,
    authenticate: bearerTokens({ alice: 'alice-bench-token' }),
    limits: NO_PRINCIPAL_QUOTAS,
    logError: () => undefined,
    logger: createLogger({ level: 'silent' }),
  })
  await app.ready()
  const run = async (): Promise<number> => {
    const body = {
      threadId: `t_${randomUUID()}`,
      runId: `run_${randomUUID()}`,
      tools: [],
      context: [],
      state: {},
      forwardedProps: {},
      messages: [{ id: `u_${randomUUID()}`, role: 'user', content: 'release' }],
    }
    const t = performance.now()
    const response = await app.request(`http://localhost${app.basePath}/runs`, {
      method: 'POST',
      headers: { Authorization: 'Bearer alice-bench-token', 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
    const text = await response.text()
    const elapsed = performance.now() - t
    if (!text.includes('"type":"success"') || !text.includes('released')) throw new Error(`the run failed: ${text}`)
    return elapsed
  }
  return { run, close: async () => (await app.close(), await store.close()) }
}

const plain = await server(false)
const guarded = await server(true)
for (let i = 0; i < 30; i++) {
  await plain.run()
  await guarded.run()
}
const times = { plain: [] as number[], guarded: [] as number[] }
for (let i = 0; i < CYCLES; i++) {
  times.plain.push(await plain.run())
  times.guarded.push(await guarded.run())
}
const ms = (x: number) => `${x.toFixed(3)} ms`
const line = (name: string, xs: number[]) => `${name}: p50 ${ms(median(xs))} p99 ${ms(percentile(xs, 99))}`
console.log(`guardrails bench: SQLite, in process (app.request), ${CYCLES} runs each, interleaved`)
console.log(`   ${line('without guardrails        ', times.plain)}`)
console.log(`   ${line('with 2 passing guardrails ', times.guarded)}`)
const per = (q: (xs: number[]) => number) => (q(times.guarded) - q(times.plain)) / CHECKS_PER_RUN
console.log(`   per checked call or answer: p50 ${ms(per(median))}, p99 ${ms(per((xs) => percentile(xs, 99)))}`)
const resolved = [resolveGuardrail(semver as GuardrailDefinition, 'bench')]
const ctx = { threadId: 't', runId: 'r', principal: 'alice' }
const step = async () => {
  const checks = runChecks(resolved, { version: 'v2.1.0' }, ctx, { toolCallId: 'c' }, () => undefined)
  for (let r = await checks.next(); !r.done; r = await checks.next());
}
for (let i = 0; i < 1000; i++) await step()
const alone: number[] = []
for (let i = 0; i < 10_000; i++) {
  const t = performance.now()
  await step()
  alone.push(performance.now() - t)
}
console.log(`B. the check step alone (one passing args guardrail and its event), 10,000 times`)
console.log(`   ${line('runChecks', alone)}`)
await plain.close()
await guarded.close()
rmSync(dir, { recursive: true, force: true })
