/**
 * Heavy backends (`better-sqlite3`, `pg`, `openai`) are optional peer dependencies: an app installs
 * only the one it uses. A missing one is reported by name when it is first needed, never at import.
 */

/**
 * A server that cannot start as configured: a missing or unusable peer package, a missing key. Its message is one
 * sentence for the operator that says what to do; the CLI prints it without a stack and exits 1
 * (docs/decisions.md#platforms). It never reaches a client: it is thrown before the server listens.
 */
export class SetupError extends Error {
  override readonly name = 'SetupError'
}

export function missingPeer(pkg: string, feature: string, cause: unknown): SetupError {
  return new SetupError(`${feature} needs the optional peer dependency "${pkg}": install it (npm install ${pkg}).`, {
    cause,
  })
}

/** True for Node's "cannot find this package" errors (ESM and CommonJS). */
export function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND'
}
