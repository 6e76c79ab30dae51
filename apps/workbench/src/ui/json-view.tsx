import { useMemo } from 'react'

/** JSON as escaped text (React escapes it; nothing is ever injected as HTML). */
export function JsonView({
  value,
  label,
  testId,
}: {
  readonly value: unknown
  readonly label?: string
  readonly testId?: string
}) {
  const text = useMemo(() => {
    if (value === undefined) return 'undefined'
    try {
      return JSON.stringify(value, null, 2) ?? String(value)
    } catch {
      return String(value)
    }
  }, [value])
  return (
    <pre className="json" aria-label={label} data-testid={testId} tabIndex={0}>
      {text}
    </pre>
  )
}
