import type { ReactNode } from 'react'
import type { Choice } from './schema.ts'

export interface ChoiceFieldProps {
  readonly id: string
  readonly text: string
  readonly choices: readonly Choice[]
  readonly value: unknown
  readonly required: boolean
  readonly radio: boolean
  readonly disabled: boolean
  /** The element ids describing this field (description, error), or undefined. */
  readonly describedBy: string | undefined
  readonly invalid: boolean
  readonly onChange: (value: unknown) => void
  /** Description and error, rendered after the control. */
  readonly children?: ReactNode
}

/**
 * One answer out of labelled choices: a `<select>` by default, or a radio group
 * (`x-interlude-widget: "radio"`). Values are addressed by index, so any JSON value (numbers,
 * `null`, objects) round-trips unchanged; the person only ever sees the labels.
 */
export function ChoiceField(props: ChoiceFieldProps) {
  const { id, text, choices, value, required, disabled, describedBy, invalid, onChange } = props
  const index = choices.findIndex((c) => Object.is(c.value, value) || sameJson(c.value, value))
  const keys = choices.map(optionKey)
  const aria = {
    ...(describedBy !== undefined ? { 'aria-describedby': describedBy } : {}),
    ...(invalid ? { 'aria-invalid': true as const } : {}),
  }
  if (!props.radio) {
    return (
      <div className="interlude-field">
        <label htmlFor={id}>{text}</label>
        <select
          id={id}
          value={index < 0 ? '' : keys[index]}
          disabled={disabled}
          required={required}
          onChange={(e) => onChange(e.target.value === '' ? undefined : choices[keys.indexOf(e.target.value)]?.value)}
          {...aria}
        >
          <option value="">{required ? 'Choose…' : '—'}</option>
          {choices.map((c, i) => (
            <option key={i} value={keys[i]} title={c.description}>
              {c.label}
            </option>
          ))}
        </select>
        {props.children}
      </div>
    )
  }
  // A fieldset + legend names the group for assistive technology; native radios give arrow-key
  // movement inside the group and one tab stop for it.
  return (
    <fieldset className="interlude-field interlude-choice" {...aria}>
      <legend>{text}</legend>
      {choices.map((c, i) => (
        <div key={i} className="interlude-choice-option">
          <input
            id={`${id}-${i}`}
            type="radio"
            name={id}
            value={keys[i]}
            checked={index === i}
            disabled={disabled}
            required={required}
            onChange={() => onChange(c.value)}
            {...(c.description !== undefined ? { 'aria-describedby': `${id}-${i}-description` } : {})}
          />
          <label htmlFor={`${id}-${i}`}>{c.label}</label>
          {c.description !== undefined && (
            <span id={`${id}-${i}-description`} className="interlude-choice-description">
              {c.description}
            </span>
          )}
        </div>
      ))}
      {!required && (
        <div className="interlude-choice-option">
          <input
            id={`${id}-none`}
            type="radio"
            name={id}
            value=""
            checked={index < 0}
            disabled={disabled}
            onChange={() => onChange(undefined)}
          />
          <label htmlFor={`${id}-none`}>No answer</label>
        </div>
      )}
      {props.children}
    </fieldset>
  )
}

/** Option values: `true`/`false` for yes/no (stable for scripts and tests), else the choice's index. */
const optionKey = (c: Choice, i: number): string => (typeof c.value === 'boolean' ? String(c.value) : String(i))

function sameJson(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  return JSON.stringify(a) === JSON.stringify(b)
}
