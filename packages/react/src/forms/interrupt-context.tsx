import type { Interrupt } from '@interlude/protocol'
import { createContext, useCallback, useContext, useEffect, useId, useMemo, useState, type ReactNode } from 'react'
import type { ResumeOptions } from '../core/types.ts'
import { QuestionBody, questionNoteIds } from './question-body.tsx'
import { rendererProps, type InterruptRenderer, type InterruptRendererProps } from './interrupt-renderer.ts'
import type { InterruptRenderers } from './interrupt-renderer.ts'
import type { UseInterruptFormResult } from './use-interrupt-form.ts'

/** What `<InterruptFormProvider>` shares with the inline views and the batch form under it. */
export interface InterruptFormContextValue {
  readonly form: UseInterruptFormResult
  readonly onSubmit: ((resume: ResumeOptions) => unknown) | undefined
  readonly disabled: boolean
  readonly renderers: InterruptRenderers
  /** Interrupt ids shown inline right now (the batch form then shows them as a summary, not twice). */
  readonly inline: ReadonlySet<string>
  /** Marks an interrupt as shown inline until the returned function is called. */
  readonly showInline: (interruptId: string) => () => void
}

const InterruptFormContext = /* @__PURE__ */ createContext<InterruptFormContextValue | undefined>(undefined)

/** The provider's value, if any (for `<InterruptForm>` and custom views). */
export function useInterruptFormContext(): InterruptFormContextValue | undefined {
  return useContext(InterruptFormContext)
}

export interface InterruptFormProviderProps {
  /** The batch's form (`useInterruptForm(chat.pendingInterrupts, { messages })`), shared by everything under it. */
  readonly form: UseInterruptFormResult
  /** Sends the batch (pass `chat.resume`): what a renderer's `submit()` calls. */
  readonly onSubmit?: (resume: ResumeOptions) => unknown
  readonly disabled?: boolean
  /** Renderers by tool name, used by `<InlineApproval>` and `<InterruptForm>` under the provider. */
  readonly renderers?: InterruptRenderers
  readonly children?: ReactNode
}

const NO_RENDERERS: InterruptRenderers = {}

/**
 * Shares one batch's form with the message list and the batch form: an approval can be answered inline at its tool
 * call (`<InlineApproval>`, `useInterrupt`) while the batch is still submitted once, with every answer
 * (docs/client-contract.md#custom-renderers).
 */
export function InterruptFormProvider({
  form,
  onSubmit,
  disabled = false,
  renderers = NO_RENDERERS,
  children,
}: InterruptFormProviderProps) {
  const [shown, setShown] = useState<ReadonlyMap<string, number>>(() => new Map())
  const showInline = useCallback((interruptId: string) => {
    const change = (delta: number) =>
      setShown((m) => {
        const next = new Map(m)
        const count = (next.get(interruptId) ?? 0) + delta
        if (count > 0) next.set(interruptId, count)
        else next.delete(interruptId)
        return next
      })
    change(1)
    return () => change(-1)
  }, [])
  const inline = useMemo(() => new Set(shown.keys()), [shown])
  const value = useMemo(
    () => ({ form, onSubmit, disabled, renderers, inline, showInline }),
    [form, onSubmit, disabled, renderers, inline, showInline],
  )
  return <InterruptFormContext.Provider value={value}>{children}</InterruptFormContext.Provider>
}

/** The pending interrupt for a tool call id (or an interrupt id) in the provider's batch. */
function findInterrupt(form: UseInterruptFormResult, key: string): Interrupt | undefined {
  return form.interrupts.find((i) => i.toolCallId === key) ?? form.interrupts.find((i) => i.id === key)
}

/**
 * The answer controls of the pending interrupt for `toolCallId` (or an interrupt id), bound to the provider's form;
 * undefined when nothing of the batch waits on it. Does not mark it as shown inline (`<InlineApproval>` does).
 */
export function useInterrupt<TArgs = unknown, TPayload = unknown>(
  toolCallId: string | undefined,
): InterruptRendererProps<TArgs, TPayload> | undefined {
  const context = useContext(InterruptFormContext)
  const id = useId()
  if (context === undefined || toolCallId === undefined) return undefined
  const interrupt = findInterrupt(context.form, toolCallId)
  if (interrupt === undefined) return undefined
  return rendererProps(context.form, interrupt, {
    id,
    disabled: context.disabled,
    send: context.onSubmit,
  }) as InterruptRendererProps<TArgs, TPayload>
}

export interface InlineApprovalProps {
  /** The tool call whose pending interrupt is shown here; nothing is rendered when none waits. */
  readonly toolCallId: string
  /** The renderer; else the provider's renderer for the tool, else the default question. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a renderer declares its own argument types
  readonly render?: InterruptRenderer<any, any>
  readonly className?: string
}

/**
 * One pending interrupt shown where its tool call is (in the message list), answered into the provider's form. The
 * batch form then shows it as a one-line summary, and the batch is still submitted once.
 */
export function InlineApproval({ toolCallId, render, className }: InlineApprovalProps) {
  const context = useContext(InterruptFormContext)
  const props = useInterrupt(toolCallId)
  const interruptId = props?.interrupt.id
  const showInline = context?.showInline
  useEffect(
    () => (interruptId !== undefined && showInline ? showInline(interruptId) : undefined),
    [interruptId, showInline],
  )
  if (context === undefined || props === undefined) return null
  const renderer = render ?? (props.toolName !== undefined ? context.renderers[props.toolName] : undefined)
  return (
    // A custom renderer shows its own heading; the group is still named by the question.
    <div
      role="group"
      {...(renderer ? { 'aria-label': props.title } : { 'aria-labelledby': `${props.id}-title` })}
      aria-describedby={questionNoteIds(props, renderer !== undefined)}
      className={className ? `interlude-inline-approval ${className}` : 'interlude-inline-approval'}
      data-interrupt-id={props.interrupt.id}
      data-reason={props.interrupt.reason}
    >
      {!renderer && (
        <p id={`${props.id}-title`} className="interlude-interrupt-title">
          {props.title}
        </p>
      )}
      <QuestionBody props={props} renderer={renderer} />
    </div>
  )
}
