import { isApproval } from './form-state.ts'
import { ApprovalQuestion, InputQuestion } from './interrupt-questions.tsx'
import type { InterruptRenderer, InterruptRendererProps } from './interrupt-renderer.ts'

/** Ids of the notes `QuestionBody` may show, for the enclosing group's `aria-describedby`. */
export function questionNoteIds(props: InterruptRendererProps, custom: boolean): string | undefined {
  const ids = [
    props.missing ? `${props.id}-missing` : undefined,
    custom && props.form.attempted && props.errors.length > 0 ? `${props.id}-problems` : undefined,
  ].filter((x) => x !== undefined)
  return ids.length > 0 ? ids.join(' ') : undefined
}

/**
 * The controls of one interrupt: a custom renderer, or the default approval / schema question; then, once a submit
 * was attempted, what keeps it from being sent (the same `errors` the default form validates with).
 */
export function QuestionBody({
  props,
  renderer: Renderer,
}: {
  props: InterruptRendererProps
  renderer: InterruptRenderer | undefined
}) {
  const { interrupt, form, id, disabled } = props
  return (
    <>
      {Renderer !== undefined ? (
        <Renderer {...props} />
      ) : isApproval(interrupt) ? (
        <ApprovalQuestion interrupt={interrupt} form={form} id={id} disabled={disabled} />
      ) : (
        <InputQuestion interrupt={interrupt} form={form} id={id} disabled={disabled} />
      )}
      {props.missing && (
        <p id={`${id}-missing`} className="interlude-field-error">
          An answer is required.
        </p>
      )}
      {/* The default questions show errors at their fields; a custom renderer's are listed here. */}
      {Renderer !== undefined && form.attempted && props.errors.length > 0 && (
        <p id={`${id}-problems`} className="interlude-field-error">
          {props.errors.map((e) => (e.path.length > 0 ? `${e.path.join('.')}: ${e.message}` : e.message)).join(' ')}
        </p>
      )}
    </>
  )
}
