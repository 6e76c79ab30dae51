import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import ajvFormats from 'ajv-formats'
import { canonicalJson } from '@interlude/protocol'

/** One validation problem, trimmed to what a client needs (no schema internals). */
export interface SchemaIssue {
  readonly path: string
  readonly message: string
  readonly keyword: string
  readonly params?: Record<string, unknown>
}

export type ValidationResult = { readonly ok: true } | { readonly ok: false; readonly issues: readonly SchemaIssue[] }

export class SchemaDefinitionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'SchemaDefinitionError'
  }
}

export interface ValidatorCacheOptions {
  /** Compiled validators kept (least recently used are dropped). @default 256 */
  readonly maxEntries?: number
  /** Issues reported per validation. @default 20 */
  readonly maxIssues?: number
}

/** Finds `$ref`s that leave the document: only local `#…` pointers are allowed (no remote fetch). */
export function remoteRefs(schema: unknown, at = '#'): string[] {
  if (typeof schema !== 'object' || schema === null) return []
  if (Array.isArray(schema)) return schema.flatMap((item, i) => remoteRefs(item, `${at}/${i}`))
  const found: string[] = []
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (key === '$ref' && (typeof value !== 'string' || !value.startsWith('#'))) found.push(`${at}/$ref`)
    else if (key === '$id' && typeof value === 'string' && value !== '' && !value.startsWith('#'))
      found.push(`${at}/$id`)
    else found.push(...remoteRefs(value, `${at}/${key}`))
  }
  return found
}

/**
 * The formats answers are checked against (the ones `<InterruptForm>` presents, plus common ones),
 * from `ajv-formats`, the Ajv team's own format vocabulary. Any other `format` stays an annotation.
 */
export const VALIDATED_FORMATS = [
  'date',
  'date-time',
  'time',
  'email',
  'uri',
  'uri-reference',
  'uuid',
  'hostname',
  'ipv4',
  'ipv6',
] as const

/** Annotation keywords of docs/protocol.md#interrupts that strict Ajv must accept. */
const ANNOTATIONS = ['x-interlude-widget'] as const

/** Every `format` value used anywhere in a schema. */
function formatsIn(schema: unknown, into = new Set<string>()): Set<string> {
  if (typeof schema !== 'object' || schema === null) return into
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (key === 'format' && typeof value === 'string') into.add(value)
    else formatsIn(value, into)
  }
  return into
}

// ajv-formats is CommonJS: its default import is the plugin or a namespace holding it.
const addFormats = ((ajvFormats as unknown as { default?: unknown }).default ?? ajvFormats) as (
  ajv: Ajv,
  formats: readonly string[],
) => Ajv

function withoutMetaSchema(schema: Record<string, unknown>): Record<string, unknown> {
  if (!('$schema' in schema)) return schema
  const { $schema: _ignored, ...rest } = schema
  return rest
}

function toIssue(error: ErrorObject): SchemaIssue {
  const issue = { path: error.instancePath || '/', message: error.message ?? 'is invalid', keyword: error.keyword }
  return error.params && Object.keys(error.params).length > 0
    ? { ...issue, params: error.params as Record<string, unknown> }
    : issue
}

/**
 * Ajv in strict mode, compiling each distinct schema once (keyed by its canonical JSON) and never
 * loading remote `$ref`s. The formats of `VALIDATED_FORMATS` are checked; an unknown format is
 * registered as an annotation on first sight, so it never makes a schema unusable.
 */
export class ValidatorCache {
  readonly #ajv: Ajv
  readonly #cache = new Map<string, ValidateFunction>()
  readonly #maxEntries: number
  readonly #maxIssues: number

  constructor(options: ValidatorCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 256
    this.#maxIssues = options.maxIssues ?? 20
    // addUsedSchema stays on: Ajv resolves a root self-reference (`$ref: '#'`, as zod emits for a
    // recursive root schema) through it. It registers nothing else: remote `$id`s are refused.
    this.#ajv = new Ajv({ strict: true, allErrors: true })
    addFormats(this.#ajv, VALIDATED_FORMATS)
    for (const keyword of ANNOTATIONS) this.#ajv.addKeyword({ keyword, schemaType: 'string' })
  }

  get size(): number {
    return this.#cache.size
  }

  /** Compiles (or fetches) the validator; throws `SchemaDefinitionError` for an unusable schema. */
  compile(schema: Record<string, unknown>): ValidateFunction {
    const normalized = withoutMetaSchema(schema)
    const key = canonicalJson(normalized)
    const hit = this.#cache.get(key)
    if (hit) {
      // Refresh recency.
      this.#cache.delete(key)
      this.#cache.set(key, hit)
      return hit
    }
    const remote = remoteRefs(normalized)
    if (remote.length > 0) throw new SchemaDefinitionError(`Remote $ref/$id are not allowed (at ${remote.join(', ')}).`)
    for (const format of formatsIn(normalized)) {
      if (!this.#ajv.formats[format]) this.#ajv.addFormat(format, true)
    }
    let validate: ValidateFunction
    try {
      validate = this.#ajv.compile(normalized)
    } catch (error) {
      throw new SchemaDefinitionError(
        `Invalid JSON Schema: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      )
    }
    this.#cache.set(key, validate)
    if (this.#cache.size > this.#maxEntries) {
      const oldest = this.#cache.keys().next().value
      if (oldest !== undefined) this.#cache.delete(oldest)
    }
    return validate
  }

  validate(schema: Record<string, unknown>, value: unknown): ValidationResult {
    const validate = this.compile(schema)
    if (validate(value)) return { ok: true }
    return { ok: false, issues: (validate.errors ?? []).slice(0, this.#maxIssues).map(toIssue) }
  }
}
