import type { Interrupt, Message } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import { useCallback, useMemo, useRef, useState } from 'react'
import { groupInterruptsBySubagent, type InterruptGroup } from '../core/subagent-groups.ts'
import type { PendingInterruptBatch, ResumeOptions } from '../core/types.ts'
import {
  check,
  decideAll,
  errorsOf,
  openForm,
  payloadOf,
  resumeOf,
  setIn,
  withoutReason,
  type FormCheck,
  type FormState,
  type InterruptDraft,
  type InterruptDrafts,
  type PayloadPath,
} from './form-state.ts'
import { interruptTitle } from './interrupt-title.ts'
import { toolArgsOf, toolCallOf } from './tool-call.ts'
import type { FieldError } from './validate-payload.ts'

export { editedArgsSchema, isApproval, UNANSWERED } from './form-state.ts'
export type { FormCheck, InterruptDraft, InterruptDrafts, PayloadPath } from './form-state.ts'

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
  /** The drafts this render shows. Handlers that just changed them read `getState()` (or `buildResume()`). */
  readonly drafts: InterruptDrafts
  /** Problems per interrupt id: `unanswered` (nothing given yet), or payload errors against its `responseSchema`. */
  readonly errors: Readonly<Record<string, readonly FieldError[]>>
  /** Every interrupt has an answer or a cancellation. */
  readonly isComplete: boolean
  /** Complete and every payload matches its schema. */
  readonly isValid: boolean
  /** A submit (`submit`) was attempted on this batch: forms announce missing answers from then on. */
  readonly attempted: boolean
  /** The last `submit`'s synchronous refusal as text (e.g. `… (STALE_BATCH)`), cleared by a successful one. */
  readonly failure: string | undefined
  /** Sets a resolved payload; the function form receives the current payload (`undefined` when none). */
  setPayload(interruptId: string, update: (previous: unknown) => unknown): void
  setPayload(interruptId: string, payload: unknown): void
  /** Sets one field of a resolved payload (creating objects along the path). */
  setField(interruptId: string, path: PayloadPath, value: unknown): void
  cancel(interruptId: string): void
  clear(interruptId: string): void
  /** `approved: true`, keeping edits and other fields already given (not a denial's `reason`). */
  approve(interruptId: string): void
  /** `{ approved: false }`, with `reason` when given (a non-string, e.g. a click event, is ignored). */
  deny(interruptId: string, reason?: string): void
  /** Approves with changed arguments: `{ approved: true, editedArgs }`; the function form starts from the current edit, else the call's arguments. */
  editArgs(interruptId: string, update: (previous: unknown) => unknown): void
  editArgs(interruptId: string, args: unknown): void
  /** Approval-shaped interrupts get `approved: true` (edits kept); others keep their drafts. */
  approveAll(): void
  /** Approval-shaped interrupts get `{ approved: false }`; others keep their drafts. */
  denyAll(): void
  /** Every interrupt of the batch is cancelled (`status: 'cancelled'`, no payload). */
  cancelAll(): void
  reset(): void
  /** The drafts and their check as of now, including changes made earlier in the same event handler. */
  getState(): FormCheck
  /** The complete `resume` argument for this batch, from the newest drafts; throws `INVALID_INPUT` (details.errors) when not valid. */
  buildResume(): ResumeOptions
  /**
   * Marks the batch attempted and, when the newest drafts are valid, calls `send(buildResume())` once. A synchronous
   * throw of `send` is kept in `failure`. True when `send` was called and did not throw.
   */
  submit(send: (resume: ResumeOptions) => unknown): boolean
  /** The original arguments of a tool-bound interrupt's call, parsed: from the history, else `metadata.arguments`. */
  toolArgs(interrupt: Interrupt): unknown
  /** The name of the tool an interrupt is about (history, else `metadata.toolName`). */
  toolName(interrupt: Interrupt): string | undefined
  /** The interrupt's heading (`interruptTitle` with the form's messages). */
  title(interrupt: Interrupt): string
}

const isUpdater = (v: unknown): v is (previous: unknown) => unknown => typeof v === 'function'

/**
 * Headless form state for a pending batch. Drafts are keyed by the batch id the form was opened
 * with: a new batch (a new local id) starts fresh drafts, so answers given to an old batch are
 * never attached to a newer one; when the batch disappears the old drafts stay bound to the old id
 * (submitting them is rejected by `resume` as stale).
 *
 * Every command applies at once to the newest state (docs/react-runtime.md#the-form-state), so
 * `approveAll()` then `chat.resume(buildResume())` in one click sends the approvals just given.
 */
