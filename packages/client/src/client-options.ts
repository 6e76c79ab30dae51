/** A value, or a function read before every request (e.g. a rotating token). */
export type Lazy<T> = T | (() => T | Promise<T>)

/** Options of `createDecisionsClient` (docs/approvals.md). */
export interface DecisionsClientOptions {
  /** The server origin and base path, e.g. `https://agents.example.com/api/agent`. */
  readonly baseUrl: string
  /** Bearer token, sent as `Authorization: Bearer <token>`. */
  readonly token?: Lazy<string>
  /** Extra headers on every request (applied before `token`). */
  readonly headers?: Lazy<HeadersInit>
  /** @default globalThis.fetch, read at call time */
  readonly fetch?: typeof fetch
}

export async function readLazy<T>(value: Lazy<T> | undefined): Promise<T | undefined> {
  if (value === undefined) return undefined
  return typeof value === 'function' ? await (value as () => T | Promise<T>)() : value
}
