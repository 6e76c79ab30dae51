import { InterludeError } from '@interlude/protocol'
import type { Store } from './store.ts'

/**
 * Typed store failures (docs/protocol.md#error-codes, docs/decisions.md#operating-it): a driver error that means "the
 * database cannot take this now" becomes `STORE_UNAVAILABLE` (503, retryable; `RUN_ERROR STORE_UNAVAILABLE` inside a
 * run), one the database refuses because of the value itself (a NUL in a PostgreSQL text column) becomes
 * `INVALID_INPUT`. Everything else — refusals the stores decide themselves (`RunNotActiveError`, `RollbackWith`),
 * programming errors — passes unchanged.
 */

/** SQLite result codes (better-sqlite3 `SqliteError.code`) meaning the file cannot be written or read now. */
const SQLITE_UNAVAILABLE = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|BUSY|LOCKED|NOMEM|PROTOCOL|NOLFS|CORRUPT|NOTADB)/

/**
 * PostgreSQL SQLSTATE classes and codes meaning the database is unreachable, out of resources, shutting down or
 * refusing this role: 08 connection exception, 53 insufficient resources (53100 disk full), 57P01–57P03 admin/crash
 * shutdown and cannot-connect-now (`pg_terminate_backend` answers 57P01), 58 system error, 25006 read-only
 * transaction (a standby), 28 invalid authorization, 3D000 no such database, 42501 insufficient privilege (a revoked
 * role: the store cannot persist, which the operator must fix — not the client's request).
 */
const PG_UNAVAILABLE = /^(08|53|58|28)|^(57P0[123]|25006|3D000|42501)$/

/** SQLSTATEs where PostgreSQL refuses a text value (22021: a NUL byte; 22P05: untranslatable character). */
const PG_INVALID_VALUE = /^(22021|22P05)$/

/** Node socket errors of a lost or refused connection. */
const NET_UNAVAILABLE = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN)$/

/**
 * Messages of pg without a code: a terminated connection, a pool after `end()`, a connect timeout; and of
 * better-sqlite3 after `close()`. Matched only on errors that carry no SQLSTATE.
 */
const DRIVER_UNAVAILABLE =
  /^(Connection terminated|Client has encountered a connection error|Cannot use a pool after calling end|timeout exceeded when trying to connect|Client was closed|The database connection is not open)/

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** What a raw store error means to a client: `STORE_UNAVAILABLE`, `INVALID_INPUT`, or `undefined` (not a store fault). */
export function classifyStoreError(error: unknown): 'STORE_UNAVAILABLE' | 'INVALID_INPUT' | undefined {
  if (typeof error !== 'object' || error === null || InterludeError.isInstance(error)) return undefined
  const code = codeOf(error)
  if (code !== undefined) {
    if (SQLITE_UNAVAILABLE.test(code) || NET_UNAVAILABLE.test(code)) return 'STORE_UNAVAILABLE'
    if (/^[0-9A-Z]{5}$/.test(code)) {
      if (PG_INVALID_VALUE.test(code)) return 'INVALID_INPUT'
      if (PG_UNAVAILABLE.test(code)) return 'STORE_UNAVAILABLE'
      return undefined
    }
  }
  const message = (error as { message?: unknown }).message
  if (typeof message === 'string' && DRIVER_UNAVAILABLE.test(message)) return 'STORE_UNAVAILABLE'
  return undefined
}

/** `true` for a `STORE_UNAVAILABLE` error (typed or raw). */
export function isStoreUnavailable(error: unknown): boolean {
  return InterludeError.isInstance(error)
    ? error.code === 'STORE_UNAVAILABLE'
    : classifyStoreError(error) === 'STORE_UNAVAILABLE'
}

/** The typed error for a raw store error; the error itself when it is not a store fault. */
export function toTypedStoreError(error: unknown): unknown {
  const kind = classifyStoreError(error)
  if (kind === 'STORE_UNAVAILABLE')
    return new InterludeError('STORE_UNAVAILABLE', 'The store is unavailable; try again later.', { cause: error })
  if (kind === 'INVALID_INPUT')
    return new InterludeError('INVALID_INPUT', 'The request contains a value the store refuses.', { cause: error })
  return error
}

