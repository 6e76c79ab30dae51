/** Cross-origin access to the API for browser apps served from another origin. */
export interface CorsOptions {
  /** Exact origins allowed (`https://app.example.com`), or `['*']` for any origin (not with `credentials`). */
  readonly origins: readonly string[]
  /** Allow cookies and `Authorization` across origins (`Access-Control-Allow-Credentials`). @default false */
  readonly credentials?: boolean
  /** How long a browser may cache a preflight answer. @default 600 */
  readonly maxAgeSeconds?: number
}

/**
 * The origins as a browser sends them: scheme, host and port, nothing else. A typo (a trailing slash, a path)
 * would silently never match, so it is refused when the server is created instead.
 */
export function checkCorsOptions(options: CorsOptions): void {
  if (options.origins.length === 0) throw new RangeError('cors.origins must name at least one origin.')
  for (const origin of options.origins) {
    if (origin === '*') {
      if (options.origins.length > 1) throw new RangeError("cors.origins: '*' stands alone.")
      if (options.credentials) throw new RangeError("cors.origins '*' cannot be combined with credentials.")
      continue
    }
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      parsed = undefined
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== origin)
      throw new RangeError(`cors.origins: "${origin}" is not an origin like https://app.example.com (no path).`)
  }
  const maxAge = options.maxAgeSeconds
  if (maxAge !== undefined && !(Number.isInteger(maxAge) && maxAge >= 0))
    throw new RangeError('cors.maxAgeSeconds must be a non-negative integer.')
}
