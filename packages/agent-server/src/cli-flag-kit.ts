import { parseArgs } from 'node:util'
import type { ParseArgsConfig } from 'node:util'

type ParseArgsOption = NonNullable<ParseArgsConfig['options']>[string]

/**
 * One command-line flag, declared once (cli-flags.ts): `parseArgs` reads it, `readFlags` checks its value, and the
 * usage text prints its help and its default.
 */
export interface Flag {
  /** Numbers are read from text and checked here (`parseArgs` knows only strings and booleans). */
  readonly type: 'boolean' | 'string' | 'integer' | 'number'
  /** Repeatable: every occurrence, in order (`[]` when absent). */
  readonly multiple?: true
  /** A number must be above 0 (otherwise 0 is allowed too); negative numbers are always refused. */
  readonly positive?: boolean
  /** An integer's largest value. */
  readonly max?: number
  /** The only values a string may take. */
  readonly choices?: readonly string[]
  /** The value's placeholder in the usage, e.g. `<ms>`. */
  readonly arg?: string
  readonly help: string
  /** What the CLI uses when the flag is absent (and the usage prints). */
  readonly default?: string | number
  /** Printed only: the flag stays `undefined` when absent and the server applies its own default. */
  readonly shown?: string | number
  /** An environment variable read when the flag is absent. */
  readonly env?: string
  readonly short?: string
  /** Where the usage prints it: the general flags, or a titled section. */
  readonly section?: string
  /** A setting of a group of options (`limits`, `openai`, …) rather than an option of its own (`groupValues`). */
  readonly into?: { readonly group: string; readonly key: string }
}

export type FlagTable = Readonly<Record<string, Flag>>

type ValueOf<F extends Flag> = F['type'] extends 'boolean'
  ? boolean
  : F extends { readonly multiple: true }
    ? readonly string[]
    : F['type'] extends 'integer' | 'number'
      ? number
      : F extends { readonly choices: readonly (infer C)[] }
        ? C
        : string

/** `undefined` when the flag can be absent: not a boolean, not repeatable, no CLI default. */
type Absent<F extends Flag> = F['type'] extends 'boolean'
  ? never
  : F extends { readonly multiple: true }
    ? never
    : F extends { readonly default: string | number }
      ? never
      : undefined

/** The values of a table's flags, checked, with the CLI's defaults applied. */
export type FlagValues<T extends FlagTable> = { readonly [K in keyof T]: ValueOf<T[K]> | Absent<T[K]> }

/** Reads `argv` (strict: an unknown flag or a missing value throws) and checks each value against its flag. */
export function readFlags<T extends FlagTable>(
  table: T,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): FlagValues<T> {
  const options: NonNullable<ParseArgsConfig['options']> = {}
  for (const [name, flag] of Object.entries(table)) {
    const option: ParseArgsOption = { type: flag.type === 'boolean' ? 'boolean' : 'string', multiple: !!flag.multiple }
    if (flag.short !== undefined) option.short = flag.short
    options[name] = option
  }
  const { values } = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options })
  const read: Record<string, unknown> = {}
  for (const [name, flag] of Object.entries(table)) {
    const given = values[name] ?? (flag.env !== undefined ? env[flag.env] : undefined)
    if (flag.type === 'boolean') read[name] = given === true
    else if (flag.multiple) read[name] = given ?? []
    else read[name] = typeof given === 'string' ? checked(name, flag, given) : flag.default
  }
  return read as FlagValues<T>
}

/** The flags of a group that were given, in table order. */
export function givenFlags(table: FlagTable, values: object, group: string): string[] {
  const given = values as Readonly<Record<string, unknown>>
  return Object.entries(table)
    .filter(([name, flag]) => flag.into?.group === group && given[name] !== undefined)
    .map(([name]) => name)
}

/** The values given for the flags `into` a group, by their keys (absent flags are left out). */
export function groupValues<T extends object>(table: FlagTable, values: object, group: string): Partial<T> {
  const given = values as Readonly<Record<string, unknown>>
  const picked: Record<string, unknown> = {}
  for (const [name, flag] of Object.entries(table))
    if (flag.into?.group === group && given[name] !== undefined) picked[flag.into.key] = given[name]
  return picked as Partial<T>
}

function checked(name: string, flag: Flag, text: string): string | number {
  const label = flag.env !== undefined ? `--${name} (or ${flag.env})` : `--${name}`
  if (flag.choices && !flag.choices.includes(text)) throw new Error(`${label} must be ${orList(flag.choices)}`)
  if (flag.type !== 'integer' && flag.type !== 'number') return text
  const n = Number(text)
  const least = flag.positive ? 1 : 0
  if (flag.type === 'integer') {
    const ok = Number.isSafeInteger(n) && n >= least && n <= (flag.max ?? Number.MAX_SAFE_INTEGER)
    if (ok && text.trim() !== '') return n
    if (flag.max !== undefined) throw new Error(`${label} must be an integer between ${least} and ${flag.max}`)
    throw new Error(`${label} must be a ${flag.positive ? 'positive' : 'non-negative'} integer`)
  }
  if (Number.isFinite(n) && (flag.positive ? n > 0 : n >= 0) && text.trim() !== '') return n
  throw new Error(`${label} must be a ${flag.positive ? 'positive' : 'non-negative'} number`)
}

/** `a, b or c`. */
function orList(words: readonly string[]): string {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`
}

const COLUMN = 34
const WIDTH = 118

/** The usage text: every flag with its help and its default, the general flags first, then each section. */
export function usageText(command: string, table: FlagTable): string {
  const sections = new Map<string, string[]>([['', [`Usage: ${command} [options]`, '']]])
  for (const [name, flag] of Object.entries(table)) {
    const lines = sections.get(flag.section ?? '') ?? ['', `${flag.section}:`]
    lines.push(...flagLines(name, flag))
    sections.set(flag.section ?? '', lines)
  }
  return `${[...sections.values()].flat().join('\n')}\n`
}

function flagLines(name: string, flag: Flag): string[] {
  const short = flag.short !== undefined ? `-${flag.short}, ` : ''
  const left = `  ${short}--${name}${flag.arg !== undefined ? ` ${flag.arg}` : ''}`
  const value = flag.default ?? flag.shown
  const fallback = flag.env !== undefined ? `${flag.env}, else ${String(value)}` : value
  const text = fallback === undefined ? flag.help : `${flag.help} (default ${readable(name, fallback)})`
  const words = wrap(text, WIDTH - COLUMN)
  if (left.length >= COLUMN) return [left, ...words.map((line) => ' '.repeat(COLUMN) + line)]
  return words.map((line, i) => (i === 0 ? left.padEnd(COLUMN) : ' '.repeat(COLUMN)) + line)
}

/** Large byte counts and durations in seconds get a readable unit beside them. */
function readable(name: string, value: string | number): string {
  if (typeof value !== 'number' || value === 0) return String(value)
  if (name.endsWith('bytes') && value % 1024 === 0)
    return value >= 1024 * 1024 && value % (1024 * 1024) === 0
      ? `${value} = ${value / (1024 * 1024)} MiB`
      : `${value} = ${value / 1024} KiB`
  if (name.endsWith('-age') && value % 86_400 === 0) return `${value} = ${value / 86_400} d`
  return String(value)
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line === '' ? word : `${line} ${word}`
  }
  return [...lines, line]
}
