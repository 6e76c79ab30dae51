import type { FieldError } from './validate-payload.ts'

/**
 * The subset of JSON Schema the default form presents (docs/client-contract.md#form-helpers). Schemas come
 * from the wire: every keyword is read defensively, unknown keywords are ignored and a keyword of
 * the wrong type is treated as absent, so no schema can break the form.
 */
export type Schema = {
  readonly type?: string | readonly string[]
  readonly enum?: readonly unknown[]
  readonly const?: unknown
  readonly oneOf?: readonly Schema[]
  readonly anyOf?: readonly Schema[]
  readonly title?: string
  readonly description?: string
  readonly format?: string
  readonly 'x-interlude-widget'?: string
  readonly properties?: Readonly<Record<string, Schema>>
  readonly required?: readonly string[]
}

/** A labelled answer: `enum` values, `oneOf`/`anyOf` of `const` (+ `title`), or yes/no. */
export interface Choice {
  readonly value: unknown
  readonly label: string
  readonly description?: string
}

export type Widget = 'textarea' | 'radio' | 'select'

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A string keyword, or undefined when absent or of another type. */
export const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined)

export const typeOf = (s: Schema | undefined): string | undefined => {
  const type = s?.type as unknown
  if (Array.isArray(type)) return type.find((t): t is string => typeof t === 'string' && t !== 'null')
  return typeof type === 'string' ? type : undefined
}

/** The field's visible label: its `title`, else the property name made readable. */
export function label(key: string, schema: Schema): string {
  return text(schema.title) ?? key.replace(/[_-]+/g, ' ').replace(/^./, (c) => c.toUpperCase())
}

export function widgetOf(schema: Schema): Widget | undefined {
  const w = schema['x-interlude-widget'] as unknown
  return w === 'textarea' || w === 'radio' || w === 'select' ? w : undefined
}

/** The choices a schema offers, or undefined when it is not a choice. */
export function choicesOf(schema: Schema): readonly Choice[] | undefined {
  const values = schema.enum as unknown
  if (Array.isArray(values) && values.length > 0) return values.map((value) => ({ value, label: String(value) }))
  const variants = (
    Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : []
  ) as readonly unknown[]
  if (variants.length === 0 || !variants.every((v) => isRecord(v) && 'const' in v)) return undefined
  return (variants as readonly Schema[]).map((v) => {
    const description = text(v.description)
    return {
      value: v.const,
      label: text(v.title) ?? String(v.const),
      ...(description !== undefined ? { description } : {}),
    }
  })
}

/** The object's properties, ignoring entries that are not schemas. */
export function propertiesOf(schema: Schema): [string, Schema][] {
  const props = schema.properties as unknown
  if (!isRecord(props)) return []
  return Object.entries(props).filter((entry): entry is [string, Schema] => isRecord(entry[1]))
}

export function requiredOf(schema: Schema): readonly string[] {
  const required = schema.required as unknown
  return Array.isArray(required) ? required.filter((r): r is string => typeof r === 'string') : []
}

/** The errors reported exactly at `path` ("unanswered" is announced once per question by the form). */
export function errorsAt(errors: readonly FieldError[] | undefined, path: readonly string[]): FieldError[] {
  return (errors ?? []).filter(
    (e) => e.keyword !== 'unanswered' && e.path.length === path.length && e.path.every((p, i) => p === path[i]),
  )
}
