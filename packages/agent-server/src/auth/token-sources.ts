/** The environment variable of bearer tokens: `name=secret` entries separated by commas or newlines. */
export const TOKENS_ENV = 'INTERLUDE_TOKENS'

/**
 * `name=secret` entries, one per line (a tokens file) or separated by commas (`INTERLUDE_TOKENS`); blank lines and
 * `#` comments are skipped (a secret in a file may contain commas). Whitespace around an entry is ignored; inside a name or secret it is refused later by
 * `tokensProblem`. Throws with `origin` (and the line) on a malformed entry or a name given twice.
 */
export function parseTokenEntries(
  text: string,
  origin: string,
  options: { readonly commas: boolean; readonly into?: Record<string, string> },
): Record<string, string> {
  const into = options.into ?? {}
  const lines = text.split(/\r?\n/)
  lines.forEach((line, index) => {
    const trimmed = line.trim()
    if (trimmed === '' || trimmed.startsWith('#')) return
    for (const raw of options.commas ? trimmed.split(',') : [trimmed]) {
      const entry = raw.trim()
      if (entry === '') continue
      const eq = entry.indexOf('=')
      const where = lines.length > 1 ? `${origin} line ${index + 1}` : origin
      if (eq <= 0 || eq === entry.length - 1) throw new Error(`${where}: an entry must look like name=secret`)
      addToken(into, entry.slice(0, eq).trim(), entry.slice(eq + 1).trim(), where)
    }
  })
  return into
}

/** Adds one token; a principal named twice (across all sources) is an error, not a silent override. */
export function addToken(into: Record<string, string>, name: string, secret: string, origin: string): void {
  if (Object.hasOwn(into, name)) throw new Error(`${origin}: the principal "${name}" has two tokens`)
  into[name] = secret
}
