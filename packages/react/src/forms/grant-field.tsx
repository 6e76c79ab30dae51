import type { Interrupt } from '@interlude/protocol'
import { SchemaField, type Schema } from './schema-field.tsx'
import type { UseInterruptFormResult } from './use-interrupt-form.ts'

export interface GrantFieldProps {
  readonly interrupt: Interrupt
  readonly form: UseInterruptFormResult
  readonly id: string
  readonly disabled: boolean
  /** The draft's `grant`, when one is given. */
  readonly value: unknown
}

/** The `grant` an approval schema offers (docs/approvals.md#bounded-grants), if any. */
export function grantSchemaOf(interrupt: Interrupt): Schema | undefined {
  const grant = (interrupt.responseSchema as Schema | undefined)?.properties?.grant
  return typeof grant === 'object' && grant !== null ? (grant as Schema) : undefined
}

/**
 * "Also allow later calls": a bounded grant with an approval (docs/approvals.md#bounded-grants). Off by default; once
 * checked, the grant's own schema (calls, until, scope, match) is filled in like any answer, starting at one call in
 * the first scope offered.
 */
export function GrantField({ interrupt, form, id, disabled, value }: GrantFieldProps) {
  const schema = grantSchemaOf(interrupt)
  if (schema === undefined) return null
  const scopes = (schema.properties?.scope as Schema | undefined)?.enum
  const start = { calls: 1, ...(Array.isArray(scopes) && scopes.length > 0 ? { scope: scopes[0] } : {}) }
  return (
    <div className="interlude-grant">
      <input
        id={`${id}-grant`}
        type="checkbox"
        checked={value !== undefined}
        disabled={disabled}
        onChange={(e) => form.setField(interrupt.id, ['grant'], e.target.checked ? start : undefined)}
      />
      <label htmlFor={`${id}-grant`}>Also allow later calls</label>
      {value !== undefined && (
        <SchemaField
          id={`${id}-grant-fields`}
          name="grant"
          schema={schema}
          value={value}
          required
          path={['grant']}
          errors={form.errors[interrupt.id]}
          disabled={disabled}
          onChange={(p, v) => form.setField(interrupt.id, p, v)}
        />
      )}
    </div>
  )
}
