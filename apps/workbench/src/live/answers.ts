/**
 * The batch form's model, independent of React: what a person chose for each interrupt, and how
 * those choices become the complete `resume` entries. Choices are plain JSON so that the
 * recorder can keep them ("form choices at that moment").
 */

export type Decision = 'approve' | 'deny' | 'edit' | 'answer' | 'cancel'

export interface Choice {
  readonly decision?: Decision
  /** JSON text of the replacement arguments (decision `edit`). */
  readonly editedArgs?: string
  readonly reason?: string
  /** Field values of an `answer` (input_required and other schemas). */
  readonly values?: { readonly [field: string]: string | boolean }
}

export type Choices = { readonly [interruptId: string]: Choice }

export interface InterruptLike {
  readonly id: string
  readonly reason: string
  readonly message?: string | undefined
  readonly toolCallId?: string | undefined
  readonly responseSchema?: Record<string, unknown> | undefined
  readonly expiresAt?: string | undefined
  readonly metadata?: Record<string, unknown> | undefined
}

export interface FieldSpec {
  readonly name: string
  readonly kind: 'enum' | 'string' | 'boolean' | 'number' | 'integer' | 'json'
  readonly required: boolean
  readonly options?: readonly string[]
  readonly title?: string
  readonly description?: string
}

type Schema = Record<string, unknown>

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `{ approved: boolean, editedArgs?, reason? }`: the approval schema of a tool-bound interrupt. */
export function isApprovalSchema(schema: Schema | undefined): boolean {
  const approved = isRecord(schema?.properties) ? schema.properties.approved : undefined
  return isRecord(approved) && approved.type === 'boolean'
}

export function allowsEdits(interrupt: InterruptLike): boolean {
  const props = interrupt.responseSchema?.properties
  return isRecord(props) && isRecord(props.editedArgs)
}

export function allowsReason(interrupt: InterruptLike): boolean {
  const props = interrupt.responseSchema?.properties
  return isRecord(props) && isRecord(props.reason)
}

/** The fields of an object schema the form can render (anything else is edited as JSON). */
export function fieldsOf(schema: Schema | undefined): FieldSpec[] {
  if (!isRecord(schema) || !isRecord(schema.properties)) return []
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [])
  return Object.entries(schema.properties).map(([name, raw]) => {
    const prop = isRecord(raw) ? raw : {}
    const base = {
      name,
      required: required.has(name),
      ...(typeof prop.title === 'string' ? { title: prop.title } : {}),
      ...(typeof prop.description === 'string' ? { description: prop.description } : {}),
    }
    if (Array.isArray(prop.enum) && prop.enum.every((v) => typeof v === 'string')) return { ...base, kind: 'enum', options: prop.enum as string[] }
    if (prop.type === 'string' || prop.type === 'boolean' || prop.type === 'number' || prop.type === 'integer') return { ...base, kind: prop.type }
    return { ...base, kind: 'json' }
  })
}

/** The arguments the tool was called with (for the edit field), from the interrupt metadata. */
export function originalArgs(interrupt: InterruptLike): unknown {
  return interrupt.metadata?.arguments
}

export function defaultChoice(interrupt: InterruptLike): Choice {
  if (isApprovalSchema(interrupt.responseSchema)) return {}
  const values: Record<string, string | boolean> = {}
  for (const field of fieldsOf(interrupt.responseSchema)) {
    if (field.kind === 'boolean') values[field.name] = false
  }
  return { decision: 'answer', values }
}

export type EntryResult =
  | { readonly ok: true; readonly entry: { interruptId: string; status: 'resolved' | 'cancelled'; payload?: unknown } }
  | { readonly ok: false; readonly problem: string }

/** One resume entry from one choice, or why it is not complete yet. */
export function entryOf(interrupt: InterruptLike, choice: Choice | undefined): EntryResult {
  const decision = choice?.decision
  const reason = choice?.reason?.trim()
  const withReason = (payload: Record<string, unknown>) => (reason && allowsReason(interrupt) ? { ...payload, reason } : payload)
  switch (decision) {
    case undefined:
      return { ok: false, problem: 'Choose an answer.' }
    case 'cancel':
      return { ok: true, entry: { interruptId: interrupt.id, status: 'cancelled' } }
    case 'approve':
      return { ok: true, entry: { interruptId: interrupt.id, status: 'resolved', payload: withReason({ approved: true }) } }
    case 'deny':
      return { ok: true, entry: { interruptId: interrupt.id, status: 'resolved', payload: withReason({ approved: false }) } }
    case 'edit': {
      let editedArgs: unknown
      try {
        editedArgs = JSON.parse(choice?.editedArgs ?? '')
      } catch {
        return { ok: false, problem: 'Edited arguments must be JSON.' }
      }
      if (!isRecord(editedArgs)) return { ok: false, problem: 'Edited arguments must be a JSON object.' }
      return { ok: true, entry: { interruptId: interrupt.id, status: 'resolved', payload: withReason({ approved: true, editedArgs }) } }
    }
    case 'answer': {
      const payload: Record<string, unknown> = {}
      for (const field of fieldsOf(interrupt.responseSchema)) {
        const value = choice?.values?.[field.name]
        if (field.kind === 'boolean') {
          payload[field.name] = value === true
          continue
        }
        const text = typeof value === 'string' ? value.trim() : ''
        if (text === '') {
          if (field.required) return { ok: false, problem: `${field.title ?? field.name} is required.` }
          continue
        }
        if (field.kind === 'number' || field.kind === 'integer') {
          const n = Number(text)
          if (!Number.isFinite(n) || (field.kind === 'integer' && !Number.isInteger(n))) return { ok: false, problem: `${field.title ?? field.name} must be a ${field.kind}.` }
          payload[field.name] = n
        } else if (field.kind === 'json') {
          try {
            payload[field.name] = JSON.parse(text)
          } catch {
            return { ok: false, problem: `${field.title ?? field.name} must be JSON.` }
          }
        } else {
          payload[field.name] = text
        }
      }
      return { ok: true, entry: { interruptId: interrupt.id, status: 'resolved', payload } }
    }
  }
}

export type BatchAnswer =
  | { readonly ok: true; readonly entries: NonNullable<Extract<EntryResult, { ok: true }>['entry']>[] }
  | { readonly ok: false; readonly problems: { readonly [interruptId: string]: string } }

/** Every entry of the batch, or the problems that hold the whole batch up. */
export function answerBatch(interrupts: readonly InterruptLike[], choices: Choices): BatchAnswer {
  const entries: Extract<EntryResult, { ok: true }>['entry'][] = []
  const problems: Record<string, string> = {}
  for (const interrupt of interrupts) {
    const result = entryOf(interrupt, choices[interrupt.id])
    if (result.ok) entries.push(result.entry)
    else problems[interrupt.id] = result.problem
  }
  return Object.keys(problems).length === 0 ? { ok: true, entries } : { ok: false, problems }
}

/** The earliest `expiresAt` of the batch in ms, if any. */
export function earliestExpiry(interrupts: readonly InterruptLike[]): number | undefined {
  let earliest: number | undefined
  for (const interrupt of interrupts) {
    if (typeof interrupt.expiresAt !== 'string') continue
    const at = Date.parse(interrupt.expiresAt)
    if (Number.isFinite(at) && (earliest === undefined || at < earliest)) earliest = at
  }
  return earliest
}
