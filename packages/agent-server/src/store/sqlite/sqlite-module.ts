import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'
import { isModuleNotFound, missingPeer, SetupError } from '../optional-peer.ts'

/** The better-sqlite3 constructor. */
export type SqliteDriver = typeof BetterSqlite3

let driver: SqliteDriver | undefined

/** The oldest Node major each better-sqlite3 major runs on (13.x is built for Node 22's ABI and crashes on 20). */
const NODE_FOR_DRIVER: Readonly<Record<number, number>> = { 13: 22 }

/**
 * Loads `better-sqlite3` on first use. `createRequire` because the SQLite factory is synchronous
 * (a dynamic `import()` would make `createSqliteStore` async) and better-sqlite3 is CommonJS.
 * Its version is checked before its native part loads: a mismatch is a sentence, not a segfault.
 */
export function loadSqlite(): SqliteDriver {
  if (driver) return driver
  const require = createRequire(import.meta.url)
  let version: string
  try {
    version = (require('better-sqlite3/package.json') as { version: string }).version
  } catch (error) {
    throw isModuleNotFound(error) ? missingPeer('better-sqlite3', 'The SQLite store', error) : error
  }
  const mismatch = sqliteVersionProblem(version, process.versions.node)
  if (mismatch !== undefined) throw new SetupError(mismatch)
  try {
    const loaded = require('better-sqlite3') as SqliteDriver
    // The native part loads at the first `new Database`, not at `require`: open one here, where its failure can be
    // told apart from a bad path or a locked file.
    new loaded(':memory:').close()
    driver = loaded
  } catch (error) {
    throw sqliteLoadError(error)
  }
  return driver
}

/** Why better-sqlite3 `version` cannot run on Node `nodeVersion`, or undefined when it can. */
export function sqliteVersionProblem(version: string, nodeVersion: string): string | undefined {
  const driverMajor = Number(version.split('.')[0])
  const nodeMajor = Number(nodeVersion.split('.')[0])
  const needs = NODE_FOR_DRIVER[driverMajor]
  if (needs === undefined || nodeMajor >= needs) return undefined
  return (
    `better-sqlite3 ${version} needs Node.js ${needs} or newer and this is Node.js ${nodeVersion}: ` +
    `install better-sqlite3 12 instead (npm install better-sqlite3@^12.11.1) or upgrade Node.js.`
  )
}

/**
 * The native part failed to load. Two causes are common and each has a fix: an install whose build script was blocked
 * (pnpm 10+ and npm's install-script approval skip it: no `.node` file), and a binary built for another Node version.
 */
export function sqliteLoadError(error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown } | null)?.code
  if (/Could not locate the bindings file/i.test(message)) {
    return new SetupError(
      'better-sqlite3 is installed without its native build (its install script was blocked): with pnpm run ' +
        '`pnpm approve-builds` (or add `better-sqlite3: true` under `allowBuilds` in pnpm-workspace.yaml) and ' +
        'reinstall; with npm allow its install script (`npm approve-builds` or `npm rebuild better-sqlite3`).',
      { cause: error },
    )
  }
  if (code === 'ERR_DLOPEN_FAILED' || /NODE_MODULE_VERSION/.test(message)) {
    return new SetupError(
      `better-sqlite3's native build does not load in Node.js ${process.versions.node} (built for another ` +
        'version?): run `npm rebuild better-sqlite3` (pnpm: `pnpm rebuild better-sqlite3`).',
      { cause: error },
    )
  }
  return error instanceof Error ? error : new Error(message)
}
