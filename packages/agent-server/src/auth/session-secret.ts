import fs from 'node:fs'
import path from 'node:path'
import { generateSessionSecret, sessionSecretProblem } from './authenticate.ts'

/** The environment variable of the anonymous-session secret (required by PostgreSQL replicas in cookie mode). */
export const SESSION_SECRET_ENV = 'INTERLUDE_SESSION_SECRET'

export interface SessionSecretSource {
  /** `StartServerOptions.sessionSecret`. */
  readonly explicit?: string | undefined
  readonly env: Readonly<Record<string, string | undefined>>
  /** The SQLite file (`undefined` for PostgreSQL; `:memory:` keeps the secret in memory). */
  readonly sqlitePath?: string | undefined
  /** Startup warnings (a loosened file mode, an in-memory secret). */
  readonly warn: (message: string) => void
}

/** The secret file beside a SQLite database: `<db>.session-secret`, mode 0600. */
export function sessionSecretFile(sqlitePath: string): string {
  return `${path.resolve(sqlitePath)}.session-secret`
}

function checked(secret: string, from: string): string {
  const problem = sessionSecretProblem(secret)
  if (problem !== undefined) throw new RangeError(`The session secret from ${from} ${problem}.`)
  return secret
}

/** Reads the secret file, waiting briefly for a concurrent creator to finish writing it. */
function readSecretFile(file: string, warn: (message: string) => void): string {
  for (let attempt = 0; ; attempt++) {
    const stat = fs.statSync(file)
    if ((stat.mode & 0o077) !== 0) {
      fs.chmodSync(file, 0o600)
      warn(`${file} was readable by other users; its mode is now 0600.`)
    }
    const text = fs.readFileSync(file, 'utf8').trim()
    if (text.length > 0 || attempt >= 50) return checked(text, file)
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20)
  }
}

/**
 * The anonymous-session secret (README "Sessions and secrets"), never a database row: the explicit
 * option, else `INTERLUDE_SESSION_SECRET`, else (SQLite) a 0600 file beside the database, created with a random
 * secret on first start. PostgreSQL replicas must share one secret, and a file on one host cannot give them that:
 * without the variable they refuse to start.
 */
export function resolveSessionSecret(source: SessionSecretSource): string {
  if (source.explicit !== undefined) return checked(source.explicit, 'the sessionSecret option')
  const fromEnv = source.env[SESSION_SECRET_ENV]
  if (fromEnv !== undefined && fromEnv !== '') return checked(fromEnv, SESSION_SECRET_ENV)
  if (source.sqlitePath === undefined) {
    throw new RangeError(
      `Anonymous sessions on PostgreSQL need ${SESSION_SECRET_ENV} (the same value on every replica), or bearer tokens.`,
    )
  }
  if (source.sqlitePath === ':memory:') {
    source.warn(`The session secret of an in-memory database lives in memory: sessions end with the process.`)
    return generateSessionSecret()
  }
  const file = sessionSecretFile(source.sqlitePath)
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  try {
    // `wx`: exactly one of several processes starting on this database creates it; the others read it.
    const fd = fs.openSync(file, 'wx', 0o600)
    const secret = generateSessionSecret()
    try {
      fs.writeSync(fd, `${secret}\n`)
    } finally {
      fs.closeSync(fd)
    }
    return secret
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  return readSecretFile(file, source.warn)
}
