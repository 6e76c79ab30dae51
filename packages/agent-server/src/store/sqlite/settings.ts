import { probeValue, READINESS_PROBE_KEY } from '../store-errors.ts'
import type { SqliteStatements } from './statements.ts'

/** Server settings in the SQLite store, and the readiness probe's write; each inside the caller's write transaction. */

/** The setting's value, created by `create()` on first use. */
export function getOrCreateSettingTx(s: SqliteStatements, key: string, create: () => string): string {
  const row = s.getSetting.get(key)
  if (row) return row.value
  const value = create()
  s.insertSetting.run(key, value)
  return value
}

/** A few pages, so that a disk with a sliver of space left still fails the probe like a run's writes would. */
export function probeWriteTx(s: SqliteStatements): void {
  s.upsertSetting.run(READINESS_PROBE_KEY, probeValue())
}
