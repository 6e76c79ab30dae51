const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

const show = (v: unknown): string => (v === undefined ? '(not set)' : typeof v === 'string' ? v : JSON.stringify(v))

/** One changed argument: its key and both values (`undefined` when added or removed). */
export interface ArgumentChange {
  readonly key: string
  readonly before: unknown
  readonly after: unknown
}

/** The top-level arguments an edit changed, in the original order, then the added ones. */
export function argumentChanges(before: unknown, after: unknown): ArgumentChange[] {
  if (!isRecord(before) || !isRecord(after)) {
    return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ key: 'arguments', before, after }]
  }
  const keys = [...Object.keys(before), ...Object.keys(after).filter((k) => !(k in before))]
  return keys
    .filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]))
    .map((key) => ({ key, before: before[key], after: after[key] }))
}

/**
 * What the person is approving: the call's arguments, one per row, and — once they edit — what
 * their edit changes (old value struck through, new value inserted), announced politely.
 */
export function CallArguments({ id, args, edited }: { id: string; args: unknown; edited: unknown }) {
  if (args === undefined) return null
  const rows = isRecord(args) ? Object.entries(args) : undefined
  const changes = edited === undefined ? [] : argumentChanges(args, edited)
  return (
    <div className="interlude-call">
      <span id={`${id}-args-heading`} className="interlude-call-heading">
        Arguments
      </span>
      {rows ? (
        <dl className="interlude-call-args" aria-labelledby={`${id}-args-heading`}>
          {rows.map(([key, value]) => (
            <div key={key}>
              <dt>{key}</dt>
              <dd>
                <code>{show(value)}</code>
              </dd>
            </div>
          ))}
        </dl>
      ) : (
        <pre className="interlude-call-args" aria-labelledby={`${id}-args-heading`}>
          {show(args)}
        </pre>
      )}
      <div className="interlude-args-diff" role="status" aria-live="polite">
        {changes.length > 0 && (
          <>
            <span className="interlude-call-heading">Your changes</span>
            <ul>
              {changes.map((c) => (
                <li key={c.key}>
                  <span className="interlude-diff-key">{c.key}</span>: <del>{show(c.before)}</del> →{' '}
                  <ins>{show(c.after)}</ins>
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
    </div>
  )
}
