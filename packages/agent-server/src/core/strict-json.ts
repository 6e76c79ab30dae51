/** `JSON.parse` without throwing: model argument text and stored argument text may be anything. */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch {
    return { ok: false }
  }
}

/** A value JSON cannot represent faithfully. */
export class NotJsonError extends Error {
  constructor(what: string) {
    super(`not JSON: ${what}`)
    this.name = 'NotJsonError'
  }
}

/**
 * `JSON.stringify`, but refusing what it would silently change: functions, symbols, BigInts,
 * non-finite numbers, `undefined` as a value or array item (an `undefined` property is dropped, as
 * JSON does). Cycles and stack-deep values throw as usual. Callers convert where they can still
 * handle the error (a tool's result, a reconciled effect), never later in the store.
 */
export function strictJson(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, key: string, item: unknown) {
    const type = typeof item
    if (type === 'function' || type === 'symbol' || type === 'bigint') throw new NotJsonError(type)
    if (type === 'number' && !Number.isFinite(item)) throw new NotJsonError(String(item))
    if (item === undefined && (key === '' || Array.isArray(this))) throw new NotJsonError('undefined')
    return item
  })
}

/**
 * A tool call's result as the text the model reads (the tool message and `TOOL_CALL_RESULT`
 * content): a string as-is, nothing as `null`, anything else strict JSON (throws `NotJsonError`).
 */
export function resultText(value: unknown): string {
  if (typeof value === 'string') return value
  return value === undefined || value === null ? 'null' : strictJson(value)
}
