/**
 * The cross-owner inbox's cost (docs/approvals.md#deciding-without-a-chat-stream). Not a test. Run from
 * packages/agent-server:  node --import tsx bench/inbox-bench.ts
 *
 * One SQLite server in this process (`app.request`) with BENCH_OPEN (1000) open batches of `eng`: the server time of
 * `GET /interrupts?status=pending` for `alice` (decides only her own: none here) and for `mgr` (an approver: a full
 * page of 20), BENCH_ROUNDS (300) requests each; p50 and p95.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { bearerTokens } from '../src/auth/authenticate.ts'
import { NO_PRINCIPAL_QUOTAS } from '../src/config/limits.ts'
import { releaseAssistant } from '../src/demo/release-assistant.ts'
import { createAgentServer } from '../src/http/app.ts'
import { createLogger } from '../src/observability/logger.ts'
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts'

const OPEN = Number(process.env.BENCH_OPEN ?? 1000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300)
const NOW = Date.now()
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'interlude-inbox-bench-'))
const store = createSqliteStore(path.join(dir, 'inbox.db'))
for (let n = 0; n < OPEN; n++) {
  const threadId = `t-${n}`
  const runId = `r-${n}`
  await store.startInputRun({
    threadId,
    ownerId: 'eng',
    runId,
    parentRunId: undefined,
    expectedRevision: null,
    initialState: {},
    messages: [{ id: `u-${n}`, role: 'user', content: `deploy ${n}` }],
    toolResults: [],
    now: NOW - OPEN + n,
    executorId: 'bench',
    leaseUntil: NOW + 600_000,
  })
  const interrupt = { id: `int-${n}`, reason: 'tool_call', toolCallId: `call-${n}` }
  await store.createBatch({
    batchId: `batch-${n}`,
    threadId,
    runId,
    interrupts: [{ interrupt, kind: 'approval', toolCallId: interrupt.toolCallId, toolName: 'deploy' }],
    createdAt: NOW - OPEN + n,
    expiresAt: NOW + 600_000,
    onExpiry: 'deny',
  })
  await store.finishRun({
    threadId,
    runId,
    status: 'interrupted',
    outcome: { type: 'interrupt', interrupts: [] },
    errorCode: undefined,
    events: [{ type: 'RUN_FINISHED', json: '{"type":"RUN_FINISHED"}' }],
    closeBatch: undefined,
    now: NOW - OPEN + n,
  })
}
const app = createAgentServer({
  agent: releaseAssistant({ pacingMs: 0 }),
  store,
  approvers: ['mgr'],
  limits: NO_PRINCIPAL_QUOTAS,
  authenticate: bearerTokens({ alice: 'alice-secret', mgr: 'mgr-secret' }),
  logError: () => undefined,
  logger: createLogger({ level: 'silent' }),
})
await app.ready()

async function measure(principal: 'alice' | 'mgr'): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now()
    const r = await app.request(`http://localhost${app.basePath}/interrupts?status=pending`, {
      headers: { Authorization: `Bearer ${principal}-secret` },
    })
    await r.text()
    times.push(performance.now() - started)
  }
  return times.sort((a, b) => a - b)
}
const at = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
for (const principal of ['alice', 'mgr'] as const) {
  const t = await measure(principal)
  console.log(
    `${principal.padEnd(5)} GET /interrupts over ${OPEN} open batches: p50 ${at(t, 0.5).toFixed(2)} ms, p95 ${at(t, 0.95).toFixed(2)} ms`,
  )
}
await app.close()
fs.rmSync(dir, { recursive: true, force: true })
