import type { Interrupt } from '@interlude/protocol'
import { editedArgsSchema, isApproval } from '@interlude/react'
import type { InterruptDraft, InterruptDrafts } from '@interlude/react'
import type { Json } from '../recording/recording-types.ts'

type Schema = {
  readonly type?: string | readonly string[]
  readonly enum?: readonly unknown[]
  readonly title?: string
  readonly properties?: Readonly<Record<string, Schema>>
}
type Fields = { [label: string]: Json }

/**
 * The recorded "form choices" of a batch, from the drafts `<InterruptForm>` reports: per
 * interrupt, in batch order, the decision of an approval (`approve | deny | cancel`) and the
 * fields the form shows, keyed by their label as a person reads them (a select by its option text,
 * `null` when unset; a checkbox as a boolean; inputs only when not empty; a JSON field's text). The
 * shape the workbench has always recorded, so every recording replays alike.
 */
export function draftChoices(
  interrupts: readonly Interrupt[],
  drafts: InterruptDrafts,
): { [interruptId: string]: Json } {
  const choices: { [interruptId: string]: Json } = {}
  for (const interrupt of interrupts) {
    const draft = drafts[interrupt.id]
    const choice: { decision?: string; fields?: Fields } = {}
    const fields: Fields = {}
    if (isApproval(interrupt)) {
      const decision = decisionOf(draft)
      if (decision !== undefined) choice.decision = decision
      const payload = payloadOf(draft) as { editedArgs?: unknown; reason?: unknown } | undefined
      const edits = editedArgsSchema(interrupt) as Schema | undefined
      if (edits && decision === 'approve') {
        fields['Edit arguments'] = payload?.editedArgs !== undefined
        if (payload?.editedArgs !== undefined)
          addFields(fields, 'editedArgs', { ...edits, title: edits.title ?? 'Arguments' }, payload.editedArgs)
      }
      const reason = (interrupt.responseSchema as Schema | undefined)?.properties?.reason
      if (reason && decision === 'deny') addFields(fields, 'reason', reason, payload?.reason)
    } else {
      const schema = (interrupt.responseSchema ?? {}) as Schema
      const cancelled = draft?.status === 'cancelled'
      if (!cancelled) addFields(fields, 'Answer', { ...schema, title: schema.title ?? 'Answer' }, payloadOf(draft))
      fields['Cancel this question'] = cancelled
    }
    if (Object.keys(fields).length > 0) choice.fields = fields
    choices[interrupt.id] = choice
  }
  return choices
}

function payloadOf(draft: InterruptDraft | undefined): unknown {
  return draft?.status === 'resolved' ? draft.payload : undefined
}

function decisionOf(draft: InterruptDraft | undefined): string | undefined {
  if (draft?.status === 'cancelled') return 'cancel'
  const approved = (payloadOf(draft) as { approved?: unknown } | undefined)?.approved
  return approved === true ? 'approve' : approved === false ? 'deny' : undefined
}

// The form's labelling: the schema title, else the key in words.
const label = (key: string, schema: Schema): string =>
  schema.title ?? key.replace(/[_-]+/g, ' ').replace(/^./, (c) => c.toUpperCase())

const typeOf = (schema: Schema): string | undefined =>
  Array.isArray(schema.type) ? (schema.type as string[]).find((t) => t !== 'null') : (schema.type as string | undefined)

/** The controls the form renders for one schema-driven field, in order (objects: one per property). */
function addFields(fields: Fields, name: string, schema: Schema, value: unknown): void {
  const type = typeOf(schema)
  if (type === 'object' || schema.properties) {
    const object = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
    for (const [key, child] of Object.entries(schema.properties ?? {})) addFields(fields, key, child, object[key])
    return
  }
  const text = label(name, schema)
  if (schema.enum) {
    const index = schema.enum.findIndex((option) => option === value)
    fields[text] = index < 0 ? null : String(schema.enum[index])
  } else if (type === 'boolean') {
    fields[text] = value === true ? 'Yes' : value === false ? 'No' : null
  } else if (type === 'number' || type === 'integer') {
    if (typeof value === 'number') fields[text] = String(value)
  } else if (type === 'string' || (type === undefined && (value === undefined || typeof value === 'string'))) {
    if (typeof value === 'string' && value !== '') fields[text] = value
  } else {
    // A JSON text field (the person's text; here its canonical form).
    const json = value === undefined ? undefined : JSON.stringify(value, null, 2)
    if (json !== undefined) fields[`${text} (JSON)`] = json
  }
}
