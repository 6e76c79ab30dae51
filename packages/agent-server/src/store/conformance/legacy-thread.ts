import { expect } from 'vitest'
import { threadKey } from '../thread-key.ts'
import type { Store } from '../store.ts'

/**
 * A paused thread `support` of alice's as the schema before per-owner keys kept it
 * (docs/decisions.md#threads-keyed-per-owner): one row in every table that names a thread. Statements for both stores
 * (no dialect-specific SQL).
 */
export const LEGACY_THREAD_ROWS: readonly string[] = [
  `INSERT INTO threads (thread_id, owner_id, revision, status, state_json, last_seq, created_at, updated_at, title,
     message_count, message_bytes)
   VALUES ('support', 'alice', 4, 'interrupted', '{"n":1}', 1, 1, 1, 'help', 1, 40)`,
  `INSERT INTO messages (thread_id, position, message_id, role, run_id, json, created_at)
   VALUES ('support', 0, 'm1', 'user', 'r1', '{"id":"m1","role":"user","content":"help"}', 1)`,
  `INSERT INTO runs (thread_id, run_id, kind, status, created_at) VALUES ('support', 'r1', 'input', 'interrupted', 1)`,
  `INSERT INTO events (thread_id, seq, run_id, type, json)
   VALUES ('support', 1, 'r1', 'RUN_STARTED', '{"type":"RUN_STARTED","threadId":"support","runId":"r1"}')`,
  `INSERT INTO interrupt_batches (batch_id, thread_id, run_id, status, created_at, expires_at, on_expiry)
   VALUES ('b1', 'support', 'r1', 'pending', 1, 2, 'keep')`,
  `INSERT INTO interrupts (interrupt_id, batch_id, thread_id, position, kind, tool_call_id, tool_name, json)
   VALUES ('i1', 'b1', 'support', 0, 'approval', 'c1', 'deploy', '{"id":"i1","reason":"tool_call","toolCallId":"c1"}')`,
  `INSERT INTO tool_calls (thread_id, tool_call_id, run_id, message_id, tool_name, args_text, kind, status, created_at)
   VALUES ('support', 'c1', 'r1', 'a1', 'deploy', '{}', 'server', 'awaiting_decision', 1)`,
  `INSERT INTO decisions (thread_id, run_id, batch_id, interrupt_ids, entries, decided_by, via, decided_at)
   VALUES ('support', 'r0', 'b0', '["i0"]', '[]', 'alice', 'run', 1)`,
  `INSERT INTO tool_checkpoints (thread_id, tool_call_id, json, updated_at) VALUES ('support', 'c1', '{"answers":[]}', 1)`,
]

/** After the migration, the thread is alice's `support` (its key) in every table, and nobody else's. */
export async function expectLegacyThreadKeyed(store: Store): Promise<void> {
  const key = threadKey('alice', 'support')
  expect(await store.getThread('support')).toBeUndefined()
  expect(await store.getThread(threadKey('bob', 'support'))).toBeUndefined()
  expect(await store.getThread(key)).toMatchObject({ ownerId: 'alice', revision: 4, status: 'interrupted' })
  expect((await store.listMessagePage(key, { limit: 10, maxBytes: 1 << 20 })).map((m) => m.message.id)).toEqual(['m1'])
  expect(await store.getRun(key, 'r1')).toMatchObject({ status: 'interrupted' })
  expect((await store.readEvents(key, {})).map((e) => e.seq)).toEqual([1])
  expect(await store.getOpenBatch(key)).toMatchObject({ batchId: 'b1', threadId: key })
  expect(await store.getBatchOfInterrupt(key, 'i1')).toMatchObject({ batchId: 'b1' })
  expect(await store.getToolCall(key, 'c1')).toMatchObject({ status: 'awaiting_decision' })
  expect((await store.listDecisions(key)).map((d) => d.runId)).toEqual(['r0'])
  expect(await store.getToolCheckpoint(key, 'c1')).toBe('{"answers":[]}')
  expect((await store.listThreads('alice', { limit: 10 })).map((t) => t.threadId)).toEqual([key])
  // The thread goes on: its batch can be claimed under the key.
  const claim = await store.claimBatch({
    threadId: key,
    batchId: 'b1',
    runId: 'r2',
    decisionHash: 'h',
    decision: [],
    now: 3,
    executorId: 'x',
    leaseUntil: 10,
    decidedBy: 'alice',
    via: 'run',
  })
  expect(claim.ok).toBe(true)
}
