/**
 * Canonical JSON (the RFC 8785 / JCS rules that matter here): object keys sorted by UTF-16 code
 * units, no whitespace, ECMAScript number formatting, and only JSON values. Used for the
 * decision hash, so the same decision always yields the same bytes whatever the key order.
 */

export class NonJsonValueError extends TypeError {
  readonly path: string
  constructor(path: string, what: string) {
    super(`Not a JSON value at ${path || '<root>'}: ${what}`)
    this.name = 'NonJsonValueError'
    this.path = path
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined'
  if (typeof value === 'number') return String(value)
  if (typeof value === 'object' && value !== null) return `instance of ${value.constructor?.name ?? 'unknown'}`
  return typeof value
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown
  return proto === Object.prototype || proto === null
}

function write(value: unknown, path: string, seen: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'number':
      if (!Number.isFinite(value)) throw new NonJsonValueError(path, describe(value))
      return JSON.stringify(value) // -0 serialises as "0", as JCS requires
    case 'object': {
      if (value === null) return 'null'
      if (seen.has(value)) throw new NonJsonValueError(path, 'cycle')
      seen.add(value)
      try {
        if (Array.isArray(value)) {
          const parts: string[] = []
          for (let i = 0; i < value.length; i++) {
            if (!(i in value)) throw new NonJsonValueError(`${path}[${i}]`, 'hole')
            parts.push(write(value[i], `${path}[${i}]`, seen))
          }
          return `[${parts.join(',')}]`
        }
        if (!isPlainObject(value)) throw new NonJsonValueError(path, describe(value))
        const record = value as Record<string, unknown>
        const keys = Object.keys(record).sort()
        const parts: string[] = []
        for (const key of keys) {
          parts.push(`${JSON.stringify(key)}:${write(record[key], `${path}.${key}`, seen)}`)
        }
        return `{${parts.join(',')}}`
      } finally {
        seen.delete(value)
      }
    }
    default:
      throw new NonJsonValueError(path, describe(value))
  }
}

/** Canonical JSON text of a JSON value; throws `NonJsonValueError` for anything that is not JSON. */
export function canonicalJson(value: unknown): string {
  return write(value, '', new Set())
}

/** True when the value is plain JSON (no undefined, functions, NaN, cycles, class instances...). */
export function isJsonValue(value: unknown): boolean {
  try {
    write(value, '', new Set())
    return true
  } catch {
    return false
  }
}
