/** `T`'s fields as optional ones that are absent rather than `undefined` (`exactOptionalPropertyTypes`). */
export type Defined<T> = { [K in keyof T]?: Exclude<T[K], undefined> }

/**
 * The fields that have a value: `defined({ a: 1, b: undefined })` is `{ a: 1 }`. Spread it beside the fields that are
 * always there, where a record or an answer leaves an optional field out instead of writing `undefined`.
 */
export function defined<T extends object>(fields: T): Defined<T> {
  const kept: Partial<Record<keyof T, unknown>> = {}
  for (const key of Object.keys(fields) as (keyof T)[]) if (fields[key] !== undefined) kept[key] = fields[key]
  return kept as Defined<T>
}
