import type { ReactNode } from 'react'

export interface TextFieldProps {
  readonly id: string
  readonly text: string
  readonly kind: 'string' | 'number' | 'integer'
  /** JSON Schema `format` of a string (date, date-time, time, email, uri); others are plain text. */
  readonly format: string | undefined
  readonly multiline: boolean
  readonly value: unknown
  readonly required: boolean
  readonly disabled: boolean
  readonly describedBy: string | undefined
  readonly invalid: boolean
  readonly onChange: (value: unknown) => void
  readonly children?: ReactNode
}

const INPUT_TYPE: Readonly<Record<string, string>> = {
  date: 'date',
  'date-time': 'datetime-local',
  time: 'time',
  email: 'email',
  uri: 'url',
  url: 'url',
}

const pad = (n: number) => String(n).padStart(2, '0')

/** An RFC 3339 instant shown in the local time a `datetime-local` input takes ("" when unreadable). */
export function toLocalInput(value: unknown): string {
  if (typeof value !== 'string' || value === '') return ''
  const at = new Date(value)
  if (Number.isNaN(at.getTime())) return ''
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`
}

/** A `datetime-local` value (local wall time) as the RFC 3339 instant `format: date-time` requires. */
export function fromLocalInput(value: string): string | undefined {
  if (value === '') return undefined
  const at = new Date(value)
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString()
}

/**
 * A string or number answer. Formats pick the browser's own control (a date picker, an email
 * keyboard) so people type less; the value sent is always what the schema asks for (`date-time` is
 * converted from local wall time to an RFC 3339 instant). The form is `noValidate`: the schema
 * validator, not the browser, decides what is wrong, so messages are the same everywhere.
 */
export function TextField(props: TextFieldProps) {
  const { id, text, kind, format, value, required, disabled, describedBy, invalid, onChange } = props
  const aria = {
    ...(describedBy !== undefined ? { 'aria-describedby': describedBy } : {}),
    ...(invalid ? { 'aria-invalid': true as const } : {}),
  }
  let control: ReactNode
  if (kind !== 'string') {
    control = (
      <input
        id={id}
        type="number"
        step={kind === 'integer' ? 1 : 'any'}
        value={typeof value === 'number' ? String(value) : ''}
        required={required}
        disabled={disabled}
        onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
        {...aria}
      />
    )
  } else if (props.multiline) {
    control = (
      <textarea
        id={id}
        value={typeof value === 'string' ? value : ''}
        required={required}
        disabled={disabled}
        onChange={(e) => onChange(e.target.value === '' && !required ? undefined : e.target.value)}
        {...aria}
      />
    )
  } else if (format === 'date-time') {
    control = (
      <input
        id={id}
        type="datetime-local"
        value={toLocalInput(value)}
        required={required}
        disabled={disabled}
        onChange={(e) => onChange(fromLocalInput(e.target.value))}
        {...aria}
      />
    )
  } else {
    const type = (format !== undefined ? INPUT_TYPE[format] : undefined) ?? 'text'
    control = (
      <input
        id={id}
        type={type}
        value={typeof value === 'string' ? value : ''}
        required={required}
        disabled={disabled}
        data-format={format}
        onChange={(e) => onChange(e.target.value === '' && !required ? undefined : e.target.value)}
        {...aria}
      />
    )
  }
  return (
    <div className="interlude-field">
      <label htmlFor={id}>{text}</label>
      {control}
      {props.children}
    </div>
  )
}