export function useInterruptForm(
  batch: PendingInterruptBatch | undefined,
  options: UseInterruptFormOptions = {},
): UseInterruptFormResult {
  const [state, setState] = useState<FormState>(() => openForm(batch))
  let current = state
  if (batch !== undefined && batch.id !== state.batchId) {
    // Adjusting state during render (React's documented pattern): no stale frame with old drafts.
    current = openForm(batch)
    setState(current)
  }
  // What the commands of the current event wrote, before React renders it; written only by commands, never in render.
  const newest = useRef<FormState | undefined>(undefined)
  const { batchId, interrupts, drafts } = current
  const rendered = current

  const read = useCallback((): FormState => {
    const n = newest.current
    return n !== undefined && n.batchId === batchId ? n : rendered
  }, [batchId, rendered])
  const write = useCallback(
    (fn: (s: FormState) => FormState) => {
      const base = read()
      const next = fn(base)
      if (next === base) return
      newest.current = next
      // A command of an older batch (a stale closure) never touches the batch shown now.
      setState((s) => (s.batchId === next.batchId ? next : s))
    },
    [read],
  )

  const errors = useMemo(() => errorsOf(interrupts, drafts), [interrupts, drafts])
  const messages = options.messages

  return useMemo((): UseInterruptFormResult => {
    const { isComplete, isValid } = check(rendered, errors)
    const update = (fn: (ds: InterruptDrafts, s: FormState) => InterruptDrafts) =>
      write((s) => ({ ...s, drafts: fn(s.drafts, s) }))
    const put = (id: string, draft: InterruptDraft | undefined) =>
      update((ds) => {
        const next = { ...ds }
        if (draft === undefined) delete next[id]
        else next[id] = draft
        return next
      })
    const resolve = (id: string, fn: (previous: unknown) => unknown) =>
      update((ds) => ({ ...ds, [id]: { status: 'resolved', payload: fn(payloadOf(ds[id])) } }))
    const findInterrupt = (id: string) => interrupts.find((i) => i.id === id)
    const toolArgs = (interrupt: Interrupt) => toolArgsOf(interrupt, messages)
    const buildResume = () => resumeOf(read())
    return {
      batchId,
      interrupts,
      groups: groupInterruptsBySubagent(interrupts),
      drafts,
      errors,
      isComplete,
      isValid,
      attempted: rendered.attempted,
      failure: rendered.failure,
      setPayload: (id: string, payload: unknown) => resolve(id, (p) => (isUpdater(payload) ? payload(p) : payload)),
      setField: (id, path, value) => resolve(id, (p) => setIn(p ?? {}, path, value)),
      cancel: (id) => put(id, { status: 'cancelled' }),
      clear: (id) => put(id, undefined),
      approve: (id) => resolve(id, (p) => ({ ...withoutReason(p), approved: true })),
      deny: (id, reason) =>
        resolve(id, () =>
          typeof reason === 'string' && reason !== '' ? { approved: false, reason } : { approved: false },
        ),
      editArgs: (id: string, next: unknown) =>
        resolve(id, (p) => {
          const previous = p as { editedArgs?: unknown } | undefined
          const interrupt = findInterrupt(id)
          const start = previous?.editedArgs ?? (interrupt ? toolArgs(interrupt) : undefined)
          return { ...withoutReason(previous), approved: true, editedArgs: isUpdater(next) ? next(start) : next }
        }),
      approveAll: () => update((_ds, s) => decideAll(s, true)),
      denyAll: () => update((_ds, s) => decideAll(s, false)),
      cancelAll: () =>
        update((_ds, s) => Object.fromEntries(s.interrupts.map((i) => [i.id, { status: 'cancelled' } as const]))),
      reset: () => update(() => ({})),
      getState: () => check(read()),
      buildResume,
      submit: (send) => {
        write((s) => (s.attempted ? s : { ...s, attempted: true }))
        if (!check(read()).isValid) return false
        try {
          send(buildResume())
          write((s) => (s.failure === undefined ? s : { ...s, failure: undefined }))
          return true
        } catch (error) {
          const failure = InterludeError.isInstance(error) ? `${error.message} (${error.code})` : String(error)
          write((s) => ({ ...s, failure }))
          return false
        }
      },
      toolArgs,
      toolName: (interrupt) => toolCallOf(interrupt, messages).name,
      title: (interrupt) => interruptTitle(interrupt, messages),
    }
  }, [batchId, interrupts, drafts, errors, rendered, read, write, messages])
}
