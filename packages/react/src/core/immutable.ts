/** Small helpers for the immutable snapshots: freezing, cloning JSON, structural equality. */

/** Freezes a JSON-like value and everything under it (already frozen parts are skipped). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

/** A frozen deep copy of a JSON value (the caller has already checked it is JSON). */
export function frozenJsonCopy<T>(value: T): T {
  if (value === undefined) return value
  return deepFreeze(JSON.parse(JSON.stringify(value)) as T)
}

/** Structural equality of JSON-like values (own enumerable keys, arrays by position). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bb = b as unknown[]
    if (a.length !== bb.length) return false
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], bb[i])) return false
    return true
  }
  const ra = a as Record<string, unknown>
  const rb = b as Record<string, unknown>
  const ka = Object.keys(ra).filter((k) => ra[k] !== undefined)
  const kb = Object.keys(rb).filter((k) => rb[k] !== undefined)
  if (ka.length !== kb.length) return false
  for (const k of ka) if (!deepEqual(ra[k], rb[k])) return false
  return true
}

let fallbackCounter = 0

/** A random id: `crypto.randomUUID` where available (browsers, Node ≥ 19), else a weaker fallback. */
export function randomId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto
  if (c?.randomUUID) return c.randomUUID()
  fallbackCounter += 1
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${fallbackCounter.toString(36)}`
}

/** The one frozen empty list (a shared identity: "nothing" never changes between snapshots). */
export const NONE: readonly never[] = Object.freeze([])
