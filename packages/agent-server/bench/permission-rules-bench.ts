/**
 * Remembered-permission lookup (docs/approvals.md#remembered-permissions): what the rule lookup adds to
 * one tool call's verdict on SQLite, side by side, in one run (docs/quality.md#benchmarks):
 *
 *   A. a tool that needs approval and allows no `remember` (no lookup: the baseline),
 *   B. the same call, `remember` allowed, 1,000 rules of the principal on other tools and threads,
 *   C. the same, the 1,000 rules all on this tool and thread, bound to other arguments (the worst
 *      case: every row is a candidate and is compared),
 *   D. like C with a matching rule (the call is approved by the rule).
 *
 *   node --import tsx bench/permission-rules-bench.ts     # env: BENCH_CALLS (5000)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PermissionRule } from '@interlude/protocol'
import { resolveTool } from '../src/agent/tool.ts'
import type { ToolDefinition } from '../src/agent/tool.ts'
import { callArgsKey, ruleFor } from '../src/core/tools/permission-rules.ts'
import { classifyCall } from '../src/core/tools/tool-verdicts.ts'
import type { VerdictContext } from '../src/core/tools/tool-verdicts.ts'
import { ValidatorCache } from '../src/schema/validator-cache.ts'
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts'
import type { Store } from '../src/store/store.ts'
import { median, percentile } from './bench-utils.ts'

const CALLS = Number(process.env.BENCH_CALLS ?? 5000)
const RULES = 1000
const OWNER = 'alice'
const THREAD = 'thread-bench'

const base: ToolDefinition<{ service: string }> = {
  name: 'restart',
  description: 'Restart a service.',
  parameters: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
  approval: 'always',
  execute: () => ({}),
}
const plain = resolveTool(base as ToolDefinition)
const remembering = resolveTool({
  ...base,
  remember: ['thread', 'principal'],
  rememberMatch: (args: { service: string }) => ({ service: args.service }),
} as ToolDefinition)

function context(store: Store, tool: ReturnType<typeof resolveTool>): VerdictContext {
  return {
    tools: new Map([[tool.name, tool]]),
    clientTools: [],
    validators: new ValidatorCache(),
    policyContext: () => ({}) as never,
    logError: () => undefined,
    // As the turn wires it (core/turn/turn.ts): one indexed query, then the argument match.
    findRule: async (t, args, toolCallId) =>
      ruleFor(
        { tool: t, args, toolCallId, owner: OWNER, threadId: THREAD },
        await store.matchPermissionRules({
          owner: OWNER,
          threadId: THREAD,
          toolName: t.name,
          argsKey: callArgsKey(t, args),
        }),
        undefined,
      ),
  }
}

function rule(i: number, over: Partial<PermissionRule> = {}): PermissionRule {
  return {
    ruleId: `rule_${i}`,
    owner: OWNER,
    scope: 'thread',
    threadId: THREAD,
    toolName: 'restart',
    argsMatch: { service: `svc-${i}` },
    createdBy: OWNER,
    createdAt: new Date(1_900_000_000_000 + i).toISOString(),
    sourceInterruptId: `int_${i}`,
    ...over,
  }
}

async function measure(label: string, ctx: VerdictContext, service: string, expect: string): Promise<number[]> {
  const call = { id: 'c-1', name: 'restart', argsText: JSON.stringify({ service }) }
  for (let i = 0; i < 200; i++) await classifyCall(call, ctx) // warm-up
  const times: number[] = []
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now()
    const verdict = await classifyCall(call, ctx)
    times.push(performance.now() - t0)
    if (i === 0 && verdict.kind !== expect) throw new Error(`${label}: expected ${expect}, got ${verdict.kind}`)
  }
  return times
}

const dir = mkdtempSync(join(tmpdir(), 'interlude-rules-bench-'))
const stores: Store[] = []
async function storeWith(rules: PermissionRule[]): Promise<Store> {
  const store = createSqliteStore(join(dir, `rules-${stores.length}.db`))
  stores.push(store)
  for (const r of rules) await store.addPermissionRule(r)
  return store
}

try {
  const empty = await storeWith([])
  const elsewhere = await storeWith(
    Array.from({ length: RULES }, (_, i) =>
      rule(i, i % 2 === 0 ? { toolName: `other_${i % 50}` } : { threadId: `thread-${i}` }),
    ),
  )
  const sameTool = await storeWith(Array.from({ length: RULES }, (_, i) => rule(i)))
  const rows: [string, number[]][] = [
    ['A. approval, no remember (baseline)', await measure('A', context(empty, plain), 'web', 'interrupt')],
    ['B. 1,000 rules on other tools/threads', await measure('B', context(elsewhere, remembering), 'web', 'interrupt')],
    ['C. 1,000 rules on this tool, no match', await measure('C', context(sameTool, remembering), 'web', 'interrupt')],
    ['D. 1,000 rules on this tool, a match', await measure('D', context(sameTool, remembering), 'svc-999', 'execute')],
  ]
  const baseP99 = percentile(rows[0]![1], 99)
  console.log(`Remembered-rule lookup, SQLite, ${CALLS} verdicts each (ms per call)`)
  console.log('case'.padEnd(42), 'median'.padStart(8), 'p99'.padStart(8), 'p99 added'.padStart(10))
  for (const [label, times] of rows) {
    const p99 = percentile(times, 99)
    console.log(
      label.padEnd(42),
      median(times).toFixed(3).padStart(8),
      p99.toFixed(3).padStart(8),
      (p99 - baseP99).toFixed(3).padStart(10),
    )
  }
  console.log('target: the lookup adds ≤ 1 ms p99 with 1,000 rules for the principal')
} finally {
  await Promise.all(stores.map((s) => s.close()))
  rmSync(dir, { recursive: true, force: true })
}
