import type { Interrupt, Message, ResumeEntry } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import { useCallback, useMemo, useState } from 'react'
import { groupInterruptsBySubagent, type InterruptGroup } from '../core/subagent-groups.ts'
import type { PendingInterruptBatch, ResumeOptions } from '../core/types.ts'
import type { FieldError } from './validate-payload.ts'
import { validatePayload } from './validate-payload.ts'

/** The draft answer of one interrupt: nothing yet, a resolved payload, or a cancellation. */
export type InterruptDraft =
  { readonly status: 'resolved'; readonly payload: unknown } | { readonly status: 'cancelled' }

type Path = readonly (string | number)[]
/** The drafts of a batch by interrupt id (an interrupt without a draft is unanswered). */
export type InterruptDrafts = Readonly<Record<string, InterruptDraft | undefined>>
type Drafts = InterruptDrafts

export interface UseInterruptFormOptions {
  /** History, used to find the original arguments of a tool call (the starting point of `editedArgs`). */
  readonly messages?: readonly Message[]
}

export interface UseInterruptFormResult {
  /** The batch id these drafts belong to (the batch the form was opened with). */
  readonly batchId: string | undefined
  readonly interrupts: readonly Interrupt[]
  /**
   * `interrupts` grouped by owner: the parent's first, then one group per subagent run (`groupInterruptsBySubagent`).
   * Presentation only: `buildResume` answers the whole batch in one resume, in batch order.
   */
  readonly groups: readonly InterruptGroup[]
  readonly drafts: Drafts
  /** Problems per interrupt id: an unanswered interrupt, or payload errors against its `responseSchema`. */
  readonly errors: Readonly<Record<string, readonly FieldError[]>>
  /** Every interrupt has an answer or a cancellation. */
  readonly isComplete: boolean
  /** Complete and every payload matches its schema. */
  readonly isValid: boolean
  setPayload(interruptId: string, payload: unknown | ((previous: unknown) => unknown)): void
  /** Sets one field of a resolved payload (creating objects along the path). */
  setField(interruptId: string, path: Path, value: unknown): void
  cancel(interruptId: string): void
  clear(interruptId: string): void
  approve(interruptId: string): void
  deny(interruptId: string): void
  /** Approval-shaped interrupts get `approved: true` (edits kept); others keep their drafts. */
  approveAll(): void
  /** Approval-shaped interrupts get `{ approved: false }`; others keep their drafts. */
  denyAll(): void
  /** Every interrupt of the batch is cancelled (`status: 'cancelled'`, no payload). */
  cancelAll(): void
  reset(): void
  /** The complete `resume` argument for this batch; throws `INVALID_INPUT` (details.errors) when not valid. */
  buildResume(): ResumeOptions
  /** The original arguments of a tool-bound interrupt's call, parsed (undefined when unknown). */
  toolArgs(interrupt: Interrupt): unknown
}

/** True when the interrupt's schema is the approval shape `{ approved: boolean, ... }`. */
export function isApproval(interrupt: Interrupt): boolean {
  const props = (interrupt.responseSchema as { properties?: Record<string, { type?: unknown }> } | undefined)
    ?.properties
  return props?.approved?.type === 'boolean'
}

/** The schema of `editedArgs` when the tool allows edits. */
export function editedArgsSchema(interrupt: Interrupt): Record<string, unknown> | undefined {
  const props = (interrupt.responseSchema as { properties?: Record<string, Record<string, unknown>> } | undefined)
    ?.properties
  return props?.editedArgs
}

function setIn(target: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value
  const [head, ...rest] = path
  const base = (
    Array.isArray(target)
      ? [...(target as unknown[])]
      : typeof target === 'object' && target !== null
        ? { ...(target as Record<string, unknown>) }
        : typeof head === 'number'
          ? []
          : {}
  ) as Record<string | number, unknown>
  const next = setIn(base[head!], rest, value)
  if (next === undefined && !Array.isArray(base)) delete base[head!]
  else base[head!] = next
  return base
}

interface FormState {
  readonly batchId: string | undefined
  readonly interrupts: readonly Interrupt[]
  readonly drafts: Drafts
}

const EMPTY: readonly Interrupt[] = Object.freeze([])

function open(batch: PendingInterruptBatch | undefined): FormState {
  return { batchId: batch?.id, interrupts: batch?.interrupts ?? EMPTY, drafts: {} }
}

/**
 * Headless form state for a pending batch. Drafts are keyed by the batch id the form was opened
 * with: a new batch (a new local id) starts fresh drafts, so answers given to an old batch are
 * never attached to a newer one; when the batch disappears the old drafts stay bound to the old id
 * (submitting them is rejected by `resume` as stale).
 */
