import { Validator } from '@cfworker/json-schema'

/**
 * Client-side validation of an answer against its interrupt's `responseSchema`, with
 * `@cfworker/json-schema` (drafts 4 → 2020-12, no code generation so it runs under a strict CSP,
 * ~6 KB gzipped against ~37 KB for Ajv; docs/decisions.md#libraries). The server validates again with Ajv: this
 * check is for the person filling in the form, never authority.
 */

export interface FieldError {
  /** Path inside the payload, e.g. `['editedArgs', 'version']` (empty for the payload itself). */
  readonly path: readonly string[]
  readonly message: string
  readonly keyword: string
}

const cache = new WeakMap<object, Validator>()

// Wrapper keywords only say "a child failed"; the child's own error is the useful one.
const WRAPPERS = new Set([
  'properties',
  'items',
  'prefixItems',
  'false',
  'allOf',
  '$ref',
  'dependentSchemas',
  'unevaluatedProperties',
])

function decodePointer(location: string): string[] {
  const body = location.startsWith('#') ? location.slice(1) : location
  if (body === '' || body === '/') return []
  return body
    .split('/')
    .slice(1)
    .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'))
}

/** Problems with `value` against `schema` (none when there is no schema). */
export function validatePayload(schema: Readonly<Record<string, unknown>> | undefined, value: unknown): FieldError[] {
  if (schema === undefined) return []
  let validator = cache.get(schema)
  if (!validator) {
    // The validator annotates the schema objects it is given (dereferencing), and interrupts
    // from the runtime are deep-frozen: compile a private copy, cached by the original object.
    validator = new Validator(structuredClone(schema) as never, '2020-12', false)
    cache.set(schema, validator)
  }
  const result = validator.validate(value)
  if (result.valid) return []
  const errors: FieldError[] = []
  for (const e of result.errors) {
    if (WRAPPERS.has(e.keyword)) continue
    errors.push({ path: decodePointer(e.instanceLocation), message: e.error, keyword: e.keyword })
  }
  return errors
}