/** The settings row `Store.probeWrite` rewrites. */
export const READINESS_PROBE_KEY = 'readiness_probe'

/** 8 KiB that differ on every probe (a timestamp, then padding). */
export function probeValue(): string {
  return `${new Date().toISOString()} `.padEnd(8192, '.')
}

/** Names of the `Store` methods that only read (everything else counts as a write for `StoreHealth`). */
const READ_METHOD = /^(get|list|read|poll|ping|watch)/

/** The outcome of the store's most recent write, read by readiness (`GET {base}/health?ready`). */
export class StoreHealth {
  #lastWriteFailedAt: number | undefined
  #lastWriteOkAt: number | undefined

  recordWrite(ok: boolean): void {
    if (ok) this.#lastWriteOkAt = performance.now()
    else this.#lastWriteFailedAt = performance.now()
  }

  /** `true` while the latest write attempt failed with `STORE_UNAVAILABLE`. */
  get writesFailing(): boolean {
    return this.#lastWriteFailedAt !== undefined && (this.#lastWriteOkAt ?? -1) < this.#lastWriteFailedAt
  }
}

const TYPED = Symbol.for('@interlude/agent-server/typed-store')
const HEALTH = Symbol.for('@interlude/agent-server/store-health')

/**
 * The store with its errors typed in one place, whatever the implementation (SQLite, PostgreSQL, a host's own):
 * every method's rejection goes through `toTypedStoreError`, and write outcomes feed a `StoreHealth`. A Proxy rather
 * than a delegating class so that methods added to `Store` later are covered without an edit here; methods run on
 * the original object (its private fields stay reachable). Idempotent: a typed store is returned as is.
 */
export function withTypedErrors<S extends Store>(store: S): S {
  if ((store as unknown as Record<symbol, unknown>)[TYPED] === true) return store
  const health = new StoreHealth()
  const wrapped = new Map<PropertyKey, unknown>()
  return new Proxy(store, {
    get(target, property) {
      if (property === TYPED) return true
      if (property === HEALTH) return health
      const value: unknown = Reflect.get(target, property, target)
      // A group of methods (`forks`, `decisionLinks`) is typed the same way, method by method.
      if ((property === 'forks' || property === 'decisionLinks') && typeof value === 'object' && value !== null) {
        const cachedGroup = wrapped.get(property)
        if (cachedGroup !== undefined) return cachedGroup
        const group = typedMethods(value as object, health)
        wrapped.set(property, group)
        return group
      }
      if (typeof value !== 'function' || property === 'constructor') return value
      const cached = wrapped.get(property)
      if (cached !== undefined) return cached
      const write = typeof property === 'string' && !READ_METHOD.test(property)
      const fn = (...args: unknown[]): unknown => {
        let result: unknown
        try {
          result = (value as (...a: unknown[]) => unknown).apply(target, args)
        } catch (error) {
          if (write && isStoreUnavailable(error)) health.recordWrite(false)
          throw toTypedStoreError(error)
        }
        if (!(result instanceof Promise)) return result
        return result.then(
          (ok: unknown) => {
            if (write) health.recordWrite(true)
            return ok
          },
          (error: unknown) => {
            if (write && isStoreUnavailable(error)) health.recordWrite(false)
            throw toTypedStoreError(error)
          },
        )
      }
      wrapped.set(property, fn)
      return fn
    },
  })
}

/** Each method of `group` with its rejections typed (`toTypedStoreError`) and its writes counted in `health`. */
function typedMethods(group: object, health: StoreHealth): object {
  return new Proxy(group, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      const write = typeof property === 'string' && !READ_METHOD.test(property)
      return async (...args: unknown[]): Promise<unknown> => {
        try {
          const ok = await (value as (...a: unknown[]) => unknown).apply(target, args)
          if (write) health.recordWrite(true)
          return ok
        } catch (error) {
          if (write && isStoreUnavailable(error)) health.recordWrite(false)
          throw toTypedStoreError(error)
        }
      }
    },
  })
}

/** The write outcomes of a store wrapped by `withTypedErrors` (`undefined` for a bare store). */
export function storeHealthOf(store: Store): StoreHealth | undefined {
  return (store as unknown as Record<symbol, StoreHealth | undefined>)[HEALTH]
}
