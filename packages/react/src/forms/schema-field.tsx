import { useState, type ReactNode } from 'react'
import type { FieldError } from './validate-payload.ts'

/** The subset of JSON Schema the default form renders; anything else falls back to a JSON field. */
export type Schema = {
  readonly type?: string | readonly string[]
  readonly enum?: readonly unknown[]
  readonly const?: unknown
  readonly title?: string
  readonly description?: string
  readonly properties?: Readonly<Record<string, Schema>>
  readonly required?: readonly string[]
}

const typeOf = (s: Schema | undefined): string | undefined =>
  Array.isArray(s?.type) ? (s!.type as string[]).find((t) => t !== 'null') : (s?.type as string | undefined)

function errorsAt(errors: readonly FieldError[] | undefined, path: readonly string[]): FieldError[] {
  // "unanswered" is announced once per question by the form, not by a field.
  return (errors ?? []).filter(
    (e) => e.keyword !== 'unanswered' && e.path.length === path.length && e.path.every((p, i) => p === path[i]),
  )
}

function label(key: string, schema: Schema): string {
  return schema.title ?? key.replace(/[_-]+/g, ' ').replace(/^./, (c) => c.toUpperCase())
}

interface FieldProps {
  readonly id: string
  readonly name: string
  readonly schema: Schema
  readonly value: unknown
  readonly required: boolean
  readonly path: readonly string[]
  readonly errors: readonly FieldError[] | undefined
  readonly disabled: boolean
  readonly onChange: (path: readonly string[], value: unknown) => void
}

/** One schema-driven field: booleans (yes/no), enums, strings, numbers, nested objects; JSON for the rest. */
export function Field({ id, name, schema, value, required, path, errors, disabled, onChange }: FieldProps) {
  const own = errorsAt(errors, path)
  const errorId = `${id}-error`
  const described = own.length > 0 ? { 'aria-invalid': true as const, 'aria-describedby': errorId } : {}
  const text = label(name, schema)
  const hint = own.length > 0 && (
    <span id={errorId} className="interlude-field-error">
      {own.map((e) => e.message).join(' ')}
    </span>
  )
  const type = typeOf(schema)
  if (type === 'object' || schema.properties) {
    const obj = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
    return (
      <fieldset className="interlude-object" {...(own.length > 0 ? { 'aria-describedby': errorId } : {})}>
        <legend>{text}</legend>
        {Object.entries(schema.properties ?? {}).map(([key, child]) => (
          <Field
            key={key}
            id={`${id}-${key}`}
            name={key}
            schema={child}
            value={obj[key]}
            required={schema.required?.includes(key) ?? false}
            path={[...path, key]}
            errors={errors}
            disabled={disabled}
            onChange={onChange}
          />
        ))}
        {hint}
      </fieldset>
    )
  }
  if (schema.enum) {
    const options = schema.enum
    const index = options.findIndex((o) => o === value)
    return (
      <div className="interlude-field">
        <label htmlFor={id}>{text}</label>
        <select
          id={id}
          value={index < 0 ? '' : String(index)}
          disabled={disabled}
          required={required}
          onChange={(e) => onChange(path, e.target.value === '' ? undefined : options[Number(e.target.value)])}
          {...described}
        >
          <option value="">{required ? 'Choose…' : '—'}</option>
          {options.map((o, i) => (
            <option key={i} value={String(i)}>
              {String(o)}
            </option>
          ))}
        </select>
        {hint}
      </div>
    )
  }
  if (type === 'boolean') {
    // An explicit yes/no choice with an empty "choose" state: `false` is a deliberate answer, never
    // the silent default of an untouched checkbox (and an optional boolean can be left unset).
    const current = value === true ? 'true' : value === false ? 'false' : ''
    return (
      <div className="interlude-field">
        <label htmlFor={id}>{text}</label>
        <select
          id={id}
          value={current}
          disabled={disabled}
          required={required}
          onChange={(e) => onChange(path, e.target.value === '' ? undefined : e.target.value === 'true')}
          {...described}
        >
          <option value="">{required ? 'Choose…' : '—'}</option>
          <option value="true">Yes</option>
          <option value="false">No</option>
        </select>
        {hint}
      </div>
    )
  }
  if (type === 'number' || type === 'integer') {
    return (
      <div className="interlude-field">
        <label htmlFor={id}>{text}</label>
        <input
          id={id}
          type="number"
          step={type === 'integer' ? 1 : 'any'}
          value={typeof value === 'number' ? String(value) : ''}
          required={required}
          disabled={disabled}
          onChange={(e) => onChange(path, e.target.value === '' ? undefined : Number(e.target.value))}
          {...described}
        />
        {hint}
      </div>
    )
  }
  if (type === 'string' || type === undefined) {
    if (type === 'string' || value === undefined || typeof value === 'string') {
      return (
        <div className="interlude-field">
          <label htmlFor={id}>{text}</label>
          <input
            id={id}
            type="text"
            value={typeof value === 'string' ? value : ''}
            required={required}
            disabled={disabled}
            onChange={(e) => onChange(path, e.target.value === '' && !required ? undefined : e.target.value)}
            {...described}
          />
          {hint}
        </div>
      )
    }
  }
  return (
    <JsonField
      id={id}
      text={text}
      value={value}
      path={path}
      disabled={disabled}
      onChange={onChange}
      hint={hint}
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
  onChange: FieldProps['onChange']
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
