import { useState, type ReactNode } from 'react'
import { ChoiceField } from './choice-field.tsx'
import { choicesOf, errorsAt, label, propertiesOf, requiredOf, text as textOf, typeOf, widgetOf } from './schema.ts'
import type { Schema } from './schema.ts'
import { TextField } from './text-field.tsx'
import type { FieldError } from './validate-payload.ts'

export type { Schema } from './schema.ts'

/** The props of `<SchemaField>`: one value of a JSON Schema, edited in place. */
export interface SchemaFieldProps {
  /** The element id of the control (nested fields append `-<key>`). */
  readonly id: string
  /** The property name, the label when the schema has no `title`. */
  readonly name: string
  readonly schema: Schema
  readonly value: unknown
  /** Marks the control required (default false). */
  readonly required?: boolean
  /** Where `value` sits in the payload, passed back to `onChange` (default `[]`). */
  readonly path?: readonly string[]
  /** The payload's errors (`validatePayload`, `form.errors[id]`); each field shows those at its own path. */
  readonly errors?: readonly FieldError[] | undefined
  readonly disabled?: boolean
  /** A change at `path` (a nested field's path is longer); `undefined` means emptied. */
  readonly onChange: (path: readonly string[], value: unknown) => void
}

const ROOT: readonly string[] = []

const YES_NO = [
  { value: true, label: 'Yes' },
  { value: false, label: 'No' },
] as const

/**
 * One schema-driven field, the one `<InterruptForm>` uses, exported for custom renderers: labelled choices (`enum`, `oneOf`/`anyOf` of `const`, booleans as an
 * explicit yes/no), strings (with `format` and the `textarea` widget), numbers, nested objects; JSON
 * for the rest. `title` labels it, `description` is shown under it and linked with
 * `aria-describedby`, `x-interlude-widget` picks `radio`, `select` or `textarea`.
 */
export function SchemaField({
  id,
  name,
  schema,
  value,
  required = false,
  path = ROOT,
  errors,
  disabled = false,
  onChange,
}: SchemaFieldProps) {
  const own = errorsAt(errors, path)
  const errorId = `${id}-error`
  const descriptionId = `${id}-description`
  const description = textOf(schema.description)
  const describedBy =
    [description !== undefined ? descriptionId : undefined, own.length > 0 ? errorId : undefined]
      .filter((x) => x !== undefined)
      .join(' ') || undefined
  const invalid = own.length > 0
  const described = {
    ...(describedBy !== undefined ? { 'aria-describedby': describedBy } : {}),
    ...(invalid ? { 'aria-invalid': true as const } : {}),
  }
  const name_ = label(name, schema)
  const notes = (
    <>
      {description !== undefined && (
        <span id={descriptionId} className="interlude-field-description">
          {description}
        </span>
      )}
      {invalid && (
        <span id={errorId} className="interlude-field-error">
          {own.map((e) => e.message).join(' ')}
        </span>
      )}
    </>
  )
  const type = typeOf(schema)
  const widget = widgetOf(schema)
  const properties = propertiesOf(schema)
  if (type === 'object' || properties.length > 0) {
    const obj = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
    const requiredKeys = requiredOf(schema)
    return (
      <fieldset
        className="interlude-object"
        {...(describedBy !== undefined ? { 'aria-describedby': describedBy } : {})}
      >
        <legend>{name_}</legend>
        {description !== undefined && (
          <p id={descriptionId} className="interlude-field-description">
            {description}
          </p>
        )}
        {properties.map(([key, child]) => (
          <SchemaField
            key={key}
            id={`${id}-${key}`}
            name={key}
            schema={child}
            value={obj[key]}
            required={requiredKeys.includes(key)}
            path={[...path, key]}
            errors={errors}
            disabled={disabled}
            onChange={onChange}
          />
        ))}
        {invalid && (
          <span id={errorId} className="interlude-field-error">
            {own.map((e) => e.message).join(' ')}
          </span>
        )}
      </fieldset>
    )
  }
  const choices = choicesOf(schema) ?? (type === 'boolean' ? YES_NO : undefined)
  if (choices) {
    // Booleans keep an explicit yes/no with an empty "choose" state: `false` is a deliberate
    // answer, never the silent default of an untouched checkbox.
    return (
      <ChoiceField
        id={id}
        text={name_}
        choices={choices}
        value={value}
        required={required}
        radio={widget === 'radio'}
        disabled={disabled}
        describedBy={describedBy}
        invalid={invalid}
        onChange={(v) => onChange(path, v)}
      >
        {notes}
      </ChoiceField>
    )
  }
  if (
    type === 'number' ||
    type === 'integer' ||
    type === 'string' ||
    (type === undefined && (value === undefined || typeof value === 'string'))
  ) {
    return (
      <TextField
        id={id}
        text={name_}
        kind={type === 'number' || type === 'integer' ? type : 'string'}
        format={textOf(schema.format)}
        multiline={widget === 'textarea'}
        value={value}
        required={required}
        disabled={disabled}
        describedBy={describedBy}
        invalid={invalid}
        onChange={(v) => onChange(path, v)}
      >
        {notes}
      </TextField>
    )
  }
  return (
    <JsonField
      id={id}
      text={name_}
      value={value}
      path={path}
      disabled={disabled}
      onChange={onChange}
      hint={notes}
      described={described}
    />
  )
}

function JsonField(props: {
  id: string
  text: string
  value: unknown
  path: readonly string[]
  disabled: boolean
  onChange: SchemaFieldProps['onChange']
  hint: ReactNode
  described: object
}) {
  const [draft, setDraft] = useState(() => (props.value === undefined ? '' : JSON.stringify(props.value, null, 2)))
  const [bad, setBad] = useState(false)
  return (
    <div className="interlude-field">
      <label htmlFor={props.id}>{props.text} (JSON)</label>
      <textarea
        id={props.id}
        value={draft}
        disabled={props.disabled}
        aria-invalid={bad || undefined}
        onChange={(e) => {
          setDraft(e.target.value)
          try {
            props.onChange(props.path, e.target.value.trim() === '' ? undefined : JSON.parse(e.target.value))
            setBad(false)
          } catch {
            setBad(true)
          }
        }}
        {...props.described}
      />
      {props.hint}
    </div>
  )
}
