import { probeValue, READINESS_PROBE_KEY } from '../store-errors.ts'
import type { Queryable } from './query.ts'
import { rows } from './query.ts'
import * as sql from './statements.ts'

/** Server settings in the PostgreSQL store, and the readiness probe's write. */

/** The setting's value, created by `create()` on first use (a replica that lost the race reads the winner's). */
export async function getOrCreateSetting(q: Queryable, key: string, create: () => string): Promise<string> {
  const existing = await rows(q, sql.getSetting(key))
  if (existing[0]) return existing[0].value
  await q.query(sql.insertSetting(key, create()))
  return (await rows(q, sql.getSetting(key)))[0]!.value
}

export async function probeWrite(q: Queryable): Promise<void> {
  await q.query(sql.upsertSetting(READINESS_PROBE_KEY, probeValue()))
}
