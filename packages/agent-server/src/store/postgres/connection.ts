import { createHash } from 'node:crypto'
import os from 'node:os'
import { pgModule } from './pg-module.ts'

/** How the PostgreSQL store reaches its database: user defaulting, value parsing, NOTIFY channel. */

/** Connection string with the OS user filled in when the URL names none (pg would refuse it). */
export function withDefaultUser(connectionString: string): string {
  let url: URL
  try {
    url = new URL(connectionString)
  } catch {
    return connectionString
  }
  if (url.username === '') {
    url.username = encodeURIComponent(process.env.PGUSER ?? process.env.USER ?? os.userInfo().username)
  }
  return url.toString()
}

/** The NOTIFY channel of a schema (one channel per database schema, ≤ 63 bytes). */
export function channelFor(schema: string | undefined): string {
  const name = schema ?? 'public'
  return /^[a-z0-9_]{1,48}$/.test(name)
    ? `interlude_${name}`
    : `interlude_${createHash('sha1').update(name).digest('hex').slice(0, 24)}`
}

/** BIGINT (epoch ms, counters) as JS numbers: every value stored here is < 2^53. */
export const bigintAsNumber = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 && format !== 'binary'
      ? (value: string) => Number(value)
      : pgModule().types.getTypeParser(oid, format as 'text')) as never,
}
