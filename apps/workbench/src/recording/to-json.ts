import type { Json, RecordedError } from './recording-types.ts'

/** A JSON copy of a value (drops functions/undefined like JSON.stringify; cycles become null). */
export function toJson(value: unknown): Json {
  if (value === undefined) return null
  try {
    const text = JSON.stringify(value)
    return text === undefined ? null : (JSON.parse(text) as Json)
  } catch {
    return null
  }
}

/** An error as recorded: `InterludeError`s keep code, message and details; anything else is `UNKNOWN`. */
export function toRecordedError(error: unknown): RecordedError {
  if (typeof error === 'object' && error !== null) {
    const { code, message, details } = error as { code?: unknown; message?: unknown; details?: unknown }
    if (typeof code === 'string' && typeof message === 'string') {
      return details === undefined ? { code, message } : { code, message, details: toJson(details) }
    }
    if (error instanceof Error)
      return { code: error.name === 'AbortError' ? 'ABORTED' : 'UNKNOWN', message: error.message }
  }
  return { code: 'UNKNOWN', message: String(error) }
}
