import type pg from 'pg'
import type { PoolClient } from 'pg'
import { rolledBack } from '../rollback-with.ts'

/**
 * A short transaction on one pooled connection. A thrown `RollbackWith` rolls back and answers its
 * value. Deadlocks and serialization failures (never expected with the single lock order, but
 * cheap to survive) are retried.
 */
export async function transaction<T>(pool: pg.Pool, fn: (q: PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      const value = await fn(client)
      await client.query('COMMIT')
      return value
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined)
      const refused = rolledBack<T>(error)
      if (refused) return refused.value
      const code = (error as { code?: string }).code
      if ((code === '40P01' || code === '40001') && attempt < 3) continue
      throw error
    } finally {
      client.release()
    }
  }
}