export function useInterruptForm(
  batch: PendingInterruptBatch | undefined,
  options: UseInterruptFormOptions = {},
): UseInterruptFormResult {
  const [form, setForm] = useState<FormState>(() => open(batch))
  let current = form
  if (batch !== undefined && batch.id !== form.batchId) {
    // Adjusting state during render (React's documented pattern): no stale frame with old drafts.
    current = open(batch)
    setForm(current)
  }
  const { batchId, interrupts, drafts } = current

  const update = useCallback(
    (fn: (drafts: Drafts, interrupts: readonly Interrupt[]) => Drafts) =>
      setForm((f) => (f.batchId === batchId ? { ...f, drafts: fn(f.drafts, f.interrupts) } : f)),
    [batchId],
  )

  const errors = useMemo(() => {
    const out: Record<string, readonly FieldError[]> = {}
    for (const i of interrupts) {
      const d = drafts[i.id]
      if (d === undefined) out[i.id] = [{ path: [], message: 'An answer is required.', keyword: 'unanswered' }]
      else if (d.status === 'resolved') {
        const problems = validatePayload(i.responseSchema, d.payload)
        if (problems.length > 0) out[i.id] = problems
      }
    }
    return out
  }, [interrupts, drafts])

  const messages = options.messages
  const toolArgs = useCallback(
    (interrupt: Interrupt): unknown => {
      if (!interrupt.toolCallId || !messages) return undefined
      for (const m of messages) {
        if (m.role !== 'assistant' || !m.toolCalls) continue
        const call = m.toolCalls.find((c) => c.id === interrupt.toolCallId)
        if (call) {
          try {
            return JSON.parse(call.function.arguments || '{}') as unknown
          } catch {
            return undefined
          }
        }
      }
      return undefined
    },
    [messages],
  )

  return useMemo(() => {
    const isComplete = interrupts.length > 0 && interrupts.every((i) => drafts[i.id] !== undefined)
    const isValid = isComplete && Object.keys(errors).length === 0
    const payloadOf = (d: InterruptDraft | undefined) => (d?.status === 'resolved' ? d.payload : undefined)
    const setDraft = (id: string, draft: InterruptDraft | undefined) =>
      update((ds) => {
        const next = { ...ds }
        if (draft === undefined) delete next[id]
        else next[id] = draft
        return next
      })
    const approvalAll = (approved: boolean) =>
      update((ds, list) => {
        const next = { ...ds }
        for (const i of list) {
          if (!isApproval(i)) continue
          const previous = payloadOf(ds[i.id]) as Record<string, unknown> | undefined
          next[i.id] = {
            status: 'resolved',
            payload: approved ? { ...(previous ?? {}), approved: true } : { approved: false },
          }
        }
        return next
      })
    return {
      batchId,
      interrupts,
      groups: groupInterruptsBySubagent(interrupts),
      drafts,
      errors,
      isComplete,
      isValid,
      setPayload: (id, payload) =>
        update((ds) => ({
          ...ds,
          [id]: {
            status: 'resolved',
            payload: typeof payload === 'function' ? (payload as (p: unknown) => unknown)(payloadOf(ds[id])) : payload,
          },
        })),
      setField: (id, path, value) =>
        update((ds) => ({ ...ds, [id]: { status: 'resolved', payload: setIn(payloadOf(ds[id]) ?? {}, path, value) } })),
      cancel: (id) => setDraft(id, { status: 'cancelled' }),
      clear: (id) => setDraft(id, undefined),
      approve: (id) =>
        update((ds) => ({
          ...ds,
          [id]: {
            status: 'resolved',
            payload: { ...((payloadOf(ds[id]) as object | undefined) ?? {}), approved: true },
          },
        })),
      deny: (id) => update((ds) => ({ ...ds, [id]: { status: 'resolved', payload: { approved: false } } })),
      approveAll: () => approvalAll(true),
      denyAll: () => approvalAll(false),
      cancelAll: () =>
        update((_ds, list) => Object.fromEntries(list.map((i) => [i.id, { status: 'cancelled' } as const]))),
      reset: () => update(() => ({})),
      buildResume: () => {
        if (batchId === undefined) throw new InterludeError('STALE_BATCH', 'There is no batch to answer.')
        if (!isValid)
          throw new InterludeError('INVALID_INPUT', 'Some answers are missing or invalid.', { details: { errors } })
        const entries: ResumeEntry[] = interrupts.map((i) => {
          const d = drafts[i.id]!
          return d.status === 'cancelled'
            ? { interruptId: i.id, status: 'cancelled' }
            : { interruptId: i.id, status: 'resolved', payload: d.payload }
        })
        return { batchId, entries }
      },
      toolArgs,
    }
  }, [batchId, interrupts, drafts, errors, update, toolArgs])
}
