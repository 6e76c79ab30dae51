import type { Interrupt } from '@interlude/protocol'
import type { ReactNode } from 'react'
import type { ResumeOptions } from '../core/types.ts'
import { UNANSWERED, type InterruptDraft, type PayloadPath } from './form-state.ts'
import type { UseInterruptFormResult } from './use-interrupt-form.ts'
import type { FieldError } from './validate-payload.ts'

/** Where an answer stands: approved / denied (approval schemas), answered (any other payload), cancelled, or none. */
export type InterruptDecision = 'approved' | 'denied' | 'answered' | 'cancelled' | undefined

/**
 * What a custom renderer of one interrupt receives (`<InterruptForm renderers>`, `<InlineApproval>`, `useInterrupt`):
 * the interrupt, its tool's arguments, its draft, and answer setters bound to it. The answer lives in the batch's
 * form, so it is validated and submitted with the rest of the batch (docs/client-contract.md#custom-renderers).
 * Every setter takes no event argument by mistake: `onClick={approve}` and `onClick={deny}` are safe.
 */
export interface InterruptRendererProps<TArgs = unknown, TPayload = unknown> {
  readonly interrupt: Interrupt
  /** The tool the interrupt is about (history, else `metadata.toolName`). */
  readonly toolName: string | undefined
  /** The heading the default form would give it (`interruptTitle`). */
  readonly title: string
  /** The call's original arguments, parsed (history, else `metadata.arguments`); undefined when unknown. */
  readonly args: TArgs | undefined
  /** The arguments as they will run: the edit when there is one, else `args`. */
  readonly effectiveArgs: TArgs | undefined
  readonly draft: InterruptDraft | undefined
  /** The resolved payload so far (undefined when unanswered or cancelled). */
  readonly payload: TPayload | undefined
  readonly decision: InterruptDecision
  /** The payload's errors against `responseSchema` (the same the default form shows; never `unanswered`). */
  readonly errors: readonly FieldError[]
  /** Unanswered after a submit was attempted: the form says "An answer is required." beside it. */
  readonly missing: boolean
  readonly disabled: boolean
  /** A unique element id base for the renderer's own labels. */
  readonly id: string
  approve(): void
  /** Denies, with a note when the schema takes a `reason`. */
  deny(reason?: string): void
  /** Approves with changed arguments (`editedArgs`); the function form starts from the current edit, else `args`. */
  editArgs(update: (previous: TArgs | undefined) => TArgs): void
  editArgs(args: TArgs): void
  cancel(): void
  /** Back to unanswered. */
  clear(): void
  /** Sets the whole payload; the function form receives the current one (`undefined` when none). */
  setPayload(update: (previous: TPayload | undefined) => TPayload): void
  setPayload(payload: TPayload): void
  setField(path: PayloadPath, value: unknown): void
  /**
   * Submits the whole batch once, with this answer included even when it was given in the same handler
   * (`approve(); submit()`). Sends nothing while another answer is missing or invalid; returns whether it sent.
   */
  submit(): boolean
  /** The batch's form, for anything else. */
  readonly form: UseInterruptFormResult
}

/** A component rendering one interrupt. */
export type InterruptRenderer<TArgs = unknown, TPayload = unknown> = (
  props: InterruptRendererProps<TArgs, TPayload>,
) => ReactNode

/**
 * Renderers by tool name (`{ deploy: DeployCard }`). Each renderer types its own arguments and payload
 * (`InterruptRendererProps<DeployArgs>`); both are read and written, so only `any` lets different ones share a map.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each renderer declares its own argument types
export type InterruptRenderers = Readonly<Record<string, InterruptRenderer<any, any> | undefined>>

function decisionOf(draft: InterruptDraft | undefined): InterruptDecision {
  if (draft === undefined) return undefined
  if (draft.status === 'cancelled') return 'cancelled'
  const approved = (draft.payload as { approved?: unknown } | undefined)?.approved
  return approved === true ? 'approved' : approved === false ? 'denied' : 'answered'
}

/** The props of one interrupt's renderer, bound to the batch's form. */
export function rendererProps(
  form: UseInterruptFormResult,
  interrupt: Interrupt,
  options: { id: string; disabled: boolean; send: ((resume: ResumeOptions) => unknown) | undefined },
): InterruptRendererProps {
  const draft = form.drafts[interrupt.id]
  const payload = draft?.status === 'resolved' ? draft.payload : undefined
  const args = form.toolArgs(interrupt)
  const edited = (payload as { editedArgs?: unknown } | undefined)?.editedArgs
  const { id, disabled, send } = options
  return {
    interrupt,
    toolName: form.toolName(interrupt),
    title: form.title(interrupt),
    args,
    effectiveArgs: edited ?? args,
    draft,
    payload,
    decision: decisionOf(draft),
    errors: (form.errors[interrupt.id] ?? []).filter((e) => e.keyword !== UNANSWERED),
    missing: form.attempted && draft === undefined,
    disabled,
    id,
    approve: () => form.approve(interrupt.id),
    deny: (reason?: unknown) => form.deny(interrupt.id, typeof reason === 'string' ? reason : undefined),
    editArgs: (update: unknown) => form.editArgs(interrupt.id, update),
    cancel: () => form.cancel(interrupt.id),
    clear: () => form.clear(interrupt.id),
    setPayload: (update: unknown) => form.setPayload(interrupt.id, update),
    setField: (path, value) => form.setField(interrupt.id, path, value),
    submit: () => (send ? form.submit(send) : false),
    form,
  }
}
