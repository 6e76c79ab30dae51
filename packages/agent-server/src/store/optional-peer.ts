/**
 * Heavy backends (`better-sqlite3`, `pg`, `openai`) are optional peer dependencies: an app installs
 * only the one it uses. A missing one is reported by name when it is first needed, never at import.
 */
export function missingPeer(pkg: string, feature: string, cause: unknown): Error {
  return new Error(`${feature} needs the optional peer dependency "${pkg}": install it (npm install ${pkg}).`, {
    cause,
  })
}

/** True for Node's "cannot find this package" errors (ESM and CommonJS). */
export function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND'
}
