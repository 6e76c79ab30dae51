import { expect } from 'vitest'
import type { Store } from '../store.ts'

/**
 * Bounded grants as the schema before slots kept them (docs/decisions.md#bounded-grants): alice's grant of 3 with one
 * call taken (2 left) and a used-up grant of 1. Statements for both stores (no dialect-specific SQL).
 */
export const LEGACY_GRANT_ROWS: readonly string[] = [
  `INSERT INTO grants (grant_id, owner_id, scope, thread_id, tool_name, match_json, calls, calls_left, until_at,
     created_by, created_at, source_interrupt_id, made_under)
   VALUES ('g-old', 'alice', 'principal', NULL, 'deploy', NULL, 3, 2, NULL, 'alice', 1, 'int_old', NULL),
          ('g-done', 'alice', 'principal', NULL, 'deploy', NULL, 1, 0, NULL, 'alice', 2, 'int_done', NULL)`,
  `INSERT INTO grant_decisions (thread_id, tool_call_id, run_id, grant_id, decided_by, decided_at)
   VALUES ('t', 'c0', 'r0', 'g-old', 'alice', 1)`,
]

/** After `0018-grant-slots`, each grant has a slot per call it had left: exactly those calls can still be taken. */
export async function expectLegacyGrantSlots(store: Store): Promise<void> {
  const grants = store.grants!
  const take = (grantId: string, toolCallId: string) =>
    grants.take({ grantId, owner: 'alice', threadId: 't', toolCallId, runId: 'r1', now: 10 })
  expect(await grants.list('alice', { now: 10 })).toMatchObject([{ grantId: 'g-old', calls: 3, callsLeft: 2 }])
  // The call that took it before the migration gets its record again.
  expect(await take('g-old', 'c0')).toMatchObject({ grantId: 'g-old', toolCallId: 'c0', runId: 'r0' })
  expect(await take('g-done', 'c1')).toBeUndefined()
  expect(await take('g-old', 'c1')).toMatchObject({ grantId: 'g-old', toolCallId: 'c1' })
  expect(await take('g-old', 'c2')).toMatchObject({ grantId: 'g-old', toolCallId: 'c2' })
  expect(await take('g-old', 'c3')).toBeUndefined()
  expect(await grants.list('alice', { now: 10 })).toEqual([])
}
