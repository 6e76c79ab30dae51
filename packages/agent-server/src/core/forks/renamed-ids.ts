/**
 * Every mention of a renewed call id in a copied JSON value (docs/time-travel.md#forks-at-a-batch): object keys and
 * string values, matched as whole ids — `call_1` is not replaced inside `call_10` — alone, inside a subagent's run id
 * (`subrun_<callId>`) or after a separator (`<thread>:<callId>`).
 */
export function renamedIn(json: string, ids: ReadonlyMap<string, string>): string {
  if (ids.size === 0) return json
  const rename = renamer(ids)
  return JSON.stringify(walk(JSON.parse(json) as unknown, rename))
}

function renamer(ids: ReadonlyMap<string, string>): (text: string) => string {
  // Longest first, so that of two ids where one is a prefix of the other the longer one wins at a position.
  const olds = [...ids.keys()].sort((a, b) => b.length - a.length).map(escape)
  // An id is whole when no id character follows it and, before it, the text starts, a separator or `subrun_` ends.
  const pattern = new RegExp(`(?<![A-Za-z0-9_-])((?:subrun_)?)(${olds.join('|')})(?![A-Za-z0-9_-])`, 'g')
  return (text) =>
    ids.has(text) ? ids.get(text)! : text.replace(pattern, (_, prefix: string, old: string) => prefix + ids.get(old)!)
}

function walk(value: unknown, rename: (text: string) => string): unknown {
  if (typeof value === 'string') return rename(value)
  if (Array.isArray(value)) return value.map((item) => walk(item, rename))
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [rename(key), walk(item, rename)]))
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
